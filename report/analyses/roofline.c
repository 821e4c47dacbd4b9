/*
 * roofline.c — the "Roofline" analysis: for each kernel whose launches were
 * sampled for hardware counters (GPUPHASE_COUNTERS; GP_REC_COUNTER records,
 * libgpuphase/counters.c), the achieved DRAM bandwidth and FLOP rate over
 * its sampled launches, its arithmetic intensity, and which roof bounds it
 * — memory, compute, or neither (latency) — against its device's peaks:
 * the peaks the counters measured (peak_sustained x clock, op-0 records),
 * else the per-architecture table (report/analyses/peaks.h). It names the launches
 * that were replayed (the core leaves them out of every phase, metrics.md
 * §20) and says why there are no counters when the trace asked for them and
 * CUPTI refused (GP_STATUS_COUNTERS). Its annotate step gives each kernel
 * operator its bound, which the verdict's advice uses (verdict.c). A
 * latency-bound kernel whose grid has fewer blocks than its device has SMs
 * (its operator's launch configuration, rep.h) gets that named as the cause.
 * docs/metrics.md §21 defines every number.
 *
 * Memory: one entry per sampled kernel (and device), the first
 * GP_ROOF_OPS op ids of its samples; never per op. A plug-in of
 * registry.h; report thread only.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"
#include "report/util/fmt.h"
#include "peaks.h"
#include "report/core/verdict.h"

#define GP_ROOF_NEAR 0.60 /* within 60 % of a roof: bound by it            */
#define GP_ROOF_OPS 8     /* replayed launches named per kernel             */

static const char *const gp_roof_prec[3] = { "fp64", "fp32", "fp16" };

struct gp_roof_kernel {
	uint32_t name_id;        /* trace string id                             */
	uint8_t device;
	uint64_t samples;        /* GP_CTR_DURATION_NS records                  */
	double dur_ns, read, write, flops[3], tensor_pct, sm_pct, mem_pct, passes, extra;
	uint32_t ops[GP_ROOF_OPS];
	size_t nops;
	/* at finish */
	const char *name;        /* the operator table's name                  */
	double gbps, gflops, intensity, mem_share, comp_share;
	int prec;                /* the precision nearest its roof              */
	unsigned bound;          /* enum gp_bound                               */
};

struct gp_roof_dev {
	int counted;             /* peaks from the counters                     */
	double gbps, gflops[3];  /* 0 = unknown                                 */
	const char *source;      /* "counters", a table row, or NULL            */
};

struct gp_roof {
	int err;
	struct gp_roof_kernel *k;
	size_t nk, capk;
	struct gp_roof_dev dev[256];
	int asked;               /* the trace has a GP_STATUS_COUNTERS record   */
	int64_t status;          /* its value: < 0 = unavailable                */
	uint32_t status_detail;  /* string id                                   */
	const char *why;         /* its text, at finish                         */
	uint64_t excluded, excluded_ns; /* the core's replayed ops left out      */
	int by_kernel;           /* operators are kernels (--group-by kernel)   */
};

static void *gp_roof_create(const struct gp_analysis_env *env)
{
	(void)env;
	return calloc(1, sizeof(struct gp_roof));
}

static void gp_roof_destroy(void *p)
{
	struct gp_roof *r = p;
	free(r->k);
	free(r);
}

static struct gp_roof_kernel *gp_roof_kernel(struct gp_roof *r, uint32_t name, uint8_t dev)
{
	for (size_t i = 0; i < r->nk; i++)
		if (r->k[i].name_id == name && r->k[i].device == dev)
			return &r->k[i];
	if (GP_AN_GROW(r->k, r->nk, r->capk))
		return NULL;
	struct gp_roof_kernel *k = &r->k[r->nk++];
	memset(k, 0, sizeof *k);
	k->name_id = name;
	k->device = dev;
	return k;
}

