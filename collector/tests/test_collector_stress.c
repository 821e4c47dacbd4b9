/*
 * test_collector_stress.c — the collector under concurrency and failure:
 * many producers on small rings (written == read + dropped, per thread, in
 * order), threads that come and go while writing (an exiting thread's ring is
 * handed over and nothing is lost), bounded flush latency, fork children,
 * the size cap, a file size limit (EFBIG, SIGXFSZ must not kill), and the
 * O_EXCL / O_NOFOLLOW rules.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include "tutil.h"
#include "gp_file.h"

#define MAXP 64

struct producer {
	uint32_t idx;
	uint32_t tid;
	uint64_t n;          /* records to write                      */
	uint64_t dropped;    /* records given up after -ENOBUFS       */
	uint64_t refused;    /* every -ENOBUFS (a counted drop each)  */
	int retry;           /* retry refused emits (no drops wanted) */
	uint32_t name_id;
};

static void *produce(void *arg)
{
	struct producer *p = arg;
	char name[32];
	p->tid = (uint32_t)gettid();
	snprintf(name, sizeof(name), "producer_%u", p->idx);
	p->name_id = gp_collector_intern(name, strlen(name));
	for (uint64_t i = 0; i < p->n; i++) {
		union gp_rec r;
		memset(&r, 0, sizeof(r));
		r.api.type = GP_REC_HOOK_API;
		r.api.api_id = (uint16_t)p->idx;
		r.api.tid = p->tid;
		r.api.start = i;
		r.api.corr = (uint32_t)i;
		r.api.result = p->name_id;
		int rc;
		while ((rc = gp_collector_emit(&r, 1)) == -ENOBUFS) {
			p->refused++;
			if (!p->retry)
				break;
			sched_yield();
		}
		if (rc == -ENOBUFS)
			p->dropped++;
		else
			cr_assert_eq(rc, 0);
	}
	return NULL;
}

/* Read the trace and check every producer: records in order, intact,
 * read + dropped == written, and the ring's GP_REC_DROPS record agrees. */
static void check_producers(const char *path, struct producer *ps, int np)
{
	struct tu_trace t = tu_read(path);
	cr_assert_eq(t.rc, 0, "%s", t.err);
	cr_assert_eq(t.end.complete, 1);
	uint64_t *next = calloc(MAXP, sizeof(uint64_t));
	uint64_t *read = calloc(MAXP, sizeof(uint64_t));
	uint64_t *drops = calloc(MAXP, sizeof(uint64_t));
	uint64_t total_dropped = 0;
	for (size_t g = 0; g < t.ngroups; g++) {
		const union gp_rec *h = &t.recs[t.group[g]];
		if (h->type == GP_REC_HOOK_API) {
			uint32_t i = h->api.api_id;
			cr_assert_lt(i, (uint32_t)np);
			cr_assert_eq(h->api.tid, ps[i].tid, "record intact");
			cr_assert_eq(h->api.corr, (uint32_t)h->api.start, "record intact");
			cr_assert_eq(h->api.result, ps[i].name_id, "record intact");
			cr_assert_geq(h->api.start, next[i], "per-thread order (producer %u)", i);
			cr_assert_lt(h->api.start, ps[i].n);
			next[i] = h->api.start + 1;
			read[i]++;
		} else if (h->type == GP_REC_DROPS && h->drops.source == GP_DROP_RING) {
			for (int i = 0; i < np; i++)
				if (ps[i].tid == h->drops.tid)
					drops[i] = h->drops.dropped;
		}
	}
	for (int i = 0; i < np; i++) {
		cr_assert_eq(read[i] + ps[i].dropped, ps[i].n,
			     "producer %d: written %llu != read %llu + dropped %llu", i,
			     (unsigned long long)ps[i].n, (unsigned long long)read[i],
			     (unsigned long long)ps[i].dropped);
		/* the ring's drop record also counts the thread's refused
		 * string/thread-intro records, which this test never refuses
		 * (they go first into an empty ring) */
		cr_assert_eq(drops[i], ps[i].refused, "producer %d: drop record", i);
		total_dropped += ps[i].refused;
	}
	cr_assert_eq(t.end.dropped_ring, total_dropped, "footer drop total");
	free(next);
	free(read);
	free(drops);
	tu_free(&t);
}

