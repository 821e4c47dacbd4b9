/*
 * sim_cupti.c — simulated libcupti.so.13: the activity API, the callback API
 * and CUPTI's clock, as CUPTI 13.0 (CUPTI_API_VERSION 130001) presents them.
 *
 * Who calls it: CUPTI clients (any thread) through the cupti* entry points,
 * and the simulated runtime (the files sim_cudart.h lists, app threads) through the private
 * simcupti_* functions in sim_internal.h.
 *
 * Threads and locks:
 *  - g.mx guards the staging list (records produced but not yet copied into
 *    a client buffer), the kind table writes and the flush handshake.
 *  - g.deliver_mx serialises everything that touches client buffers; it is
 *    held (g.mx is NOT) while the client's request/complete callbacks run,
 *    so a client may call cuptiActivityGetNextRecord / GetNumDroppedRecords /
 *    emit API calls from them without deadlock (calling cuptiActivityFlushAll
 *    from a buffer callback is refused, as real CUPTI forbids it).
 *  - One delivery thread ("the CUPTI thread", named simcuda-cupti) copies
 *    ready records into buffers, completes full buffers and performs
 *    flushes, so completion callbacks always run on it (or inline on the
 *    caller after fork, where the thread does not exist). It sleeps on a
 *    CLOCK_MONOTONIC condition variable: without staged records and without
 *    a flush period it waits for a signal, else it wakes every 10 ms.
 *
 * As awkward as the real CUPTI (docs/simcuda.md "CUPTI"; the cost model's
 * cupti_* keys arrive through simcupti_configure):
 *  - Lanes: with CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER (default 1)
 *    the device's records (kernel, memcpy, memset) fill one client buffer
 *    and each host thread's (API, external correlation, sync, overhead)
 *    another (SIM_LANES, threads hashed onto them); buffers complete
 *    independently, and a flush completes them starting from a lane that
 *    rotates, so records arrive interleaved in any order.
 *  - Background delivery (the thread's own passes and periodic flushes)
 *    takes a record no earlier than cupti_delivery_delay_ns after its op
 *    ended; cuptiActivityFlushAll takes every completed record at once, as
 *    CUPTI documents. When more than SIM_HOST_SOFT host records are staged
 *    they go early (a full buffer completes); at SIM_HOST_HARD the producing
 *    thread waits for the CUPTI thread (dropped only when it cannot); the
 *    device's records beyond cupti_buffer_records (the device buffer,
 *    emptied by each pass) are dropped and counted: staging memory is
 *    bounded.
 *  - GPU-side timestamps are shifted on delivery by cupti_clock_offset_ns
 *    plus cupti_clock_drift_ppm of the time elapsed since configuration;
 *    staging and the truth stay on the host clock.
 * Invariants: a record leaves staging exactly once (delivered or dropped);
 * a forced flush delivers incomplete records with end = 0 and forgets them;
 * g.nhost + g.ndev_all == g.nstaged; g.ndev counts the device records not
 * yet taken off the device buffer (ready and seen by a pass).
 */
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sim_internal.h"

#define SIM_MAX_KIND 64
#define SIM_MAX_CBID 4096
#define SIM_MAX_DOMAIN 8
#define SIM_EXT_KINDS ((int)CUPTI_EXTERNAL_CORRELATION_KIND_SIZE)
#define SIM_EXT_DEPTH 64
#define SIM_BUF_TICK_NS 10000000L /* delivery thread drains every 10 ms */
#define SIM_LANES 16                /* client buffers: 0 the device, 1.. host threads */
#define SIM_HOST_SOFT 16384u        /* host records staged beyond which they go early */
#define SIM_HOST_HARD (4u * SIM_HOST_SOFT) /* ... and beyond which they are dropped */
#define SIM_DEV_RECORD_BYTES 32u    /* CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE per record:
				     * its documented 3200000 bytes hold 100,000 */

struct sim_staged {
	struct sim_staged *next;
	uint64_t ready;
	uint16_t size, start_off, end_off, completed_off;
	uint8_t lane;   /* client buffer it goes to */
	uint8_t gpu;    /* device record: clock shift, device buffer */
	uint8_t on_dev; /* still counted in g.ndev */
	uint64_t data[]; /* 8-byte aligned record bytes */
};

struct sim_lane {
	uint8_t *buf; /* current client buffer, under deliver_mx */
	size_t size, valid;
};

static struct {
	pthread_mutex_t mx;
	pthread_cond_t cv;      /* worker wake-up; pairs with flush requests */
	pthread_cond_t done_cv; /* flush completion; pairs with flush_done */
	pthread_cond_t room_cv; /* host staging below SIM_HOST_HARD again */
	int room_waiters;       /* threads waiting on room_cv, under mx */
	pthread_mutex_t deliver_mx;
	struct sim_staged *head, **tail;
	size_t nstaged;
	int worker_running;
	int worker_stop; /* cuptiFinalize asks the delivery thread to end */
	pthread_t worker;
	uint64_t flush_req, flush_done; /* sequence numbers, under mx */
	int flush_forced;               /* a forced flush is requested */
	CUpti_BuffersCallbackRequestFunc req_cb;
	CUpti_BuffersCallbackCompleteFunc done_cb;
	struct sim_lane lanes[SIM_LANES]; /* under deliver_mx */
	unsigned rot;                     /* first lane a flush completes, under deliver_mx */
	size_t nhost, ndev_all;           /* staged host / device records, under mx */
	size_t ndev;                      /* device records in the device buffer, under mx */
	struct simcupti_params par;       /* under mx */
	int dev_buf_attr;                 /* the client set DEVICE_BUFFER_SIZE, under mx */
	uint64_t t0;                      /* drift origin (CUPTI clock), under mx */
	uint32_t flush_period_ms;
	/* the subscriber */
	int subscribed;
	CUpti_CallbackFunc sub_cb;
	void *sub_user;
	uint8_t cb_on[SIM_MAX_DOMAIN][SIM_MAX_CBID / 8];
	void (*rebase)(int64_t);
} g = {
	.mx = PTHREAD_MUTEX_INITIALIZER,
	.cv = PTHREAD_COND_INITIALIZER,
	.done_cv = PTHREAD_COND_INITIALIZER,
	.room_cv = PTHREAD_COND_INITIALIZER,
	.deliver_mx = PTHREAD_MUTEX_INITIALIZER,
	.tail = &g.head,
	/* until the runtime configures them: the cost model's defaults */
	.par = {.delivery_delay_ns = 1000000000, .clock_offset_ns = 1000, .clock_drift_ppm = 1.0,
		.buffer_records = 100000},
};

/* CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER; relaxed (set before
 * profiling starts, as CUPTI requires). */
static _Atomic int g_per_thread = 1;
static _Atomic unsigned g_lane_next;
static __thread unsigned t_lane; /* 0 = not assigned yet */

/* Enabled kinds: written under g.mx, read lock-free (relaxed; a record racing
 * an enable/disable may or may not be produced, as with real CUPTI). */
static _Atomic int g_kind_on[SIM_MAX_KIND];
/* Per-cbid API record switches (cuptiActivityEnableRuntimeApi/DriverApi):
 * 0 = as the kind says, 1 = on, 2 = off; enabling or disabling the kind
 * resets them (the kind overrides what was set before it). Relaxed. */
static _Atomic unsigned char g_rt_sel[SIM_MAX_CBID], g_drv_sel[SIM_MAX_CBID];
/* Correlation ids: relaxed fetch_add, only uniqueness matters. */
static _Atomic uint32_t g_corr = 0;
/* Dropped records since the last cuptiActivityGetNumDroppedRecords:
 * incremented by the delivery path, exchanged to 0 by the reader. */
static _Atomic size_t g_dropped = 0;
/* The timestamp callback: release-stored by the registration, acquire-loaded
 * by simcupti_now. */
static _Atomic(CUpti_TimestampCallbackFunc) g_ts_cb = NULL;
/* The last clock switch's delta (new clock - old), 0 before any; relaxed:
 * a waiter that misses it sees its target a day or more off and asks again. */
static _Atomic int64_t g_last_rebase = 0;
/* cuptiSetThreadIdType's choice; relaxed (a record racing the switch may use either). */
static _Atomic int g_thread_id_type = CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT;
static int g_foreign_subscriber = -1; /* SIMCUDA_FOREIGN_SUBSCRIBER, lazily */

static __thread CUptiResult t_last_error = CUPTI_SUCCESS;
static __thread int t_in_buffer_cb = 0;
static __thread int t_ext_n[CUPTI_EXTERNAL_CORRELATION_KIND_SIZE];
static __thread uint64_t t_ext[CUPTI_EXTERNAL_CORRELATION_KIND_SIZE][SIM_EXT_DEPTH];

static CUptiResult sim_err(CUptiResult r)
{
	if (r != CUPTI_SUCCESS)
		t_last_error = r;
	return r;
}

/* ---- clock, ids ---------------------------------------------------------- */

/* CUPTI's default clock, CLOCK_REALTIME; SIMCUDA_HOST_CLOCK=monotonic_raw
 * (opt-in, for tests that compare a truth without a registered clock to a
 * trace on CLOCK_MONOTONIC_RAW: a REALTIME stepped or slewed by NTP
 * meanwhile moves by up to milliseconds against it) */
