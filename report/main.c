/*
 * main.c — gpuphase-report, the offline analyser's command line:
 *
 *   gpuphase-report [options] TRACE...            report (several = merged)
 *   gpuphase-report --export FORMAT OUT TRACE...  chrome-trace | sqlite | html
 *   gpuphase-report diff [options] BASE NEW       per-operator deltas, CI gate
 *   gpuphase-report stability [options] RUN...    repeatability (stability.c)
 *
 * Reads each trace twice through gp_reader (pass 1: strings, stacks,
 * iterations, status; pass 2: the join and sync attribution, see
 * analysis.h), so the analysis core's memory does not grow with the trace
 * length. An ordinary single-threaded program: every problem with
 * an input is one message on stderr naming the file and the problem, and a
 * non-zero exit status (docs/metrics.md "Exit status").
 */
#include <errno.h>
#include <getopt.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "export.h"
#include "gp_reader.h"
#include "output.h"
#include "xa.h"

#define GP_EXIT_OK 0
#define GP_EXIT_REGRESSED 1
#define GP_EXIT_USAGE 2
#define GP_EXIT_TRUNCATED 3
#define GP_EXIT_INTERNAL 4

struct gp_main_export {
	const struct gp_exporter *ex;
	const char *path;
	void *ctx;
};

