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
/* Is s (NUL-terminated) valid UTF-8 throughout? */
int gp_fmt_utf8_valid(const char *s);
/* A malloc'd copy of s with each byte that is not UTF-8 as U+FFFD, the
 * text the JSON report's string decodes to (NULL on ENOMEM). */
char *gp_fmt_utf8_dup(const char *s);
/* The one rule for a string from the trace in text and markdown, in every
 * section: a control character (C0, DEL, C1) as a visible escape (\n, \r,
 * \t, \xHH, \u00HH), a byte that is not UTF-8 as U+FFFD, so what is
 * written is valid UTF-8 and no name starts a line or moves the cursor;
 * markdown (md != 0) also puts | \ ` behind a backslash, as a table cell
 * needs. Returns the characters written (code points). NULL is "". */
size_t gp_fmt_name(FILE *f, const char *s, int md);
/* gp_fmt_name, then spaces up to width characters. */
void gp_fmt_name_pad(FILE *f, const char *s, int md, size_t width);
/* gp_fmt_name into buf (n bytes, NUL-terminated; cut between characters). */
const char *gp_fmt_name_buf(const char *s, int md, char *buf, size_t n);
/* Terminal text: gp_fmt_name in text form. */
size_t gp_fmt_text_str(FILE *f, const char *s);
/* gp_fmt_text_str, then spaces up to width characters. */
void gp_fmt_text_pad(FILE *f, const char *s, size_t width);
/* A JSON string (quoted, escaped; NULL is ""; invalid UTF-8 as \ufffd). */
void gp_fmt_json_str(FILE *f, const char *s);
/* A JSON number: %.6g, or null when not finite (NaN / inf are not JSON). */
void gp_fmt_json_num(FILE *f, double v);
/* A CSV field: quoted when it holds a comma, quote or newline; a field
 * starting = + - @ (a spreadsheet formula) gets a leading apostrophe; other
 * characters as gp_fmt_name writes them (newlines kept inside quotes). */
void gp_fmt_csv_str(FILE *f, const char *s);
/* A markdown table cell: gp_fmt_name in markdown form. */
void gp_fmt_md_str(FILE *f, const char *s);
/* A name as HTML text: & < > " as entities, every other character as
 * gp_fmt_name writes it (NULL is nothing). */
void gp_fmt_html_str(FILE *f, const char *s);
/* gp_fmt_html_str for an attribute value in either quotes (' as &#39;). */
void gp_fmt_html_attr(FILE *f, const char *s);
/* The report's own text (a <pre> block, a tooltip; names in it already
 * through gp_fmt_name) as HTML: as gp_fmt_html_str, or gp_fmt_html_attr
 * when attr, but newlines and tabs kept. */
void gp_fmt_html_block(FILE *f, const char *s, int attr);

#endif
