/*
 * main.c — gpuphase-report, the offline analyser's command line:
 *
 *   gpuphase-report [options] TRACE...            report (several = merged)
 *   gpuphase-report --export FORMAT OUT TRACE...  chrome-trace | perfetto | sqlite | html
 *   gpuphase-report diff [options] BASE NEW       per-operator deltas, CI gate
 *   gpuphase-report diff [options] B1 B2 -- N1 N2 several runs per side (diff.c)
 *   gpuphase-report stability [options] RUN...    repeatability (stability.c)
 *   gpuphase-report --partial -o F.gpp TRACE...   partial results (partial.h)
 *   gpuphase-report [--merge] F.gpp|TRACE ...     the report of them all
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
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "report/analyses/registry.h"
#include "report/core/analysis.h"
#include "report/core/category.h"
#include "report/analyses/depgraph.h"
#include "report/analyses/whatif.h"
#include "report/outputs/diff.h"
#include "report/outputs/export.h"
#include "report/util/outfile.h"
#include "report/outputs/output.h"
#include "report/outputs/partial.h"
#include "options.h"
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
	int merge;             /* --merge: merge several traces even if not one job */
	double fail_above;
	struct gp_diff_opts diff;         /* diff: --phase, --min-delta       */
	int diff_opt;                     /* one of them was given            */
	const char *output;
	const char *help_mode;            /* --help=export|diff|report        */
	struct gp_outfile outfile;        /* -o FILE, between open and commit */
	struct gp_pipeline_sink sinks[4]; /* --export: exporter and context  */
	const char *export_path[4];
	size_t nexports;
	regex_t filter;
	int have_filter;
	struct gp_pipeline *pipe;
	const char *whatif;               /* --whatif SPEC                      */
	const char *categories;           /* --categories FILE: rules first     */
	size_t targets;                   /* --counter-targets N                */
	int partial;                      /* --partial: write partial results  */
	int group_by_set, outlier_set;    /* --group-by, --outlier-factor given */
	const char *out_opt;              /* an option of the printed report    */
	char whatif_spec[GP_PARTIAL_MAX_SPEC]; /* the partials' --whatif       */
};

/* The help of one subcommand: "report", "diff" or "export" (its options
 * only, as `gpuphase COMMAND --help` shows them). */
static void gp_main_usage(FILE *f, const char *mode)
{
	int diff = !strcmp(mode, "diff"), exp = !strcmp(mode, "export");
	if (diff)
		fprintf(f, "usage: gpuphase-report diff [options] BASE NEW\n"
			   "       gpuphase-report diff [options] BASE1 BASE2 ... -- NEW1 NEW2 ...\n"
			   "\noptions:\n"
			   "  --fail-above PCT           exit 1 if the total or a gated operator regressed > PCT%%\n"
			   "  --phase launch|queue|execute|sync|total   the time compared and gated (default total)\n"
			   "  --min-delta DUR            ignore changes smaller than DUR (e.g. 50us, 2ms)\n"
			   "  --top N                    gate on the base's top N operators (default 10)\n");
	else if (exp)
		fprintf(f, "usage: gpuphase-report --export FORMAT OUT [options] TRACE...\n"
			   "\nFORMAT: chrome-trace (Perfetto, HTA), perfetto (protobuf), sqlite or html; repeatable.\n"
			   "\noptions:\n"
			   "  --top N                    html: operators in the charts (default 10)\n"
			   "  -o, --output FILE          also write the text report to FILE\n");
	else
		fprintf(f, "usage: gpuphase-report [options] TRACE...\n"
			   "\noptions:\n"
			   "  --format text|markdown|csv|json   report format (default text)\n"
			   "  --sort total|launch|queue|execute|sync|count|name   operator order (default total)\n"
			   "  --top N                    at most N items in every section (default all)\n"
			   "  --filter REGEX             only operators whose name matches (POSIX extended)\n"
			   "  --thresholds sync=30,launch=20,execute=80,min=1   verdict thresholds in %% of the\n"
			   "                             operator's total; min: operators below min %% of the\n"
			   "                             run's total get no verdict (\"minor\")\n"
			   "  --outlier-factor F         iteration outlier: duration > F x p50 (default 1.5)\n"
			   "  --straggler-pct P          rank straggler: busy > median + P%% (default 10)\n"
			   "  --whatif SPEC              predict one change: kernel=NAME:scale=F, sync=API, hoist=API,\n"
			   "                             site=GLOB, empty-waits, graph=NAME[:node_ns=N],\n"
			   "                             pinned=NAME[:call_ns=N], pinned-site=GLOB, defer=NAME,\n"
			   "                             defer-site=GLOB, queue-waits, overlap-copies (a NAME or GLOB\n"
			   "                             that matches nothing is bad usage: the closest are named)\n"
			   "  --merge                    merge several traces even when they are not one job\n"
			   "  --counter-targets N        print only the names of the N kernel operators with the\n"
			   "                             most total time, one a line (gpuphase record --counters from=)\n"
			   "  -o, --output FILE          write the report to FILE instead of stdout\n"
			   "  --partial                  with -o F.gpp: write partial results (what the report of\n"
			   "                             each trace is computed from) instead; any TRACE above\n"
			   "                             may be such a file (docs/partial-format.md)\n");
	fprintf(f, "  --group-by kernel|nvtx|callsite|stream|phase   what an operator is (default kernel)\n"
		   "  --categories FILE          kernel-name -> category rules (CATEGORY<TAB>REGEX a line) tried\n"
		   "                             before GPUPHASE_CATEGORIES's and the defaults (docs/metrics.md §22)\n"
		   "  --allow-truncated          exit 0 even when a trace has no footer (cut off)\n"
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
		char *eq = strchr(tok, '=');
		if (!eq) {
			rc = -1;
			break;
		}
		*eq = 0;
		double v;
		if (gp_options_number(eq + 1, 0, 1, &v) || v > 100) {
			rc = -1;
			break;
		}
		if (!strcmp(tok, "sync"))
			th->sync_pct = v;
		else if (!strcmp(tok, "launch"))
			th->launch_pct = v;
		else if (!strcmp(tok, "execute"))
			th->execute_pct = v;
		else if (!strcmp(tok, "min"))
			th->min_share_pct = v;
		else {
			rc = -1;
			break;
		}
	}
	free(copy);
	return rc;
}