static void run_producers(int np, uint64_t n, uint32_t ring, int retry, const char *name)
{
	const char *path = tu_path(name);
	struct gp_collector_config c = tu_config(path, ring);
	struct producer *ps = calloc(MAXP, sizeof(*ps));
	pthread_t th[MAXP];
	cr_assert_eq(gp_collector_start(&c), 0);
	for (int i = 0; i < np; i++) {
		ps[i] = (struct producer){ .idx = (uint32_t)i, .n = n, .retry = retry };
		cr_assert_eq(pthread_create(&th[i], NULL, produce, &ps[i]), 0);
	}
	for (int i = 0; i < np; i++)
		pthread_join(th[i], NULL);
	gp_collector_stop();
	uint64_t d = 0, refused = 0;
	for (int i = 0; i < np; i++) {
		d += ps[i].dropped;
		refused += ps[i].refused;
	}
	cr_assert_eq(gp_collector_dropped(), refused, "every refusal counted");
	if (!retry)
		cr_assert_gt(d, 0, "the small ring forced drops");
	else
		cr_assert_eq(d, 0);
	check_producers(path, ps, np);
	free(ps);
}

Test(stress, producers_64_small_ring_drops)
{
	run_producers(64, 3000, 32, 0, "s64.gpht");
}

Test(stress, producers_8_no_drops_when_retrying)
{
	run_producers(8, 20000, 256, 1, "s8.gpht");
}

/* Threads created and exiting while others write: each exiting thread's
 * ring is orphaned, drained by the writer, then freed; nothing is lost. */
#define CHURN_THREADS 96
#define CHURN_WAVE 8

Test(stress, thread_churn_loses_nothing)
{
	const char *path = tu_path("churn.gpht");
	struct gp_collector_config c = tu_config(path, 64);
	struct producer *ps = calloc(MAXP, sizeof(*ps));
	static struct producer all[CHURN_THREADS];
	pthread_t th[CHURN_WAVE];
	cr_assert_eq(gp_collector_start(&c), 0);
	for (int w = 0; w < CHURN_THREADS / CHURN_WAVE; w++) {
		for (int i = 0; i < CHURN_WAVE; i++) {
			struct producer *p = &all[w * CHURN_WAVE + i];
			*p = (struct producer){ .idx = (uint32_t)(w * CHURN_WAVE + i), .n = 500, .retry = 1 };
			cr_assert_eq(pthread_create(&th[i], NULL, produce, p), 0);
		}
		for (int i = 0; i < CHURN_WAVE; i++)
			pthread_join(th[i], NULL);
	}
	gp_collector_stop();

	struct tu_trace t = tu_read(path);
	cr_assert_eq(t.rc, 0, "%s", t.err);
	static uint64_t cnt[CHURN_THREADS], nxt[CHURN_THREADS];
	int threads_announced = 0;
	uint64_t refused = 0;
	for (int i = 0; i < CHURN_THREADS; i++)
		refused += all[i].refused;
	for (size_t g = 0; g < t.ngroups; g++) {
		const union gp_rec *h = &t.recs[t.group[g]];
		if (h->type == GP_REC_THREAD)
			threads_announced++;
		if (h->type != GP_REC_HOOK_API)
			continue;
		/* api_id is 16 bits: idx < 96 fits */
		uint32_t i = h->api.api_id;
		cr_assert_lt(i, CHURN_THREADS);
		cr_assert_eq(h->api.start, nxt[i], "thread %u in order, none lost", i);
		nxt[i]++;
		cnt[i]++;
	}
	for (int i = 0; i < CHURN_THREADS; i++)
		cr_assert_eq(cnt[i], 500, "thread %d: all records", i);
	cr_assert_eq(threads_announced, CHURN_THREADS);
	cr_assert_eq(t.end.dropped_ring, refused, "refusals (then retried) are counted drops");
	tu_free(&t);
	free(ps);
}

/* A record reaches the file within about flush_ms while the collector runs
 * (generous bound: the machine is shared). */
Test(stress, flush_latency_is_bounded)
{
	const char *path = tu_path("lat.gpht");
	struct gp_collector_config c = tu_config(path, 1024);
	c.flush_ms = 20;
	cr_assert_eq(gp_collector_start(&c), 0);
	union gp_rec r;
	memset(&r, 0, sizeof(r));
	r.kernel.type = GP_REC_KERNEL;
	r.kernel.corr = 777;
	usleep(200000); /* let the writer back off to its longest nap */
	cr_assert_eq(gp_collector_emit(&r, 1), 0);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int found = 0;
	double waited = 0;
	while (!found && waited < 5.0) {
		usleep(2000);
		struct tu_trace t = tu_read(path);
		cr_assert_eq(t.rc, 0, "%s", t.err);
		cr_assert_eq(t.end.complete, 0, "no footer while running");
		for (size_t g = 0; g < t.ngroups; g++)
			found |= t.recs[t.group[g]].type == GP_REC_KERNEL && t.recs[t.group[g]].kernel.corr == 777;
		tu_free(&t);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		waited = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	}
	cr_assert(found, "record on disk while running");
	cr_assert_lt(waited, 1.0, "flush latency %.3f s (flush_ms = 20)", waited);
	gp_collector_stop();
}

