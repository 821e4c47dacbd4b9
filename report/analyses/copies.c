/*
 * copies.c — the "Copy bandwidth" analysis: for each kind of copy (and
 * sets) on each device, the bandwidth it achieved and how far that is from
 * the peak of the link it crossed — from the copy records alone (bytes and
 * GPU interval), so every trace with copies gets it, counters or not.
 *
 * The link of a copy kind: host <-> device copies cross the host link
 * (PCIe, NVLink-C2C on GH200), peer copies the NVLink peer link, device ->
 * device copies and sets move device memory (a copy reads and writes each
 * byte: twice its bytes of traffic, a set writes them once). The peaks are
 * the device's row of the per-architecture table (report/analyses/peaks.h), looked
 * up by the name in the trace's GP_REC_DEVICE record; host-to-host copies
 * have no link peak. docs/metrics.md "Copy bandwidth" defines each number.
 *
 * Memory: one row per (device, copy kind) seen, never per op. A plug-in of
 * registry.h; report thread only.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"
#include "report/util/fmt.h"
#include "peaks.h"

#define GP_COPIES_SET 16u /* row kind of sets (copy kinds are 0..15 here) */

enum gp_copies_link { GP_LINK_NONE = 0, GP_LINK_HOST, GP_LINK_PEER, GP_LINK_DRAM };

struct gp_copies_row {
	uint8_t device, kind;     /* kind: CUPTI copy kind, or GP_COPIES_SET  */
	const char *name;         /* the op name ("memcpy HtoD", "memset")    */
	uint64_t count, bytes, busy_ns;
	double best_gbps;         /* the fastest single op                    */
	/* from the peaks, at finish */
	enum gp_copies_link link;
	unsigned traffic;         /* bytes of link traffic per byte copied    */
	double peak_gbps;         /* 0 = unknown                              */
	const char *link_name;
	const char *model;        /* the peaks' table row, or NULL            */
};

struct gp_copies {
	int err;
	struct gp_copies_row *rows;
	size_t nrows, caprows;
	int multi_device;
};

static void *gp_copies_create(const struct gp_analysis_env *env)
{
	(void)env;
	return calloc(1, sizeof(struct gp_copies));
}

static void gp_copies_destroy(void *p)
{
	struct gp_copies *c = p;
	free(c->rows);
	free(c);
}

/* Which link a copy kind crosses, and its traffic per byte copied. */
static enum gp_copies_link gp_copies_link_of(unsigned kind, unsigned *traffic)
{
	*traffic = 1;
	switch (kind) {
	case 1: /* HtoD */
	case 2: /* DtoH */
	case 3: /* HtoA */
	case 4: /* AtoH */
		return GP_LINK_HOST;
	case 10: /* PtoP */
		return GP_LINK_PEER;
	case 5:  /* AtoA */
	case 6:  /* AtoD */
	case 7:  /* DtoA */
	case 8:  /* DtoD: read and written */
		*traffic = 2;
		return GP_LINK_DRAM;
	case GP_COPIES_SET:
		return GP_LINK_DRAM;
	default: /* HtoH, unknown */
		return GP_LINK_NONE;
	}
}

static void gp_copies_op(void *p, const struct gp_an_op *op)
{
	struct gp_copies *c = p;
	if ((op->kind != GP_OP_MEMCPY && op->kind != GP_OP_MEMSET) || !op->has_gpu || !op->bytes)
		return;
	unsigned kind = op->kind == GP_OP_MEMSET ? GP_COPIES_SET : op->copy_kind < 16 ? op->copy_kind : 0u;
	struct gp_copies_row *r = NULL;
	for (size_t i = 0; i < c->nrows && !r; i++)
		if (c->rows[i].device == op->device && c->rows[i].kind == kind)
			r = &c->rows[i];
	if (!r) {
		if (GP_AN_GROW(c->rows, c->nrows, c->caprows))
			return gp_analysis_fail(&c->err, -ENOMEM);
		r = &c->rows[c->nrows++];
		memset(r, 0, sizeof *r);
		r->device = op->device;
		r->kind = (uint8_t)kind;
		r->name = op->name;
		if (c->nrows > 1 && c->rows[0].device != op->device)
			c->multi_device = 1;
	}
	r->count++;
	r->bytes += op->bytes;
	r->busy_ns += op->execute_ns;
	double g = op->execute_ns ? (double)op->bytes / (double)op->execute_ns : 0;
	if (g > r->best_gbps)
		r->best_gbps = g;
}

static int gp_copies_cmp(const void *a, const void *b)
{
	const struct gp_copies_row *x = a, *y = b;
	if (x->device != y->device)
		return x->device < y->device ? -1 : 1;
	return x->kind < y->kind ? -1 : x->kind > y->kind;
}

