/*
 * fmt.c — formatting helpers of every report output (fmt.h). A leaf: no
 * report header, no state; callers own the buffers and FILEs.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
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

int gp_fmt_utf8_valid(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		size_t len = gp_fmt_utf8_len(p);
		if (!len)
			return 0;
		p += len;
	}
	return 1;
}

char *gp_fmt_utf8_dup(const char *s)
{
	char *out = malloc(3 * strlen(s) + 1), *o = out; /* a stray byte grows to 3 */
	for (const unsigned char *p = (const unsigned char *)s; out && *p;) {
		size_t len = gp_fmt_utf8_len(p);
		memcpy(o, len ? (const char *)p : "\xef\xbf\xbd", len ? len : 3);
		o += len ? len : 3;
		p += len ? len : 1;
	}
	if (out)
		*o = 0;
	return out;
}

/* A control character a terminal acts on: C0, DEL, and C1 (U+0080..U+009F,
 * UTF-8 c2 80..c2 9f, which some terminals read as CSI and OSC). */
static int gp_fmt_is_ctl(const unsigned char *p, size_t len)
{
	return (len == 1 && (*p < 0x20 || *p == 0x7f)) || (len == 2 && p[0] == 0xc2 && p[1] < 0xa0);
}

/* The text or markdown form of the character at p (not NUL) into out (room
 * for 8 bytes and a NUL): a control character as a visible escape (\n, \r,
 * \t, \xHH; a C1 character as \u00HH), a byte that is not UTF-8 as U+FFFD,
 * in markdown | \ ` behind a backslash; anything else as it is. *adv gets
 * the bytes of s it stands for. Returns the bytes written to out. */
static size_t gp_fmt_name_unit(const unsigned char *p, int md, char *out, size_t *adv)
{
	size_t len = gp_fmt_utf8_len(p);
	if (!len) {
		*adv = 1;
		memcpy(out, "\xef\xbf\xbd", 4);
		return 3;
	}
	*adv = len;
	if (gp_fmt_is_ctl(p, len)) {
		if (len == 2)
			return (size_t)snprintf(out, 9, "\\u%04x", p[1]);
		const char *named = *p == '\n' ? "\\n" : *p == '\r' ? "\\r" : *p == '\t' ? "\\t" : NULL;
		return named ? (size_t)snprintf(out, 9, "%s", named) : (size_t)snprintf(out, 9, "\\x%02x", *p);
	}
	size_t k = 0;
	if (md && (*p == '|' || *p == '\\' || *p == '`'))
		out[k++] = '\\';
	memcpy(out + k, p, len);
	return k + len;
}

size_t gp_fmt_name(FILE *f, const char *s, int md)
{
	size_t cols = 0;
	char u[16];
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p;) {
		size_t adv, n = gp_fmt_name_unit(p, md, u, &adv);
		fwrite(u, 1, n, f);
		for (size_t i = 0; i < n; i++)
			cols += ((unsigned char)u[i] & 0xc0) != 0x80; /* a column per code point written */
		p += adv;
	}
	return cols;
}

const char *gp_fmt_name_buf(const char *s, int md, char *buf, size_t n)
{
	size_t k = 0;
	char u[16];
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p && n;) {
		size_t adv, m = gp_fmt_name_unit(p, md, u, &adv);
		if (k + m >= n)
			break; /* cut between characters, never inside one */
		memcpy(buf + k, u, m);
		k += m;
		p += adv;
	}
	if (n)
		buf[k] = 0;
	return buf;
}

size_t gp_fmt_text_str(FILE *f, const char *s)
{
	return gp_fmt_name(f, s, 0);
}

void gp_fmt_name_pad(FILE *f, const char *s, int md, size_t width)
{
	for (size_t cols = gp_fmt_name(f, s, md); cols < width; cols++)
		fputc(' ', f);
}

void gp_fmt_text_pad(FILE *f, const char *s, size_t width)
{
	gp_fmt_name_pad(f, s, 0, width);
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
		else if (gp_fmt_is_ctl(p, len))
			fprintf(f, "\\u%04x", p[1]); /* C1: the same text, no raw control byte in the file */
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
	char u[16];
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		size_t adv, n = gp_fmt_name_unit(p, 0, u, &adv);
		if (*p == '"')
			fputc('"', f);
		if (*p == '\n' || *p == '\r')
			fputc(*p, f); /* quoted: the reader keeps it as part of the field */
		else
			fwrite(u, 1, n, f);
		p += adv;
	}
	fputc('"', f);
}

void gp_fmt_md_str(FILE *f, const char *s)
{
	/* one table cell: a newline would end the row, a pipe the cell, an
	 * escape sequence would reach the terminal that shows the file */
	gp_fmt_name(f, s, 1);
}

/* HTML text: attr also puts ' as an entity, layout keeps newlines and tabs
 * (the report's own text, whose names went through gp_fmt_name). */
static void gp_fmt_html(FILE *f, const char *s, int attr, int layout)
{
	char u[16];
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p;) {
		size_t adv, n = gp_fmt_name_unit(p, 0, u, &adv);
		switch (*p) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'':
			if (attr)
				fputs("&#39;", f);
			else
				fputc(*p, f);
			break;
		case '\n': case '\t':
			if (layout)
				fputc(*p, f);
			else
				fwrite(u, 1, n, f);
			break;
		default: fwrite(u, 1, n, f);
		}
		p += adv;
	}
}

void gp_fmt_html_str(FILE *f, const char *s)
{
	gp_fmt_html(f, s, 0, 0);
}

void gp_fmt_html_attr(FILE *f, const char *s)
{
	gp_fmt_html(f, s, 1, 0);
}

void gp_fmt_html_block(FILE *f, const char *s, int attr)
{
	gp_fmt_html(f, s, attr, 1);
}
