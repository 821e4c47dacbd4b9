/*
 * test_report_roofline.c — Criterion suite for the analyses that place
 * operators against the device's peaks (report/analyses/copies.c, the
 * per-architecture table report/peaks.c), run by the pipeline on synthetic
 * record arrays whose bytes and durations make every expected number plain
 * arithmetic. Runs on the test thread only.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gp_collector.h"
#include "report/analyses.h"
#include "report/peaks.h"
#include "report/pipeline.h"

struct recs {
	union gp_rec r[1024];
	size_t n;
};

static union gp_rec *add(struct recs *t)
{
	cr_assert(t->n < 1024);
	union gp_rec *r = &t->r[t->n++];
	memset(r, 0, sizeof *r);
	return r;
}

static void str(struct recs *t, uint32_t id, const char *text)
{
	union gp_rec *r = add(t);
	r->string.type = GP_REC_STRING;
	r->string.id = id;
	r->string.len = (uint32_t)strlen(text);
	cr_assert(r->string.len <= GP_STRING_INLINE);
	memcpy(r->string.text, text, r->string.len);
}

static void device(struct recs *t, uint8_t dev, uint32_t name, uint32_t ccmaj)
{
	union gp_rec *r = add(t);
	r->device.type = GP_REC_DEVICE;
	r->device.device = dev;
	r->device.name = name;
	r->device.cc_major = ccmaj;
	r->device.sm_count = 132;
}

/* One async copy (runtime record + MEMCPY record) of `bytes` taking `dur`
 * ns on the GPU; kind 0 makes a memset. */
static void copy(struct recs *t, uint64_t at, uint8_t dev, uint8_t kind, uint32_t bytes, uint32_t dur, uint32_t corr)
{
	union gp_rec *a = add(t);
	a->api.type = GP_REC_RUNTIME_API;
	a->api.class_flags = kind ? GP_API_MEMCPY_ASYNC : GP_API_MEMSET_ASYNC;
	a->api.tid = 7;
	a->api.start = at;
	a->api.dur = 2000;
	a->api.corr = corr;
	union gp_rec *c = add(t);
	c->copy.type = kind ? GP_REC_MEMCPY : GP_REC_MEMSET;
	c->copy.device = dev;
	c->copy.copy_kind = kind;
	c->copy.flags = GP_COPYF_ASYNC;
	c->copy.stream = 13;
	c->copy.start = at + 5000;
	c->copy.dur = dur;
	c->copy.corr = corr;
	c->copy.rt_corr = corr;
	c->copy.bytes = bytes;
}

/* The pipeline's analyses over the records: text (or JSON) into a malloc'd
 * string. */
static char *report(const struct recs *t, int json)
{
	struct gp_pipeline_opts po = { .group_by = GP_GROUP_KERNEL, .what = GP_PIPE_ANALYSES, .outlier_factor = 1.5 };
	struct gp_pipeline *p = gp_pipeline_new(&po);
	cr_assert(p);
	char err[256];
	cr_assert_eq(gp_pipeline_add_records(p, "records", t->r, t->n, err, sizeof err), 0, "%s", err);
	struct gp_rep rep;
	cr_assert_eq(gp_pipeline_report(p, 0, 1, &rep), 0);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct gp_analysis_style style = { .markdown = 0, .outlier_factor = 1.5 };
	if (json)
		gp_analyses_json(f, gp_pipeline_analyses(p)[0], &rep, &style);
	else
		cr_assert_eq(gp_analyses_text(f, gp_pipeline_analyses(p)[0], &rep, &style), 0);
	fclose(f);
	gp_pipeline_free(p);
	gp_rep_free(&rep);
	return buf;
}

#define T0 1000000000ull
#define MIB (1u << 20)