/* fork: the child forgets the parent's collector, can start its own, and
 * the parent's file is untouched by the child. */
Test(stress, fork_child_forgets)
{
	char ppath[512], cpath[512];
	snprintf(ppath, sizeof(ppath), "%s", tu_path("parent.gpht"));
	snprintf(cpath, sizeof(cpath), "%s", tu_path("child.gpht"));
	struct gp_collector_config c = tu_config(ppath, 1024);
	cr_assert_eq(gp_collector_start(&c), 0);
	union gp_rec r;
	memset(&r, 0, sizeof(r));
	r.kernel.type = GP_REC_KERNEL;
	r.kernel.corr = 1;
	cr_assert_eq(gp_collector_emit(&r, 1), 0);
	/* Let the writer thread finish starting up. It never allocates once in
	 * its loop, but while it starts, the ASan runtime of gcc 12 allocates
	 * for it, and a fork at that instant leaves the child with ASan's
	 * allocator lock held (glibc malloc has fork handlers; ASan's lacks
	 * them), so the child's own writer would deadlock. */
	usleep(100000);
	pid_t pid = fork();
	if (pid == 0) {
		gp_collector_forget();
		int ok = gp_collector_emit(&r, 1) == -EPIPE;
#ifdef __SANITIZE_THREAD__
		/* ThreadSanitizer cannot start threads after a multi-threaded
		 * fork: the child's own session is checked in the other builds. */
		_exit(ok ? 0 : 1);
#endif
		struct gp_collector_config cc = tu_config(cpath, 1024);
		ok &= gp_collector_start(&cc) == 0;
		r.kernel.corr = 2;
		ok &= gp_collector_emit(&r, 1) == 0;
		gp_collector_stop();
		_exit(ok ? 0 : 1);
	}
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child ok");
	r.kernel.corr = 3;
	cr_assert_eq(gp_collector_emit(&r, 1), 0);
	gp_collector_stop();
	struct tu_trace tp = tu_read(ppath);
	cr_assert_eq(tp.rc, 0, "%s", tp.err);
	uint32_t pk = 0, ck = 0;
	for (size_t g = 0; g < tp.ngroups; g++)
		if (tp.recs[tp.group[g]].type == GP_REC_KERNEL)
			pk = pk * 10 + tp.recs[tp.group[g]].kernel.corr;
	cr_assert_eq(pk, 13, "parent: its two records");
	tu_free(&tp);
#ifdef __SANITIZE_THREAD__
	return;
#endif
	struct tu_trace tc = tu_read(cpath);
	cr_assert_eq(tc.rc, 0, "%s", tc.err);
	for (size_t g = 0; g < tc.ngroups; g++)
		if (tc.recs[tc.group[g]].type == GP_REC_KERNEL)
			ck = ck * 10 + tc.recs[tc.group[g]].kernel.corr;
	cr_assert_eq(ck, 2, "child: its one record");
	tu_free(&tc);
}

/* Emit n distinct-ish (poorly compressible) records with retries. */
static void emit_noise(uint64_t n)
{
	uint64_t x = 88172645463325252ull;
	for (uint64_t i = 0; i < n; i++) {
		union gp_rec r;
		for (int k = 0; k < 4; k++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			memcpy(r.raw + 8 * k, &x, 8);
		}
		r.type = GP_REC_KERNEL;
		while (gp_collector_emit(&r, 1) == -ENOBUFS)
			usleep(200);
	}
}

Test(stress, size_cap_keeps_footer)
{
	const char *path = tu_path("cap.gpht");
	struct gp_collector_config c = tu_config(path, 4096);
	c.max_bytes = 300000;
	cr_assert_eq(gp_collector_start(&c), 0);
	emit_noise(40000); /* ~1.3 MB of incompressible records */
	gp_collector_stop();
	cr_assert_eq(gp_collector_failed(), 1);
	struct stat sb;
	cr_assert_eq(stat(path, &sb), 0);
	cr_assert_leq((uint64_t)sb.st_size, c.max_bytes, "file within the cap");
	struct tu_trace t = tu_read(path);
	cr_assert_eq(t.rc, 0, "%s", t.err);
	cr_assert_eq(t.end.complete, 1, "capped file still has its footer");
	cr_assert_eq(t.end.end_reason, -EFBIG);
	cr_assert_eq(t.end.write_errors, 0);
	cr_assert_gt(t.nslots, 1000);
	tu_free(&t);
}

