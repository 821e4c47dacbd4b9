/*
 * test_report_roofline.c — Criterion suite for the analyses that place
 * operators against the device's peaks (report/analyses/copies.c, the
 * per-architecture table report/analyses/peaks.c, report/analyses/roofline.c and the
 * core leaving replayed launches out), run by the pipeline on synthetic
 * record arrays whose bytes, FLOPs and durations make every expected number
 * plain arithmetic. Runs on the test thread only.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gp_collector.h"
#include "report/analyses/registry.h"
#include "report/outputs/output.h"
#include "report/analyses/peaks.h"
#include "report/pipeline.h"
#include "trace_builder.h"

static void device(struct recs *t, uint8_t dev, uint32_t name, uint32_t ccmaj)
{
	union gp_rec *r = rec_new(t);
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
	rec_api(t, GP_REC_RUNTIME_API, kind ? GP_API_MEMCPY_ASYNC : GP_API_MEMSET_ASYNC, 7, at, 2000, corr);
	union gp_rec *c = rec_copy(t, kind ? GP_REC_MEMCPY : GP_REC_MEMSET, 1, 13, at + 5000, dur, corr, corr, kind);
	c->copy.device = dev;
	c->copy.bytes = bytes;
}

/* The pipeline's analyses over the records: text (or JSON) into a malloc'd
 * string; the report itself into *out when asked (the caller frees it). */
static char *report_rep(const struct recs *t, int json, struct gp_rep *out)
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
	if (out)
		*out = rep;
	else
		gp_rep_free(&rep);
	return buf;
}

static char *report(const struct recs *t, int json)
{
	return report_rep(t, json, NULL);
}

#define T0 1000000000ull
#define MIB (1u << 20)

