/*
 * sim_cupti_buffers.c — the activity records' way to the client: staging
 * (records produced and not yet delivered), the client's buffers (one lane
 * each), the delivery thread, flushes, and the buffer attributes.
 *
 * Who calls it: the runtime (simcupti_emit, app threads, through
 * sim_cupti.c's record builders), CUPTI clients (any thread:
 * cuptiActivityRegisterCallbacks / Flush* / GetNextRecord /
 * GetNumDroppedRecords / Get/SetAttribute) and the delivery thread.
 *
 * Threads and locks:
 *  - g_cupti.mx guards the staging list and the counts below and the flush
 *    handshake.
 *  - g_cupti.deliver_mx serialises everything that touches client buffers;
 *    it is held (g_cupti.mx is NOT) while the client's request/complete
 *    callbacks run, so a client may call cuptiActivityGetNextRecord /
 *    GetNumDroppedRecords / emit API calls from them without deadlock
 *    (calling cuptiActivityFlushAll from a buffer callback is refused, as
 *    real CUPTI forbids it). Order: deliver_mx, then mx.
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
 * g_cupti.nhost + g_cupti.ndev_all == g_cupti.nstaged; g_cupti.ndev counts
 * the device records not yet taken off the device buffer (ready and seen by
 * a pass).
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim_cupti_state.h"

#define SIM_BUF_TICK_NS 10000000L /* delivery thread drains every 10 ms */
#define SIM_HOST_SOFT 16384u        /* host records staged beyond which they go early */
#define SIM_HOST_HARD (4u * SIM_HOST_SOFT) /* ... and beyond which they are dropped */
#define SIM_DEV_RECORD_BYTES 32u    /* CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE per record:
				     * its documented 3200000 bytes hold 100,000 */

/* CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER; relaxed (set before
 * profiling starts, as CUPTI requires). */
static _Atomic int g_per_thread = 1;
static _Atomic unsigned g_lane_next;
static __thread unsigned t_lane; /* 0 = not assigned yet */
/* Dropped records since the last cuptiActivityGetNumDroppedRecords:
 * incremented by the delivery path, exchanged to 0 by the reader. */
static _Atomic size_t g_dropped = 0;
static __thread int t_in_buffer_cb = 0; /* a client buffer callback runs on this thread */

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
	if (g_cupti.done_cb) {
		t_in_buffer_cb = 1;
		g_cupti.done_cb(NULL, 0, b, size, valid);
		t_in_buffer_cb = 0;
	}
}

/* Copy one record into its lane's client buffer, requesting one if needed; a
 * record that does not fit an empty fresh buffer is dropped and counted.
 * Caller holds deliver_mx. */
