/*
 * pipeline.c — the report's driver (pipeline.h): reads each trace twice
 * through gp_reader and feeds every record group to the analysis core and the
 * analyses, so that memory follows what analysis.h bounds, never the trace
 * length. Called on the report's only thread by main.c (report, merge, diff,
 * exports), stability.c, the fuzz target and the tests. Invariants: a
 * trace's analyser is freed before gp_pipeline_add returns (its analyses
 * keep sums and texts of the trace's string table, which their set owns); a
 * report in p->reps is whole (finished and completed, or read whole from
 * partial results: gp_pipeline_add_partial) or absent.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "gp_reader.h"
#include "report/analyses/registry.h"
#include "report/outputs/partial.h"
#include "pipeline.h"

struct gp_pipeline {
	struct gp_pipeline_opts o;
	struct gp_analyses *job;   /* the job's analyses of the last merge, or NULL */
	struct gp_rep *reps;       /* per trace; moved out by gp_pipeline_report */
	struct gp_analyses **sets; /* per trace (NULL without GP_PIPE_ANALYSES)  */
	size_t n, cap;
	struct gp_analyses *cur;   /* the analyses of the trace being read       */
};

struct gp_pipeline *gp_pipeline_new(const struct gp_pipeline_opts *o)
{
	struct gp_pipeline *p = calloc(1, sizeof *p);
	if (p)
		p->o = *o;
	return p;
}

static void gp_pipeline_op(const struct gp_an_op *op, void *ctx)
{
	struct gp_pipeline *p = ctx;
	if (p->cur)
		gp_analyses_op(op, p->cur);
	for (size_t e = 0; e < p->o.nsinks; e++)
		if (p->o.sinks[e].ex->op)
			p->o.sinks[e].ex->op(op, p->o.sinks[e].ctx);
}

static void gp_pipeline_wait(const struct gp_an_wait *w, void *ctx)
{
	struct gp_pipeline *p = ctx;
	for (size_t e = 0; e < p->o.nsinks; e++)
		if (p->o.sinks[e].ex->wait)
			p->o.sinks[e].ex->wait(w, p->o.sinks[e].ctx);
	if (p->cur)
		gp_analyses_wait(w, p->cur);
}

/* One record group through the core (which hands its views to the
 * analyses) and, in pass 2, the exporters. Returns 0 or -ENOMEM. */
static int gp_pipeline_group(struct gp_pipeline *p, struct gp_an *an, int pass, const union gp_rec *r,
			     uint32_t ns)
{
	int rc;
	if (pass == 1) {
		rc = gp_an_scan1(an, r, ns);
	} else {
		rc = gp_an_scan2(an, r, ns);
		for (size_t e = 0; e < p->o.nsinks; e++)
			if (p->o.sinks[e].ex->record)
				p->o.sinks[e].ex->record(p->o.sinks[e].ctx, an, r);
	}
	if (!rc && p->cur)
		rc = p->cur->err;
	return rc ? -ENOMEM : 0;
}

/* The file's header key/values and footer facts (pass 1). */
static int gp_pipeline_facts(const struct gp_reader *rd, const char *path, struct gp_rep *rep)
{
	const struct gp_trace_info *info = gp_reader_info(rd);
	const struct gp_trace_end *end = gp_reader_end(rd);
	rep->version = info->version;
	rep->clock_id = info->clock_id;
	rep->pid = info->pid;
	rep->start_wall_ns = info->start_wall_ns;
	rep->start_clock_ns = info->start_clock_ns;
	rep->complete = end->complete;
	rep->truncated_bytes = end->truncated_bytes;
	rep->end_reason = end->end_reason;
	rep->write_errors = end->write_errors;
	rep->lost_after_stop = end->lost_after_stop;
	rep->kv = calloc(info->nkv ? info->nkv : 1, sizeof *rep->kv);
	if (!rep->kv || !(rep->path = strdup(path)))
		return -ENOMEM;
	for (size_t i = 0; i < info->nkv; i++) {
		rep->kv[i].key = strdup(info->keys[i] ? info->keys[i] : "");
		rep->kv[i].value = strdup(info->values[i] ? info->values[i] : "");
		rep->nkv++;
		if (!rep->kv[i].key || !rep->kv[i].value)
			return -ENOMEM;
	}
	/* the footer's counters complete the DROPS records */
	rep->dropped_ring = end->dropped_ring;
	rep->dropped_cupti = end->dropped_cupti;
	return 0;
}

/* Where a trace's records come from: a file, or an array (tests). */
struct gp_pipeline_src {
	const char *path;
	int in_memory;            /* 0: read path with gp_reader          */
	const union gp_rec *recs;
	size_t n;
};

