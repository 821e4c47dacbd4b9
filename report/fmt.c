/*
 * fmt.c — formatting helpers of every report output (fmt.h). A leaf: no
 * report header, no state; callers own the buffers and FILEs.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "fmt.h"

const char *gp_fmt_dur(uint64_t ns, char *buf, size_t n)
{
	if (ns < 1000)
		snprintf(buf, n, "%" PRIu64 "ns", ns);
	else if (ns < 10000000ULL)
		snprintf(buf, n, "%.1fus", (double)ns / 1e3);
	else if (ns < 999995000ULL) /* rounds below 1000.00ms */
		snprintf(buf, n, "%.2fms", (double)ns / 1e6);
	else if (ns < 999999500000ULL)
		snprintf(buf, n, "%.3fs", (double)ns / 1e9);
	else
		snprintf(buf, n, "%.1fs", (double)ns / 1e9);
	return buf;
}

const char *gp_fmt_ns(double ns, char *buf, size_t n)
{
	double a = ns < 0 ? -ns : ns;
	if (a >= 1e9)
		snprintf(buf, n, "%.2fs", ns / 1e9);
	else if (a >= 1e6)
		snprintf(buf, n, "%.2fms", ns / 1e6);
	else if (a >= 1e3)
		snprintf(buf, n, "%.1fus", ns / 1e3);
	else
		snprintf(buf, n, "%.0fns", ns);
	return buf;
}

double gp_fmt_pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0.0;
}

const char *gp_fmt_pctcol(uint64_t a, uint64_t b, char *buf, size_t n)
{
	double v = gp_fmt_pct(a, b);
	if (v >= 99.95)
		snprintf(buf, n, "100%%");
	else
		snprintf(buf, n, "%.1f%%", v);
	return buf;
}

const char *gp_fmt_cut(const char *s, size_t w, char *buf, size_t n)
{
	if (strlen(s) <= w || w < 4 || n <= w)
		snprintf(buf, n, "%s", s);
	else
		snprintf(buf, n, "%.*s...", (int)(w - 3), s);
	return buf;
}

void gp_fmt_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

void gp_fmt_json_num(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, "%.6g", v);
	else
		fputs("null", f);
}

void gp_fmt_csv_str(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\n\r")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

void gp_fmt_md_str(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '|')
			fputc('\\', f);
		fputc(*s, f);
	}
}

void gp_fmt_html_str(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}