static void sim_place(const struct sim_staged *s)
{
	struct sim_lane *L = &g_cupti.lanes[s->lane];
	size_t need = sim_align8(s->size);
	if (L->buf && L->valid + need > L->size)
		sim_complete_lane(L);
	if (!L->buf) {
		uint8_t *b = NULL;
		size_t size = 0, maxrec = 0;
		if (g_cupti.req_cb) {
			t_in_buffer_cb = 1;
			g_cupti.req_cb(&b, &size, &maxrec);
			t_in_buffer_cb = 0;
		}
		if (!b || size < need || ((uintptr_t)b & 7)) {
			atomic_fetch_add_explicit(&g_dropped, 1, memory_order_relaxed);
			if (b && g_cupti.done_cb) { /* unusable: hand it back empty */
				t_in_buffer_cb = 1;
				g_cupti.done_cb(NULL, 0, b, size, 0);
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
 * flushing, from a rotating lane. Takes deliver_mx itself; g_cupti.mx must not be
 * held.
 */
static void sim_deliver(int flush, int forced, int delay)
{
	pthread_mutex_lock(&g_cupti.deliver_mx);
	uint64_t now = simcupti_now();
	struct sim_staged *take = NULL, **tt = &take;
	pthread_mutex_lock(&g_cupti.mx);
	struct simcupti_params par = g_cupti.par;
	uint64_t t0 = g_cupti.t0;
	int early = g_cupti.nhost > SIM_HOST_SOFT;
	uint64_t wait = delay && !early ? par.delivery_delay_ns : 0;
	struct sim_staged **pp = &g_cupti.head;
	g_cupti.tail = &g_cupti.head;
	while (*pp) {
		struct sim_staged *s = *pp;
		if (s->on_dev && s->ready <= now) { /* off the device buffer */
			s->on_dev = 0;
			g_cupti.ndev--;
		}
		if (forced || (s->ready <= now && now - s->ready >= wait)) {
			*pp = s->next;
			s->next = NULL;
			*tt = s;
			tt = &s->next;
			g_cupti.nstaged--;
			if (s->gpu)
				g_cupti.ndev_all--;
			else
				g_cupti.nhost--;
			if (s->on_dev) {
				s->on_dev = 0;
				g_cupti.ndev--;
			}
		} else {
			pp = &s->next;
			g_cupti.tail = &s->next;
		}
	}
	if (g_cupti.room_waiters && g_cupti.nhost < SIM_HOST_HARD)
		pthread_cond_broadcast(&g_cupti.room_cv);
	pthread_mutex_unlock(&g_cupti.mx);
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
		unsigned first = g_cupti.rot++;
		for (unsigned i = 0; i < SIM_LANES; i++) {
			struct sim_lane *L = &g_cupti.lanes[(first + i) % SIM_LANES];
			if (L->buf && L->valid > 0)
				sim_complete_lane(L);
		}
	}
	pthread_mutex_unlock(&g_cupti.deliver_mx);
}

static void *sim_worker_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&g_cupti.mx);
	uint64_t last_period = simcupti_now();
	for (;;) {
		if (g_cupti.worker_stop && g_cupti.flush_req == g_cupti.flush_done) /* flushed by the caller before */
			break;
		if (g_cupti.flush_req == g_cupti.flush_done) {
			if (g_cupti.nstaged == 0 && !g_cupti.flush_period_ms) {
				pthread_cond_wait(&g_cupti.cv, &g_cupti.mx); /* idle: nothing to do until signalled */
			} else {
				struct timespec dl;
				clock_gettime(CLOCK_MONOTONIC, &dl); /* g_cupti.cv runs on CLOCK_MONOTONIC */
				dl.tv_nsec += SIM_BUF_TICK_NS;
				if (dl.tv_nsec >= 1000000000L) {
					dl.tv_sec++;
					dl.tv_nsec -= 1000000000L;
				}
				pthread_cond_timedwait(&g_cupti.cv, &g_cupti.mx, &dl);
			}
		}
		uint64_t req = g_cupti.flush_req;
		int forced = g_cupti.flush_forced;
		int flush = req != g_cupti.flush_done;
		int periodic = 0;
		if (!flush && g_cupti.flush_period_ms) {
			uint64_t now = simcupti_now();
			if (now - last_period >= (uint64_t)g_cupti.flush_period_ms * 1000000ull) {
				periodic = 1;
				last_period = now;
			}
		}
		if (!flush && !periodic && g_cupti.nstaged == 0)
			continue;
		g_cupti.flush_forced = 0;
		pthread_mutex_unlock(&g_cupti.mx);
		sim_deliver(flush || periodic, forced, !flush);
		pthread_mutex_lock(&g_cupti.mx);
		if (flush) {
			g_cupti.flush_done = req;
			pthread_cond_broadcast(&g_cupti.done_cv);
		}
	}
	/* cuptiFinalize: a detaching tool leaves no thread of CUPTI behind */
	g_cupti.worker_running = 0;
	g_cupti.worker_stop = 0;
	pthread_cond_broadcast(&g_cupti.done_cv);
	pthread_mutex_unlock(&g_cupti.mx);
	return NULL;
}

/* g_cupti.cv waits with CLOCK_MONOTONIC deadlines: give it that clock. */
static void sim_init_cv(void)
{
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&g_cupti.cv, &ca);
	pthread_condattr_destroy(&ca);
}

