/*
 * main.c — gpuphase-report, the offline analyser's command line:
 *
 *   gpuphase-report [options] TRACE...            report (several = merged)
 *   gpuphase-report --export FORMAT OUT TRACE...  chrome-trace | sqlite | html
 *   gpuphase-report diff [options] BASE NEW       per-operator deltas, CI gate
 *   gpuphase-report stability [options] RUN...    repeatability (stability.c)
 *
 * Every trace goes through the report's one driver (pipeline.h): two passes
 * over the file, the analysis core and the analyses, the exporters fed as it
 * reads. An ordinary single-threaded program: every problem with
 * an input is one message on stderr naming the file and the problem, and a
 * non-zero exit status (docs/metrics.md "Exit status").
 */
#include <errno.h>
#include <getopt.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyses.h"
#include "analysis.h"
#include "export.h"
#include "output.h"
#include "pipeline.h"
#include "stability.h"

#define GP_EXIT_OK 0
#define GP_EXIT_REGRESSED 1
#define GP_EXIT_USAGE 2
#define GP_EXIT_TRUNCATED 3
#define GP_EXIT_INTERNAL 4

struct gp_main {
	struct gp_out_opts out;
	enum gp_group_by group_by;
	int allow_truncated;
	double fail_above;
	const char *output;
	struct gp_pipeline_sink sinks[4]; /* --export: exporter and context  */
	const char *export_path[4];
	size_t nexports;
	regex_t filter;
	int have_filter;
	struct gp_pipeline *pipe;
};

static void gp_main_usage(FILE *f)
{
	fprintf(f,
		"usage: gpuphase-report [options] TRACE...\n"
		"       gpuphase-report --export FORMAT OUT [options] TRACE...\n"
		"       gpuphase-report diff [options] BASE NEW\n"
		"       gpuphase-report stability [options] RUN1 RUN2 ...\n"
		"\n"
		"options:\n"
		"  --format text|markdown|csv|json   report format (default text)\n"
		"  --sort total|launch|queue|execute|sync|count|name   operator order (default total)\n"
		"  --top N                    show the first N operators (default all)\n"
		"  --group-by kernel|nvtx|callsite|stream|phase   what an operator is (default kernel)\n"
		"  --filter REGEX             only operators whose name matches (POSIX extended)\n"
		"  --thresholds sync=30,launch=20,execute=80   verdict thresholds in %% of total\n"
		"  --outlier-factor F         iteration outlier: duration > F x p50 (default 1.5)\n"
		"  --straggler-pct P          rank straggler: busy > median + P%% (default 10)\n"
		"  --export FORMAT OUT        write chrome-trace, sqlite or html to OUT (repeatable);\n"
		"                             the report itself is then printed only with -o FILE\n"
		"  -o, --output FILE          write the report to FILE instead of stdout\n"
		"  --allow-truncated          exit 0 even when a trace has no footer (cut off)\n"
		"  --fail-above PCT           diff: exit 1 if the total or a top operator regressed > PCT%%\n"
		"  -h, --help                 this help\n"
		"\n"
		"Exit status: 0 ok; 1 diff regression above --fail-above; 2 bad usage or an\n"
		"unreadable, empty, foreign or corrupt trace; 3 a trace was truncated (the\n"
		"report covers its data up to the last whole block); 4 out of memory or a\n"
		"write error. Definitions of every number: docs/metrics.md.\n");
}

static int gp_main_parse_thresholds(const char *s, struct gp_thresholds *th)
{
	char *copy = strdup(s), *save = NULL;
	if (!copy)
		return -1;
	int rc = 0;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '='), *end;
		if (!eq) {
			rc = -1;
			break;
		}
		*eq = 0;
		double v = strtod(eq + 1, &end);
		if (*end || end == eq + 1 || v < 0 || v > 100) {
			rc = -1;
			break;
		}
		if (!strcmp(tok, "sync"))
			th->sync_pct = v;
		else if (!strcmp(tok, "launch"))
			th->launch_pct = v;
		else if (!strcmp(tok, "execute"))
			th->execute_pct = v;
		else {
			rc = -1;
			break;
		}
	}
	free(copy);
	return rc;
}

static int gp_main_pick(const char *opt, const char *v, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(v, names[i]))
			return i;
	fprintf(stderr, "gpuphase-report: %s: '%s' is not one of:", opt, v);
	for (int i = 0; i < n; i++)
		fprintf(stderr, " %s", names[i]);
	fprintf(stderr, "\n");
	return -1;
}