static uint64_t sim_realtime(void)
{
	static int raw = -1; /* relaxed atomics: every thread computes the same */
	int r = __atomic_load_n(&raw, __ATOMIC_RELAXED);
	if (r < 0) {
		const char *v = getenv("SIMCUDA_HOST_CLOCK");
		r = v && !strcmp(v, "monotonic_raw");
		__atomic_store_n(&raw, r, __ATOMIC_RELAXED);
	}
	struct timespec ts;
	clock_gettime(r ? CLOCK_MONOTONIC_RAW : CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t simcupti_now(void)
{
	CUpti_TimestampCallbackFunc f = atomic_load_explicit(&g_ts_cb, memory_order_acquire);
	return f ? f() : sim_realtime();
}

int64_t simcupti_last_rebase(void)
{
	return atomic_load_explicit(&g_last_rebase, memory_order_relaxed);
}

uint32_t simcupti_next_corr(void)
{
	return atomic_fetch_add_explicit(&g_corr, 1, memory_order_relaxed) + 1;
}

uint32_t simcupti_thread_id(void)
{
	if (atomic_load_explicit(&g_thread_id_type, memory_order_relaxed) == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)
		return (uint32_t)syscall(SYS_gettid);
	return (uint32_t)(uintptr_t)pthread_self();
}

int simcupti_enabled(CUpti_ActivityKind k)
{
	if ((unsigned)k >= SIM_MAX_KIND)
		return 0;
	return atomic_load_explicit(&g_kind_on[k], memory_order_relaxed);
}

static struct CUctx_st_sim {
	int dummy;
} g_ctx_obj;

CUcontext simcupti_context(void)
{
	return (CUcontext)(void *)&g_ctx_obj;
}

void simcupti_set_rebase_hook(void (*hook)(int64_t delta))
{
	pthread_mutex_lock(&g.mx);
	g.rebase = hook;
	pthread_mutex_unlock(&g.mx);
}

/* ---- record sizes --------------------------------------------------------- */

static size_t sim_record_size(CUpti_ActivityKind k)
{
	switch (k) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		return sizeof(CUpti_ActivityKernel10);
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		return sizeof(CUpti_ActivityMemcpy6);
	case CUPTI_ACTIVITY_KIND_MEMSET:
		return sizeof(CUpti_ActivityMemset4);
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER:
	case CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API:
		return sizeof(CUpti_ActivityAPI);
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
		return sizeof(CUpti_ActivitySynchronization2);
	case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
		return sizeof(CUpti_ActivityExternalCorrelation);
	case CUPTI_ACTIVITY_KIND_OVERHEAD:
		return sizeof(CUpti_ActivityOverhead3);
	default:
		return 0;
	}
}

static size_t sim_align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* ---- delivery -------------------------------------------------------------- */

/* Device-side records: written by the GPU, on its clock. */
static int sim_kind_gpu(uint32_t k)
{
	return k == CUPTI_ACTIVITY_KIND_KERNEL || k == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
	       k == CUPTI_ACTIVITY_KIND_MEMCPY || k == CUPTI_ACTIVITY_KIND_MEMSET;
}

/* The calling thread's lane (1..SIM_LANES-1), or 0 without per-thread buffers. */
static unsigned sim_thread_lane(void)
{
	if (!atomic_load_explicit(&g_per_thread, memory_order_relaxed))
		return 0;
	if (!t_lane)
		t_lane = 1 + atomic_fetch_add_explicit(&g_lane_next, 1, memory_order_relaxed) % (SIM_LANES - 1);
	return t_lane;
}

/* Hand lane L's buffer to the client. Caller holds deliver_mx. */
static void sim_complete_lane(struct sim_lane *L)
{
	if (!L->buf)
		return;
	uint8_t *b = L->buf;
	size_t size = L->size, valid = L->valid;
	L->buf = NULL;
	L->size = L->valid = 0;
	if (g.done_cb) {
		t_in_buffer_cb = 1;
		g.done_cb(NULL, 0, b, size, valid);
		t_in_buffer_cb = 0;
	}
}

/* Copy one record into its lane's client buffer, requesting one if needed; a
 * record that does not fit an empty fresh buffer is dropped and counted.
 * Caller holds deliver_mx. */
static void sim_place(const struct sim_staged *s)
{
	struct sim_lane *L = &g.lanes[s->lane];
	size_t need = sim_align8(s->size);
	if (L->buf && L->valid + need > L->size)
		sim_complete_lane(L);
	if (!L->buf) {
		uint8_t *b = NULL;
		size_t size = 0, maxrec = 0;
		if (g.req_cb) {
			t_in_buffer_cb = 1;
			g.req_cb(&b, &size, &maxrec);
			t_in_buffer_cb = 0;
		}
		if (!b || size < need || ((uintptr_t)b & 7)) {
			atomic_fetch_add_explicit(&g_dropped, 1, memory_order_relaxed);
			if (b && g.done_cb) { /* unusable: hand it back empty */
				t_in_buffer_cb = 1;
				g.done_cb(NULL, 0, b, size, 0);
				t_in_buffer_cb = 0;
			}
			return;
		}
		L->buf = b;
		L->size = size;
		L->valid = 0;
	}
	memcpy(L->buf + L->valid, s->data, s->size);
	memset(L->buf + L->valid + s->size, 0, need - s->size);
	L->valid += need;
}

static void sim_zero_u64(struct sim_staged *s, unsigned off)
{
	if (off != SIM_NO_OFF)
		memset((uint8_t *)s->data + off, 0, 8);
}

static uint64_t sim_get_u64(const struct sim_staged *s, unsigned off)
{
	uint64_t v = 0;
	if (off != SIM_NO_OFF)
		memcpy(&v, (const uint8_t *)s->data + off, 8);
	return v;
}

/* Host time v as the GPU's clock, converted by CUPTI, shows it. */
static uint64_t sim_gpu_time(uint64_t v, const struct simcupti_params *p, uint64_t t0)
{
	double elapsed = (double)(int64_t)(v - t0);
	int64_t shift = p->clock_offset_ns + (int64_t)llround(elapsed * p->clock_drift_ppm / 1e6);
	return v + (uint64_t)shift;
}

static void sim_shift_u64(struct sim_staged *s, unsigned off, const struct simcupti_params *p,
			  uint64_t t0)
{
	uint64_t v = sim_get_u64(s, off);
	if (off != SIM_NO_OFF && v) {
		v = sim_gpu_time(v, p, t0);
		memcpy((uint8_t *)s->data + off, &v, 8);
	}
}

/*
 * One delivery pass. Takes every record that is complete (all of them when
 * forced) and, when `delay` (background delivery), whose op ended at least
 * cupti_delivery_delay_ns ago — or any complete one while host staging is
 * over SIM_HOST_SOFT; empties the device buffer of completed records; places
 * them into the lanes' client buffers; completes every lane's buffer when
 * flushing, from a rotating lane. Takes deliver_mx itself; g.mx must not be
 * held.
 */
static void sim_deliver(int flush, int forced, int delay)
{
	pthread_mutex_lock(&g.deliver_mx);
	uint64_t now = simcupti_now();
	struct sim_staged *take = NULL, **tt = &take;
	pthread_mutex_lock(&g.mx);
	struct simcupti_params par = g.par;
	uint64_t t0 = g.t0;
	int early = g.nhost > SIM_HOST_SOFT;
	uint64_t wait = delay && !early ? par.delivery_delay_ns : 0;
	struct sim_staged **pp = &g.head;
	g.tail = &g.head;
	while (*pp) {
		struct sim_staged *s = *pp;
		if (s->on_dev && s->ready <= now) { /* off the device buffer */
			s->on_dev = 0;
			g.ndev--;
		}
		if (forced || (s->ready <= now && now - s->ready >= wait)) {
			*pp = s->next;
			s->next = NULL;
			*tt = s;
			tt = &s->next;
			g.nstaged--;
			if (s->gpu)
				g.ndev_all--;
			else
				g.nhost--;
			if (s->on_dev) {
				s->on_dev = 0;
				g.ndev--;
			}
		} else {
			pp = &s->next;
			g.tail = &s->next;
		}
	}
	if (g.room_waiters && g.nhost < SIM_HOST_HARD)
		pthread_cond_broadcast(&g.room_cv);
	pthread_mutex_unlock(&g.mx);
	while (take) {
		struct sim_staged *s = take;
		take = s->next;
		if (s->ready > now) { /* forced flush: incomplete record */
			if (sim_get_u64(s, s->start_off) > now)
				sim_zero_u64(s, s->start_off);
			sim_zero_u64(s, s->end_off);
			sim_zero_u64(s, s->completed_off);
		}
		if (s->gpu) {
			sim_shift_u64(s, s->start_off, &par, t0);
			sim_shift_u64(s, s->end_off, &par, t0);
			sim_shift_u64(s, s->completed_off, &par, t0);
		}
		sim_place(s);
		free(s);
	}
	if (flush) {
		unsigned first = g.rot++;
		for (unsigned i = 0; i < SIM_LANES; i++) {
			struct sim_lane *L = &g.lanes[(first + i) % SIM_LANES];
			if (L->buf && L->valid > 0)
				sim_complete_lane(L);
		}
	}
	pthread_mutex_unlock(&g.deliver_mx);
}

static void *sim_worker_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&g.mx);
	uint64_t last_period = simcupti_now();
	for (;;) {
		if (g.worker_stop && g.flush_req == g.flush_done) /* flushed by the caller before */
			break;
		if (g.flush_req == g.flush_done) {
			if (g.nstaged == 0 && !g.flush_period_ms) {
				pthread_cond_wait(&g.cv, &g.mx); /* idle: nothing to do until signalled */
			} else {
				struct timespec dl;
				clock_gettime(CLOCK_MONOTONIC, &dl); /* g.cv runs on CLOCK_MONOTONIC */
				dl.tv_nsec += SIM_BUF_TICK_NS;
				if (dl.tv_nsec >= 1000000000L) {
					dl.tv_sec++;
					dl.tv_nsec -= 1000000000L;
				}
				pthread_cond_timedwait(&g.cv, &g.mx, &dl);
			}
		}
		uint64_t req = g.flush_req;
		int forced = g.flush_forced;
		int flush = req != g.flush_done;
		int periodic = 0;
		if (!flush && g.flush_period_ms) {
			uint64_t now = simcupti_now();
			if (now - last_period >= (uint64_t)g.flush_period_ms * 1000000ull) {
				periodic = 1;
				last_period = now;
			}
		}
		if (!flush && !periodic && g.nstaged == 0)
			continue;
		g.flush_forced = 0;
		pthread_mutex_unlock(&g.mx);
		sim_deliver(flush || periodic, forced, !flush);
		pthread_mutex_lock(&g.mx);
		if (flush) {
			g.flush_done = req;
			pthread_cond_broadcast(&g.done_cv);
		}
	}
	/* cuptiFinalize: a detaching tool leaves no thread of CUPTI behind */
	g.worker_running = 0;
	g.worker_stop = 0;
	pthread_cond_broadcast(&g.done_cv);
	pthread_mutex_unlock(&g.mx);
	return NULL;
}