/* The record groups of one block (or array) through the pipeline. Returns
 * 0, -ENOMEM, or -EPROTO (a group overruns the block; err says so). */
static int gp_pipeline_block(struct gp_pipeline *p, struct gp_an *an, int pass, const union gp_rec *recs,
			     size_t nrec, const char *path, char *err, size_t n)
{
	for (size_t i = 0; i < nrec;) {
		uint32_t ns = gp_rec_slots(&recs[i]);
		if (ns == 0 || ns > nrec - i) { /* the reader's contract: whole groups */
			snprintf(err, n, "%s: a record group of %u slots overruns its block", path, ns);
			return -EPROTO;
		}
		if (gp_pipeline_group(p, an, pass, &recs[i], ns))
			return -ENOMEM;
		i += ns;
	}
	return 0;
}

/* One pass over a trace. Returns 0, -ENOMEM, -EPROTO, or -EIO with err set. */
static int gp_pipeline_pass(struct gp_pipeline *p, struct gp_an *an, int pass, const struct gp_pipeline_src *src,
			    struct gp_rep *facts, char *err, size_t n)
{
	if (src->in_memory)
		return gp_pipeline_block(p, an, pass, src->recs, src->n, src->path, err, n);
	struct gp_reader *rd;
	if (gp_reader_open(src->path, &rd, err, n))
		return -EIO;
	const union gp_rec *recs;
	size_t nrec;
	uint64_t bytes = 0;
	int rc;
	while ((rc = gp_reader_next_block(rd, &recs, &nrec, err, n)) > 0) {
		bytes += (uint64_t)nrec * GP_REC_SIZE;
		if (p->o.progress)
			p->o.progress(p->o.progress_ctx, src->path, pass, bytes);
		int brc = gp_pipeline_block(p, an, pass, recs, nrec, src->path, err, n);
		if (brc) {
			gp_reader_close(rd);
			return brc;
		}
	}
	if (rc < 0) {
		gp_reader_close(rd);
		return -EIO;
	}
	rc = pass == 1 && (p->o.what & GP_PIPE_FOOTER) ? gp_pipeline_facts(rd, src->path, facts) : 0;
	gp_reader_close(rd);
	return rc;
}

/* Does process pid run the program the trace's `cmdline` names? Its first
 * word against the process's argv[0]; 1 when either cannot be read (the
 * pid alone then decides). A pid reused by another program is not the
 * writer. */