static const struct gp_exporter *gp_main_exporter(const char *name)
{
	if (!strcmp(name, "chrome-trace") || !strcmp(name, "chrome"))
		return &gp_export_chrome;
	if (!strcmp(name, "sqlite"))
		return &gp_export_sqlite;
	if (!strcmp(name, "html"))
		return &gp_export_html;
	return NULL;
}

/* Parse options from argv[*i...]; returns -1 on error, 0 ok, 1 for --help. */
static int gp_main_options(int argc, char **argv, struct gp_main *m, char ***files, int *nfiles)
{
	static const struct option lo[] = {
		{ "format", required_argument, 0, 'f' },   { "sort", required_argument, 0, 's' },
		{ "top", required_argument, 0, 't' },      { "group-by", required_argument, 0, 'g' },
		{ "filter", required_argument, 0, 'F' },   { "thresholds", required_argument, 0, 'T' },
		{ "outlier-factor", required_argument, 0, 'O' }, { "straggler-pct", required_argument, 0, 'S' },
		{ "export", required_argument, 0, 'e' },   { "output", required_argument, 0, 'o' },
		{ "allow-truncated", no_argument, 0, 'A' }, { "fail-above", required_argument, 0, 'X' },
		{ "help", no_argument, 0, 'h' },           { 0, 0, 0, 0 }
	};
	static const char *const fmts[] = { "text", "markdown", "csv", "json" };
	static const char *const sorts[] = { "total", "launch", "queue", "execute", "sync", "count", "name" };
	static const char *const groups[] = { "kernel", "nvtx", "callsite", "stream", "phase" };
	int c, k;
	char *end;
	optind = 1;
	while ((c = getopt_long(argc, argv, "ho:", lo, NULL)) != -1) {
		switch (c) {
		case 'f':
			if ((k = gp_main_pick("--format", optarg, fmts, 4)) < 0)
				return -1;
			m->out.format = (enum gp_format)k;
			break;
		case 's':
			if ((k = gp_main_pick("--sort", optarg, sorts, 7)) < 0)
				return -1;
			m->out.sort = (enum gp_sort)k;
			break;
		case 'g':
			if ((k = gp_main_pick("--group-by", optarg, groups, 5)) < 0)
				return -1;
			m->group_by = (enum gp_group_by)k;
			break;
		case 't': {
			long v = strtol(optarg, &end, 10);
			if (*end || end == optarg || v < 1) {
				fprintf(stderr, "gpuphase-report: --top: '%s' is not a positive integer\n", optarg);
				return -1;
			}
			m->out.top = (size_t)v;
			break;
		}
		case 'F': {
			if (m->have_filter)
				regfree(&m->filter);
			int rc = regcomp(&m->filter, optarg, REG_EXTENDED | REG_NOSUB);
			if (rc) {
				char msg[128];
				regerror(rc, &m->filter, msg, sizeof msg);
				fprintf(stderr, "gpuphase-report: --filter: '%s' is not a valid regular expression: %s\n",
					optarg, msg);
				return -1;
			}
			m->have_filter = 1;
			m->out.filter = &m->filter;
			break;
		}
		case 'T':
			if (gp_main_parse_thresholds(optarg, &m->out.th)) {
				fprintf(stderr, "gpuphase-report: --thresholds: '%s' is not a list of sync=P,launch=P,"
						"execute=P with 0 <= P <= 100\n", optarg);
				return -1;
			}
			break;
		case 'O':
			m->out.outlier_factor = strtod(optarg, &end);
			if (*end || end == optarg || m->out.outlier_factor <= 0) {
				fprintf(stderr, "gpuphase-report: --outlier-factor: '%s' is not a positive number\n", optarg);
				return -1;
			}
			break;
		case 'S':
			m->out.straggler_pct = strtod(optarg, &end);
			if (*end || end == optarg || m->out.straggler_pct < 0) {
				fprintf(stderr, "gpuphase-report: --straggler-pct: '%s' is not a number >= 0\n", optarg);
				return -1;
			}
			break;
		case 'X':
			m->fail_above = strtod(optarg, &end);
			if (*end || end == optarg || m->fail_above < 0) {
				fprintf(stderr, "gpuphase-report: --fail-above: '%s' is not a percentage >= 0\n", optarg);
				return -1;
			}
			break;
		case 'e': {
			const struct gp_exporter *ex = gp_main_exporter(optarg);
			if (!ex) {
				fprintf(stderr, "gpuphase-report: --export: '%s' is not one of: chrome-trace sqlite html\n",
					optarg);
				return -1;
			}
			if (optind >= argc) {
				fprintf(stderr, "gpuphase-report: --export %s: missing the output file\n", optarg);
				return -1;
			}
			if (m->nexports >= 4) {
				fprintf(stderr, "gpuphase-report: --export: at most 4 exports at once\n");
				return -1;
			}
			m->sinks[m->nexports].ex = ex;
			m->export_path[m->nexports] = argv[optind++];
			m->nexports++;
			break;
		}
		case 'o':
			m->output = optarg;
			break;
		case 'A':
			m->allow_truncated = 1;
			break;
		case 'h':
			return 1;
		default:
			return -1;
		}
	}
	*files = argv + optind;
	*nfiles = argc - optind;
	return 0;
}