/* g.cv waits with CLOCK_MONOTONIC deadlines: give it that clock. */
static void sim_init_cv(void)
{
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&g.cv, &ca);
	pthread_condattr_destroy(&ca);
}

__attribute__((constructor)) static void sim_cupti_load(void)
{
	sim_init_cv(); /* before any thread can use it */
	g.t0 = simcupti_now();
}

static void sim_atfork_child(void)
{
	/* The delivery thread does not exist in the child: deliver inline. */
	g.worker_running = 0;
	pthread_mutex_init(&g.mx, NULL);
	pthread_mutex_init(&g.deliver_mx, NULL);
	sim_init_cv();
	pthread_cond_init(&g.done_cv, NULL);
	pthread_cond_init(&g.room_cv, NULL);
	g.room_waiters = 0;
}

void simcupti_configure(const struct simcupti_params *p)
{
	pthread_mutex_lock(&g.mx);
	uint64_t records = g.par.buffer_records;
	g.par = *p;
	if (g.dev_buf_attr) /* the client's CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE wins */
		g.par.buffer_records = records;
	g.t0 = simcupti_now();
	pthread_mutex_unlock(&g.mx);
}

void simcupti_clock(int64_t *offset_ns, double *drift_ppm, uint64_t *origin)
{
	pthread_mutex_lock(&g.mx);
	*offset_ns = g.par.clock_offset_ns;
	*drift_ppm = g.par.clock_drift_ppm;
	*origin = g.t0;
	pthread_mutex_unlock(&g.mx);
}

void simcupti_emit(const void *rec, size_t size, uint64_t ready_at,
		   unsigned start_off, unsigned end_off, unsigned completed_off)
{
	uint32_t kind;
	memcpy(&kind, rec, sizeof kind);
	int gpu = sim_kind_gpu(kind);
	struct sim_staged *s = malloc(sizeof(*s) + sim_align8(size));
	if (!s) {
		atomic_fetch_add_explicit(&g_dropped, 1, memory_order_relaxed);
		return;
	}
	s->next = NULL;
	s->ready = ready_at ? ready_at : simcupti_now();
	s->size = (uint16_t)size;
	s->start_off = (uint16_t)start_off;
	s->end_off = (uint16_t)end_off;
	s->completed_off = (uint16_t)completed_off;
	s->gpu = (uint8_t)gpu;
	s->on_dev = (uint8_t)gpu;
	s->lane = (uint8_t)(gpu ? 0 : sim_thread_lane());
	memcpy(s->data, rec, size);
	pthread_mutex_lock(&g.mx);
	/* Host staging full: wait for the CUPTI thread to empty it (as a real
	 * app thread handles its own full buffer), unless this is that thread,
	 * a buffer callback, or there is no thread to wait for. The runtime
	 * never holds a lock of its own here (sim_cudart.h "Locks"). */
	while (!gpu && g.nhost >= SIM_HOST_HARD && g.worker_running && g.req_cb && !t_in_buffer_cb &&
	       !pthread_equal(pthread_self(), g.worker)) {
		g.room_waiters++;
		pthread_cond_signal(&g.cv);
		pthread_cond_wait(&g.room_cv, &g.mx);
		g.room_waiters--;
	}
	if (gpu ? g.par.buffer_records && g.ndev >= g.par.buffer_records : g.nhost >= SIM_HOST_HARD) {
		pthread_mutex_unlock(&g.mx); /* device buffer full, or host staging with no one to empty it */
		free(s);
		atomic_fetch_add_explicit(&g_dropped, 1, memory_order_relaxed);
		return;
	}
	if (gpu) {
		g.ndev++;
		g.ndev_all++;
	} else {
		g.nhost++;
	}
	int wake = g.nstaged == 0 || g.nhost == SIM_HOST_SOFT + 1;
	*g.tail = s;
	g.tail = &s->next;
	g.nstaged++;
	if (wake)
		pthread_cond_signal(&g.cv);
	pthread_mutex_unlock(&g.mx);
}

int simcupti_api_traced(CUpti_ActivityKind kind, CUpti_CallbackId cbid)
{
	if (cbid < SIM_MAX_CBID && (kind == CUPTI_ACTIVITY_KIND_RUNTIME || kind == CUPTI_ACTIVITY_KIND_DRIVER)) {
		_Atomic unsigned char *sel = kind == CUPTI_ACTIVITY_KIND_DRIVER ? g_drv_sel : g_rt_sel;
		unsigned v = atomic_load_explicit(&sel[cbid], memory_order_relaxed);
		if (v)
			return v == 1;
	}
	return simcupti_enabled(kind);
}

int simcupti_ext_records(void)
{
	if (!simcupti_enabled(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION))
		return 0;
	int n = 0;
	for (int k = 0; k < SIM_EXT_KINDS; k++)
		n += t_ext_n[k] > 0;
	return n;
}

void simcupti_overhead(uint32_t tid, int overhead_kind, uint64_t start, uint64_t end, uint32_t api_corr)
{
	if (!simcupti_enabled(CUPTI_ACTIVITY_KIND_OVERHEAD))
		return;
	CUpti_ActivityOverhead3 o;
	memset(&o, 0, sizeof o);
	o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
	o.overheadKind = (CUpti_ActivityOverheadKind)overhead_kind;
	o.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
	o.objectId.pt.processId = (uint32_t)getpid();
	o.objectId.pt.threadId = tid;
	o.start = start;
	o.end = end;
	o.correlationId = api_corr;
	if (overhead_kind == CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL) {
		CUpti_ActivityOverheadCommandBufferFullData *d = calloc(1, sizeof *d);
		if (d)
			d->channelType = CUPTI_CHANNEL_TYPE_COMPUTE;
		o.overheadData = d;
	}
	simcupti_emit(&o, sizeof o, end, offsetof(CUpti_ActivityOverhead3, start),
		      offsetof(CUpti_ActivityOverhead3, end), SIM_NO_OFF);
}

