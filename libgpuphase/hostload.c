/*
 * hostload.c — host conditions during capture, sampled off the hot path by
 * one low-rate thread of the library (GP_HOSTLOAD_PERIOD_MS):
 *   - GP_REC_HOST_SAMPLE every period: host CPU busy (from /proc/stat, per
 *     mille of all CPUs), this process's CPU use (CLOCK_PROCESS_CPUTIME_ID,
 *     per mille of one CPU), the interval, and the cumulative time spent in
 *     CUPTI buffer completion callbacks (gp_cupti_buffer_ns, cupti.c);
 *   - every sample: gp_clocks_tick (clocks.c: wall-clock pairs);
 *   - once at start: GP_STATUS_PROCESS_START (process start time on the trace
 *     clock, from /proc/self/stat starttime and CLOCK_BOOTTIME) and
 *     GP_STATUS_HOOK_COST (measured cost of one hooked call's own work: two
 *     clock reads, an op id, the CUPTI external-id push/pop when CUPTI is
 *     active, filling a record, and one ring emit, timed here on this thread;
 *     measured again at samples 2 to GP_HOSTLOAD_COST_ROUNDS in the same
 *     CUPTI mode, the lowest kept, and sent again whenever it falls: the
 *     last one holds).
 * The report (report/hostload.c, report/stages.c) turns these into the host
 * conditions and stages sections.
 *
 * Who calls it: lib.c starts it after the capture window starts and stops it
 * in its atexit path before the collector stops (joined for at most
 * GP_HOSTLOAD_JOIN_WAIT_S), and forgets it in a fork
 * child (which starts none); the sampler thread is the only other caller. The thread marks itself internal (gp_tls.internal) so
 * nothing it does is traced. Never blocks an application thread; failures
 * (no /proc, no thread) only mean no samples.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gp_collector.h"
#include "gp_lib.h"

#define GP_HOSTLOAD_PERIOD_MS 100
#define GP_HOSTLOAD_CALIB_ITERS 100 /* x 9: well under 1 ms of CPU */
#define GP_HOSTLOAD_COST_ROUNDS 5   /* the hook cost: measured at start, again at samples 2 to 5 */
#define GP_HOSTLOAD_JOIN_WAIT_S 2   /* gp_hostload_stop waits this long for the sampler */

/* Pair: the stop flag is written under gp_hl.mx by gp_hostload_stop and read
 * under it by the sampler between waits. */
static struct {
	pthread_mutex_t mx;
	pthread_cond_t cv;
	pthread_t thread;
	pid_t owner; /* the process that started the thread (fork children: none);
	                atomic: stop reads it before taking the lock */
	int running, stop;
	int forked; /* fork child: never start (gp_hostload_forget) */
} gp_hl = { .mx = PTHREAD_MUTEX_INITIALIZER };

/* gp_hl.cv measures its timeouts on CLOCK_MONOTONIC (set up before the
 * sampler starts, and again in a fork child). */
static void gp_hostload_cv_init(void)
{
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&gp_hl.cv, &ca);
	pthread_condattr_destroy(&ca);
}

/* Cumulative ns in CUPTI completion callbacks: cupti.c adds (relaxed atomic
 * add), the sampler reads (relaxed load); only the value matters. */
uint64_t gp_cupti_buffer_ns;

/* busy and total jiffies of all CPUs; 0 on success. */
static int gp_hostload_stat(uint64_t *busy, uint64_t *total)
{
	FILE *f = fopen("/proc/stat", "re");
	if (!f)
		return -errno;
	unsigned long long v[8] = { 0 };
	int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
		       &v[6], &v[7]);
	fclose(f);
	if (n < 4)
		return -EINVAL;
	uint64_t t = 0;
	for (int i = 0; i < 8; i++)
		t += v[i];
	*total = t;
	*busy = t - v[3] - v[4]; /* minus idle and iowait */
	return 0;
}

