/*
 * bench_collector.c — `make bench` for the collector. Prints
 *   bench: <name> <value> <unit> [floor=<v>] [ratio=<v>]
 * lines (bench/run-bench.sh tabulates them):
 *   collector_push_ns       median cost of gp_collector_emit of one record,
 *                           floor = a plain store loop of the same record into
 *                           an array of the same size, measured in this run;
 *   collector_sustained_Np  records/s that N producers (1, 2, 4) push through
 *                           to a real file (producers back off when their ring
 *                           is 3/4 full, so nothing is dropped; the drop count
 *                           is printed and must be 0), end to end incl. stop;
 *                           _writer_capacity: records per second of the
 *                           writer thread's CPU time (drain, LZ4, CRC, write),
 *                           i.e. what one free core sustains, robust to load;
 *   collector_paced_2M_drops drops when 2M records/s are offered for 1 s with
 *                           the default ring and flush settings, no back-off;
 *   collector_bytes_per_record  file size / records for a realistic mix (per
 *                           kernel launch: hook api + runtime api + extcorr +
 *                           kernel; every 8th launch a memcpy, every 16th a
 *                           sync; kernel names interned).
 * Single process; uses the temp directory ($TMPDIR or /tmp); files removed.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "gp_collector_int.h"
#include "gp_reader.h"

static char dir[256];

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_d);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* "<dir>/<name>"; the result is valid until the next call. */
static const char *path_of(const char *name)
{
	static char p[512];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return p;
}

/* path_of, after removing any old file of that name. */
static const char *path_for(const char *name)
{
	const char *p = path_of(name);
	unlink(p);
	return p;
}

static uint64_t file_size(const char *name)
{
	struct stat sb;
	return stat(path_of(name), &sb) == 0 ? (uint64_t)sb.st_size : 0;
}

static int start(const char *name, uint32_t ring)
{
	struct gp_collector_config c;
	memset(&c, 0, sizeof(c));
	c.path = path_for(name);
	c.ring_records = ring;
	c.clock_id = CLOCK_MONOTONIC_RAW;
	int rc = gp_collector_start(&c);
	if (rc)
		fprintf(stderr, "bench_collector: cannot start collector on %s: %s\n", c.path, strerror(-rc));
	return rc;
}

/* --- realistic record mix --------------------------------------------------- */

struct mix {
	uint64_t x;       /* xorshift state */
	uint64_t t;       /* host clock     */
	uint64_t gpu_t;   /* device clock   */
	uint32_t op, corr, tid, launches;
	uint32_t names[48];
	union gp_rec q[8];
	int nq, iq;
};

static uint64_t rnd(struct mix *m)
{
	m->x ^= m->x << 13;
	m->x ^= m->x >> 7;
	m->x ^= m->x << 17;
	return m->x;
}

static void mix_init(struct mix *m, uint32_t seed)
{
	memset(m, 0, sizeof(*m));
	m->x = 0x9E3779B97F4A7C15ull ^ seed;
	m->t = 1000000000ull;
	m->gpu_t = m->t + 50000;
	m->tid = (uint32_t)gettid();
	/* Realistic mangled kernel names, interned on this thread. */
	for (int i = 0; i < 48; i++) {
		char name[160];
		int n = snprintf(name, sizeof(name),
				 "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_%02d_GLOBAL__N_115CUDAFunctorOnSelf_addIfEESt5arrayIPcLm%dEEEEviT0_T1_",
				 i, i % 5 + 2);
		m->names[i] = gp_collector_intern(name, (size_t)n);
	}
}

/* Fill m->q with the records of one kernel launch (and maybe a copy/sync). */
static void mix_launch(struct mix *m)
{
	union gp_rec *q = m->q;
	memset(q, 0, sizeof(m->q));
	uint32_t op = ++m->op, corr = ++m->corr;
	uint64_t gap = 2000 + rnd(m) % 6000, dur = 3000 + rnd(m) % 4000;
	m->t += gap;
	int n = 0;
	q[n].api = (struct gp_rec_api){ .type = GP_REC_HOOK_API, .class_flags = GP_API_LAUNCH, .api_id = 7,
				       .tid = m->tid, .start = m->t, .dur = (uint32_t)dur, .corr = op, .stream = 2 };
	n++;
	q[n].api = (struct gp_rec_api){ .type = GP_REC_RUNTIME_API, .class_flags = GP_API_LAUNCH, .api_id = 211,
				       .tid = m->tid, .start = m->t + 150 + rnd(m) % 100,
				       .dur = (uint32_t)(dur - 400), .corr = corr };
	n++;
	q[n].extcorr.type = GP_REC_EXTCORR;
	q[n].extcorr.kind = 6;
	q[n].extcorr.corr = corr;
	q[n].extcorr.ext_id = op;
	n++;
	uint64_t ks = m->gpu_t > m->t + dur ? m->gpu_t : m->t + dur + rnd(m) % 20000;
	uint64_t kd = 5000 + rnd(m) % 200000;
	m->gpu_t = ks + kd;
	q[n].kernel = (struct gp_rec_kernel){ .type = GP_REC_KERNEL, .device = 0, .stream = 7, .start = ks,
					     .end = ks + kd, .corr = corr, .name = m->names[rnd(m) % 48] };
	n++;
	m->t += dur;
	if (++m->launches % 8 == 0) {
		uint32_t c2 = ++m->corr;
		q[n].copy = (struct gp_rec_copy){ .type = GP_REC_MEMCPY, .device = 0, .copy_kind = 2, .flags = 0,
						 .stream = 7, .start = m->gpu_t + 1000, .dur = 20000 + (uint32_t)(rnd(m) % 5000),
						 .corr = c2 + 100000, .rt_corr = c2, .bytes = 4096u << (rnd(m) % 8) };
		n++;
	}
	if (m->launches % 16 == 0) {
		q[n].sync = (struct gp_rec_sync){ .type = GP_REC_SYNC, .sync_type = 3, .stream = 7, .start = m->t,
						 .end = m->gpu_t + 500, .corr = ++m->corr, .event = UINT32_MAX };
		m->t = m->gpu_t + 800;
		n++;
	}
	m->nq = n;
	m->iq = 0;
}