/* A duration: a number with ns, us, ms or s (a bare number is ns). */
static int gp_main_parse_dur(const char *s, uint64_t *ns)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || !(v >= 0))
		return -1;
	double mul = !*end || !strcmp(end, "ns") ? 1 : !strcmp(end, "us") ? 1e3 : !strcmp(end, "ms") ? 1e6
		   : !strcmp(end, "s") ? 1e9 : -1;
	if (mul < 0 || v * mul > 1.8e19)
		return -1;
	*ns = (uint64_t)(v * mul);
	return 0;
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
	if (!strcmp(name, "perfetto"))
		return &gp_export_perfetto;
	return NULL;
}

/* The options that shape the printed report: --format, --sort, --top,
 * --filter, --thresholds, --straggler-pct, --counter-targets. Returns 1
 * when option c was one of them and parsed, 0 when it is not one of
 * them, -1 on a bad value (said on stderr). */
static int gp_main_opt_output(int c, struct gp_main *m)
{
	static const char *const fmts[] = { "text", "markdown", "csv", "json" };
	static const char *const sorts[] = { "total", "launch", "queue", "execute", "sync", "count", "name" };
	int k;
	char *end;

	switch (c) {
	case 'f':
		m->out_opt = "--format";
		if ((k = gp_main_pick("--format", optarg, fmts, 4)) < 0)
			return -1;
		m->out.format = (enum gp_format)k;
		return 1;
	case 's':
		m->out_opt = "--sort";
		if ((k = gp_main_pick("--sort", optarg, sorts, 7)) < 0)
			return -1;
		m->out.sort = (enum gp_sort)k;
		return 1;
	case 't': {
		m->out_opt = "--top";
		long v = strtol(optarg, &end, 10);
		if (*end || end == optarg || v < 1) {
			fprintf(stderr, "gpuphase-report: --top: '%s' is not a positive integer\n", optarg);
			return -1;
		}
		m->out.top = (size_t)v;
		return 1;
	}
	case 'F': {
		m->out_opt = "--filter";
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
		m->out.filter_src = optarg;
		return 1;
	}
	case 'T':
		m->out_opt = "--thresholds";
		if (gp_main_parse_thresholds(optarg, &m->out.th)) {
			fprintf(stderr, "gpuphase-report: --thresholds: '%s' is not a list of sync=P,launch=P,"
					"execute=P,min=P with 0 <= P <= 100\n", optarg);
			return -1;
		}
		return 1;
	case 'S':
		m->out_opt = "--straggler-pct";
		if (gp_options_number(optarg, 0, 1, &m->out.straggler_pct)) {
			fprintf(stderr, "gpuphase-report: --straggler-pct: '%s' is not a number >= 0\n", optarg);
			return -1;
		}
		return 1;
	case 'K': {
		m->out_opt = "--counter-targets";
		long v = strtol(optarg, &end, 10);
		if (*end || end == optarg || v < 1) {
			fprintf(stderr, "gpuphase-report: --counter-targets: '%s' is not a positive integer\n", optarg);
			return -1;
		}
		m->targets = (size_t)v;
		return 1;
	}
	default:
		return 0;
	}
}