Test(copies, bandwidth_against_the_h200_links)
{
	static struct recs t;
	t.n = 0;
	str(&t, 1, "NVIDIA H200");
	device(&t, 0, 1, 9);
	/* HtoD: 4 x 64 MiB, 2 ms each: 33.554432 GB/s, 53.3 % of PCIe 5.0 x16 (63) */
	for (uint32_t i = 0; i < 4; i++)
		copy(&t, T0 + i * 3000000ull, 0, 1, 64 * MIB, 2000000, 10 + i);
	/* DtoD: 256 MiB in 200 us: 1342.18 GB/s, 2 x that = 55.9 % of 4800 */
	copy(&t, T0 + 20000000ull, 0, 8, 256 * MIB, 200000, 20);
	/* a set of 48 MB in 20 us: 2400 GB/s = 50 % of 4800 */
	copy(&t, T0 + 21000000ull, 0, 0, 48000000, 20000, 21);
	/* HtoH: no link */
	copy(&t, T0 + 22000000ull, 0, 9, 1000000, 100000, 22);
	char *out = report(&t, 0);
	cr_assert(strstr(out, "\nCopy bandwidth\n"), "%s", out);
	cr_assert(strstr(out, "  memcpy HtoD: 4 ops, 256.00 MiB in 8.00ms: 33.55 GB/s (fastest 33.55 GB/s), 53.3% of "
			      "PCIe 5.0 x16 (63.0 GB/s each way, H200)\n"), "%s", out);
	cr_assert(strstr(out, "  memcpy DtoD: 1 op, 256.00 MiB in 200.0us: 1342.18 GB/s (fastest 1342.18 GB/s), "
			      "55.9% of 2x traffic on device memory (4800.0 GB/s, H200)\n"), "%s", out);
	cr_assert(strstr(out, "  memset: 1 op, 45.78 MiB in 20.0us: 2400.00 GB/s (fastest 2400.00 GB/s), 50.0% of "
			      "device memory (4800.0 GB/s, H200)\n"), "%s", out);
	cr_assert(strstr(out, "  memcpy HtoH: 1 op, 976.56 KiB in 100.0us: 10.00 GB/s (fastest 10.00 GB/s), no link\n"),
		  "%s", out);
	free(out);
	out = report(&t, 1);
	cr_assert(strstr(out, "\"copy_bandwidth\": [{\"name\": \"memcpy HtoD\", \"device\": 0, \"count\": 4, \"bytes\": "
			      "268435456, \"busy_ns\": 8000000, \"achieved_gbps\": 33.5544, \"best_gbps\": 33.5544, "
			      "\"link\": \"host\", \"traffic_per_byte\": 1, \"link_name\": \"PCIe 5.0 x16\", "
			      "\"link_peak_gbps\": 63, \"share_of_peak\": 0.53261, \"peak_source\": \"H200\"}"),
		  "%s", out);
	cr_assert(strstr(out, "\"link\": \"none\", \"traffic_per_byte\": 1, \"link_name\": null, \"link_peak_gbps\": null, "
			      "\"share_of_peak\": null, \"peak_source\": null}"), "%s", out);
	free(out);
}

Test(copies, unknown_device_by_compute_capability_and_devices_apart)
{
	static struct recs t;
	t.n = 0;
	str(&t, 1, "Some GPU");
	device(&t, 0, 1, 8);
	device(&t, 1, 1, 8);
	copy(&t, T0, 0, 2, 31500000, 2000000, 1); /* 15.75 GB/s = 50 % of PCIe 4.0 */
	copy(&t, T0 + 3000000ull, 1, 10, 1000000, 1000, 2); /* peer: no table row */
	char *out = report(&t, 0);
	cr_assert(strstr(out, "  memcpy DtoH (device 0): 1 op, 30.04 MiB in 2.00ms: 15.75 GB/s (fastest 15.75 GB/s), "
			      "50.0% of PCIe 4.0 x16 (31.5 GB/s each way, by compute capability)\n"), "%s", out);
	cr_assert(strstr(out, "  memcpy PtoP (device 1): 1 op, 976.56 KiB in 1.0us: 1000.00 GB/s (fastest 1000.00 GB/s), "
			      "link peak unknown for this device\n"), "%s", out);
	free(out);
}

Test(copies, no_copies_no_section)
{
	static struct recs t;
	t.n = 0;
	char *out = report(&t, 0);
	cr_assert_null(strstr(out, "Copy bandwidth"), "%s", out);
	free(out);
}

Test(peaks, table_rows_most_specific_first)
{
	struct gp_peaks p;
	cr_assert_eq(gp_peaks_lookup("NVIDIA GH200 480GB", 9, 0, &p), 1);
	cr_assert_str_eq(p.model, "GH200");
	cr_assert_str_eq(p.host_link, "NVLink-C2C");
	cr_assert_eq(gp_peaks_lookup("NVIDIA H200", 9, 0, &p), 1);
	cr_assert_eq(p.dram_gbps, 4800);
	cr_assert_eq(gp_peaks_lookup("NVIDIA H100 PCIe", 9, 0, &p), 1);
	cr_assert_str_eq(p.model, "H100 PCIe");
	cr_assert_eq(gp_peaks_lookup("NVIDIA H100 80GB HBM3", 9, 0, &p), 1);
	cr_assert_str_eq(p.model, "H100 SXM");
	cr_assert_eq(p.fp32_gflops, 66900);
	cr_assert_eq(gp_peaks_lookup("NVIDIA A100-SXM4-80GB", 8, 0, &p), 1);
	cr_assert_str_eq(p.model, "A100 80GB SXM");
	cr_assert_eq(p.dram_gbps, 2039);
	cr_assert_eq(gp_peaks_lookup("NVIDIA A100-PCIE-40GB", 8, 0, &p), 1);
	cr_assert_str_eq(p.model, "A100 40GB PCIe");
	cr_assert_eq(gp_peaks_lookup("NVIDIA A100 80GB PCIe", 8, 0, &p), 1);
	cr_assert_str_eq(p.model, "A100 80GB PCIe");
	cr_assert_eq(gp_peaks_lookup("NVIDIA A100-SXM4-40GB", 8, 0, &p), 1);
	cr_assert_str_eq(p.model, "A100 40GB SXM");
	cr_assert_eq(gp_peaks_lookup(NULL, 7, 0, &p), 0);
	cr_assert_null(p.model);
	cr_assert_eq(p.host_gbps, 15.75);
	cr_assert_eq(p.dram_gbps, 0);
	cr_assert_eq(gp_peaks_lookup("x", 6, 1, &p), 0);
	cr_assert_eq(p.host_gbps, 0);
}