struct gp_main {
	struct gp_out_opts out;
	enum gp_group_by group_by;
	int allow_truncated;
	double fail_above;
	const char *output;
	struct gp_main_export exports[4];
	size_t nexports;
	regex_t filter;
	int have_filter;
	/* extra analyses (xa.h), one per analysed trace */
	struct gp_xa *cur_xa;
	struct gp_xa **xas;
	size_t nxas;
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
		"  --group-by kernel|nvtx|callsite|stream   what an operator is (default kernel)\n"
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
	static const char *const groups[] = { "kernel", "nvtx", "callsite", "stream" };
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
			if ((k = gp_main_pick("--group-by", optarg, groups, 4)) < 0)
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
			m->exports[m->nexports].ex = ex;
			m->exports[m->nexports].path = argv[optind++];
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

/* One pass over a trace. Returns 0, GP_EXIT_USAGE after printing why, or
 * GP_EXIT_INTERNAL (out of memory) without printing: gp_main_analyse says it
 * once for every way it runs out of memory. */
static int gp_main_pass(const char *path, struct gp_an *an, int pass, struct gp_main *m, struct gp_rep *rep)
{
	char err[512];
	struct gp_reader *rd;
	int rc = gp_reader_open(path, &rd, err, sizeof err);
	if (rc) {
		fprintf(stderr, "gpuphase-report: %s\n", err);
		return GP_EXIT_USAGE;
	}
	const union gp_rec *recs;
	size_t n;
	while ((rc = gp_reader_next_block(rd, &recs, &n, err, sizeof err)) > 0) {
		for (size_t i = 0; i < n;) {
			uint32_t ns = gp_rec_slots(&recs[i]);
			if (pass == 1) {
				rc = gp_an_scan1(an, &recs[i], ns);
				if (!rc && m->cur_xa)
					rc = gp_xa_scan1(m->cur_xa, &recs[i]);
			} else {
				rc = gp_an_scan2(an, &recs[i], ns);
				if (!rc && m->cur_xa)
					rc = gp_xa_record(m->cur_xa, an, &recs[i]);
				for (size_t e = 0; e < m->nexports; e++)
					if (m->exports[e].ex->record)
						m->exports[e].ex->record(m->exports[e].ctx, an, &recs[i]);
			}
			if (rc) {
				gp_reader_close(rd);
				return GP_EXIT_INTERNAL;
			}
			i += ns;
		}
	}
	if (rc < 0) {
		fprintf(stderr, "gpuphase-report: %s\n", err);
		gp_reader_close(rd);
		return GP_EXIT_USAGE;
	}
	if (pass == 1) {
		const struct gp_trace_info *info = gp_reader_info(rd);
		const struct gp_trace_end *end = gp_reader_end(rd);
		rep->version = info->version;
		rep->clock_id = info->clock_id;
		rep->pid = info->pid;
		rep->complete = end->complete;
		rep->truncated_bytes = end->truncated_bytes;
		rep->end_reason = end->end_reason;
		rep->write_errors = end->write_errors;
		rep->lost_after_stop = end->lost_after_stop;
		rep->kv = calloc(info->nkv ? info->nkv : 1, sizeof *rep->kv);
		if (!rep->kv || !(rep->path = strdup(path))) {
			gp_reader_close(rd);
			return GP_EXIT_INTERNAL;
		}
		for (size_t i = 0; i < info->nkv; i++) {
			rep->kv[i].key = strdup(info->keys[i] ? info->keys[i] : "");
			rep->kv[i].value = strdup(info->values[i] ? info->values[i] : "");
			rep->nkv++;
			if (!rep->kv[i].key || !rep->kv[i].value) {
				gp_reader_close(rd);
				return GP_EXIT_INTERNAL;
			}
		}
		/* the footer's counters complete the DROPS records */
		rep->dropped_ring = end->dropped_ring;
		rep->dropped_cupti = end->dropped_cupti;
	}
	gp_reader_close(rd);
	return 0;
}

static void gp_main_op_sink(const struct gp_an_op *op, void *ctx)
{
	struct gp_main *m = ctx;
	if (m->cur_xa)
		gp_xa_op(m->cur_xa, op);
	for (size_t e = 0; e < m->nexports; e++)
		if (m->exports[e].ex->op)
			m->exports[e].ex->op(op, m->exports[e].ctx);
}

static void gp_main_wait_sink(const struct gp_an_wait *w, void *ctx)
{
	struct gp_main *m = ctx;
	for (size_t e = 0; e < m->nexports; e++)
		if (m->exports[e].ex->wait)
			m->exports[e].ex->wait(w, m->exports[e].ctx);
}

static int gp_main_oom(const char *path)
{
	fprintf(stderr, "gpuphase-report: %s: out of memory while analysing\n", path);
	return GP_EXIT_INTERNAL;
}

/* Analyse one trace into rep. Returns 0 or an exit status, its message
 * printed once (the out-of-memory one here, the others by gp_main_pass). */
static int gp_main_analyse(const char *path, size_t index, struct gp_main *m, struct gp_rep *rep)
{
	struct gp_an_config cfg = { .group_by = m->group_by };
	cfg.on_op = gp_main_op_sink; /* exports and the extra analyses */
	cfg.on_wait = gp_main_wait_sink;
	cfg.ctx = m;
	struct gp_xa **xv = realloc(m->xas, (m->nxas + 1) * sizeof *xv);
	if (!xv)
		return gp_main_oom(path);
	m->xas = xv;
	if (!(m->cur_xa = gp_xa_new()))
		return gp_main_oom(path);
	m->xas[m->nxas++] = m->cur_xa;
	m->cur_xa->outlier_factor = m->out.outlier_factor;
	struct gp_an *an = gp_an_new(&cfg);
	if (!an)
		return gp_main_oom(path);
	memset(rep, 0, sizeof *rep);
	int rc = gp_main_pass(path, an, 1, m, rep);
	uint64_t fdrop_ring = rep->dropped_ring, fdrop_cupti = rep->dropped_cupti;
	if (!rc && (gp_an_prepare(an) || gp_xa_prepare(m->cur_xa, an)))
		rc = GP_EXIT_INTERNAL;
	if (!rc) {
		for (size_t e = 0; e < m->nexports; e++)
			if (m->exports[e].ex->begin)
				m->exports[e].ex->begin(m->exports[e].ctx, index, path, rep->pid);
		rc = gp_main_pass(path, an, 2, m, rep);
	}
	if (!rc) {
		/* finish fills the counters; keep header facts from pass 1 */
		struct gp_rep tmp;
		memset(&tmp, 0, sizeof tmp);
		if (gp_an_finish(an, &tmp)) {
			gp_rep_free(&tmp);
			rc = GP_EXIT_INTERNAL;
		} else {
			tmp.path = rep->path;
			tmp.kv = rep->kv;
			tmp.nkv = rep->nkv;
			tmp.version = rep->version;
			tmp.clock_id = rep->clock_id;
			tmp.pid = rep->pid;
			tmp.complete = rep->complete;
			tmp.truncated_bytes = rep->truncated_bytes;
			tmp.end_reason = rep->end_reason;
			tmp.write_errors = rep->write_errors;
			tmp.lost_after_stop = rep->lost_after_stop;
			/* the writer's cap ends with -EFBIG and no write error */
			if (rep->end_reason == -EFBIG && !rep->write_errors)
				tmp.size_cap = 1;
			if (fdrop_ring > tmp.dropped_ring)
				tmp.dropped_ring = fdrop_ring;
			if (fdrop_cupti > tmp.dropped_cupti)
				tmp.dropped_cupti = fdrop_cupti;
			tmp.dropped_records = tmp.dropped_ring + tmp.dropped_cupti + tmp.dropped_write;
			*rep = tmp;
			if (gp_xa_finish(m->cur_xa, an, rep))
				rc = GP_EXIT_INTERNAL;
		}
	}
	if (rc == GP_EXIT_INTERNAL)
		gp_main_oom(path);
	gp_an_free(an);
	return rc;
}

/* Analyse files into one report (merged when several). */
static int gp_main_load(char **files, int nfiles, struct gp_main *m, struct gp_rep *out, int *truncated)
{
	struct gp_rep *reps = calloc((size_t)nfiles, sizeof *reps);
	if (!reps)
		return GP_EXIT_INTERNAL;
	int rc = 0;
	*truncated = 0;
	for (int i = 0; i < nfiles && !rc; i++) {
		rc = gp_main_analyse(files[i], (size_t)i, m, &reps[i]);
		if (!rc && !reps[i].complete) {
			*truncated = 1;
			fprintf(stderr, "gpuphase-report: %s: truncated: no footer%s; the report covers the data up to "
					"the last whole block\n", files[i],
				reps[i].truncated_bytes ? " and a partial block at the end" : "");
		}
	}
	if (rc) {
		for (int i = 0; i < nfiles; i++)
			gp_rep_free(&reps[i]);
		free(reps);
		return rc;
	}
	if (nfiles == 1) {
		*out = reps[0];
	} else {
		memset(out, 0, sizeof *out);
		if (gp_rep_merge(out, reps, (size_t)nfiles)) {
			free(reps);
			return GP_EXIT_INTERNAL;
		}
		char buf[64];
		snprintf(buf, sizeof buf, "%d traces", nfiles);
		out->path = strdup(buf);
		out->pid = 0;
		out->devices = NULL;
	}
	free(reps);
	return 0;
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
	int tb, tc;
	if ((rc = gp_main_load(&files[0], 1, m, &base, &tb)))
		return rc;
	if ((rc = gp_main_load(&files[1], 1, m, &cur, &tc))) {
		gp_rep_free(&base);
		return rc;
	}
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
	if (!rc && (tb || tc) && !m->allow_truncated)
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
		m.exports[e].ctx = m.exports[e].ex->open(m.exports[e].path, err, sizeof err);
		if (!m.exports[e].ctx) {
			fprintf(stderr, "gpuphase-report: %s\n", err);
			for (size_t k = 0; k < e; k++)
				m.exports[k].ex->close(m.exports[k].ctx, NULL, &m.out, err, sizeof err);
			rc = GP_EXIT_USAGE;
			goto out;
		}
	}
	struct gp_rep rep;
	int truncated;
	rc = gp_main_load(files, nfiles, &m, &rep, &truncated);
	m.out.xas = m.xas; /* json and html render the analyses of each trace */
	m.out.nxas = rc ? 0 : m.nxas;
	for (size_t e = 0; e < m.nexports; e++) {
		char err[512];
		if (m.exports[e].ex->close(m.exports[e].ctx, rc ? NULL : &rep, &m.out, err, sizeof err) && !rc) {
			fprintf(stderr, "gpuphase-report: %s\n", err);
			rc = GP_EXIT_INTERNAL;
		} else if (!rc) {
			fprintf(stderr, "gpuphase-report: wrote %s %s\n", m.exports[e].ex->name, m.exports[e].path);
		}
	}
	if (rc)
		goto out;
	if (!m.nexports || m.output) {
		FILE *f = gp_main_out(&m);
		if (!f) {
			rc = GP_EXIT_USAGE;
		} else {
			if (gp_out_report(f, &rep, &m.out))
				rc = GP_EXIT_INTERNAL;
			for (size_t x = 0; x < m.nxas && !rc; x++) { /* issue 9 sections, per trace */
				const struct gp_rep *r = gp_out_xa_rep(&rep, &m.out, x);
				if (!r)
					continue;
				if (m.nxas > 1 && (m.out.format == GP_FMT_TEXT || m.out.format == GP_FMT_MARKDOWN))
					fprintf(f, m.out.format == GP_FMT_MARKDOWN ? "\n## Analyses of trace %zu: %s\n"
										    : "\nAnalyses of trace %zu: %s\n",
						x + 1, r->path ? r->path : "?");
				if (gp_xa_print(f, m.xas[x], r, &m.out))
					rc = GP_EXIT_INTERNAL;
			}
			int crc = gp_main_close_out(&m, f);
			if (!rc)
				rc = crc;
		}
	}
	gp_rep_free(&rep);
	if (!rc && truncated && !m.allow_truncated)
		rc = GP_EXIT_TRUNCATED;
out:
	if (m.have_filter)
		regfree(&m.filter);
	for (size_t x = 0; x < m.nxas; x++)
		gp_xa_free(m.xas[x]);
	free(m.xas);
	return rc;
}