static int gp_roof_record(void *p, const struct gp_an *an, const struct gp_an_rec *v)
{
	struct gp_roof *r = p;
	(void)an;
	if (v->type == GP_REC_STATUS) {
		if (v->status.kind == GP_STATUS_COUNTERS && (!r->asked || v->status.value < 0)) {
			r->asked = 1; /* a refusal wins over an earlier success */
			r->status = v->status.value;
			r->status_detail = v->status.detail;
		}
		return 0;
	}
	const double x = isfinite(v->counter.value) && v->counter.value >= 0 ? v->counter.value : 0;
	struct gp_roof_dev *d = &r->dev[v->counter.device];
	if (!v->counter.op) { /* a peak of the device */
		switch (v->counter.metric) {
		case GP_CTR_PEAK_DRAM_GBPS: d->gbps = x; break;
		case GP_CTR_PEAK_FP64_GFLOPS: d->gflops[0] = x; break;
		case GP_CTR_PEAK_FP32_GFLOPS: d->gflops[1] = x; break;
		case GP_CTR_PEAK_FP16_GFLOPS: d->gflops[2] = x; break;
		default: return 0;
		}
		d->counted = 1;
		return 0;
	}
	struct gp_roof_kernel *k = gp_roof_kernel(r, v->counter.name, v->counter.device);
	if (!k)
		return r->err = -ENOMEM;
	switch (v->counter.metric) {
	case GP_CTR_DURATION_NS:
		k->samples++;
		k->dur_ns += x;
		if (k->nops < GP_ROOF_OPS)
			k->ops[k->nops++] = v->counter.op;
		break;
	case GP_CTR_DRAM_READ: k->read += x; break;
	case GP_CTR_DRAM_WRITE: k->write += x; break;
	case GP_CTR_FLOP_FP64: k->flops[0] += x; break;
	case GP_CTR_FLOP_FP32: k->flops[1] += x; break;
	case GP_CTR_FLOP_FP16: k->flops[2] += x; break;
	case GP_CTR_TENSOR_PCT: k->tensor_pct += x; break;
	case GP_CTR_SM_PCT: k->sm_pct += x; break;
	case GP_CTR_MEM_PCT: k->mem_pct += x; break;
	case GP_CTR_PASSES: k->passes = x > k->passes ? x : k->passes; break;
	case GP_CTR_EXTRA_RANGES: k->extra += x; break;
	default: break;
	}
	return 0;
}

/* Place kernel k against its device's roofs (metrics.md §21). */
static void gp_roof_place(struct gp_roof_kernel *k, const struct gp_roof_dev *d)
{
	double t = k->dur_ns, n = k->samples ? (double)k->samples : 1;
	double bytes = k->read + k->write, fl = k->flops[0] + k->flops[1] + k->flops[2];
	k->gbps = t > 0 ? bytes / t : 0;   /* bytes per ns = GB/s      */
	k->gflops = t > 0 ? fl / t : 0;    /* FLOPs per ns = GFLOP/s   */
	k->intensity = bytes > 0 ? fl / bytes : -1;
	k->mem_share = d->gbps > 0 ? k->gbps / d->gbps : 0;
	if (k->mem_pct / n / 100 > k->mem_share)
		k->mem_share = k->mem_pct / n / 100;
	k->comp_share = 0;
	k->prec = -1; /* the precision nearest its roof, of those it computed in */
	for (int p = 0; p < 3; p++) {
		if (k->flops[p] <= 0)
			continue;
		double s = d->gflops[p] > 0 && t > 0 ? k->flops[p] / t / d->gflops[p] : 0;
		if (k->prec < 0 || s > k->comp_share) {
			k->comp_share = s;
			k->prec = p;
		}
	}
	double pipes = (k->sm_pct > k->tensor_pct ? k->sm_pct : k->tensor_pct) / n / 100;
	if (pipes > k->comp_share)
		k->comp_share = pipes;
	if (k->mem_share >= GP_ROOF_NEAR && k->mem_share >= k->comp_share)
		k->bound = GP_BOUND_MEMORY;
	else if (k->comp_share >= GP_ROOF_NEAR)
		k->bound = GP_BOUND_COMPUTE;
	else
		k->bound = GP_BOUND_LATENCY;
}