static const union gp_rec *mix_next(struct mix *m)
{
	if (m->iq >= m->nq)
		mix_launch(m);
	return &m->q[m->iq++];
}

/* --- push cost ----------------------------------------------------------------- */

/* The ring is cache-sized and each timed batch is short, so the number is
 * the CPU cost of a push (not memory bandwidth, which on this shared VM
 * swings by 5x from run to run); between batches the writer drains, so the
 * producer pays for re-owning the cache lines the writer read, as it does in
 * steady state. Many short runs, median. */
#define PUSH_RING 8192u
#define PUSH_BATCH 1024u
#define RUNS 301

static void bench_push(void)
{
	static double push[RUNS], floor_[RUNS];
	union gp_rec rec;
	memset(&rec, 0, sizeof(rec));
	rec.api = (struct gp_rec_api){ .type = GP_REC_HOOK_API, .class_flags = GP_API_LAUNCH, .api_id = 7,
				      .tid = 1, .start = 123456789, .dur = 4000, .corr = 1, .stream = 2 };
	union gp_rec *arr = aligned_alloc(64, (size_t)PUSH_RING * sizeof(union gp_rec));
	memset(arr, 0, (size_t)PUSH_RING * sizeof(union gp_rec));

	if (start("push.gpht", PUSH_RING))
		exit(1);
	uint64_t refused = 0;
	for (int r = 0; r < RUNS; r++) {
		/* floor: the same record stored into an array of the ring's size */
		double t0 = now_s();
		for (uint32_t i = 0; i < PUSH_BATCH; i++) {
			arr[(i + (uint32_t)r * PUSH_BATCH) & (PUSH_RING - 1)] = rec;
			__asm__ volatile("" ::: "memory");
		}
		floor_[r] = (now_s() - t0) * 1e9 / PUSH_BATCH;

		while (gp_collector_self_pending())
			usleep(200);
		t0 = now_s();
		for (uint32_t i = 0; i < PUSH_BATCH; i++)
			refused += gp_collector_emit(&rec, 1) != 0;
		push[r] = (now_s() - t0) * 1e9 / PUSH_BATCH;
		if (getenv("GP_BENCH_VERBOSE"))
			fprintf(stderr, "run %d: push %.2f ns, floor %.2f ns\n", r, push[r], floor_[r]);
	}
	gp_collector_stop();
	double p = median(push, RUNS), f = median(floor_, RUNS);
	printf("bench: collector_push_ns %.2f ns floor=%.2f ratio=%.2f\n", p, f, p / f);
	printf("bench: collector_push_refused %llu records\n", (unsigned long long)refused);
	free(arr);
}

/* --- sustained throughput --------------------------------------------------- */

struct prod {
	double seconds;
	double rate;        /* records/s to offer; 0 = as fast as possible with back-off */
	uint64_t sent;
	uint32_t seed;
};

static void *producer(void *arg)
{
	struct prod *p = arg;
	struct mix m;
	mix_init(&m, p->seed);
	uint64_t cap = gp_g.ring_records;
	double t0 = now_s(), end = t0 + p->seconds;
	while (1) {
		double t = now_s();
		if (t >= end)
			break;
		for (int k = 0; k < 256; k++) {
			if (p->rate == 0) {
				while (gp_collector_self_pending() > cap * 3 / 4)
					sched_yield();
			} else if ((double)p->sent >= p->rate * (t - t0)) {
				break; /* ahead of the offered rate */
			}
			gp_collector_emit(mix_next(&m), 1);
			p->sent++;
		}
		if (p->rate && (double)p->sent >= p->rate * (now_s() - t0)) {
			struct timespec ts = { 0, 200000 };
			nanosleep(&ts, NULL);
		}
	}
	return NULL;
}

static double last_writer_ns_per_rec;