static int gp_main_oom(const char *path)
{
	fprintf(stderr, "gpuphase-report: %s: out of memory while analysing\n", path);
	return GP_EXIT_INTERNAL;
}

/* Analyse files[0..nfiles) into m->pipe, saying once per trace what went
 * wrong and which traces are truncated. Returns 0 or an exit status. */
static int gp_main_add(char **files, int nfiles, struct gp_main *m, int *truncated)
{
	*truncated = 0;
	for (int i = 0; i < nfiles; i++) {
		char err[512];
		int rc = gp_pipeline_add(m->pipe, files[i], err, sizeof err);
		if (rc == -ENOMEM)
			return gp_main_oom(files[i]);
		if (rc) {
			fprintf(stderr, "gpuphase-report: %s\n", err);
			return GP_EXIT_USAGE;
		}
		const struct gp_rep *r = gp_pipeline_rep(m->pipe, gp_pipeline_count(m->pipe) - 1);
		if (!r->complete) {
			*truncated = 1;
			fprintf(stderr, "gpuphase-report: %s: truncated: no footer%s; the report covers the data up to "
					"the last whole block\n", files[i],
				r->truncated_bytes ? " and a partial block at the end" : "");
		}
	}
	return 0;
}

/* The pipeline of this run: every analysis, the footer facts, the exports. */
static int gp_main_pipeline(struct gp_main *m)
{
	struct gp_pipeline_opts po = { .group_by = m->group_by, .what = GP_PIPE_ALL,
				       .outlier_factor = m->out.outlier_factor, .sinks = m->sinks,
				       .nsinks = m->nexports };
	m->pipe = gp_pipeline_new(&po);
	return m->pipe ? 0 : GP_EXIT_INTERNAL;
}

static FILE *gp_main_out(struct gp_main *m)
{
	if (!m->output)
		return stdout;
	FILE *f = fopen(m->output, "w");
	if (!f)
		fprintf(stderr, "gpuphase-report: %s: cannot create: %s\n", m->output, strerror(errno));
	return f;
}

static int gp_main_close_out(struct gp_main *m, FILE *f)
{
	int bad = fflush(f) != 0 || ferror(f);
	if (f != stdout && fclose(f))
		bad = 1;
	if (bad) {
		fprintf(stderr, "gpuphase-report: %s: write error\n", m->output ? m->output : "stdout");
		return GP_EXIT_INTERNAL;
	}
	return 0;
}

/* The report, then the analyses' sections of each trace (text and
 * markdown; json carries them inside the report). */
static int gp_main_write(FILE *f, struct gp_main *m, const struct gp_rep *rep)
{
	if (gp_out_report(f, rep, &m->out))
		return GP_EXIT_INTERNAL;
	if (m->out.format != GP_FMT_TEXT && m->out.format != GP_FMT_MARKDOWN)
		return 0;
	int md = m->out.format == GP_FMT_MARKDOWN;
	struct gp_analysis_style style = { .markdown = md, .outlier_factor = m->out.outlier_factor };
	for (size_t x = 0; x < m->out.ntraces; x++) {
		const struct gp_rep *r = gp_out_trace_rep(rep, &m->out, x);
		if (!r)
			continue;
		if (m->out.ntraces > 1)
			fprintf(f, md ? "\n## Analyses of trace %zu: %s\n" : "\nAnalyses of trace %zu: %s\n", x + 1,
				r->path ? r->path : "?");
		if (gp_analyses_text(f, m->out.analyses[x], r, &style))
			return GP_EXIT_INTERNAL;
	}
	return 0;
}

static int gp_main_print(struct gp_main *m, const struct gp_rep *rep)
{
	FILE *f = gp_main_out(m);
	if (!f)
		return GP_EXIT_USAGE;
	int rc = gp_main_write(f, m, rep);
	int crc = gp_main_close_out(m, f);
	return rc ? rc : crc;
}