/* The options that steer the analyses: --group-by, --outlier-factor,
 * --whatif, --fail-above and the diff's --phase and --min-delta. Returns
 * as gp_main_opt_output does. */
static int gp_main_opt_analysis(int c, struct gp_main *m)
{
	static const char *const groups[] = { "kernel", "nvtx", "callsite", "stream", "phase" };
	int k;

	switch (c) {
	case 'g':
		if ((k = gp_main_pick("--group-by", optarg, groups, 5)) < 0)
			return -1;
		m->group_by = (enum gp_group_by)k;
		m->group_by_set = 1;
		return 1;
	case 'O':
		m->outlier_set = 1;
		if (gp_options_number(optarg, 0, 0, &m->out.outlier_factor)) {
			fprintf(stderr, "gpuphase-report: --outlier-factor: '%s' is not a positive number\n", optarg);
			return -1;
		}
		return 1;
	case 'W': {
		struct gp_dg_change ch;
		char name[128], why[160];
		if (gp_dg_parse(optarg, &ch, name, sizeof name, why, sizeof why)) {
			fprintf(stderr, "gpuphase-report: --whatif: '%s': %s\n", optarg, why);
			return -1;
		}
		m->whatif = optarg;
		return 1;
	}
	case 'X':
		if (gp_options_number(optarg, 0, 1, &m->fail_above)) {
			fprintf(stderr, "gpuphase-report: --fail-above: '%s' is not a percentage >= 0\n", optarg);
			return -1;
		}
		return 1;
	case 'P': {
		static const char *const phases[] = { "total", "launch", "queue", "execute", "sync" };
		if ((k = gp_main_pick("--phase", optarg, phases, 5)) < 0)
			return -1;
		m->diff.phase = (enum gp_diff_phase)k;
		m->diff_opt = 1;
		return 1;
	}
	case 'C':
		m->categories = optarg;
		return 1;
	case 'M':
		if (gp_main_parse_dur(optarg, &m->diff.min_delta_ns)) {
			fprintf(stderr, "gpuphase-report: --min-delta: '%s' is not a duration (e.g. 50us, 2ms, 1s)\n",
				optarg);
			return -1;
		}
		m->diff_opt = 1;
		return 1;
	default:
		return 0;
	}
}

/* The options that say what is read and written: --export (which takes
 * the next argument as its file), --output, --allow-truncated, --merge,
 * --partial. Returns as gp_main_opt_output does. */