Test(copies, bandwidth_against_the_h200_links)
{
	static struct recs t;
	t.n = 0;
	rec_string(&t, 1, "NVIDIA H200");
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
	rec_string(&t, 1, "Some GPU");
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

/* A launch through the hooks: HOOK_API (op id), EXTCORR (CUPTI corr ->
 * op), RUNTIME_API and KERNEL; exec ns on the GPU. */
static void hooked_launch(struct recs *t, uint64_t at, uint32_t op, uint32_t corr, uint32_t name, uint64_t exec)
{
	rec_api(t, GP_REC_HOOK_API, GP_API_LAUNCH, 7, at, 3000, op);
	rec_extcorr(t, corr, op);
	rec_api(t, GP_REC_RUNTIME_API, GP_API_LAUNCH, 7, at + 100, 2000, corr);
	rec_kernel(t, 13, at + 3000, at + 3000 + exec, corr, name);
}

static void counter(struct recs *t, uint32_t op, uint32_t name, uint8_t metric, double v)
{
	union gp_rec *r = rec_new(t);
	r->counter.type = GP_REC_COUNTER;
	r->counter.metric = metric;
	r->counter.op = op;
	r->counter.name = name;
	r->counter.value = v;
}

/* One sampled launch's counters (the library's set). */
static void sample(struct recs *t, uint32_t op, uint32_t name, double ns, double bytes, double fp32)
{
	counter(t, op, name, GP_CTR_DURATION_NS, ns);
	counter(t, op, name, GP_CTR_DRAM_READ, bytes / 2);
	counter(t, op, name, GP_CTR_DRAM_WRITE, bytes / 2);
	counter(t, op, name, GP_CTR_FLOP_FP64, 0);
	counter(t, op, name, GP_CTR_FLOP_FP32, fp32);
	counter(t, op, name, GP_CTR_FLOP_FP16, 0);
	counter(t, op, name, GP_CTR_PASSES, 4);
}

/* An A100 80GB SXM (table: 2039 GB/s, FP32 19500 GFLOP/s), no peaks from
 * the counters. gemm: 3 ordinary launches of 100 us, one sampled launch
 * (op 100) doing 1.6e9 FP32 FLOPs and 1e6 bytes in 100 us: 16000 GFLOP/s
 * = 82 % of FP32 -> compute-bound. copy: sampled only (ops 200, 201), 1.8e8
 * bytes in 100 us each: 1800 GB/s = 88 % of 2039 -> memory-bound. tiny:
 * one sample, 4 KiB and 1 kFLOP in 5 us -> latency. 4 launches replayed. */
static void roof_trace(struct recs *t)
{
	t->n = 0;
	rec_string(t, 1, "NVIDIA A100-SXM4-80GB");
	device(t, 0, 1, 8);
	rec_string(t, 2, "_Z4gemmv");
	rec_string(t, 3, "_Z4copyv");
	rec_string(t, 4, "_Z4tinyv");
	for (uint32_t i = 0; i < 3; i++)
		hooked_launch(t, T0 + i * 1000000ull, 10 + i, 50 + i, 2, 100000);
	hooked_launch(t, T0 + 3000000ull, 100, 60, 2, 400000); /* replayed: 4 passes */
	hooked_launch(t, T0 + 4000000ull, 200, 61, 3, 400000);
	hooked_launch(t, T0 + 5000000ull, 201, 62, 3, 400000);
	hooked_launch(t, T0 + 6000000ull, 300, 63, 4, 20000);
	sample(t, 100, 2, 100000, 1e6, 1.6e9);
	sample(t, 200, 3, 100000, 1.8e8, 0);
	sample(t, 201, 3, 100000, 1.8e8, 0);
	sample(t, 300, 4, 5000, 4096, 1000);
	rec_status(t, GP_STATUS_COUNTERS, 4);
}

Test(roofline, bounds_rates_and_replays_left_out)
{
	static struct recs t;
	roof_trace(&t);
	struct gp_rep rep;
	char *out = report_rep(&t, 0, &rep);
	cr_assert(strstr(out, "\nRoofline (hardware counters)\n"), "%s", out);
	cr_assert(strstr(out, "  4 launches replayed for their counters, left out of every phase (1.22ms of replay)\n"),
		  "%s", out);
	cr_assert(strstr(out, "  device 0 peaks: 2039 GB/s, fp64 9700 GFLOP/s, fp32 19500 GFLOP/s, fp16 78000 GFLOP/s "
			      "(A100 80GB SXM)\n"), "%s", out);
	cr_assert(strstr(out, "  copy: memory-bound: 1800.0 GB/s (88.3% of memory), 0.0 GFLOP/s (0.0% of compute), 0 FLOP/byte; "
			      "2 samples (op 200, 201), 4 replay passes each\n"), "%s", out);
	cr_assert(strstr(out, "  gemm: compute-bound: 10.0 GB/s (0.5% of memory), 16000.0 GFLOP/s (82.1% of fp32), "
			      "1.6e+03 FLOP/byte; 1 sample (op 100), 4 replay passes each\n"), "%s", out);
	cr_assert(strstr(out, "  tiny: latency-bound: 0.8 GB/s (0.0% of memory), 0.2 GFLOP/s (0.0% of fp32), 0.244 "
			      "FLOP/byte; 1 sample (op 300)"), "%s", out);
	cr_assert(strstr(out, "    advice: memory-bound by its counters: move fewer bytes"), "%s", out);
	free(out);
	/* the core: the replayed launches are in no operator */
	cr_assert_eq(rep.ops_replayed, 4);
	cr_assert_eq(rep.replayed_ns, 400000u * 3 + 20000u);
	const struct gp_rep_group *gemm = NULL;
	for (size_t i = 0; i < rep.ngroups; i++) {
		cr_assert(strcmp(rep.groups[i].name, "copy") && strcmp(rep.groups[i].name, "tiny"),
			  "%s: only replayed launches, yet an operator", rep.groups[i].name);
		if (!strcmp(rep.groups[i].name, "gemm"))
			gemm = &rep.groups[i];
	}
	cr_assert(gemm);
	cr_assert_eq(gemm->count, 3);
	cr_assert_eq(gemm->execute_ns, 300000u);
	cr_assert_eq(gemm->bound, GP_BOUND_COMPUTE, "annotate gave gemm its bound");
	cr_assert(strstr(gp_out_advice(&rep, gemm, GP_VERDICT_COMPUTE), "compute-bound by its counters: lower precision"));
	gp_rep_free(&rep);
	out = report(&t, 1);
	cr_assert(strstr(out, "\"roofline\": {\"available\": true, \"status\": null, \"replayed_ops\": 4, "
			      "\"replayed_ns\": 1220000, \"near_roof\": 0.6, \"devices\": [{\"device\": 0, \"peak_gbps\": 2039, "
			      "\"peak_fp64_gflops\": 9700, \"peak_fp32_gflops\": 19500, \"peak_fp16_gflops\": 78000, "
			      "\"peak_source\": \"A100 80GB SXM\"}]"), "%s", out);
	cr_assert(strstr(out, "{\"name\": \"gemm\", \"device\": 0, \"samples\": 1, \"replayed_ops\": [100], \"passes\": 4, "
			      "\"duration_ns\": 100000, \"dram_bytes_read\": 500000, \"dram_bytes_write\": 500000, "
			      "\"flops_fp64\": 0, \"flops_fp32\": 1.6e+09, \"flops_fp16\": 0, \"achieved_gbps\": 10, "
			      "\"achieved_gflops\": 16000, \"arithmetic_intensity\": 1600, \"memory_share\": 0.00490436, "
			      "\"compute_share\": 0.820513, \"compute_precision\": \"fp32\""), "%s", out);
	cr_assert(strstr(out, "\"bound\": \"compute\", \"advice\": \"compute-bound by its counters"), "%s", out);
	free(out);
}

Test(roofline, peaks_from_the_counters_win_and_a_refusal_is_said)
{
	static struct recs t;
	roof_trace(&t);
	/* the counters' own peaks: 1000 GB/s makes copy bound (1800 > 100 %) ... */
	counter(&t, 0, 0, GP_CTR_PEAK_DRAM_GBPS, 1000);
	counter(&t, 0, 0, GP_CTR_PEAK_FP32_GFLOPS, 40000);
	char *out = report(&t, 0);
	cr_assert(strstr(out, "  device 0 peaks: 1000 GB/s, fp64 9700 GFLOP/s, fp32 40000 GFLOP/s, fp16 78000 GFLOP/s "
			      "(counters)\n"), "%s", out);
	/* ... and gemm at 16000 of 40000 is near neither roof */
	cr_assert(strstr(out, "  gemm: latency-bound: 10.0 GB/s (1.0% of memory), 16000.0 GFLOP/s (40.0% of fp32)"), "%s",
		  out);
	free(out);
	t.n = 0;
	rec_string(&t, 1, "counters unavailable: x: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES");
	rec_status(&t, GP_STATUS_COUNTERS, -35)->status.detail = 1;
	out = report(&t, 0);
	cr_assert(strstr(out, "\nRoofline (hardware counters)\n  counters unavailable: x: "
			      "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES\n"), "%s", out);
	free(out);
	out = report(&t, 1);
	cr_assert(strstr(out, "\"roofline\": {\"available\": false, \"status\": \"counters unavailable: x: "
			      "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES\", \"replayed_ops\": 0"), "%s", out);
	free(out);
	t.n = 0;
	out = report(&t, 1);
	cr_assert(strstr(out, "\"roofline\": null"), "%s", out);
	free(out);
}
