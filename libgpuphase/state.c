/*
 * state.c — the ground floor of libgpuphase.so: the state every module
 * reads and the small services every module calls. It calls only the
 * collector, below it: any module may use it, and it never calls back up
 * into process life (lib.c) or another module.
 *
 * What lives here:
 *  - gp_cfg, the one parsed configuration: written by lib.c's constructor
 *    (and its fork child handler) before any hook can start the library,
 *    read-only afterwards;
 *  - the state word gp_state (enum gp_state) and the facts lib.c's start
 *    establishes before its release store of RUNNING (gp_state_preloaded,
 *    gp_state_trace_path), plus gp_state_t0, gp_state_cuda_used and
 *    gp_state_window_ready (their pairs are named at their definitions);
 *  - per-thread state (gp_tls: thread id, op-id block, nesting, the
 *    library's own-call counter, the library locks the thread holds, noted
 *    by gp_state_lock in gp_lib.h) and the op-id counter;
 *  - record emission (gp_state_emit1, gp_state_status);
 *  - the count of calls lost while another thread was starting the library
 *    (a call waits for the start, lib.c's gp_lib_await_start; these are the
 *    ones that waited past its bound).
 *
 * Threads: any. Invariants: op id 0 is never handed out; a lost start-up
 * call is counted once, by the thread that lost it or at finish
 * (gp_state_startup_take), never by both.
 */
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "gp_collector.h"
#include "gp_lib.h"

struct gp_config gp_cfg;
int gp_state = GP_STATE_IDLE; /* pair: CAS/release stores in lib.c, acquire loads in the modules */
int gp_state_preloaded;
uint64_t gp_state_t0;
GP_TLS struct gp_tls gp_tls;

const char *gp_state_trace_path = ""; /* this process's trace, once started (static storage) */
int gp_state_cuda_used; /* the program is known to use CUDA; relaxed (a hint, set once) */
int gp_state_window_ready;
static uint32_t gp_state_op_counter = 1;
/* Calls of the program that arrived while another thread was starting the
 * library, so were not recorded, and that no thread has yet added to its
 * ring's drop count (gp_state_startup_flush); the rest is taken at finish
 * (gp_state_startup_take). Atomic, relaxed: a count. */
static uint64_t gp_state_startup_lost;
/* All of them, never taken: finish's GP_STATUS_STARTUP_LOST. Atomic, relaxed. */
static uint64_t gp_state_startup_lost_total;

uint32_t gp_state_tid_slow(void)
{
	gp_tls.tid = (uint32_t)syscall(SYS_gettid);
	return gp_tls.tid;
}

uint32_t gp_state_op_block(void)
{
	struct gp_tls *t = &gp_tls;
	/* 0 is never an op id: blocks start at values = 1 mod 64, so the one
	 * crossing 2^32 would end with 0; gp_state_op_range cuts it there. */
	uint32_t b = __atomic_fetch_add(&gp_state_op_counter, 64, __ATOMIC_RELAXED);
	gp_state_op_range(b, &t->op_next, &t->op_end);
	return t->op_next++;
}

void gp_state_emit1(const union gp_rec *r)
{
	gp_collector_emit(r, 1);
}

void gp_state_status(enum gp_status_kind kind, int64_t value, const char *detail)
{
	union gp_rec r;
	memset(&r, 0, sizeof r);
	r.status.type = GP_REC_STATUS;
	r.status.kind = (uint8_t)kind;
	r.status.detail = detail ? gp_collector_intern(detail, strlen(detail)) : 0;
	r.status.ts = gp_now();
	r.status.value = value;
	gp_collector_emit(&r, 1);
}

void gp_state_count_startup_lost(void)
{
	gp_tls.startup_lost++;
	__atomic_fetch_add(&gp_state_startup_lost, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&gp_state_startup_lost_total, 1, __ATOMIC_RELAXED);
}

uint64_t gp_state_startup_total(void)
{
	return __atomic_load_n(&gp_state_startup_lost_total, __ATOMIC_RELAXED);
}

void gp_state_startup_flush(void)
{
	uint64_t n = gp_tls.startup_lost, have = __atomic_load_n(&gp_state_startup_lost, __ATOMIC_RELAXED);
	gp_tls.startup_lost = 0;
	/* claim them from the shared count first: finish may have taken the
	 * remainder already, and nothing is counted twice */
	do {
		if (have < n)
			return;
	} while (!__atomic_compare_exchange_n(&gp_state_startup_lost, &have, have - n, 1, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	gp_collector_count_lost(n);
}

uint64_t gp_state_startup_take(void)
{
	gp_tls.startup_lost = 0;
	return __atomic_exchange_n(&gp_state_startup_lost, 0, __ATOMIC_RELAXED);
}
