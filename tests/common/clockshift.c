/*
 * clockshift.c — a test-only interposer that makes a process look as if it
 * ran on another host: LD_PRELOAD it before libgpuphase.so and
 *   CLOCKSHIFT_RAW_NS=N       CLOCK_MONOTONIC_RAW reads N ns later (another
 *                             boot: the trace clock's origin differs)
 *   CLOCKSHIFT_REALTIME_NS=N  CLOCK_REALTIME reads N ns later (that host's
 *                             NTP error)
 *   CLOCKSHIFT_HOST=NAME      gethostname answers NAME
 *   CLOCKSHIFT_STEP_AT_MS=M, CLOCKSHIFT_STEP_NS=N
 *                             M ms (on CLOCK_MONOTONIC) after the first
 *                             clock read, CLOCK_REALTIME jumps by N ns more
 *                             (an NTP step, `date -s`)
 * (N signed; unset = 0 / the real name / no step). CLOCK_MONOTONIC and every other
 * clock are left alone, so timeouts and a test program's own schedule still
 * run on the real host's time. simcuda takes its times from the clock its
 * CUPTI client registers — libgpuphase's, clock_gettime(CLOCK_MONOTONIC_RAW)
 * — so its GPU timestamps move with the host's, as a GPU's do on another
 * machine. Never part of the product: tests/module.mk builds it for
 * tests/e2e/test_multinode.sh only.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int (*real_clock_gettime)(clockid_t, struct timespec *);
static long long shift_raw, shift_realtime, step_at_ns = -1, step_ns, t_first;
static const char *host;

__attribute__((constructor)) static void clockshift_init(void)
{
	real_clock_gettime = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
	const char *v;
	if ((v = getenv("CLOCKSHIFT_RAW_NS")))
		shift_raw = strtoll(v, NULL, 10);
	if ((v = getenv("CLOCKSHIFT_REALTIME_NS")))
		shift_realtime = strtoll(v, NULL, 10);
	host = getenv("CLOCKSHIFT_HOST");
	if ((v = getenv("CLOCKSHIFT_STEP_AT_MS")))
		step_at_ns = strtoll(v, NULL, 10) * 1000000ll;
	if ((v = getenv("CLOCKSHIFT_STEP_NS")))
		step_ns = strtoll(v, NULL, 10);
}

/* CLOCK_MONOTONIC ns since the first read (0 the first time). */
static long long clockshift_since_first(void)
{
	struct timespec m;
	real_clock_gettime(CLOCK_MONOTONIC, &m);
	long long now = (long long)m.tv_sec * 1000000000ll + m.tv_nsec;
	long long first = __atomic_load_n(&t_first, __ATOMIC_RELAXED);
	if (!first) {
		__atomic_compare_exchange_n(&t_first, &first, now, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
		first = __atomic_load_n(&t_first, __ATOMIC_RELAXED);
	}
	return now - first;
}

static void clockshift_add(struct timespec *ts, long long ns)
{
	long long t = (long long)ts->tv_sec * 1000000000ll + ts->tv_nsec + ns;
	ts->tv_sec = (time_t)(t / 1000000000ll);
	ts->tv_nsec = (long)(t % 1000000000ll);
}

int clock_gettime(clockid_t id, struct timespec *ts)
{
	if (!real_clock_gettime)
		clockshift_init();
	int rc = real_clock_gettime(id, ts);
	if (rc == 0 && id == CLOCK_MONOTONIC_RAW)
		clockshift_add(ts, shift_raw);
	else if (rc == 0 && id == CLOCK_REALTIME)
		clockshift_add(ts, shift_realtime +
					   (step_at_ns >= 0 && clockshift_since_first() >= step_at_ns ? step_ns : 0));
	return rc;
}

int gethostname(char *name, size_t len)
{
	static int (*real)(char *, size_t);
	if (!host) {
		if (!real)
			real = (int (*)(char *, size_t))dlsym(RTLD_NEXT, "gethostname");
		return real(name, len);
	}
	if (strlen(host) >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(name, host);
	return 0;
}