static void run_producers(int np, double seconds, double total_rate, uint32_t ring, const char *name,
			  double *rate_out, uint64_t *drops_out, uint64_t *records_out, uint64_t *bytes_out)
{
	struct prod ps[8];
	pthread_t th[8];
	if (start(name, ring))
		exit(1);
	double t0 = now_s();
	for (int i = 0; i < np; i++) {
		ps[i] = (struct prod){ .seconds = seconds, .rate = total_rate / np, .seed = (uint32_t)i + 1 };
		pthread_create(&th[i], NULL, producer, &ps[i]);
	}
	uint64_t sent = 0;
	for (int i = 0; i < np; i++) {
		pthread_join(th[i], NULL);
		sent += ps[i].sent;
	}
	uint64_t drops = gp_collector_dropped();
	gp_collector_stop();
	double dt = now_s() - t0;
	*rate_out = (double)(sent - drops) / dt;
	last_writer_ns_per_rec = (double)gp_collector_last_writer_cpu_ns() / (double)(sent - drops);
	*drops_out = drops;
	*records_out = sent;
	*bytes_out = file_size(name);
}

static double cpu_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Reader throughput over the realistic-mix file (page cache warm): the bulk
 * path (gp_reader_next_block) and the per-group path (gp_reader_next), each
 * touching every record's type byte. Median of 5. Rates are per second of
 * this thread's CPU time (the reader is single-threaded and this shared VM
 * often runs at a load of 3 on 2 cores, so wall time would measure the
 * neighbours). The report needs >= 50M records/s per thread. */
static void bench_reader(const char *path)
{
	double blk[5], one[5];
	volatile unsigned sink = 0;
	for (int r = 0; r < 5; r++) {
		for (int mode = 0; mode < 2; mode++) {
			struct gp_reader *rd;
			char err[256];
			if (gp_reader_open(path, &rd, err, sizeof(err))) {
				fprintf(stderr, "bench_collector: %s\n", err);
				exit(1);
			}
			uint64_t n = 0;
			unsigned acc = 0;
			double t0 = cpu_s();
			if (mode == 0) {
				const union gp_rec *recs;
				size_t k;
				while (gp_reader_next_block(rd, &recs, &k, err, sizeof(err)) == 1) {
					for (size_t i = 0; i < k; i++)
						acc += recs[i].type;
					n += k;
				}
			} else {
				const union gp_rec *rec;
				uint32_t k;
				while (gp_reader_next(rd, &rec, &k, err, sizeof(err)) == 1) {
					acc += rec->type;
					n += k;
				}
			}
			double dt = cpu_s() - t0;
			sink += acc;
			(mode == 0 ? blk : one)[r] = (double)n / dt;
			gp_reader_close(rd);
		}
	}
	(void)sink;
	printf("bench: collector_reader_block_rate %.0f records/cpu-s\n", median(blk, 5));
	printf("bench: collector_reader_next_rate %.0f records/cpu-s\n", median(one, 5));
}

int main(void)
{
	const char *t = getenv("TMPDIR");
	snprintf(dir, sizeof(dir), "%s/gpbench-XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(dir)) {
		fprintf(stderr, "bench_collector: mkdtemp: %s\n", strerror(errno));
		return 1;
	}

	bench_push();

	double rate;
	uint64_t drops, recs, bytes;
	for (int np = 1; np <= 4; np *= 2) {
		char name[64], bname[64];
		snprintf(name, sizeof(name), "sustained%d.gpht", np);
		run_producers(np, 1.0, 0, 0, name, &rate, &drops, &recs, &bytes);
		snprintf(bname, sizeof(bname), "collector_sustained_%dp", np);
		printf("bench: %s %.0f records/s\n", bname, rate);
		printf("bench: %s_drops %llu records\n", bname, (unsigned long long)drops);
		printf("bench: %s_writer_capacity %.0f records/cpu-s\n", bname, 1e9 / last_writer_ns_per_rec);
		unlink(path_for(name));
	}
	run_producers(2, 1.0, 2e6, 0, "paced.gpht", &rate, &drops, &recs, &bytes);
	printf("bench: collector_paced_2M_offered %.0f records/s\n", (double)recs / 1.0);
	printf("bench: collector_paced_2M_drops %llu records\n", (unsigned long long)drops);
	unlink(path_for("paced.gpht"));

	/* bytes per record over the realistic mix: one producer, 2M records */
	{
		if (start("bytes.gpht", 0))
			return 1;
		struct mix m;
		mix_init(&m, 42);
		uint64_t cap = gp_g.ring_records, n = 2000000;
		for (uint64_t i = 0; i < n; i++) {
			while (gp_collector_self_pending() > cap * 3 / 4)
				sched_yield();
			gp_collector_emit(mix_next(&m), 1);
		}
		gp_collector_stop();
		double sz = (double)file_size("bytes.gpht");
		printf("bench: collector_bytes_per_record %.2f B\n", sz / (double)n);
		printf("bench: collector_disk_vs_raw %.3f ratio\n", sz / (double)n / GP_REC_SIZE);
		bench_reader(path_of("bytes.gpht"));
		if (getenv("GP_BENCH_KEEP"))
			fprintf(stderr, "kept %s\n", path_of("bytes.gpht"));
		else
			unlink(path_for("bytes.gpht"));
	}
	path_for("x");
	rmdir(dir);
	return 0;
}