/* RLIMIT_FSIZE: write() fails with EFBIG and SIGXFSZ must not kill us. The
 * writer keeps the whole blocks that reached the file, leaving room for the
 * footer, which says why capture ended. */
Test(stress, file_size_limit_is_survived)
{
	const char *path = tu_path("fsize.gpht");
	struct rlimit rl = { 200000, 200000 };
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
	struct gp_collector_config c = tu_config(path, 4096);
	cr_assert_eq(gp_collector_start(&c), 0);
	emit_noise(40000);
	gp_collector_stop();
	cr_assert_eq(gp_collector_failed(), 1, "write error noticed");
	struct tu_trace t = tu_read(path);
	cr_assert_eq(t.rc, 0, "%s", t.err);
	struct stat sb;
	cr_assert_eq(stat(path, &sb), 0);
	cr_assert_leq((uint64_t)sb.st_size, 200000u);
	cr_assert_eq(t.end.complete, 1, "footer after the write error");
	cr_assert_eq(t.end.end_reason, -EFBIG);
	cr_assert_eq(t.end.write_errors, 1);
	cr_assert_eq(t.end.truncated_bytes, 0);
	/* the whole blocks that fit are kept: at most one (raw, incompressible)
	 * 4096-slot block plus the footer's reserve (4384 bytes, writer.c) is
	 * given up below the limit */
	cr_assert_geq((uint64_t)sb.st_size + 32u + 4096u * 32u + 4384u, 200000u, "kept %zu slots in %lld bytes",
		      t.nslots, (long long)sb.st_size);
	cr_assert_gt(t.nslots, 0);
	tu_free(&t);
	sigset_t pend;
	sigpending(&pend);
	cr_assert_not(sigismember(&pend, SIGXFSZ), "no SIGXFSZ left pending on this thread");
}

Test(stress, create_rules)
{
	const char *path = tu_path("exists.gpht");
	tu_spit(path, "x", 1);
	struct gp_collector_config c = tu_config(path, 1024);
	cr_assert_eq(gp_collector_start(&c), -EEXIST, "never overwrite");
	char target[512], link[512];
	snprintf(target, sizeof(target), "%s", tu_path("target"));
	snprintf(link, sizeof(link), "%s", tu_path("link.gpht"));
	cr_assert_eq(symlink(target, link), 0);
	c.path = link;
	cr_assert_eq(gp_collector_start(&c), -EEXIST, "never through a symlink");
	cr_assert_neq(access(target, F_OK), 0, "symlink target not created");
	c.path = tu_path("mode.gpht");
	c.file_mode = 0640;
	cr_assert_eq(gp_collector_start(&c), 0);
	gp_collector_stop();
	struct stat sb;
	cr_assert_eq(stat(c.path, &sb), 0);
	cr_assert_eq(sb.st_mode & 0777, 0640 & ~(unsigned)umask(022));
	c.path = tu_path("badring.gpht");
	c.file_mode = 0;
	c.ring_records = 1000; /* not a power of two */
	cr_assert_eq(gp_collector_start(&c), -EINVAL);
	/* restart after stop works */
	c.ring_records = 64;
	cr_assert_eq(gp_collector_start(&c), 0);
	gp_collector_stop();
}

/* gp_collector_stop from an atexit handler, as libgpuphase registers it:
 * a process that just exits still leaves a complete trace. */
Test(stress, stop_from_atexit)
{
	char dir[512], path[600];
	/* in a subdirectory: the child's exit also runs the inherited temp-dir
	 * cleanup (tutil.h), which removes only plain files of the top dir */
	snprintf(dir, sizeof(dir), "%s", tu_path("atexit.d"));
	cr_assert_eq(mkdir(dir, 0700), 0);
	snprintf(path, sizeof(path), "%s/trace.gpht", dir);
	pid_t pid = fork();
	if (pid == 0) {
		struct gp_collector_config c = tu_config(path, 1024);
		if (gp_collector_start(&c) != 0)
			_exit(2);
		atexit(gp_collector_stop);
		union gp_rec r;
		memset(&r, 0, sizeof(r));
		r.kernel.type = GP_REC_KERNEL;
		r.kernel.corr = 4242;
		gp_collector_emit(&r, 1);
		exit(0);
	}
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	struct tu_trace t = tu_read(path);
	cr_assert_eq(t.rc, 0, "%s", t.err);
	cr_assert_eq(t.end.complete, 1, "footer written by the atexit stop");
	int found = 0;
	for (size_t g = 0; g < t.ngroups; g++)
		found |= t.recs[t.group[g]].type == GP_REC_KERNEL && t.recs[t.group[g]].kernel.corr == 4242;
	cr_assert(found);
	tu_free(&t);
	unlink(path);
	rmdir(dir);
}
