/*
 * sim_config.h — the simcuda cost model (docs/simcuda.md): global keys from
 * SIMCUDA_CONFIG, overridden by SIMCUDA_<KEY> environment variables, and
 * `kernel GLOB KEY=VALUE ...` rules (first match wins).
 *
 * Called once by sim_call.c at simulated driver start (any thread, under
 * its init once), and by the tests. The struct is read-only afterwards.
 */
#ifndef SIM_CONFIG_H
#define SIM_CONFIG_H

#include <stddef.h>
#include <stdint.h>

/* The most devices the `devices` key accepts. */
#define SIM_MAX_DEVICES 4

/* Registers per thread of a function no rule gives `regs` (its
 * cudaFuncGetAttributes numRegs and its kernel records' registersPerThread). */
#define SIM_FUNC_REGS 32

struct sim_kernel_rule {
	char *glob;
	int has_exec, has_launch, has_regs;
	uint64_t regs;              /* registers per thread (has_regs)          */
	uint64_t static_smem;       /* bytes of static shared memory per block  */
	uint64_t exec_ns, launch_ns;
	uint64_t exec_per_block_ns; /* added per grid block beyond the first (0 = none) */
	/* the work of one launch, served as hardware counters by the range
	 * profiler (sim_profiler.c; 0 = none): FLOPs by precision, DRAM bytes
	 * read + written, tensor-pipe activity in % of its peak */
	uint64_t flops, flops_fp64, flops_fp16, bytes, tensor_pct;
};

struct sim_config {
	uint64_t launch_ns;         /* host time of a launch API call          */
	uint64_t launch_latency_ns; /* API return -> earliest GPU start         */
	uint64_t exec_ns;           /* default kernel execution time            */
	double memcpy_gbps;         /* copy/set bandwidth, GB/s (1e9 bytes/s)   */
	uint64_t memcpy_latency_ns; /* fixed part of every copy/set             */
	uint64_t sync_ns;           /* host cost of a sync call beyond waiting  */
	uint64_t api_ns;            /* host time of every other API call        */
	/* Real-CUDA behaviours (docs/simcuda.md "Real-CUDA behaviours"). */
	uint64_t pageable_async_blocks; /* 1: async copies on pageable memory block */
	uint64_t implicit_sync;     /* 1: cudaFree/FreeHost/HostAlloc wait for the device */
	uint64_t queue_depth;       /* max ops pending on a device; 0 = unbounded */
	uint64_t exec_jitter_pct;   /* kernel time uniform within +-P % of its cost */
	uint64_t seed;              /* seed of every random draw                */
	uint64_t devices;           /* simulated devices, 1..SIM_MAX_DEVICES    */
	/* CUPTI: how the simulated CUPTI differs from a kind one (sim_cupti_buffers.c) */
	uint64_t cupti_delivery_delay_ns;  /* background delivery >= op end + this  */
	int64_t cupti_clock_offset_ns;     /* GPU-side timestamps shifted by this     */
	double cupti_clock_drift_ppm;      /* ... plus this many ppm of elapsed time  */
	uint64_t cupti_buffer_records;     /* device record buffer capacity           */
	uint64_t cupti_api_overhead_ns;    /* CUPTI host time in each traced API call */
	uint64_t cupti_launch_overhead_ns; /* ... and in each traced kernel launch    */
	uint64_t cupti_extcorr_overhead_ns; /* ... and per external-correlation record */
	/* the device's peaks, served by the range profiler (sim_profiler.c) */
	double peak_gflops;                /* FP32 GFLOP/s (FP64 half, FP16 twice) */
	double peak_gbps;                  /* device memory GB/s                      */
	uint64_t cupti_overhead_records;   /* 0: CUPTI refuses KIND_OVERHEAD (no records) */
	struct sim_kernel_rule *rules;
	size_t nrules;
};

/* Defaults: documented in docs/simcuda.md. */
void sim_config_defaults(struct sim_config *c);
/*
 * Load: defaults, then the file `path` (NULL = none), then SIMCUDA_<KEY>
 * environment overrides (through getenv). Returns 0, or -1 with a one-line
 * message in err ("<file>:<line>: <problem>" or "SIMCUDA_X=...: <problem>").
 */
int sim_config_load(struct sim_config *c, const char *path, char *err, size_t errlen);
/* Parse a config text (file name only used in messages). Same contract. */
int sim_config_parse(struct sim_config *c, const char *text, const char *fname, char *err,
		     size_t errlen);
/* First rule matching the mangled or plain name; NULL if none. */
const struct sim_kernel_rule *sim_config_match(const struct sim_config *c, const char *mangled,
					       const char *plain);
void sim_config_free(struct sim_config *c);

#endif
