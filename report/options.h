/*
 * options.h — gpuphase-report's option table: every option of the report,
 * diff, export and stability commands, its getopt_long spelling and how
 * many words follow it on a command line. report/main.c and
 * report/stability.c parse with it; the `gpuphase` command (cli/report.c)
 * links it to tell a report option's values from trace names, so both
 * programs know the same options.
 *
 * Pure data and pure functions: no state, any thread.
 */
#ifndef GP_REPORT_OPTIONS_H
#define GP_REPORT_OPTIONS_H

#include <getopt.h>
#include <stddef.h>

/* Which command line takes an option (a mask). */
#define GP_OPTIONS_REPORT    1u /* gpuphase-report [diff|--export] [options] */
#define GP_OPTIONS_STABILITY 2u /* gpuphase-report stability [options]     */

#define GP_OPTIONS_MAX 32 /* entries of the table, at most */

struct gp_option {
	const char *name; /* the long name, without "--"                        */
	char short_name;  /* its one-letter spelling ('o', 'h'), or 0            */
	int has_arg;      /* getopt_long's no_argument, required_argument, ...   */
	int val;          /* getopt_long's val: what the parsers switch on       */
	int words;        /* values that follow as words (--export FORMAT OUT: 2) */
	unsigned where;   /* GP_OPTIONS_* mask                                   */
};

/* The table, ended by an entry with a NULL name. */
extern const struct gp_option gp_options[];

/* getopt_long's long options for the command lines in where, into lo
 * (GP_OPTIONS_MAX + 1 entries, ended by a zero entry), and its short
 * option string (":" first: a missing value is ':') into shortopts
 * (2 * GP_OPTIONS_MAX + 2 bytes). */
void gp_options_getopt(unsigned where, struct option *lo, char *shortopts);

/* How many words follow the command-line word a as the values of a report
 * option (any command line): 0, 1 or 2 (--export FORMAT OUT; one fewer
 * when written --opt=VALUE or -oVALUE), or -1 when a is no report option. */
int gp_options_arity(const char *a);

/* The number a value option names (--outlier-factor, --fail-above,
 * --cv-pct): all of s read by strtod, finite (no nan, no inf) and above
 * min (at min too when min_ok). 0 with *out set, or -EINVAL. Every parser
 * of these options reads them here, so one value means the same on every
 * command line (a report, --partial, --merge, stability). */
int gp_options_number(const char *s, double min, int min_ok, double *out);

#endif /* GP_REPORT_OPTIONS_H */
