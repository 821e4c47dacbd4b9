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

size_t gp_fmt_utf8_len(const unsigned char *p)
{
	unsigned c = p[0];
	if (c < 0x80)
		return 1;
	size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
	if (!n)
		return 0;
	for (size_t i = 1; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	if ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] > 0x9f) || /* overlong, surrogate */
	    (c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] > 0x8f))   /* overlong, > U+10FFFF */
		return 0;
	return n;
}

/* A control character a terminal acts on: C0, DEL, and C1 (U+0080..U+009F,
 * UTF-8 c2 80..c2 9f, which some terminals read as CSI and OSC). */
static int gp_fmt_is_ctl(const unsigned char *p, size_t len)
{
	return (len == 1 && (*p < 0x20 || *p == 0x7f)) || (len == 2 && p[0] == 0xc2 && p[1] < 0xa0);
}

size_t gp_fmt_text_str(FILE *f, const char *s)
{
	size_t cols = 0;
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; cols++) {
		size_t len = gp_fmt_utf8_len(p);
		if (!len) {
			fputs("\xef\xbf\xbd", f); /* U+FFFD for a byte that is not UTF-8 */
			p++;
		} else if (gp_fmt_is_ctl(p, len)) {
			fputc('?', f);
			p += len;
		} else {
			fwrite(p, 1, len, f);
			p += len;
		}
	}
	return cols;
}

void gp_fmt_text_pad(FILE *f, const char *s, size_t width)
{
	for (size_t cols = gp_fmt_text_str(f, s); cols < width; cols++)
		fputc(' ', f);
}

void gp_fmt_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p;) {
		size_t len = gp_fmt_utf8_len(p);
		if (!len) {
			fputs("\\ufffd", f); /* JSON is UTF-8: a stray byte would make the file unreadable */
			p++;
			continue;
		}
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\u%04x", *p);
		else
			fwrite(p, 1, len, f);
		p += len;
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
	/* A spreadsheet runs a cell that starts with = + - @ (or a tab / CR
	 * before one) as a formula: such a name gets a leading apostrophe, the
	 * OWASP advice, and is quoted. Control characters and bytes that are
	 * not UTF-8 become '?' and U+FFFD as in the text report. */
	int formula = strchr("=+-@\t\r", *s) && *s;
	if (!formula && !strpbrk(s, ",\"\n\r")) {
		gp_fmt_text_str(f, s);
		return;
	}
	fputc('"', f);
	if (formula)
		fputc('\'', f);
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		size_t len = gp_fmt_utf8_len(p);
		if (!len) {
			fputs("\xef\xbf\xbd", f);
			p++;
			continue;
		}
		if (*p == '"')
			fputc('"', f);
		if (len == 1 && (*p == '\n' || *p == '\r'))
			fputc(*p, f); /* quoted: the reader keeps it as part of the field */
		else if (gp_fmt_is_ctl(p, len))
			fputc('?', f);
		else
			fwrite(p, 1, len, f);
		p += len;
	}
	fputc('"', f);
}

void gp_fmt_md_str(FILE *f, const char *s)
{
	/* one table cell: a newline would end the row, a pipe the cell, an
	 * escape sequence would reach the terminal that shows the file */
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		size_t len = gp_fmt_utf8_len(p);
		if (!len) {
			fputs("\xef\xbf\xbd", f);
			p++;
			continue;
		}
		if (*p == '|' || *p == '\\' || *p == '`')
			fputc('\\', f);
		if (len == 1 && (*p == '\n' || *p == '\r' || *p == '\t'))
			fputc(' ', f);
		else if (gp_fmt_is_ctl(p, len))
			fputc('?', f);
		else
			fwrite(p, 1, len, f);
		p += len;
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
