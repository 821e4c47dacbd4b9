/*
 * sim_truth_reader.h — loads the ground truth sim_truth_writer.c writes
 * (SIMCUDA_TRUTH=path, one JSON object per line; docs/simcuda.md "Ground
 * truth"). Linked by any test
 * that compares what it measured against what simcuda really did
 * ($(B)/lib/libsimtruth.a). Plain functions, no global state, any thread.
 *
 * Field use per type (unused fields are 0 / ""):
 *   SIM_EV_API     name, tid, start, end, corr
 *   SIM_EV_KERNEL  name, stream, start, end, corr, api_corr, replay (the passes
 *                  of a launch replayed for CUPTI's range profiler, else 0)
 *   SIM_EV_MEMCPY  name, kind ("HtoD".."PtoP"), stream, start, end, corr
 *                  (= CUPTI record correlationId, the driver call's),
 *                  api_corr (= runtimeCorrelationId, the runtime call's), bytes
 *   SIM_EV_MEMSET  name, stream, start, end, corr, api_corr, bytes
 *   SIM_EV_SYNC    kind ("device","stream","event","memcpy","memset",
 *                  "pageable_copy","free","free_host","host_alloc","queue_full";
 *                  docs/simcuda.md), tid, start, end, api_corr, waited_corr
 *   SIM_EV_OVERHEAD tid, start, end, api_corr (CUPTI's own host time inside
 *                  that API call)
 * Lines of other types ("gpu_clock", "cupti_kind", "outside", any later
 * one) and the api lines' "rec" are skipped: only the Python checkers read
 * them.
 */
#ifndef SIM_TRUTH_READER_H
#define SIM_TRUTH_READER_H

#include <stddef.h>
#include <stdint.h>

enum sim_ev_type { SIM_EV_API, SIM_EV_KERNEL, SIM_EV_MEMCPY, SIM_EV_MEMSET, SIM_EV_SYNC, SIM_EV_OVERHEAD };

struct sim_ev {
	enum sim_ev_type type;
	char name[256];
	char kind[16];
	uint32_t tid, stream, corr, api_corr, waited_corr;
	uint64_t start, end, bytes;
	uint32_t replay;
};

/*
 * Read every line of `path`. On success returns 0 and a malloc'd array in
 * *out (caller frees) with *n entries, in file order. Returns -errno if the
 * file cannot be read, -EINVAL on a malformed line (with one message on
 * stderr naming file and line), -ENOMEM when out of memory.
 */
int sim_truth_load(const char *path, struct sim_ev **out, size_t *n);

#endif