__attribute__((constructor)) static void sim_cupti_load(void)
{
	sim_init_cv(); /* before any thread can use it */
	g_cupti.t0 = simcupti_now();
}

static void sim_atfork_child(void)
{
	/* The delivery thread does not exist in the child: deliver inline. */
	g_cupti.worker_running = 0;
	pthread_mutexattr_t ma; /* error-checking, as g_cupti's initializer makes it */
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutex_init(&g_cupti.mx, &ma);
	pthread_mutexattr_destroy(&ma);
	pthread_mutex_init(&g_cupti.deliver_mx, NULL);
	sim_init_cv();
	pthread_cond_init(&g_cupti.done_cv, NULL);
	pthread_cond_init(&g_cupti.room_cv, NULL);
	g_cupti.room_waiters = 0;
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
	pthread_mutex_lock(&g_cupti.mx);
	/* Host staging full: wait for the CUPTI thread to empty it (as a real
	 * app thread handles its own full buffer), unless this is that thread,
	 * a buffer callback, or there is no thread to wait for. The runtime
	 * never holds a lock of its own here (sim_cudart.h "Locks"). */
	while (!gpu && g_cupti.nhost >= SIM_HOST_HARD && g_cupti.worker_running && g_cupti.req_cb && !t_in_buffer_cb &&
	       !pthread_equal(pthread_self(), g_cupti.worker)) {
		g_cupti.room_waiters++;
		pthread_cond_signal(&g_cupti.cv);
		pthread_cond_wait(&g_cupti.room_cv, &g_cupti.mx);
		g_cupti.room_waiters--;
	}
	if (gpu ? g_cupti.par.buffer_records && g_cupti.ndev >= g_cupti.par.buffer_records : g_cupti.nhost >= SIM_HOST_HARD) {
		pthread_mutex_unlock(&g_cupti.mx); /* device buffer full, or host staging with no one to empty it */
		free(s);
		atomic_fetch_add_explicit(&g_dropped, 1, memory_order_relaxed);
		return;
	}
	if (gpu) {
		g_cupti.ndev++;
		g_cupti.ndev_all++;
	} else {
		g_cupti.nhost++;
	}
	int wake = g_cupti.nstaged == 0 || g_cupti.nhost == SIM_HOST_SOFT + 1;
	*g_cupti.tail = s;
	g_cupti.tail = &s->next;
	g_cupti.nstaged++;
	if (wake)
		pthread_cond_signal(&g_cupti.cv);
	pthread_mutex_unlock(&g_cupti.mx);
}

/* ---- the client's side: buffers, flushes, attributes ----------------------- */

CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
					   CUpti_BuffersCallbackCompleteFunc done)
{
	if (!req || !done)
		return sim_cupti_err(CUPTI_ERROR_INVALID_PARAMETER);
	pthread_mutex_lock(&g_cupti.mx);
	g_cupti.req_cb = req;
	g_cupti.done_cb = done;
	if (!g_cupti.worker_running) {
		static int atfork_done;
		if (!atfork_done) {
			pthread_atfork(NULL, NULL, sim_atfork_child);
			atfork_done = 1;
		}
		pthread_attr_t at;
		pthread_attr_init(&at);
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&g_cupti.worker, &at, sim_worker_main, NULL) == 0) {
			g_cupti.worker_running = 1;
			pthread_setname_np(g_cupti.worker, "simcuda-cupti"); /* named before it first runs */
		}
		pthread_attr_destroy(&at);
	}
	pthread_mutex_unlock(&g_cupti.mx);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
	int forced = (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) != 0;
	if (t_in_buffer_cb)
		return sim_cupti_err(CUPTI_ERROR_INVALID_OPERATION);
	pthread_mutex_lock(&g_cupti.mx);
	if (!g_cupti.req_cb) {
		pthread_mutex_unlock(&g_cupti.mx);
		return sim_cupti_err(CUPTI_ERROR_INVALID_OPERATION);
	}
	if (!g_cupti.worker_running || pthread_equal(pthread_self(), g_cupti.worker)) {
		pthread_mutex_unlock(&g_cupti.mx);
		sim_deliver(1, forced, 0);
		return CUPTI_SUCCESS;
	}
	uint64_t my = ++g_cupti.flush_req;
	if (forced)
		g_cupti.flush_forced = 1;
	pthread_cond_signal(&g_cupti.cv);
	while (g_cupti.flush_done < my)
		pthread_cond_wait(&g_cupti.done_cv, &g_cupti.mx);
	pthread_mutex_unlock(&g_cupti.mx);
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
	pthread_mutex_lock(&g_cupti.mx);
	g_cupti.flush_period_ms = time;
	pthread_cond_signal(&g_cupti.cv); /* an idle worker starts its period */
	pthread_mutex_unlock(&g_cupti.mx);
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
		return sim_cupti_err(CUPTI_ERROR_INVALID_PARAMETER);
	*dropped = atomic_exchange_explicit(&g_dropped, 0, memory_order_relaxed);
	return CUPTI_SUCCESS;
}