int simcupti_emit_api(CUpti_ActivityKind kind, CUpti_CallbackId cbid,
		      uint64_t start, uint64_t end, uint32_t corr, uint32_t ret)
{
	if (!simcupti_api_traced(kind, cbid))
		return 0;
	if (simcupti_enabled(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION)) {
		for (int k = 0; k < SIM_EXT_KINDS; k++) {
			if (t_ext_n[k] == 0)
				continue;
			CUpti_ActivityExternalCorrelation e;
			memset(&e, 0, sizeof e);
			e.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
			e.externalKind = (CUpti_ExternalCorrelationKind)k;
			e.externalId = t_ext[k][t_ext_n[k] - 1];
			e.correlationId = corr;
			simcupti_emit(&e, sizeof e, 0, SIM_NO_OFF, SIM_NO_OFF, SIM_NO_OFF);
		}
	}
	CUpti_ActivityAPI a;
	memset(&a, 0, sizeof a);
	a.kind = kind;
	a.cbid = cbid;
	a.start = start;
	a.end = end;
	a.processId = (uint32_t)getpid();
	a.threadId = simcupti_thread_id();
	a.correlationId = corr;
	a.returnValue = ret;
	simcupti_emit(&a, sizeof a, 0, offsetof(CUpti_ActivityAPI, start),
		      offsetof(CUpti_ActivityAPI, end), SIM_NO_OFF);
	return 1;
}

/* ---- callback API (subscriber) ---------------------------------------------- */

int simcupti_callback_enabled(CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	if ((unsigned)domain >= SIM_MAX_DOMAIN || cbid >= SIM_MAX_CBID)
		return 0;
	pthread_mutex_lock(&g.mx);
	int on = g.subscribed && (g.cb_on[domain][cbid / 8] >> (cbid % 8)) & 1;
	pthread_mutex_unlock(&g.mx);
	return on;
}

void simcupti_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *data)
{
	if (!simcupti_callback_enabled(domain, cbid))
		return;
	pthread_mutex_lock(&g.mx);
	CUpti_CallbackFunc f = g.sub_cb;
	void *user = g.sub_user;
	pthread_mutex_unlock(&g.mx);
	if (f)
		f(user, domain, cbid, data);
}

CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback,
			   void *userdata)
{
	if (!subscriber)
		return sim_err(CUPTI_ERROR_INVALID_PARAMETER);
	pthread_mutex_lock(&g.mx);
	if (g_foreign_subscriber < 0) {
		const char *v = getenv("SIMCUDA_FOREIGN_SUBSCRIBER");
		g_foreign_subscriber = v && *v && strcmp(v, "0") != 0;
	}
	if (g.subscribed || g_foreign_subscriber) {
		pthread_mutex_unlock(&g.mx);
		return sim_err(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
	}
	g.subscribed = 1;
	g.sub_cb = callback;
	g.sub_user = userdata;
	memset(g.cb_on, 0, sizeof g.cb_on);
	pthread_mutex_unlock(&g.mx);
	*subscriber = (CUpti_SubscriberHandle)(void *)&g;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiSubscribe_v2(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback,
			      void *userdata, CUpti_SubscriberParams *params)
{
	if (!params || params->structSize == 0)
		return sim_err(CUPTI_ERROR_INVALID_PARAMETER);
	CUptiResult r = cuptiSubscribe(subscriber, callback, userdata);
	if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED && params->oldSubscriberName &&
	    params->oldSubscriberSize > 0)
		snprintf(params->oldSubscriberName, params->oldSubscriberSize, "simcuda subscriber");
	return r;
}

static int sim_is_sub(CUpti_SubscriberHandle s)
{
	return s == (CUpti_SubscriberHandle)(void *)&g && g.subscribed;
}

CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle subscriber)
{
	pthread_mutex_lock(&g.mx);
	if (!sim_is_sub(subscriber)) {
		pthread_mutex_unlock(&g.mx);
		return sim_err(CUPTI_ERROR_INVALID_PARAMETER);
	}
	g.subscribed = 0;
	g.sub_cb = NULL;
	memset(g.cb_on, 0, sizeof g.cb_on);
	pthread_mutex_unlock(&g.mx);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
				CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	if ((unsigned)domain >= SIM_MAX_DOMAIN || domain == CUPTI_CB_DOMAIN_INVALID ||
	    cbid >= SIM_MAX_CBID)
		return sim_err(CUPTI_ERROR_INVALID_PARAMETER);
	pthread_mutex_lock(&g.mx);
	if (!sim_is_sub(subscriber)) {
		pthread_mutex_unlock(&g.mx);
		return sim_err(CUPTI_ERROR_INVALID_PARAMETER);
	}
	if (enable)
		g.cb_on[domain][cbid / 8] |= (uint8_t)(1u << (cbid % 8));
	else
		g.cb_on[domain][cbid / 8] &= (uint8_t) ~(1u << (cbid % 8));
	pthread_mutex_unlock(&g.mx);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle subscriber,
			      CUpti_CallbackDomain domain)
{
	if ((unsigned)domain >= SIM_MAX_DOMAIN || domain == CUPTI_CB_DOMAIN_INVALID)
		return sim_err(CUPTI_ERROR_INVALID_PARAMETER);
	pthread_mutex_lock(&g.mx);
	if (!sim_is_sub(subscriber)) {
		pthread_mutex_unlock(&g.mx);
		return sim_err(CUPTI_ERROR_INVALID_PARAMETER);
	}
	memset(g.cb_on[domain], enable ? 0xff : 0, sizeof g.cb_on[domain]);
	pthread_mutex_unlock(&g.mx);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiEnableAllDomains(uint32_t enable, CUpti_SubscriberHandle subscriber)
{
	for (int d = CUPTI_CB_DOMAIN_DRIVER_API; d < SIM_MAX_DOMAIN; d++) {
		CUptiResult r = cuptiEnableDomain(enable, subscriber, (CUpti_CallbackDomain)d);
		if (r != CUPTI_SUCCESS)
			return r;
	}
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetCallbackState(uint32_t *enable, CUpti_SubscriberHandle subscriber,
				  CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	if (!enable || (unsigned)domain >= SIM_MAX_DOMAIN || cbid >= SIM_MAX_CBID)
		return sim_err(CUPTI_ERROR_INVALID_PARAMETER);
	pthread_mutex_lock(&g.mx);
	int ok = sim_is_sub(subscriber);
	*enable = ok && ((g.cb_on[domain][cbid / 8] >> (cbid % 8)) & 1);
	pthread_mutex_unlock(&g.mx);
	return ok ? CUPTI_SUCCESS : sim_err(CUPTI_ERROR_INVALID_PARAMETER);
}

/* Callback names come from the real cbid headers (generated table). */
struct sim_cbname {
	uint32_t cbid;
	const char *name;
};
#include "sim_cbid_names.h"

CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid, const char **name)
{
	if (!name)
		return sim_err(CUPTI_ERROR_INVALID_PARAMETER);
	const struct sim_cbname *t = NULL;
	size_t n = 0;
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
		t = sim_runtime_cbnames;
		n = sizeof sim_runtime_cbnames / sizeof *t;
	} else if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
		t = sim_driver_cbnames;
		n = sizeof sim_driver_cbnames / sizeof *t;
	} else {
		return sim_err(CUPTI_ERROR_INVALID_PARAMETER);
	}
	for (size_t i = 0; i < n; i++) {
		if (t[i].cbid == cbid) {
			*name = t[i].name;
			return CUPTI_SUCCESS;
		}
	}
	return sim_err(CUPTI_ERROR_INVALID_PARAMETER);
}