static uint64_t gp_hostload_clock(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Process start on the trace clock, or 0 if /proc says nothing. */
static uint64_t gp_hostload_proc_start(void)
{
	FILE *f = fopen("/proc/self/stat", "re");
	if (!f)
		return 0;
	char buf[1024];
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	char *p = strrchr(buf, ')'); /* comm may contain spaces */
	if (!p)
		return 0;
	unsigned long long start = 0;
	/* after ") ": field 3 (state) ... field 22 (starttime) = 20th token */
	p += 2;
	for (int field = 3; field < 22 && p; field++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	if (!p || sscanf(p, "%llu", &start) != 1)
		return 0;
	long hz = sysconf(_SC_CLK_TCK);
	if (hz <= 0)
		return 0;
	uint64_t boot_now = gp_hostload_clock(CLOCK_BOOTTIME), raw_now = gp_now();
	uint64_t since = boot_now - (uint64_t)(start * (1000000000ull / (unsigned long long)hz));
	return raw_now > since ? raw_now - since : 0;
}

static int gp_hostload_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The hooked call's own work (without the emit): the median of 9 x 100
 * iterations, each timed alone (a batch's mean would carry any preemption of
 * this thread into the figure; on a loaded host most batches are hit). */
static uint64_t gp_hostload_calibrate(int *cupti_out)
{
	uint64_t per[9 * GP_HOSTLOAD_CALIB_ITERS];
	volatile uint64_t sink = 0;
	for (int i = 0; i < 9 * GP_HOSTLOAD_CALIB_ITERS; i++) {
		uint64_t a = gp_now();
		uint32_t op = gp_state_next_op();
		/* as a launch's hook: its push when the CUPTI mode has one */
		int cupti = (__atomic_load_n(&gp_cupti_push_bits, __ATOMIC_RELAXED) &
			     GP_CLASS_BIT(GP_API_LAUNCH)) != 0;
		if (cupti)
			gp_cupti_push(op);
		union gp_rec r;
		memset(&r, 0, sizeof r);
		r.api.type = GP_REC_HOOK_API;
		r.api.start = a;
		r.api.corr = op;
		if (cupti)
			gp_cupti_pop();
		r.api.dur = (uint32_t)(gp_now() - a);
		sink += r.api.dur;
		per[i] = r.api.dur;
	}
	(void)sink;
	*cupti_out = (__atomic_load_n(&gp_cupti_push_bits, __ATOMIC_RELAXED) & GP_CLASS_BIT(GP_API_LAUNCH)) != 0;
	qsort(per, 9 * GP_HOSTLOAD_CALIB_ITERS, sizeof per[0], gp_hostload_cmp);
	return per[9 * GP_HOSTLOAD_CALIB_ITERS / 2];
}

static void gp_hostload_status(enum gp_status_kind kind, int64_t value)
{
	union gp_rec r;
	memset(&r, 0, sizeof r);
	r.status.type = GP_REC_STATUS;
	r.status.kind = (uint8_t)kind;
	r.status.ts = gp_now();
	r.status.value = value;
	gp_collector_emit(&r, 1);
}

static void *gp_hostload_main(void *arg)
{
	(void)arg;
	gp_tls.internal++; /* nothing this thread does is traced */
	union gp_rec r;
	memset(&r, 0, sizeof r);
	r.status.type = GP_REC_STATUS;
	r.status.kind = GP_STATUS_PROCESS_START;
	r.status.ts = gp_now();
	r.status.value = (int64_t)gp_hostload_proc_start(); /* 0 = unknown */
	gp_collector_emit(&r, 1); /* also sets up this thread's ring */
	/* the hook cost is emitted after the first sample, whose (timed) emit
	 * stands for the hook's own ring push */
	int calib_cupti; /* whether the push and pop were in it (a gap or the end: not) */
	uint64_t calib = gp_hostload_calibrate(&calib_cupti);
	uint64_t cost_sent = 0, best_emit = UINT64_MAX; /* cost_sent: the figure last sent, 0 none */
	int cost_rounds = 0;

	uint64_t busy0 = 0, total0 = 0, cpu0 = gp_hostload_clock(CLOCK_PROCESS_CPUTIME_ID), t0 = gp_now();
	int have_stat = gp_hostload_stat(&busy0, &total0) == 0;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	pthread_mutex_lock(&gp_hl.mx);
	while (!gp_hl.stop) {
		struct timespec dl; /* gp_hl.cv waits on CLOCK_MONOTONIC: a wall-clock step moves no period */
		clock_gettime(CLOCK_MONOTONIC, &dl);
		dl.tv_nsec += GP_HOSTLOAD_PERIOD_MS * 1000000L;
		dl.tv_sec += dl.tv_nsec / 1000000000L;
		dl.tv_nsec %= 1000000000L;
		int w = 0;
		while (!gp_hl.stop && w != ETIMEDOUT)
			w = pthread_cond_timedwait(&gp_hl.cv, &gp_hl.mx, &dl);
		int stopping = gp_hl.stop; /* under gp_hl.mx */
		pthread_mutex_unlock(&gp_hl.mx);
		uint64_t busy = 0, total = 0, cpu = gp_hostload_clock(CLOCK_PROCESS_CPUTIME_ID), t = gp_now();
		int ok = have_stat && gp_hostload_stat(&busy, &total) == 0 && total > total0 && t > t0;
		if (ok) {
			memset(&r, 0, sizeof r);
			r.host.type = GP_REC_HOST_SAMPLE;
			r.host.ncpu = (uint16_t)(ncpu > 0 && ncpu < 65536 ? ncpu : 0);
			r.host.host_busy_pm = (uint32_t)((busy - busy0) * 1000u / (total - total0));
			r.host.ts = t;
			r.host.proc_cpu_pm = (uint32_t)((double)(cpu - cpu0) * 1000.0 / (double)(t - t0));
			r.host.interval_us = (uint32_t)((t - t0) / 1000u);
			r.host.cupti_ns = __atomic_load_n(&gp_cupti_buffer_ns, __ATOMIC_RELAXED);
			uint64_t e0 = gp_now();
			gp_collector_emit(&r, 1);
			uint64_t emit_ns = gp_now() - e0;
			if (emit_ns < best_emit)
				best_emit = emit_ns;
			if (cost_rounds < GP_HOSTLOAD_COST_ROUNDS) {
				/* measured again at the next samples, the lowest
				 * kept: a host that stalls this thread for the
				 * whole of one measurement (12x once, on a loaded
				 * CI host) must not multiply every hook of the
				 * run. Only a measurement made as the first was
				 * (CUPTI's push and pop in it or not) and not once
				 * stopping (capture is off by then); sent again
				 * whenever it falls (the report keeps the last) */
				if (cost_rounds++ && !stopping) {
					int cupti;
					uint64_t again = gp_hostload_calibrate(&cupti);
					if (cupti == calib_cupti && again < calib)
						calib = again;
				}
				uint64_t cost = calib + best_emit;
				if (!cost_sent || cost < cost_sent) {
					gp_hostload_status(GP_STATUS_HOOK_COST, (int64_t)cost);
					cost_sent = cost;
				}
			}
		}
		busy0 = busy, total0 = total, cpu0 = cpu, t0 = t;
		gp_clocks_tick(); /* clocks.c: a clock pair now and then */
		pthread_mutex_lock(&gp_hl.mx);
	}
	pthread_mutex_unlock(&gp_hl.mx);
	if (!cost_sent) /* no sample: the cost without the ring push */
		gp_hostload_status(GP_STATUS_HOOK_COST, (int64_t)calib);
	gp_tls.internal--;
	return NULL;
}

void gp_hostload_start(void)
{
	int cs = gp_state_lock(&gp_hl.mx); /* program thread; logs under the lock */
	if (!gp_hl.running && !gp_hl.forked) {
		gp_hl.stop = 0;
		static int cv_ready; /* under gp_hl.mx; a later start reuses it */
		if (!cv_ready++)
			gp_hostload_cv_init();
		/* The thread must not inherit the application's signals: with them
		 * unblocked the kernel may deliver a process-directed signal the
		 * program blocks in its own threads (to take it with sigwait or a
		 * signalfd) to this thread, whose default action kills the process. */
		sigset_t all, old;
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		int rc = pthread_create(&gp_hl.thread, NULL, gp_hostload_main, NULL);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (rc == 0) {
			gp_hl.running = 1;
			__atomic_store_n(&gp_hl.owner, getpid(), __ATOMIC_RELEASE);
		} else {
			gp_log(GP_LOG_INFO, "host load sampler not started: no host samples in this trace");
		}
	}
	gp_state_unlock(&gp_hl.mx, cs);
}

int gp_hostload_stop(void)
{
	/* a fork child has no sampler, and the lock may have been held at fork */
	if (__atomic_load_n(&gp_hl.owner, __ATOMIC_ACQUIRE) != getpid())
		return 1;
	/* exit() from a signal handler that interrupted this thread's start
	 * under the lock: the sampler may not exist yet; not waited for */
	int cs = 0;
	if (!gp_state_lock_exit(&gp_hl.mx, &cs))
		return 0;
	int join = gp_hl.running;
	gp_hl.stop = 1;
	gp_hl.running = 0;
	pthread_cond_signal(&gp_hl.cv);
	gp_state_unlock(&gp_hl.mx, cs);
	if (!join)
		return 1;
	/* Bounded: the sampler's waits are timed and its /proc reads take
	 * microseconds; past the bound it is left running (its records are
	 * refused once the collector stops) and lib.c skips what needs it
	 * stopped. */
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until); /* pthread_timedjoin_np measures on CLOCK_REALTIME */
	until.tv_sec += GP_HOSTLOAD_JOIN_WAIT_S;
	return pthread_timedjoin_np(gp_hl.thread, NULL, &until) == 0;
}

void gp_hostload_forget(void)
{
	/* fork child: the parent's sampler does not exist here and its lock
	 * may have been held at fork (the sampler holds it between waits). */
	pthread_mutex_init(&gp_hl.mx, NULL);
	gp_hostload_cv_init();
	gp_hl.running = 0;
	gp_hl.stop = 0;
	/* No sampler in a fork child (GPUPHASE_FOLLOW_FORK): a second thread
	 * started there next to the writer hung in ASan's allocator about one
	 * run in six (its locks are not fork-safe); the child's trace has no
	 * host samples. */
	gp_hl.forked = 1;
	__atomic_store_n(&gp_hl.owner, 0, __ATOMIC_RELEASE);
}