void sim_cupti_rebase_staged_locked(int64_t delta)
{
	for (struct sim_staged *s = g_cupti.head; s; s = s->next) {
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
	g_cupti.t0 += (uint64_t)delta;
}

CUptiResult cuptiActivityGetAttribute(CUpti_ActivityAttribute attr, size_t *valueSize, void *value)
{
	if (!valueSize || !value)
		return sim_cupti_err(CUPTI_ERROR_INVALID_PARAMETER);
	if (attr == CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER) {
		if (*valueSize < sizeof(uint8_t))
			return sim_cupti_err(CUPTI_ERROR_INVALID_PARAMETER);
		*(uint8_t *)value = (uint8_t)atomic_load_explicit(&g_per_thread, memory_order_relaxed);
		*valueSize = sizeof(uint8_t);
		return CUPTI_SUCCESS;
	}
	if (attr == CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE && *valueSize >= sizeof(size_t)) {
		pthread_mutex_lock(&g_cupti.mx);
		size_t v = (size_t)g_cupti.par.buffer_records * SIM_DEV_RECORD_BYTES;
		pthread_mutex_unlock(&g_cupti.mx);
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
		return sim_cupti_err(CUPTI_ERROR_INVALID_PARAMETER);
	if (attr == CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER) {
		if (*valueSize < sizeof(uint8_t))
			return sim_cupti_err(CUPTI_ERROR_INVALID_PARAMETER);
		atomic_store_explicit(&g_per_thread, *(uint8_t *)value != 0, memory_order_relaxed);
		return CUPTI_SUCCESS;
	}
	if (attr == CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE) {
		if (*valueSize < sizeof(size_t))
			return sim_cupti_err(CUPTI_ERROR_INVALID_PARAMETER);
		size_t v;
		memcpy(&v, value, sizeof v);
		pthread_mutex_lock(&g_cupti.mx);
		g_cupti.par.buffer_records = v / SIM_DEV_RECORD_BYTES ? v / SIM_DEV_RECORD_BYTES : 1;
		g_cupti.dev_buf_attr = 1;
		pthread_mutex_unlock(&g_cupti.mx);
		return CUPTI_SUCCESS;
	}
	return CUPTI_SUCCESS;
}

void sim_cupti_delivery_stop_locked(void)
{
	/* Real CUPTI's detach destroys its resources, threads included: end the
	 * delivery thread (after what it holds is delivered) and forget the
	 * buffer callbacks, so a later cuptiActivityRegisterCallbacks starts a
	 * fresh one. Not from the delivery thread itself (a buffer callback). */
	if (g_cupti.worker_running && !pthread_equal(pthread_self(), g_cupti.worker)) {
		g_cupti.worker_stop = 1;
		pthread_cond_signal(&g_cupti.cv);
		while (g_cupti.worker_running)
			pthread_cond_wait(&g_cupti.done_cv, &g_cupti.mx);
		g_cupti.req_cb = NULL;
		g_cupti.done_cb = NULL;
	}
}