CUptiResult cuptiSupportedDomains(size_t *domainCount, CUpti_DomainTable *domainTable)
{
	static CUpti_CallbackDomain doms[] = {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_CB_DOMAIN_RUNTIME_API,
					      CUPTI_CB_DOMAIN_RESOURCE};
	if (!domainCount || !domainTable)
		return sim_err(CUPTI_ERROR_INVALID_PARAMETER);
	*domainCount = sizeof doms / sizeof *doms;
	*domainTable = doms;
	return CUPTI_SUCCESS;
}

/* ---- activity API ------------------------------------------------------------ */

static int sim_kind_supported(CUpti_ActivityKind k)
{
	switch (k) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
	case CUPTI_ACTIVITY_KIND_MEMCPY:
	case CUPTI_ACTIVITY_KIND_MEMSET:
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER:
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
	case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
	case CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API:
	case CUPTI_ACTIVITY_KIND_MARKER:
	case CUPTI_ACTIVITY_KIND_OVERHEAD:
		return 1;
	default:
		return 0;
	}
}

static CUptiResult sim_set_kind(CUpti_ActivityKind kind, int on)
{
	if (!sim_kind_supported(kind))
		return sim_err(CUPTI_ERROR_NOT_COMPATIBLE);
	pthread_mutex_lock(&g.mx);
	if (kind == CUPTI_ACTIVITY_KIND_OVERHEAD && on && g.par.no_overhead_kind) {
		/* a CUPTI without overhead records (cupti_overhead_records 0) */
		pthread_mutex_unlock(&g.mx);
		return sim_err(CUPTI_ERROR_NOT_COMPATIBLE);
	}
	atomic_store_explicit(&g_kind_on[kind], on, memory_order_relaxed);
	if (kind == CUPTI_ACTIVITY_KIND_RUNTIME || kind == CUPTI_ACTIVITY_KIND_DRIVER) {
		/* the kind overrides per-cbid choices made before it */
		_Atomic unsigned char *sel = kind == CUPTI_ACTIVITY_KIND_DRIVER ? g_drv_sel : g_rt_sel;
		for (int i = 0; i < SIM_MAX_CBID; i++)
			atomic_store_explicit(&sel[i], 0, memory_order_relaxed);
	}
	pthread_mutex_unlock(&g.mx);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind)
{
	return sim_set_kind(kind, 1);
}

CUptiResult cuptiActivityEnableAndDump(CUpti_ActivityKind kind)
{
	return sim_set_kind(kind, 1);
}

CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind)
{
	return sim_set_kind(kind, 0);
}

CUptiResult cuptiActivityEnableContext(CUcontext context, CUpti_ActivityKind kind)
{
	(void)context;
	return sim_set_kind(kind, 1);
}

CUptiResult cuptiActivityDisableContext(CUcontext context, CUpti_ActivityKind kind)
{
	(void)context;
	return sim_set_kind(kind, 0);
}

CUptiResult cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable)
{
	if (cbid >= SIM_MAX_CBID)
		return sim_err(CUPTI_ERROR_INVALID_PARAMETER);
	atomic_store_explicit(&g_rt_sel[cbid], enable ? 1 : 2, memory_order_relaxed);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable)
{
	if (cbid >= SIM_MAX_CBID)
		return sim_err(CUPTI_ERROR_INVALID_PARAMETER);
	atomic_store_explicit(&g_drv_sel[cbid], enable ? 1 : 2, memory_order_relaxed);
	return CUPTI_SUCCESS;
}

/* HES kernel timestamps exist on Blackwell only; the simulated device is an
 * H200 (cc 9.0). Disabling is a no-op. */
CUptiResult cuptiActivityEnableHWTrace(uint8_t enable)
{
	return enable ? sim_err(CUPTI_ERROR_NOT_SUPPORTED) : CUPTI_SUCCESS;
}