static int gp_main_opt_io(int c, struct gp_main *m, int argc, char **argv)
{
	switch (c) {
	case 'e': {
		const struct gp_exporter *ex = gp_main_exporter(optarg);
		if (!ex) {
			fprintf(stderr, "gpuphase-report: --export: '%s' is not one of: chrome-trace perfetto sqlite html\n",
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
		return 1;
	}
	case 'o':
		m->output = optarg;
		return 1;
	case 'A':
		m->allow_truncated = 1;
		return 1;
	case 'G':
		m->merge = 1;
		return 1;
	case 'R':
		m->partial = 1;
		return 1;
	default:
		return 0;
	}
}

/* Parse options from argv[*i...]; returns -1 on error, 0 ok, 1 for --help.
 * The options are options.c's table (the `gpuphase` command reads it too);
 * each is parsed by the helper for its concern above. */
static int gp_main_options(int argc, char **argv, struct gp_main *m, char ***files, int *nfiles)
{
	struct option lo[GP_OPTIONS_MAX + 1];
	char shortopts[2 * GP_OPTIONS_MAX + 2];
	gp_options_getopt(GP_OPTIONS_REPORT, lo, shortopts);
	int c, r;
	optind = 1;
	opterr = 0; /* one line of ours instead of getopt's */
	while ((c = getopt_long(argc, argv, shortopts, lo, NULL)) != -1) {
		if ((r = gp_main_opt_output(c, m)) == 0 && (r = gp_main_opt_analysis(c, m)) == 0)
			r = gp_main_opt_io(c, m, argc, argv);
		if (r < 0)
			return -1;
		if (r > 0)
			continue;
		switch (c) {
		case 'h':
			m->help_mode = optarg;
			return 1;
		case ':':
			fprintf(stderr, "gpuphase-report: option '%s' needs a value (gpuphase-report --help lists the "
					"options)\n", argv[optind - 1]);
			return -1;
		default:
			fprintf(stderr, "gpuphase-report: unknown option '%s' (gpuphase-report --help lists the options)\n",
				argv[optind - 1]);
			return -1;
		}
	}
	*files = argv + optind;
	*nfiles = argc - optind;
	return 0;
}

/* Progress on stderr, only on a terminal and only once a run has taken
 * more than a second: "gpuphase-report: TRACE: 42%" (pass 1 is the first
 * half, pass 2 the second), redrawn at most 5 times a second, erased at
 * the end (gp_main_progress_done). */
struct gp_main_progress {
	struct timespec t0, last;
	const char *path;
	uint64_t size;
	int shown;
};

static double gp_main_since(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

static void gp_main_progress(void *ctx, const char *path, int pass, uint64_t bytes)
{
	struct gp_main_progress *pr = ctx;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (pr->path != path) {
		struct stat st;
		pr->path = path;
		pr->size = stat(path, &st) == 0 && st.st_size > 0 ? (uint64_t)st.st_size : 0;
	}
	if (gp_main_since(&pr->t0, &now) < 1.0 || (pr->shown && gp_main_since(&pr->last, &now) < 0.2))
		return;
	double frac = pr->size ? (double)bytes / (double)pr->size : 0;
	if (frac > 1)
		frac = 1;
	fprintf(stderr, "\rgpuphase-report: %s: %3.0f%%\033[K", path, 100.0 * (frac + (pass == 2)) / 2.0);
	pr->last = now;
	pr->shown = 1;
}

static struct gp_main_progress gp_main_pr;

static void gp_main_progress_done(void)
{
	if (gp_main_pr.shown)
		fprintf(stderr, "\r\033[K");
	gp_main_pr.shown = 0;
}

static int gp_main_oom(const char *path)
{
	fprintf(stderr, "gpuphase-report: %s: out of memory while analysing\n", path);
	return GP_EXIT_INTERNAL;
}

/* Analyse files[0..nfiles) into m->pipe (partial results: their traces as
 * they were analysed), saying once per trace what went wrong and which
 * traces are truncated. Returns 0 or an exit status. */
static int gp_main_add(char **files, int nfiles, struct gp_main *m, int *truncated)
{
	*truncated = 0;
	for (int i = 0; i < nfiles; i++) {
		char err[512];
		size_t before = gp_pipeline_count(m->pipe);
		int rc = gp_partial_is(files[i]) ? gp_pipeline_add_partial(m->pipe, files[i], err, sizeof err)
						 : gp_pipeline_add(m->pipe, files[i], err, sizeof err);
		gp_main_progress_done();
		if (rc == -ENOMEM)
			return gp_main_oom(files[i]);
		if (rc) {
			fprintf(stderr, "gpuphase-report: %s\n", err);
			return GP_EXIT_USAGE;
		}
		for (size_t k = before; k < gp_pipeline_count(m->pipe); k++) {
			const struct gp_rep *r = gp_pipeline_rep(m->pipe, k);
			if (r->complete)
				continue;
			*truncated = 1;
			fprintf(stderr, "gpuphase-report: %s: truncated: no footer%s; the report covers the data up to "
					"the last whole block; lost: the records of the program's last flush interval "
					"(GPUPHASE_FLUSH_MS), GPU work CUPTI had not delivered, and the final drop counts\n",
				r->path ? r->path : files[i], r->truncated_bytes ? " and a partial block at the end" : "");
		}
	}
	/* a --whatif naming nothing of the traces is bad usage, not "saves 0" */
	if (m->whatif && gp_whatif_refused(stderr, m->whatif, gp_pipeline_analyses(m->pipe), gp_pipeline_count(m->pipe)))
		return GP_EXIT_USAGE;
	return 0;
}

/* Partial results among the inputs were made with a --group-by, an
 * --outlier-factor and a --whatif, which shape the aggregates: this run
 * takes theirs (they must all agree, and so must those options when given
 * here). Returns 0 or an exit status after one message. */
static int gp_main_partials(struct gp_main *m, char **files, int nfiles)
{
	static const char *const groups[] = { "kernel", "nvtx", "callsite", "stream", "phase" };
	struct gp_partial_opts o, first;
	const char *first_path = NULL;
	char err[512];
	for (int i = 0; i < nfiles; i++) {
		if (!gp_partial_is(files[i]))
			continue;
		int rc = gp_partial_read_opts(files[i], first_path ? &o : &first, err, sizeof err);
		if (rc) {
			fprintf(stderr, "gpuphase-report: %s\n", err);
			return rc == -ENOMEM ? GP_EXIT_INTERNAL : GP_EXIT_USAGE;
		}
		if (!first_path) {
			first_path = files[i];
		} else if (o.group_by != first.group_by || o.outlier_factor != first.outlier_factor ||
			   strcmp(o.whatif, first.whatif)) {
			fprintf(stderr, "gpuphase-report: %s and %s are partial results made with different options "
					"(--group-by, --outlier-factor or --whatif): make them all with the same\n",
				first_path, files[i]);
			return GP_EXIT_USAGE;
		}
	}
	if (!first_path)
		return 0;
	const char *why = NULL;
	if (m->nexports)
		why = "--export needs the records: give the traces themselves, not partial results";
	else if (m->group_by_set && (int)m->group_by != first.group_by)
		why = "--group-by differs from the one the partial results were made with";
	else if (m->outlier_set && m->out.outlier_factor != first.outlier_factor)
		why = "--outlier-factor differs from the one the partial results were made with";
	else if (m->whatif && strcmp(m->whatif, first.whatif))
		why = "--whatif differs from the one the partial results were made with";
	if (why) {
		fprintf(stderr, "gpuphase-report: %s (%s: --group-by %s --outlier-factor %g%s%s); make them again "
				"with this run's options, or leave those options out\n", why, first_path,
			groups[first.group_by], first.outlier_factor, first.whatif[0] ? " --whatif " : "", first.whatif);
		return GP_EXIT_USAGE;
	}
	m->group_by = (enum gp_group_by)first.group_by;
	m->out.outlier_factor = first.outlier_factor;
	if (first.whatif[0]) {
		snprintf(m->whatif_spec, sizeof m->whatif_spec, "%s", first.whatif);
		m->whatif = m->whatif_spec;
	}
	return 0;
}

/* --partial -o FILE: the traces' reports and analyses into FILE (through
 * outfile.c, like every output). Returns 0 or an exit status. */
static int gp_main_write_partial(struct gp_main *m)
{
	char err[512];
	size_t n = gp_pipeline_count(m->pipe);
	if (gp_outfile_open(&m->outfile, m->output, GP_OUTFILE_PARTIAL, err, sizeof err)) {
		fprintf(stderr, "gpuphase-report: %s\n", err);
		return GP_EXIT_USAGE;
	}
	struct gp_partial_opts o = { .group_by = (int)m->group_by, .outlier_factor = m->out.outlier_factor };
	snprintf(o.whatif, sizeof o.whatif, "%s", m->whatif ? m->whatif : "");
	struct gp_rep *flat = calloc(n ? n : 1, sizeof *flat);
	int rc = flat ? 0 : -ENOMEM;
	for (size_t i = 0; !rc && i < n; i++)
		flat[i] = *gp_pipeline_rep(m->pipe, i); /* shallow: the pipeline keeps them */
	if (!rc)
		rc = gp_partial_write(m->outfile.f, &o, flat, gp_pipeline_analyses(m->pipe), n, err, sizeof err);
	free(flat);
	if (rc) {
		gp_outfile_discard(&m->outfile);
		fprintf(stderr, "gpuphase-report: %s: %s\n", m->output, rc == -ENOMEM ? "out of memory" : err);
		return GP_EXIT_INTERNAL;
	}
	if (gp_outfile_commit(&m->outfile, err, sizeof err)) {
		fprintf(stderr, "gpuphase-report: %s\n", err);
		return GP_EXIT_INTERNAL;
	}
	fprintf(stderr, "gpuphase-report: wrote partial results of %zu trace%s to %s\n", n, n == 1 ? "" : "s",
		m->output);
	return 0;
}

/* The pipeline of this run: every analysis, the footer facts, the exports. */
static int gp_main_pipeline(struct gp_main *m)
{
	struct gp_pipeline_opts po = { .group_by = m->group_by, .what = GP_PIPE_ALL,
				       .outlier_factor = m->out.outlier_factor, .sinks = m->sinks,
				       .nsinks = m->nexports, .whatif = m->whatif };
	if (isatty(STDERR_FILENO)) {
		clock_gettime(CLOCK_MONOTONIC, &gp_main_pr.t0);
		po.progress = gp_main_progress;
		po.progress_ctx = &gp_main_pr;
	}
	m->pipe = gp_pipeline_new(&po);
	return m->pipe ? 0 : GP_EXIT_INTERNAL;
}

static enum gp_outfile_kind gp_main_out_kind(const struct gp_main *m)
{
	if (m->partial)
		return GP_OUTFILE_PARTIAL;
	return m->out.format == GP_FMT_JSON ? GP_OUTFILE_JSON : GP_OUTFILE_TEXT;
}

/* -o FILE through outfile.c (a temporary file renamed at the end), else
 * stdout. NULL after one message. */
static FILE *gp_main_out(struct gp_main *m)
{
	if (!m->output)
		return stdout;
	char err[512];
	if (gp_outfile_open(&m->outfile, m->output, gp_main_out_kind(m), err, sizeof err)) {
		fprintf(stderr, "gpuphase-report: %s\n", err);
		return NULL;
	}
	return m->outfile.f;
}

/* Finish the output: stdout flushed, or FILE committed when everything
 * before went well (failed: discarded, the old FILE left as it was). */
static int gp_main_close_out(struct gp_main *m, FILE *f, int failed)
{
	if (f != stdout) {
		char err[512];
		if (failed) {
			gp_outfile_discard(&m->outfile);
			return 0;
		}
		if (gp_outfile_commit(&m->outfile, err, sizeof err)) {
			fprintf(stderr, "gpuphase-report: %s\n", err);
			return GP_EXIT_INTERNAL;
		}
		return 0;
	}
	if (fflush(f) != 0 || ferror(f)) {
		fprintf(stderr, "gpuphase-report: stdout: write error\n");
		return GP_EXIT_INTERNAL;
	}
	return 0;
}

static const struct gp_rep *gp_main_targets_rep; /* qsort's context */
static int gp_main_targets_cmp(const void *a, const void *b)
{
	const struct gp_rep_group *g = gp_main_targets_rep->groups;
	uint64_t x = gp_rep_group_total(&g[*(const size_t *)a]), y = gp_rep_group_total(&g[*(const size_t *)b]);
	return x > y ? -1 : x < y ? 1 : strcmp(g[*(const size_t *)a].name, g[*(const size_t *)b].name);
}

/* --counter-targets N: the names of the N kernel operators with the most
 * total time (launch + execute + sync), one a line, as the operator table
 * names them: what `gpuphase record --counters from=TRACE` samples. */
static int gp_main_targets(struct gp_main *m, const struct gp_rep *rep)
{
	size_t *idx = malloc((rep->ngroups ? rep->ngroups : 1) * sizeof *idx), n = 0;
	if (!idx)
		return GP_EXIT_INTERNAL;
	for (size_t i = 0; i < rep->ngroups; i++)
		if (rep->groups[i].kinds & GP_GKIND_KERNEL)
			idx[n++] = i;
	gp_main_targets_rep = rep;
	if (n > 1)
		qsort(idx, n, sizeof *idx, gp_main_targets_cmp);
	FILE *f = gp_main_out(m);
	for (size_t i = 0; f && i < n && i < m->targets; i++)
		fprintf(f, "%s\n", rep->groups[idx[i]].name);
	free(idx);
	return f ? gp_main_close_out(m, f, 0) : GP_EXIT_USAGE;
}

/* Refuse a bad -o FILE before reading any trace. 0, or 2 after a message. */
static int gp_main_check_out(struct gp_main *m, char **files, int nfiles)
{
	gp_outfile_inputs(files, (size_t)nfiles);
	char err[512];
	if (m->output && gp_outfile_check(m->output, gp_main_out_kind(m), err, sizeof err)) {
		fprintf(stderr, "gpuphase-report: %s\n", err);
		return GP_EXIT_USAGE;
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
	struct gp_analysis_style style = { .markdown = md, .outlier_factor = m->out.outlier_factor, .top = m->out.top };
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
	int crc = gp_main_close_out(m, f, rc != 0);
	return rc ? rc : crc;
}

/* diff BASE NEW, or diff BASE... -- NEW...: "--" is kept apart from
 * getopt (which would swallow it) as a separator argument. */
static char gp_main_sep[] = "\001--";

/* Several traces of one job (rank variables, a job id) are merged. */
static int gp_main_one_job(struct gp_main *m, size_t n)
{
	const struct gp_rep **r = calloc(n, sizeof *r);
	if (!r)
		return 1;
	for (size_t i = 0; i < n; i++)
		r[i] = gp_pipeline_rep(m->pipe, i);
	int one = gp_rep_one_job(r, n);
	free(r);
	return one;
}

/* Traces that are not one job: each its own report, in argument order. */
static int gp_main_print_each(struct gp_main *m, size_t n)
{
	FILE *f = gp_main_out(m);
	if (!f)
		return GP_EXIT_USAGE;
	struct gp_analyses *const *sets = gp_pipeline_analyses(m->pipe);
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		struct gp_rep rep;
		if (gp_pipeline_report(m->pipe, i, 1, &rep)) {
			rc = GP_EXIT_INTERNAL;
			break;
		}
		m->out.analyses = sets ? sets + i : NULL;
		m->out.ntraces = 1;
		if (i && (m->out.format == GP_FMT_TEXT || m->out.format == GP_FMT_MARKDOWN))
			fputs("\n", f);
		rc = gp_main_write(f, m, &rep);
		gp_rep_free(&rep);
	}
	int crc = gp_main_close_out(m, f, rc != 0);
	return rc ? rc : crc;
}

static int gp_main_diff(int argc, char **argv, struct gp_main *m)
{
	char **files;
	int nfiles;
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			argv[i] = gp_main_sep;
			break;
		}
	int rc = gp_main_options(argc, argv, m, &files, &nfiles);
	if (rc) {
		if (rc > 0)
			gp_main_usage(stdout, "diff");
		return rc > 0 ? GP_EXIT_OK : GP_EXIT_USAGE;
	}
	int sep = -1;
	for (int i = 0; i < nfiles; i++)
		if (files[i] == gp_main_sep)
			sep = i;
	int nb = sep >= 0 ? sep : 1, nn = sep >= 0 ? nfiles - sep - 1 : nfiles - 1;
	if (m->nexports || m->partial || (sep < 0 && nfiles != 2) || nb < 1 || nn < 1) {
		fprintf(stderr, "gpuphase-report: diff needs BASE NEW, or BASE1 BASE2 ... -- NEW1 NEW2 ... (no --export "
				"or --partial; gpuphase-report diff --help)\n");
		return GP_EXIT_USAGE;
	}
	if (sep >= 0) /* close the gap: base runs, then new runs */
		memmove(files + sep, files + sep + 1, (size_t)nn * sizeof *files);
	nfiles = nb + nn;
	struct gp_rep *reps = calloc((size_t)nfiles, sizeof *reps);
	if (!reps)
		return gp_main_oom("diff");
	int truncated;
	if ((rc = gp_main_check_out(m, files, nfiles)) || (rc = gp_main_partials(m, files, nfiles)) ||
	    (rc = gp_main_pipeline(m)) || (rc = gp_main_add(files, nfiles, m, &truncated))) {
		free(reps);
		return rc;
	}
	if (gp_pipeline_count(m->pipe) != (size_t)nfiles) {
		fprintf(stderr, "gpuphase-report: diff: each input is one run: give partial results of one trace each "
				"(these hold %zu traces for %d inputs)\n", gp_pipeline_count(m->pipe), nfiles);
		free(reps);
		return GP_EXIT_USAGE;
	}
	for (int i = 0; i < nfiles && !rc; i++)
		if (gp_pipeline_report(m->pipe, (size_t)i, 1, &reps[i]))
			rc = GP_EXIT_INTERNAL;
	FILE *f = rc ? NULL : gp_main_out(m);
	int regressed = 0;
	if (!rc && !f) {
		rc = GP_EXIT_USAGE;
	} else if (!rc) {
		m->diff.fail_above_pct = m->fail_above;
		m->diff.top = m->out.top;
		if (gp_diff_write(f, reps, (size_t)nb, reps + nb, (size_t)nn, &m->diff, &m->out, &regressed))
			rc = GP_EXIT_INTERNAL;
		int crc = gp_main_close_out(m, f, rc != 0);
		if (!rc)
			rc = crc;
	}
	for (int i = 0; i < nfiles; i++)
		gp_rep_free(&reps[i]);
	free(reps);
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
		if (rc > 0)
			gp_main_usage(stdout, m.help_mode && !strcmp(m.help_mode, "export") ? "export"
					      : m.help_mode && !strcmp(m.help_mode, "diff") ? "diff" : "report");
		rc = rc > 0 ? GP_EXIT_OK : GP_EXIT_USAGE;
		goto out;
	}
	if (nfiles < 1) {
		fprintf(stderr, "gpuphase-report: no trace given (gpuphase-report --help lists the options)\n");
		rc = GP_EXIT_USAGE;
		goto out;
	}
	char cerr[512];
	if (gp_category_load(m.categories, cerr, sizeof cerr)) {
		fprintf(stderr, "gpuphase-report: categories: %s\n", cerr);
		rc = GP_EXIT_USAGE;
		goto out;
	}
	if (m.fail_above >= 0 || m.diff_opt) {
		fprintf(stderr, "gpuphase-report: --fail-above, --phase and --min-delta only apply to "
				"`gpuphase-report diff`\n");
		rc = GP_EXIT_USAGE;
		goto out;
	}
	if (m.partial && (!m.output || m.nexports || m.out_opt)) {
		fprintf(stderr, "gpuphase-report: --partial writes partial results, not a report: it needs -o FILE "
				"and takes no %s (give that to the run that merges them)\n",
			m.nexports ? "--export" : m.out_opt ? m.out_opt : "report option");
		rc = GP_EXIT_USAGE;
		goto out;
	}
	if ((rc = gp_main_check_out(&m, files, nfiles)) || (rc = gp_main_partials(&m, files, nfiles)))
		goto out;
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
	if (!rc && m.partial) {
		rc = gp_main_write_partial(&m);
		if (!rc && truncated && !m.allow_truncated)
			rc = GP_EXIT_TRUNCATED;
		goto out;
	}
	size_t ntr = m.pipe ? gp_pipeline_count(m.pipe) : 0; /* partial results may hold several */
	if (!rc && ntr > 1 && !m.merge && !gp_main_one_job(&m, ntr)) {
		/* not one job: one report after the other (metrics.md §9) */
		if (m.nexports) {
			fprintf(stderr, "gpuphase-report: these traces are not one job (no shared job id, nor distinct "
					"ranks of one world size): export them one at a time, or give --merge\n");
			char err[512];
			for (size_t e = 0; e < m.nexports; e++)
				m.sinks[e].ex->close(m.sinks[e].ctx, NULL, &m.out, err, sizeof err);
			rc = GP_EXIT_USAGE;
			goto out;
		}
		rc = gp_main_print_each(&m, ntr);
		if (!rc && truncated && !m.allow_truncated)
			rc = GP_EXIT_TRUNCATED;
		goto out;
	}
	if (!rc && !ntr) {
		fprintf(stderr, "gpuphase-report: the partial results given hold no trace\n");
		rc = GP_EXIT_USAGE;
	}
	if (!rc && gp_pipeline_report(m.pipe, 0, ntr, &rep))
		rc = GP_EXIT_INTERNAL;
	if (!rc && m.targets) { /* the names a second run samples counters of */
		rc = gp_main_targets(&m, &rep);
		gp_rep_free(&rep);
		goto out;
	}
	m.out.analyses = m.pipe ? gp_pipeline_analyses(m.pipe) : NULL; /* json and html render them per trace */
	m.out.job_analyses = m.pipe && !rc ? gp_pipeline_job_analyses(m.pipe) : NULL;
	m.out.ntraces = rc ? 0 : ntr;
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