static int gp_copies_finish(void *p, const struct gp_an *an, const struct gp_rep *rep)
{
	struct gp_copies *c = p;
	(void)rep;
	if (c->nrows > 1)
		qsort(c->rows, c->nrows, sizeof *c->rows, gp_copies_cmp);
	for (size_t i = 0; i < c->nrows; i++) {
		struct gp_copies_row *r = &c->rows[i];
		struct gp_an_device d = { 0 };
		struct gp_peaks pk;
		gp_an_device(an, r->device, &d); /* none: no name, cc 0 */
		gp_peaks_lookup(d.name, d.cc_major, d.cc_minor, &pk);
		r->model = pk.model;
		r->link = gp_copies_link_of(r->kind, &r->traffic);
		switch (r->link) {
		case GP_LINK_HOST:
			r->peak_gbps = pk.host_gbps;
			r->link_name = pk.host_link;
			break;
		case GP_LINK_PEER:
			r->peak_gbps = pk.peer_gbps;
			r->link_name = pk.peer_link;
			break;
		case GP_LINK_DRAM:
			r->peak_gbps = pk.dram_gbps;
			r->link_name = "device memory";
			break;
		default:
			break;
		}
	}
	return c->err;
}

/* Achieved bandwidth: bytes copied per ns of GPU time = GB/s. */
static double gp_copies_gbps(const struct gp_copies_row *r)
{
	return r->busy_ns ? (double)r->bytes / (double)r->busy_ns : 0;
}

/* Share of the link's peak: link traffic rate / peak, -1 when unknown. */
static double gp_copies_share(const struct gp_copies_row *r)
{
	return r->peak_gbps > 0 ? gp_copies_gbps(r) * r->traffic / r->peak_gbps : -1;
}

static const char *gp_copies_bytes(uint64_t b, char *buf, size_t n)
{
	if (b >= (1ull << 30))
		snprintf(buf, n, "%.2f GiB", (double)b / (double)(1ull << 30));
	else if (b >= (1ull << 20))
		snprintf(buf, n, "%.2f MiB", (double)b / (double)(1ull << 20));
	else if (b >= (1ull << 10))
		snprintf(buf, n, "%.2f KiB", (double)b / (double)(1ull << 10));
	else
		snprintf(buf, n, "%" PRIu64 " B", b);
	return buf;
}

/* A rate in GB/s in a unit that shows it: GB/s, MB/s or kB/s (decimal,
 * as link peaks are given), never "0.00 GB/s". */
static const char *gp_copies_rate(double gbps, char *buf, size_t n)
{
	if (gbps >= 1.0)
		snprintf(buf, n, "%.2f GB/s", gbps);
	else if (gbps >= 1e-3)
		snprintf(buf, n, "%.1f MB/s", gbps * 1e3);
	else
		snprintf(buf, n, "%.1f kB/s", gbps * 1e6);
	return buf;
}

static void gp_copies_text(FILE *f, const void *p, const struct gp_rep *rep, const struct gp_analysis_style *s)
{
	const struct gp_copies *c = p;
	(void)rep;
	if (!c->nrows)
		return;
	const char *li = s->markdown ? "- " : "  ";
	fprintf(f, s->markdown ? "\n## Copy bandwidth\n\n" : "\nCopy bandwidth\n");
	for (size_t i = 0; i < c->nrows; i++) {
		const struct gp_copies_row *r = &c->rows[i];
		char b1[32], b2[32], r1[32], r2[32], dev[24] = "", nb[256];
		if (c->multi_device)
			snprintf(dev, sizeof dev, " (device %u)", r->device);
		fprintf(f, "%s%s%s: %" PRIu64 " %s, %s in %s: %s (fastest %s)", li,
			gp_fmt_name_buf(r->name, s->markdown, nb, sizeof nb), dev,
			r->count, r->count == 1 ? "op" : "ops", gp_copies_bytes(r->bytes, b1, sizeof b1),
			gp_fmt_ns((double)r->busy_ns, b2, sizeof b2), gp_copies_rate(gp_copies_gbps(r), r1, sizeof r1),
			gp_copies_rate(r->best_gbps, r2, sizeof r2));
		if (r->peak_gbps > 0)
			fprintf(f, 100.0 * gp_copies_share(r) < 0.1 ? ", %.2g%% of %s%s (%.1f GB/s%s, %s)"
								      : ", %.1f%% of %s%s (%.1f GB/s%s, %s)",
				100.0 * gp_copies_share(r),
				r->traffic == 2 ? "2x traffic on " : "", r->link_name, r->peak_gbps,
				r->link == GP_LINK_DRAM ? "" : " each way", r->model ? r->model : "by compute capability");
		else if (r->link == GP_LINK_NONE)
			fprintf(f, ", no link");
		else
			fprintf(f, ", link peak unknown for this device");
		fputc('\n', f);
	}
}