static int gp_main_diff(int argc, char **argv, struct gp_main *m)
{
	char **files;
	int nfiles;
	int rc = gp_main_options(argc, argv, m, &files, &nfiles);
	if (rc) {
		gp_main_usage(rc > 0 ? stdout : stderr);
		return rc > 0 ? GP_EXIT_OK : GP_EXIT_USAGE;
	}
	if (nfiles != 2 || m->nexports) {
		fprintf(stderr, "gpuphase-report: diff needs exactly two traces, BASE and NEW (no --export)\n");
		return GP_EXIT_USAGE;
	}
	struct gp_rep base, cur;
	int truncated;
	if ((rc = gp_main_pipeline(m)) || (rc = gp_main_add(files, 2, m, &truncated)))
		return rc;
	gp_pipeline_report(m->pipe, 0, 1, &base);
	gp_pipeline_report(m->pipe, 1, 1, &cur);
	FILE *f = gp_main_out(m);
	int regressed = 0;
	if (!f) {
		rc = GP_EXIT_USAGE;
	} else {
		if (gp_out_diff(f, &base, &cur, &m->out, m->fail_above, &regressed))
			rc = GP_EXIT_INTERNAL;
		int crc = gp_main_close_out(m, f);
		if (!rc)
			rc = crc;
	}
	gp_rep_free(&base);
	gp_rep_free(&cur);
	if (!rc && regressed)
		rc = GP_EXIT_REGRESSED;
	if (!rc && truncated && !m->allow_truncated)
		rc = GP_EXIT_TRUNCATED;
	return rc;
}

int main(int argc, char **argv)
{
	struct gp_main m;
	memset(&m, 0, sizeof m);
	m.out.th = GP_THRESHOLDS_DEFAULT;
	m.out.outlier_factor = 1.5;
	m.out.straggler_pct = 10.0;
	m.fail_above = -1;
	int rc;
	if (argc >= 2 && !strcmp(argv[1], "stability"))
		return gp_stability_main(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "diff")) {
		rc = gp_main_diff(argc - 1, argv + 1, &m);
		goto out;
	}
	char **files;
	int nfiles;
	rc = gp_main_options(argc, argv, &m, &files, &nfiles);
	if (rc) {
		gp_main_usage(rc > 0 ? stdout : stderr);
		rc = rc > 0 ? GP_EXIT_OK : GP_EXIT_USAGE;
		goto out;
	}
	if (nfiles < 1) {
		fprintf(stderr, "gpuphase-report: no trace given\n");
		gp_main_usage(stderr);
		rc = GP_EXIT_USAGE;
		goto out;
	}
	if (m.fail_above >= 0) {
		fprintf(stderr, "gpuphase-report: --fail-above only applies to `gpuphase-report diff`\n");
		rc = GP_EXIT_USAGE;
		goto out;
	}
	for (size_t e = 0; e < m.nexports; e++) {
		char err[512];
		m.sinks[e].ctx = m.sinks[e].ex->open(m.export_path[e], err, sizeof err);
		if (!m.sinks[e].ctx) {
			fprintf(stderr, "gpuphase-report: %s\n", err);
			for (size_t k = 0; k < e; k++)
				m.sinks[k].ex->close(m.sinks[k].ctx, NULL, &m.out, err, sizeof err);
			rc = GP_EXIT_USAGE;
			goto out;
		}
	}
	struct gp_rep rep;
	memset(&rep, 0, sizeof rep);
	int truncated = 0;
	rc = gp_main_pipeline(&m);
	if (!rc)
		rc = gp_main_add(files, nfiles, &m, &truncated);
	if (!rc && gp_pipeline_report(m.pipe, 0, (size_t)nfiles, &rep))
		rc = GP_EXIT_INTERNAL;
	m.out.analyses = m.pipe ? gp_pipeline_analyses(m.pipe) : NULL; /* json and html render them per trace */
	m.out.ntraces = rc ? 0 : (size_t)nfiles;
	for (size_t e = 0; e < m.nexports; e++) {
		char err[512];
		if (m.sinks[e].ex->close(m.sinks[e].ctx, rc ? NULL : &rep, &m.out, err, sizeof err) && !rc) {
			fprintf(stderr, "gpuphase-report: %s\n", err);
			rc = GP_EXIT_INTERNAL;
		} else if (!rc) {
			fprintf(stderr, "gpuphase-report: wrote %s %s\n", m.sinks[e].ex->name, m.export_path[e]);
		}
	}
	if (rc)
		goto out;
	if (!m.nexports || m.output)
		rc = gp_main_print(&m, &rep);
	gp_rep_free(&rep);
	if (!rc && truncated && !m.allow_truncated)
		rc = GP_EXIT_TRUNCATED;
out:
	if (m.have_filter)
		regfree(&m.filter);
	gp_pipeline_free(m.pipe);
	return rc;
}