CUptiResult cuptiActivityEnableLatencyTimestamps(uint8_t enable)
{
	(void)enable;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityEnableLaunchAttributes(uint8_t enable)
{
	(void)enable;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityEnableAllSyncRecords(uint8_t enable)
{
	(void)enable;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
					   CUpti_BuffersCallbackCompleteFunc done)
{
	if (!req || !done)
		return sim_err(CUPTI_ERROR_INVALID_PARAMETER);
	pthread_mutex_lock(&g.mx);
	g.req_cb = req;
	g.done_cb = done;
	if (!g.worker_running) {
		static int atfork_done;
		if (!atfork_done) {
			pthread_atfork(NULL, NULL, sim_atfork_child);
			atfork_done = 1;
		}
		pthread_attr_t at;
		pthread_attr_init(&at);
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&g.worker, &at, sim_worker_main, NULL) == 0) {
			g.worker_running = 1;
			pthread_setname_np(g.worker, "simcuda-cupti"); /* named before it first runs */
		}
		pthread_attr_destroy(&at);
	}
	pthread_mutex_unlock(&g.mx);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
	int forced = (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) != 0;
	if (t_in_buffer_cb)
		return sim_err(CUPTI_ERROR_INVALID_OPERATION);
	pthread_mutex_lock(&g.mx);
	if (!g.req_cb) {
		pthread_mutex_unlock(&g.mx);
		return sim_err(CUPTI_ERROR_INVALID_OPERATION);
	}
	if (!g.worker_running || pthread_equal(pthread_self(), g.worker)) {
		pthread_mutex_unlock(&g.mx);
		sim_deliver(1, forced, 0);
		return CUPTI_SUCCESS;
	}
	uint64_t my = ++g.flush_req;
	if (forced)
		g.flush_forced = 1;
	pthread_cond_signal(&g.cv);
	while (g.flush_done < my)
		pthread_cond_wait(&g.done_cv, &g.mx);
	pthread_mutex_unlock(&g.mx);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityFlush(CUcontext context, uint32_t streamId, uint32_t flag)
{
	(void)context;
	(void)streamId;
	return cuptiActivityFlushAll(flag);
}

CUptiResult cuptiActivityFlushPeriod(uint32_t time)
{
	pthread_mutex_lock(&g.mx);
	g.flush_period_ms = time;
	pthread_cond_signal(&g.cv); /* an idle worker starts its period */
	pthread_mutex_unlock(&g.mx);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t validBufferSizeBytes,
				       CUpti_Activity **record)
{
	if (!buffer || !record)
		return CUPTI_ERROR_INVALID_PARAMETER;
	size_t off;
	if (*record == NULL) {
		off = 0;
	} else {
		uint8_t *cur = (uint8_t *)*record;
		if (cur < buffer || cur >= buffer + validBufferSizeBytes)
			return CUPTI_ERROR_INVALID_PARAMETER;
		size_t sz = sim_record_size((*record)->kind);
		if (sz == 0)
			return CUPTI_ERROR_INVALID_KIND;
		off = (size_t)(cur - buffer) + sim_align8(sz);
	}
	if (off + sizeof(CUpti_Activity) > validBufferSizeBytes) {
		*record = NULL;
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	}
	CUpti_Activity *r = (CUpti_Activity *)(void *)(buffer + off);
	size_t sz = sim_record_size(r->kind);
	if (sz == 0)
		return CUPTI_ERROR_INVALID_KIND;
	if (off + sz > validBufferSizeBytes) {
		*record = NULL;
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	}
	*record = r;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext context, uint32_t streamId, size_t *dropped)
{
	(void)context;
	(void)streamId;
	if (!dropped)
		return sim_err(CUPTI_ERROR_INVALID_PARAMETER);
	*dropped = atomic_exchange_explicit(&g_dropped, 0, memory_order_relaxed);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t id)
{
	if ((int)kind <= CUPTI_EXTERNAL_CORRELATION_KIND_INVALID || (int)kind >= SIM_EXT_KINDS)
		return sim_err(CUPTI_ERROR_INVALID_PARAMETER);
	if (t_ext_n[kind] >= SIM_EXT_DEPTH)
		return sim_err(CUPTI_ERROR_OUT_OF_MEMORY);
	t_ext[kind][t_ext_n[kind]++] = id;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t *lastId)
{
	if ((int)kind <= CUPTI_EXTERNAL_CORRELATION_KIND_INVALID || (int)kind >= SIM_EXT_KINDS)
		return sim_err(CUPTI_ERROR_INVALID_PARAMETER);
	if (t_ext_n[kind] == 0)
		return sim_err(CUPTI_ERROR_QUEUE_EMPTY);
	uint64_t v = t_ext[kind][--t_ext_n[kind]];
	if (lastId)
		*lastId = v;
	return CUPTI_SUCCESS;
}

/* Rebase every staged timestamp by delta (clock switch). Caller holds g.mx. */
static void sim_rebase_staged(int64_t delta)
{
	for (struct sim_staged *s = g.head; s; s = s->next) {
		unsigned offs[3] = {s->start_off, s->end_off, s->completed_off};
		for (int i = 0; i < 3; i++) {
			uint64_t v = sim_get_u64(s, offs[i]);
			if (offs[i] != SIM_NO_OFF && v) {
				v += (uint64_t)delta;
				memcpy((uint8_t *)s->data + offs[i], &v, 8);
			}
		}
		if (s->ready)
			s->ready += (uint64_t)delta;
	}
	g.t0 += (uint64_t)delta;
}

CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc f)
{
	if (!f)
		return sim_err(CUPTI_ERROR_INVALID_PARAMETER);
	pthread_mutex_lock(&g.mx);
	uint64_t before = simcupti_now();
	atomic_store_explicit(&g_ts_cb, f, memory_order_release);
	int64_t delta = (int64_t)(f() - before);
	atomic_store_explicit(&g_last_rebase, delta, memory_order_relaxed);
	sim_rebase_staged(delta);
	void (*hook)(int64_t) = g.rebase;
	pthread_mutex_unlock(&g.mx);
	if (hook)
		hook(delta);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetTimestamp(uint64_t *timestamp)
{
	if (!timestamp)
		return sim_err(CUPTI_ERROR_INVALID_PARAMETER);
	*timestamp = simcupti_now();
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityGetAttribute(CUpti_ActivityAttribute attr, size_t *valueSize, void *value)
{
	if (!valueSize || !value)
		return sim_err(CUPTI_ERROR_INVALID_PARAMETER);
	if (attr == CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER) {
		if (*valueSize < sizeof(uint8_t))
			return sim_err(CUPTI_ERROR_INVALID_PARAMETER);
		*(uint8_t *)value = (uint8_t)atomic_load_explicit(&g_per_thread, memory_order_relaxed);
		*valueSize = sizeof(uint8_t);
		return CUPTI_SUCCESS;
	}
	if (attr == CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE && *valueSize >= sizeof(size_t)) {
		pthread_mutex_lock(&g.mx);
		size_t v = (size_t)g.par.buffer_records * SIM_DEV_RECORD_BYTES;
		pthread_mutex_unlock(&g.mx);
		memcpy(value, &v, sizeof v);
		*valueSize = sizeof v;
		return CUPTI_SUCCESS;
	}
	if (*valueSize >= sizeof(size_t)) {
		size_t v = 3 * 1024 * 1024;
		memcpy(value, &v, sizeof v);
		*valueSize = sizeof v;
	}
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivitySetAttribute(CUpti_ActivityAttribute attr, size_t *valueSize, void *value)
{
	if (!valueSize || !value)
		return sim_err(CUPTI_ERROR_INVALID_PARAMETER);
	if (attr == CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER) {
		if (*valueSize < sizeof(uint8_t))
			return sim_err(CUPTI_ERROR_INVALID_PARAMETER);
		atomic_store_explicit(&g_per_thread, *(uint8_t *)value != 0, memory_order_relaxed);
		return CUPTI_SUCCESS;
	}
	if (attr == CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE) {
		if (*valueSize < sizeof(size_t))
			return sim_err(CUPTI_ERROR_INVALID_PARAMETER);
		size_t v;
		memcpy(&v, value, sizeof v);
		pthread_mutex_lock(&g.mx);
		g.par.buffer_records = v / SIM_DEV_RECORD_BYTES ? v / SIM_DEV_RECORD_BYTES : 1;
		g.dev_buf_attr = 1;
		pthread_mutex_unlock(&g.mx);
		return CUPTI_SUCCESS;
	}
	return CUPTI_SUCCESS;
}

CUptiResult cuptiSetThreadIdType(CUpti_ActivityThreadIdType type)
{
	if (type != CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT && type != CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)
		return sim_err(CUPTI_ERROR_INVALID_PARAMETER);
	atomic_store_explicit(&g_thread_id_type, (int)type, memory_order_relaxed);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetThreadIdType(CUpti_ActivityThreadIdType *type)
{
	if (!type)
		return sim_err(CUPTI_ERROR_INVALID_PARAMETER);
	*type = (CUpti_ActivityThreadIdType)atomic_load_explicit(&g_thread_id_type, memory_order_relaxed);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetContextId(CUcontext context, uint32_t *contextId)
{
	if (!contextId || context != simcupti_context())
		return sim_err(CUPTI_ERROR_INVALID_PARAMETER);
	*contextId = SIM_CONTEXT_ID;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetDeviceId(CUcontext context, uint32_t *deviceId)
{
	(void)context;
	if (!deviceId)
		return sim_err(CUPTI_ERROR_INVALID_PARAMETER);
	*deviceId = SIM_DEVICE_ID;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetVersion(uint32_t *version)
{
	if (!version)
		return sim_err(CUPTI_ERROR_INVALID_PARAMETER);
	*version = CUPTI_API_VERSION;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetLastError(void)
{
	CUptiResult r = t_last_error;
	t_last_error = CUPTI_SUCCESS;
	return r;
}

CUptiResult cuptiFinalize(void)
{
	pthread_mutex_lock(&g.mx);
	/* Real CUPTI's detach destroys its resources, threads included: end the
	 * delivery thread (after what it holds is delivered) and forget the
	 * buffer callbacks, so a later cuptiActivityRegisterCallbacks starts a
	 * fresh one. Not from the delivery thread itself (a buffer callback). */
	if (g.worker_running && !pthread_equal(pthread_self(), g.worker)) {
		g.worker_stop = 1;
		pthread_cond_signal(&g.cv);
		while (g.worker_running)
			pthread_cond_wait(&g.done_cv, &g.mx);
		g.req_cb = NULL;
		g.done_cb = NULL;
	}
	for (int k = 0; k < SIM_MAX_KIND; k++)
		atomic_store_explicit(&g_kind_on[k], 0, memory_order_relaxed);
	g.subscribed = 0;
	g.sub_cb = NULL;
	memset(g.cb_on, 0, sizeof g.cb_on);
	pthread_mutex_unlock(&g.mx);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetResultString(CUptiResult result, const char **str)
{
	if (!str)
		return CUPTI_ERROR_INVALID_PARAMETER;
	switch (result) {
	case CUPTI_SUCCESS: *str = "CUPTI_SUCCESS"; break;
	case CUPTI_ERROR_INVALID_PARAMETER: *str = "CUPTI_ERROR_INVALID_PARAMETER"; break;
	case CUPTI_ERROR_INVALID_OPERATION: *str = "CUPTI_ERROR_INVALID_OPERATION"; break;
	case CUPTI_ERROR_INVALID_KIND: *str = "CUPTI_ERROR_INVALID_KIND"; break;
	case CUPTI_ERROR_MAX_LIMIT_REACHED: *str = "CUPTI_ERROR_MAX_LIMIT_REACHED"; break;
	case CUPTI_ERROR_NOT_INITIALIZED: *str = "CUPTI_ERROR_NOT_INITIALIZED"; break;
	case CUPTI_ERROR_NOT_COMPATIBLE: *str = "CUPTI_ERROR_NOT_COMPATIBLE"; break;
	case CUPTI_ERROR_QUEUE_EMPTY: *str = "CUPTI_ERROR_QUEUE_EMPTY"; break;
	case CUPTI_ERROR_OUT_OF_MEMORY: *str = "CUPTI_ERROR_OUT_OF_MEMORY"; break;
	case CUPTI_ERROR_NOT_SUPPORTED: *str = "CUPTI_ERROR_NOT_SUPPORTED"; break;
	case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
		*str = "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED";
		break;
	/* the profiling API's (sim_profiler.c) */
	case CUPTI_ERROR_INVALID_DEVICE: *str = "CUPTI_ERROR_INVALID_DEVICE"; break;
	case CUPTI_ERROR_INVALID_CONTEXT: *str = "CUPTI_ERROR_INVALID_CONTEXT"; break;
	case CUPTI_ERROR_INVALID_METRIC_NAME: *str = "CUPTI_ERROR_INVALID_METRIC_NAME"; break;
	case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: *str = "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"; break;
	default: *str = "CUPTI_ERROR_UNKNOWN"; return CUPTI_ERROR_INVALID_PARAMETER;
	}
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetErrorMessage(CUptiResult result, const char **str)
{
	return cuptiGetResultString(result, str);
}

/* ---- graph ids (sim_graph.c objects: a CUgraph starts with its uint32 id,
 * a CUgraphNode with its uint64 id; see sim_internal.h) ------------------- */

CUptiResult cuptiGetGraphId(CUgraph graph, uint32_t *pId)
{
	if (!graph || !pId)
		return sim_err(CUPTI_ERROR_INVALID_PARAMETER);
	memcpy(pId, (const void *)graph, sizeof *pId);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetGraphNodeId(CUgraphNode node, uint64_t *nodeId)
{
	if (!node || !nodeId)
		return sim_err(CUPTI_ERROR_INVALID_PARAMETER);
	memcpy(nodeId, (const void *)node, sizeof *nodeId);
	return CUPTI_SUCCESS;
}