static void gp_copies_json(FILE *f, const void *p, const struct gp_rep *rep, const struct gp_analysis_style *s)
{
	static const char *const links[] = { "none", "host", "peer", "device_memory" };
	const struct gp_copies *c = p;
	(void)rep;
	(void)s;
	fputc('[', f);
	for (size_t i = 0; i < c->nrows; i++) {
		const struct gp_copies_row *r = &c->rows[i];
		fprintf(f, "%s{\"name\": ", i ? ", " : "");
		gp_fmt_json_str(f, r->name);
		fprintf(f, ", \"device\": %u, \"count\": %" PRIu64 ", \"bytes\": %" PRIu64 ", \"busy_ns\": %" PRIu64
			   ", \"achieved_gbps\": ",
			r->device, r->count, r->bytes, r->busy_ns);
		gp_fmt_json_num(f, gp_copies_gbps(r));
		fputs(", \"best_gbps\": ", f);
		gp_fmt_json_num(f, r->best_gbps);
		fprintf(f, ", \"link\": \"%s\", \"traffic_per_byte\": %u, \"link_name\": ", links[r->link], r->traffic);
		if (r->link_name)
			gp_fmt_json_str(f, r->link_name);
		else
			fputs("null", f);
		fputs(", \"link_peak_gbps\": ", f);
		if (r->peak_gbps > 0)
			gp_fmt_json_num(f, r->peak_gbps);
		else
			fputs("null", f);
		fputs(", \"share_of_peak\": ", f);
		if (r->peak_gbps > 0)
			gp_fmt_json_num(f, gp_copies_share(r));
		else
			fputs("null", f);
		fputs(", \"peak_source\": ", f);
		if (r->model && r->peak_gbps > 0)
			gp_fmt_json_str(f, r->model);
		else
			fputs(r->peak_gbps > 0 ? "\"compute capability\"" : "null", f);
		fputc('}', f);
	}
	fputc(']', f);
}

/* Partial results: the rows as finish left them (peaks looked up). */
static int gp_copies_save(const void *p, struct gp_pw *w)
{
	const struct gp_copies *c = p;
	gp_pw_u8(w, c->multi_device != 0);
	gp_pw_u64(w, c->nrows);
	for (size_t i = 0; i < c->nrows; i++) {
		const struct gp_copies_row *r = &c->rows[i];
		gp_pw_u8(w, r->device);
		gp_pw_u8(w, r->kind);
		gp_pw_str(w, r->name);
		gp_pw_u64(w, r->count);
		gp_pw_u64(w, r->bytes);
		gp_pw_u64(w, r->busy_ns);
		gp_pw_f64(w, r->best_gbps);
		gp_pw_u8(w, (uint8_t)r->link);
		gp_pw_u32(w, r->traffic);
		gp_pw_f64(w, r->peak_gbps);
		gp_pw_str(w, r->link_name);
		gp_pw_str(w, r->model);
	}
	return w->err;
}

static int gp_copies_load(void *p, struct gp_pr *r, struct gp_strtab *strings)
{
	struct gp_copies *c = p;
	c->multi_device = gp_pr_bool(r);
	size_t n = gp_pr_count(r, 2 + 4 + 3 * 8 + 8 + 1 + 4 + 8 + 8, UINT32_MAX);
	if (n && !r->err && !(c->rows = calloc(n, sizeof *c->rows)))
		gp_pr_oom(r);
	for (size_t i = 0; i < n && !r->err; i++) {
		struct gp_copies_row *x = &c->rows[i];
		x->device = gp_pr_u8(r);
		x->kind = gp_pr_u8(r);
		x->name = gp_pr_intern_req(r, strings);
		x->count = gp_pr_u64(r);
		x->bytes = gp_pr_u64(r);
		x->busy_ns = gp_pr_u64(r);
		x->best_gbps = gp_pr_f64(r);
		uint8_t link = gp_pr_u8(r);
		if (!r->err && link > GP_LINK_DRAM)
			gp_pr_fail(r, "a copy row's link is none the report knows");
		x->link = (enum gp_copies_link)link;
		x->traffic = gp_pr_u32(r);
		x->peak_gbps = gp_pr_f64(r);
		x->link_name = gp_pr_intern(r, strings);
		x->model = gp_pr_intern(r, strings);
		if (!r->err && x->peak_gbps > 0 && !x->link_name)
			gp_pr_fail(r, "a copy row with a peak names no link");
		c->nrows = c->caprows = i + 1;
	}
	return r->err;
}

const struct gp_analysis gp_analysis_copies = {
	.name = "copy_bandwidth",
	.title = "Copy bandwidth",
	.create = gp_copies_create,
	.op = gp_copies_op,
	.finish = gp_copies_finish,
	.text = gp_copies_text,
	.json = gp_copies_json,
	.destroy = gp_copies_destroy,
	.save = gp_copies_save,
	.load = gp_copies_load,
};