static int gp_roof_cmp(const void *a, const void *b)
{
	const struct gp_roof_kernel *x = a, *y = b;
	if (x->dur_ns != y->dur_ns)
		return x->dur_ns > y->dur_ns ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int gp_roof_finish(void *p, const struct gp_an *an, const struct gp_rep *rep)
{
	struct gp_roof *r = p;
	struct gp_strtab *strs = gp_an_strings(an);
	r->by_kernel = rep->group_by == GP_GROUP_KERNEL;
	r->excluded = gp_an_replayed(an, &r->excluded_ns);
	r->why = r->status_detail ? gp_an_string(an, r->status_detail) : NULL;
	for (unsigned dv = 0; dv < 256; dv++) { /* the table for what the counters did not say */
		struct gp_roof_dev *d = &r->dev[dv];
		struct gp_an_device ad = { 0 };
		struct gp_peaks pk;
		if (gp_an_device(an, dv, &ad) && !d->counted)
			continue;
		gp_peaks_lookup(ad.name, ad.cc_major, ad.cc_minor, &pk);
		d->source = d->counted ? "counters" : pk.model;
		if (!d->gbps)
			d->gbps = pk.dram_gbps;
		double tab[3] = { pk.fp64_gflops, pk.fp32_gflops, pk.fp16_gflops };
		for (int q = 0; q < 3; q++)
			if (!d->gflops[q])
				d->gflops[q] = tab[q];
	}
	for (size_t i = 0; i < r->nk; i++) {
		struct gp_roof_kernel *k = &r->k[i];
		uint32_t c = gp_an_canonical(an, k->name_id);
		int e = 0;
		k->name = c != GP_STR_NONE ? gp_strtab_short(strs, c, &e) : NULL;
		gp_analysis_fail(&r->err, e);
		if (!k->name)
			k->name = "(unnamed kernel)";
		gp_roof_place(k, &r->dev[k->device]);
	}
	if (r->nk > 1)
		qsort(r->k, r->nk, sizeof *r->k, gp_roof_cmp);
	return r->err;
}

/* Kernel operators get their bound: the verdict's advice uses it. */
static void gp_roof_annotate(void *p, struct gp_rep *rep)
{
	const struct gp_roof *r = p;
	for (size_t i = 0; r->by_kernel && i < r->nk; i++)
		for (size_t g = 0; g < rep->ngroups; g++)
			if ((rep->groups[g].kinds & GP_GKIND_KERNEL) && !strcmp(rep->groups[g].name, r->k[i].name) &&
			    !rep->groups[g].bound)
				rep->groups[g].bound = (uint8_t)r->k[i].bound;
}

/* A latency-bound kernel's grid too small for its device (rep.h
 * gp_rep_cfg_idle): the cause the section names, or NULL. */
static const struct gp_rep_launch_cfg *gp_roof_small_grid(const struct gp_rep *rep, const struct gp_roof_kernel *k)
{
	if (k->bound != GP_BOUND_LATENCY || rep->group_by != GP_GROUP_KERNEL)
		return NULL;
	for (size_t g = 0; g < rep->ngroups; g++)
		if ((rep->groups[g].kinds & GP_GKIND_KERNEL) && !strcmp(rep->groups[g].name, k->name))
			return gp_rep_cfg_idle(&rep->groups[g].cfg) ? &rep->groups[g].cfg : NULL;
	return NULL;
}

static const char *gp_roof_advice(unsigned bound)
{
	struct gp_verdict_op op = { .kinds = GP_VERDICT_KIND_KERNEL, .bound = bound };
	return gp_verdict_advice_for(GP_VERDICT_COMPUTE, &op);
}

static void gp_roof_text(FILE *f, const void *p, const struct gp_rep *rep, const struct gp_analysis_style *s)
{
	const struct gp_roof *r = p;
	if (!r->asked && !r->nk)
		return;
	const char *li = s->markdown ? "- " : "  ";
	char wb[512];
	fprintf(f, s->markdown ? "\n## Roofline (hardware counters)\n\n" : "\nRoofline (hardware counters)\n");
	if (r->asked && r->status < 0)
		fprintf(f, "%s%s\n", li, r->why ? gp_fmt_name_buf(r->why, s->markdown, wb, sizeof wb) : "counters unavailable");
	if (!r->nk) {
		if (!(r->asked && r->status < 0))
			fprintf(f, "%scounters asked for, no launch sampled\n", li);
		return;
	}
	char b1[32];
	fprintf(f, "%s%" PRIu64 " launches replayed for their counters, left out of every phase (%s of replay)\n", li,
		r->excluded, gp_fmt_ns((double)r->excluded_ns, b1, sizeof b1));
	for (unsigned dv = 0; dv < 256; dv++) {
		const struct gp_roof_dev *d = &r->dev[dv];
		int used = 0;
		for (size_t i = 0; i < r->nk && !used; i++)
			used = r->k[i].device == dv;
		if (!used)
			continue;
		fprintf(f, "%sdevice %u peaks: ", li, dv);
		if (d->gbps > 0)
			fprintf(f, "%.0f GB/s", d->gbps);
		else
			fprintf(f, "memory unknown");
		for (int q = 0; q < 3; q++)
			if (d->gflops[q] > 0)
				fprintf(f, ", %s %.0f GFLOP/s", gp_roof_prec[q], d->gflops[q]);
		fprintf(f, " (%s)\n", d->source ? d->source : "not in the table");
	}
	size_t shown = 0;
	for (size_t i = 0; i < r->nk; i++) {
		const struct gp_roof_kernel *k = &r->k[i];
		if (s->top && shown++ >= s->top)
			break;
		fprintf(f, "%s", li);
		gp_fmt_name(f, k->name, s->markdown);
		fprintf(f, ": %s-bound: %.1f GB/s (%.1f%% of memory), %.1f GFLOP/s", gp_bound_name(k->bound), k->gbps,
			100 * k->mem_share, k->gflops);
		if (k->prec >= 0)
			fprintf(f, " (%.1f%% of %s)", 100 * k->comp_share, gp_roof_prec[k->prec]);
		else
			fprintf(f, " (%.1f%% of compute)", 100 * k->comp_share);
		if (k->intensity >= 0)
			fprintf(f, ", %.3g FLOP/byte", k->intensity);
		fprintf(f, "; %" PRIu64 " sample%s (op", k->samples, k->samples == 1 ? "" : "s");
		for (size_t o = 0; o < k->nops; o++)
			fprintf(f, "%s%" PRIu32, o ? ", " : " ", k->ops[o]);
		fprintf(f, "%s), %.0f replay passes each\n", k->samples > k->nops ? ", ..." : "", k->passes);
		const struct gp_rep_launch_cfg *small = gp_roof_small_grid(rep, k);
		if (small)
			fprintf(f, "%s  cause: its grid of %" PRIu64 " block%s for %u SMs leaves the GPU mostly idle\n", li,
				gp_rep_cfg_blocks(small), gp_rep_cfg_blocks(small) == 1 ? "" : "s", small->sms);
		fprintf(f, "%s  advice: %s\n", li, gp_roof_advice(k->bound));
		if (k->extra > 0)
			fprintf(f, "%s  (%.0f other launches fell into its ranges: its values may include theirs)\n", li,
				k->extra);
	}
}

static void gp_roof_str(FILE *f, const char *s)
{
	if (s)
		gp_fmt_json_str(f, s);
	else
		fputs("null", f);
}

static void gp_roof_num(FILE *f, const char *key, double v)
{
	fprintf(f, ", \"%s\": ", key);
	gp_fmt_json_num(f, v);
}

static void gp_roof_json(FILE *f, const void *p, const struct gp_rep *rep, const struct gp_analysis_style *s)
{
	const struct gp_roof *r = p;
	(void)s;
	if (!r->asked && !r->nk) {
		fputs("null", f);
		return;
	}
	fprintf(f, "{\"available\": %s, \"status\": ", r->asked && r->status < 0 ? "false" : "true");
	gp_roof_str(f, r->why);
	fprintf(f, ", \"replayed_ops\": %" PRIu64 ", \"replayed_ns\": %" PRIu64 ", \"near_roof\": %g, \"devices\": [",
		r->excluded, r->excluded_ns, GP_ROOF_NEAR);
	for (unsigned dv = 0, n = 0; dv < 256; dv++) {
		const struct gp_roof_dev *d = &r->dev[dv];
		int used = 0;
		for (size_t i = 0; i < r->nk && !used; i++)
			used = r->k[i].device == dv;
		if (!used)
			continue;
		fprintf(f, "%s{\"device\": %u", n++ ? ", " : "", dv);
		gp_roof_num(f, "peak_gbps", d->gbps);
		for (int q = 0; q < 3; q++) {
			char key[32];
			snprintf(key, sizeof key, "peak_%s_gflops", gp_roof_prec[q]);
			gp_roof_num(f, key, d->gflops[q]);
		}
		fputs(", \"peak_source\": ", f);
		gp_roof_str(f, d->source);
		fputc('}', f);
	}
	fputs("], \"operators\": [", f);
	for (size_t i = 0; i < r->nk; i++) {
		const struct gp_roof_kernel *k = &r->k[i];
		double n = k->samples ? (double)k->samples : 1;
		fprintf(f, "%s{\"name\": ", i ? ", " : "");
		gp_fmt_json_str(f, k->name);
		fprintf(f, ", \"device\": %u, \"samples\": %" PRIu64 ", \"replayed_ops\": [", k->device, k->samples);
		for (size_t o = 0; o < k->nops; o++)
			fprintf(f, "%s%" PRIu32, o ? ", " : "", k->ops[o]);
		fputc(']', f);
		gp_roof_num(f, "passes", k->passes);
		gp_roof_num(f, "duration_ns", k->dur_ns);
		gp_roof_num(f, "dram_bytes_read", k->read);
		gp_roof_num(f, "dram_bytes_write", k->write);
		for (int q = 0; q < 3; q++) {
			char key[32];
			snprintf(key, sizeof key, "flops_%s", gp_roof_prec[q]);
			gp_roof_num(f, key, k->flops[q]);
		}
		gp_roof_num(f, "achieved_gbps", k->gbps);
		gp_roof_num(f, "achieved_gflops", k->gflops);
		fputs(", \"arithmetic_intensity\": ", f);
		if (k->intensity >= 0)
			gp_fmt_json_num(f, k->intensity);
		else
			fputs("null", f);
		gp_roof_num(f, "memory_share", k->mem_share);
		gp_roof_num(f, "compute_share", k->comp_share);
		fputs(", \"compute_precision\": ", f);
		gp_roof_str(f, k->prec >= 0 ? gp_roof_prec[k->prec] : NULL);
		gp_roof_num(f, "sm_throughput_pct", k->sm_pct / n);
		gp_roof_num(f, "memory_throughput_pct", k->mem_pct / n);
		gp_roof_num(f, "tensor_pct", k->tensor_pct / n);
		gp_roof_num(f, "extra_ranges", k->extra);
		fprintf(f, ", \"bound\": \"%s\", \"advice\": ", gp_bound_name(k->bound));
		gp_fmt_json_str(f, gp_roof_advice(k->bound));
		const struct gp_rep_launch_cfg *small = gp_roof_small_grid(rep, k);
		if (small) /* the latency's cause the text names */
			fprintf(f, ", \"small_grid\": {\"blocks\": %" PRIu64 ", \"device_sms\": %u}", gp_rep_cfg_blocks(small),
				small->sms);
		else
			fputs(", \"small_grid\": null", f);
		fputc('}', f);
	}
	fputs("]}", f);
}

/* Partial results: what the section prints — the kernels placed, the
 * peaks of the devices they ran on, the status (not the operators' bounds:
 * annotate wrote them into the report, which partials keep). */
static int gp_roof_save(const void *p, struct gp_pw *w)
{
	const struct gp_roof *r = p;
	gp_pw_u8(w, r->asked != 0);
	gp_pw_i64(w, r->status);
	gp_pw_str(w, r->why);
	gp_pw_u64(w, r->excluded);
	gp_pw_u64(w, r->excluded_ns);
	uint64_t ndev = 0;
	uint8_t used[256] = { 0 };
	for (size_t i = 0; i < r->nk; i++)
		used[r->k[i].device] = 1;
	for (unsigned dv = 0; dv < 256; dv++)
		ndev += used[dv];
	gp_pw_u64(w, ndev);
	for (unsigned dv = 0; dv < 256; dv++) {
		if (!used[dv])
			continue;
		const struct gp_roof_dev *d = &r->dev[dv];
		gp_pw_u8(w, (uint8_t)dv);
		gp_pw_u8(w, d->counted != 0);
		gp_pw_f64(w, d->gbps);
		for (int q = 0; q < 3; q++)
			gp_pw_f64(w, d->gflops[q]);
		gp_pw_str(w, d->source);
	}
	gp_pw_u64(w, r->nk);
	for (size_t i = 0; i < r->nk; i++) {
		const struct gp_roof_kernel *k = &r->k[i];
		gp_pw_str(w, k->name);
		gp_pw_u8(w, k->device);
		gp_pw_u64(w, k->samples);
		const double v[] = { k->dur_ns, k->read, k->write, k->flops[0], k->flops[1], k->flops[2], k->tensor_pct,
				     k->sm_pct, k->mem_pct, k->passes, k->extra, k->gbps, k->gflops, k->intensity,
				     k->mem_share, k->comp_share };
		for (size_t x = 0; x < sizeof v / sizeof v[0]; x++)
			gp_pw_f64(w, v[x]);
		gp_pw_u64(w, k->nops);
		for (size_t o = 0; o < k->nops; o++)
			gp_pw_u32(w, k->ops[o]);
		gp_pw_u32(w, (uint32_t)k->prec);
		gp_pw_u32(w, k->bound);
	}
	return w->err;
}

static int gp_roof_load(void *p, struct gp_pr *rd, struct gp_strtab *strings)
{
	struct gp_roof *r = p;
	r->asked = gp_pr_bool(rd);
	r->status = gp_pr_i64(rd);
	r->why = gp_pr_intern(rd, strings);
	r->excluded = gp_pr_u64(rd);
	r->excluded_ns = gp_pr_u64(rd);
	size_t ndev = gp_pr_count(rd, 2 + 4 * 8 + 4, 256);
	for (size_t i = 0; i < ndev && !rd->err; i++) {
		struct gp_roof_dev *d = &r->dev[gp_pr_u8(rd)];
		d->counted = gp_pr_bool(rd);
		d->gbps = gp_pr_f64(rd);
		for (int q = 0; q < 3; q++)
			d->gflops[q] = gp_pr_f64(rd);
		d->source = gp_pr_intern(rd, strings);
	}
	size_t nk = gp_pr_count(rd, 4 + 1 + 8 + 16 * 8 + 8 + 8, UINT32_MAX);
	if (nk && !rd->err && !(r->k = calloc(nk, sizeof *r->k)))
		gp_pr_oom(rd);
	for (size_t i = 0; i < nk && !rd->err; i++) {
		struct gp_roof_kernel *k = &r->k[i];
		k->name = gp_pr_intern_req(rd, strings);
		k->device = gp_pr_u8(rd);
		k->samples = gp_pr_u64(rd);
		double *v[] = { &k->dur_ns, &k->read, &k->write, &k->flops[0], &k->flops[1], &k->flops[2],
				&k->tensor_pct, &k->sm_pct, &k->mem_pct, &k->passes, &k->extra, &k->gbps, &k->gflops,
				&k->intensity, &k->mem_share, &k->comp_share };
		for (size_t x = 0; x < sizeof v / sizeof v[0]; x++)
			*v[x] = gp_pr_f64(rd);
		size_t no = gp_pr_count(rd, 4, GP_ROOF_OPS);
		for (size_t o = 0; o < no && !rd->err; o++)
			k->ops[o] = gp_pr_u32(rd);
		k->nops = rd->err ? 0 : no;
		k->prec = (int)(int32_t)gp_pr_u32(rd);
		k->bound = gp_pr_u32(rd);
		/* the printers index names by both */
		if (!rd->err && (k->prec < -1 || k->prec > 2 || k->bound < GP_BOUND_MEMORY || k->bound > GP_BOUND_LATENCY))
			gp_pr_fail(rd, "a kernel's precision or bound is none the report knows");
		r->nk = r->capk = i + 1;
	}
	return rd->err;
}

const struct gp_analysis gp_analysis_roofline = {
	.name = "roofline",
	.title = "Roofline (hardware counters)",
	.types = { GP_AN_TYPE(GP_REC_COUNTER) | GP_AN_TYPE(GP_REC_STATUS), 0 },
	.create = gp_roof_create,
	.record = gp_roof_record,
	.finish = gp_roof_finish,
	.annotate = gp_roof_annotate,
	.text = gp_roof_text,
	.json = gp_roof_json,
	.destroy = gp_roof_destroy,
	.save = gp_roof_save,
	.load = gp_roof_load,
};