static int gp_pipeline_same_program(const struct gp_rep *facts)
{
	const char *cmd = NULL;
	for (size_t i = 0; i < facts->nkv; i++)
		if (facts->kv[i].key && !strcmp(facts->kv[i].key, "cmdline"))
			cmd = facts->kv[i].value;
	if (!cmd || !*cmd)
		return 1;
	char path[64], argv0[4096];
	snprintf(path, sizeof path, "/proc/%u/cmdline", (unsigned)facts->pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 1;
	ssize_t n = read(fd, argv0, sizeof argv0 - 1);
	close(fd);
	if (n <= 0)
		return 1; /* a kernel thread or a zombie: no argv to compare */
	argv0[n] = 0; /* argv[0] ends at its NUL */
	size_t len = strlen(argv0);
	return !strncmp(cmd, argv0, len) && (cmd[len] == 0 || cmd[len] == ' ');
}

/* Is the process that writes this footer-less trace still running here
 * (same host name, its pid alive and running the traced program)? Then the
 * trace is live, not cut. */
static int gp_pipeline_live(const struct gp_rep *facts)
{
	if (facts->complete || !facts->pid)
		return 0;
	char host[256] = "";
	if (gethostname(host, sizeof host - 1))
		return 0;
	for (size_t i = 0; i < facts->nkv; i++)
		if (facts->kv[i].key && !strcmp(facts->kv[i].key, "host"))
			return facts->kv[i].value && !strcmp(facts->kv[i].value, host) &&
			       (kill((pid_t)facts->pid, 0) == 0 || errno == EPERM) && gp_pipeline_same_program(facts);
	return 0;
}

/* The core's aggregates (fresh) completed with the facts of pass 1. */
static void gp_pipeline_complete(struct gp_rep *rep, const struct gp_rep *facts)
{
	rep->path = facts->path;
	rep->kv = facts->kv;
	rep->nkv = facts->nkv;
	rep->version = facts->version;
	rep->clock_id = facts->clock_id;
	rep->pid = facts->pid;
	rep->start_wall_ns = facts->start_wall_ns;
	rep->start_clock_ns = facts->start_clock_ns;
	rep->complete = facts->complete;
	rep->truncated_bytes = facts->truncated_bytes;
	rep->live = gp_pipeline_live(facts);
	rep->end_reason = facts->end_reason;
	rep->write_errors = facts->write_errors;
	rep->lost_after_stop = facts->lost_after_stop;
	/* the writer's cap ends with -EFBIG and no write error */
	if (facts->end_reason == -EFBIG && !facts->write_errors)
		rep->size_cap = 1;
	if (facts->dropped_ring > rep->dropped_ring)
		rep->dropped_ring = facts->dropped_ring;
	if (facts->dropped_cupti > rep->dropped_cupti)
		rep->dropped_cupti = facts->dropped_cupti;
	rep->dropped_records = rep->dropped_ring + rep->dropped_cupti + rep->dropped_write;
}

/* Both passes and finish over one trace into rep (zeroed here). */
static int gp_pipeline_run(struct gp_pipeline *p, struct gp_an *an, const struct gp_pipeline_src *src,
			   size_t index, struct gp_rep *rep, char *err, size_t n)
{
	struct gp_rep facts;
	memset(&facts, 0, sizeof facts);
	memset(rep, 0, sizeof *rep);
	int rc = gp_pipeline_pass(p, an, 1, src, &facts, err, n);
	/* a windowed capture (metrics.md §6): a window other than "all", or
	 * the profiler marker (only Start..Stop is captured) */
	int windowed = 0;
	for (size_t i = 0; i < facts.nkv; i++)
		if (facts.kv[i].key && facts.kv[i].value &&
		    ((!strcmp(facts.kv[i].key, "window") && strcmp(facts.kv[i].value, "all") != 0) ||
		     (!strcmp(facts.kv[i].key, "marker") && !strcmp(facts.kv[i].value, "profiler"))))
			windowed = 1;
	gp_an_set_windowed(an, windowed);
	for (size_t i = 0; i < facts.nkv; i++)
		if (facts.kv[i].key && !strcmp(facts.kv[i].key, "cupti")) /* how hooks join (join.c) */
			gp_an_set_cupti(an, facts.kv[i].value);
	if (!rc && (gp_an_prepare(an) || (p->cur && gp_analyses_prepare(p->cur))))
		rc = -ENOMEM;
	if (!rc) {
		for (size_t e = 0; e < p->o.nsinks; e++)
			if (p->o.sinks[e].ex->begin)
				p->o.sinks[e].ex->begin(p->o.sinks[e].ctx, index, src->path, facts.pid);
		rc = gp_pipeline_pass(p, an, 2, src, &facts, err, n);
	}
	if (!rc && gp_an_finish(an, rep))
		rc = -ENOMEM;
	if (rc) {
		gp_rep_free(rep);
		gp_rep_free(&facts);
		return rc;
	}
	if ((p->o.what & GP_PIPE_FOOTER) && !src->in_memory)
		gp_pipeline_complete(rep, &facts);
	if (p->cur && gp_analyses_finish(p->cur, rep))
		return -ENOMEM; /* rep is whole; the caller frees it */
	if (p->cur)
		gp_analyses_annotate(p->cur, rep);
	return 0;
}

/* Room for one more trace. 0 or -ENOMEM. */
static int gp_pipeline_grow(struct gp_pipeline *p)
{
	if (p->n == p->cap) {
		size_t nc = p->cap ? p->cap * 2 : 4;
		struct gp_rep *r = realloc(p->reps, nc * sizeof *r);
		if (r)
			p->reps = r;
		struct gp_analyses **x = r ? realloc(p->sets, nc * sizeof *x) : NULL;
		if (!x)
			return -ENOMEM;
		p->sets = x;
		p->cap = nc;
	}
	return 0;
}

static int gp_pipeline_add_src(struct gp_pipeline *p, const struct gp_pipeline_src *src, char *err, size_t n)
{
	if (gp_pipeline_grow(p))
		return -ENOMEM;
	struct gp_analysis_env env = { .outlier_factor = p->o.outlier_factor, .whatif = p->o.whatif };
	p->cur = NULL;
	if ((p->o.what & GP_PIPE_ANALYSES) && !(p->cur = gp_analyses_new(&env)))
		return -ENOMEM;
	struct gp_an_config cfg = { .group_by = p->o.group_by, .on_op = gp_pipeline_op,
				    .on_wait = gp_pipeline_wait, .ctx = p };
	if (!p->o.nsinks) /* no exporter: ops go straight to the analyses */
		cfg = (struct gp_an_config){ .group_by = p->o.group_by,
					     .on_op = p->cur ? gp_analyses_op : NULL,
					     .on_wait = p->cur ? gp_analyses_wait : NULL, .ctx = p->cur };
	cfg.no_symbolize = p->o.no_symbolize;
	if (p->cur) { /* the analyses read the core's views; their names live in
		       * the string table the core fills */
		cfg.on_rec = gp_analyses_record;
		cfg.rec_ctx = p->cur;
		cfg.rec_types[0] = p->cur->types[0];
		cfg.rec_types[1] = p->cur->types[1];
		cfg.api_classes = p->cur->api_classes;
		cfg.strings = &p->cur->strings;
	}
	struct gp_an *an = gp_an_new(&cfg);
	if (p->cur)
		p->cur->an = an;
	int rc = an ? gp_pipeline_run(p, an, src, p->n, &p->reps[p->n], err, n) : -ENOMEM;
	gp_an_free(an);
	if (p->cur)
		p->cur->an = NULL;
	if (rc) {
		gp_rep_free(&p->reps[p->n]);
		gp_analyses_free(p->cur);
		p->cur = NULL;
		return rc;
	}
	p->sets[p->n++] = p->cur;
	p->cur = NULL;
	return 0;
}

int gp_pipeline_add(struct gp_pipeline *p, const char *path, char *err, size_t n)
{
	struct gp_pipeline_src src = { .path = path };
	return gp_pipeline_add_src(p, &src, err, n);
}

int gp_pipeline_add_records(struct gp_pipeline *p, const char *name, const union gp_rec *recs, size_t nrec,
			    char *err, size_t n)
{
	struct gp_pipeline_src src = { .path = name, .in_memory = 1, .recs = recs, .n = nrec };
	return gp_pipeline_add_src(p, &src, err, n);
}

/* One trace of a partial-results file: its report and analyses as they were
 * written (without GP_PIPE_ANALYSES the analyses are dropped). */
static int gp_pipeline_loaded(void *ctx, struct gp_rep *rep, struct gp_analyses *set)
{
	struct gp_pipeline *p = ctx;
	if (!(p->o.what & GP_PIPE_ANALYSES)) {
		gp_analyses_free(set);
		set = NULL;
	}
	if (gp_pipeline_grow(p)) {
		gp_rep_free(rep);
		gp_analyses_free(set);
		return -ENOMEM;
	}
	p->reps[p->n] = *rep;
	p->sets[p->n++] = set;
	return 0;
}

int gp_pipeline_add_partial(struct gp_pipeline *p, const char *path, char *err, size_t n)
{
	struct gp_analysis_env env = { .outlier_factor = p->o.outlier_factor, .whatif = p->o.whatif };
	int rc = gp_partial_read(path, &env, gp_pipeline_loaded, p, err, n);
	if (rc == -ENOMEM)
		snprintf(err, n, "%s: out of memory", path);
	return rc;
}

size_t gp_pipeline_count(const struct gp_pipeline *p)
{
	return p->n;
}

const struct gp_rep *gp_pipeline_rep(const struct gp_pipeline *p, size_t i)
{
	return i < p->n ? &p->reps[i] : NULL;
}

struct gp_analyses *const *gp_pipeline_analyses(const struct gp_pipeline *p)
{
	return p->sets;
}

struct gp_analyses *gp_pipeline_job_analyses(const struct gp_pipeline *p)
{
	return p->job;
}

int gp_pipeline_report(struct gp_pipeline *p, size_t first, size_t n, struct gp_rep *out)
{
	memset(out, 0, sizeof *out);
	if (n == 1) {
		*out = p->reps[first];
		memset(&p->reps[first], 0, sizeof p->reps[first]);
		return 0;
	}
	/* one job: the analyses that look across its ranks (analyses/registry.h merge) */
	const struct gp_rep **one = calloc(n, sizeof *one);
	if (!one)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		one[i] = &p->reps[first + i];
	gp_analyses_free(p->job);
	p->job = NULL;
	if ((p->o.what & GP_PIPE_ANALYSES) && gp_rep_one_job(one, n)) {
		struct gp_analysis_env env = { .outlier_factor = p->o.outlier_factor, .whatif = p->o.whatif };
		int rc = gp_analyses_job(p->sets + first, one, n, &env, &p->job);
		if (rc) {
			free(one);
			return rc;
		}
	}
	free(one);
	if (gp_rep_merge(out, &p->reps[first], n)) /* out->ranks takes them */
		return -ENOMEM;
	char buf[64];
	snprintf(buf, sizeof buf, "%zu traces", n);
	out->path = strdup(buf);
	out->pid = 0;
	out->devices = NULL;
	return 0;
}

void gp_pipeline_free(struct gp_pipeline *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++) {
		gp_rep_free(&p->reps[i]);
		gp_analyses_free(p->sets[i]);
	}
	gp_analyses_free(p->job);
	free(p->reps);
	free(p->sets);
	free(p);
}
