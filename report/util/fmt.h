/*
 * fmt.h — the report's formatting helpers: durations, shares, table cells
 * and the escaping of JSON, CSV, markdown and HTML text. A leaf: it includes
 * nothing of the report, and every output (output.c, the exporters, the
 * analyses, stability.c) formats through it. Pure functions, any thread;
 * they write only to the FILE or buffer given.
 */
#ifndef GP_REPORT_FMT_H
#define GP_REPORT_FMT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Table duration, at most 8 characters below 10^5 s: "812ns", "12.3us"
 * (below 10 ms), "4.56ms" (below 1 s), "1.234s", then "12345.6s". */
const char *gp_fmt_dur(uint64_t ns, char *buf, size_t n);
/* Prose duration of a signed value: "812ns", "12.3us", "4.56ms", "1.23s". */
const char *gp_fmt_ns(double ns, char *buf, size_t n);
/* 100 * a / b, 0 when b is 0. */
double gp_fmt_pct(uint64_t a, uint64_t b);
/* A share column: one decimal, "100%" when it rounds to 100 (5 characters). */
const char *gp_fmt_pctcol(uint64_t a, uint64_t b, char *buf, size_t n);
/* s cut to w characters with "..." when longer. */
const char *gp_fmt_cut(const char *s, size_t w, char *buf, size_t n);

/* Names from the profiled program (kernels, NVTX ranges, argv, call sites)
 * go through these: none lets a control character or a byte that is not
 * UTF-8 through. Length of the valid UTF-8 sequence at p, 0 if invalid. */
size_t gp_fmt_utf8_len(const unsigned char *p);
/* Terminal text: control characters (C0, DEL, C1) as '?', invalid UTF-8 as
 * U+FFFD. Returns the characters written (code points). NULL is "". */
size_t gp_fmt_text_str(FILE *f, const char *s);
/* gp_fmt_text_str, then spaces up to width characters. */
void gp_fmt_text_pad(FILE *f, const char *s, size_t width);
/* A JSON string (quoted, escaped; NULL is ""; invalid UTF-8 as \ufffd). */
void gp_fmt_json_str(FILE *f, const char *s);
/* A JSON number: %.6g, or null when not finite (NaN / inf are not JSON). */
void gp_fmt_json_num(FILE *f, double v);
/* A CSV field: quoted when it holds a comma, quote or newline; a field
 * starting = + - @ (a spreadsheet formula) gets a leading apostrophe. */
void gp_fmt_csv_str(FILE *f, const char *s);
/* A markdown table cell: | \ ` escaped, newlines and tabs as spaces,
 * control characters as '?'. */
void gp_fmt_md_str(FILE *f, const char *s);
/* HTML text: & < > " as entities (NULL is nothing). */
void gp_fmt_html_str(FILE *f, const char *s);

#endif
