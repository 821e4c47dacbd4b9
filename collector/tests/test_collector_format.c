/*
 * test_collector_format.c — the trace file format end to end: what goes in
 * through gp_collector_emit/intern comes out of gp_reader byte for byte, with
 * the header and footer the contract (docs/format.md) promises; a file cut at
 * any byte reads up to its last whole block and says how much was cut; corrupt
 * checksums, bad headers and non-trace inputs give clear errors.
 * Each Criterion test runs in its own process, so collector state is fresh.
 */
#include <errno.h>
#include <stdint.h>
#include "tutil.h"
#include "gp_file.h"

static union gp_rec mk_api(uint32_t i)
{
	union gp_rec r;
	memset(&r, 0, sizeof(r));
	r.api.type = GP_REC_HOOK_API;
	r.api.class_flags = GP_API_LAUNCH;
	r.api.api_id = (uint16_t)(i % 7);
	r.api.tid = 1234;
	r.api.start = 1000000ull + i * 5000ull;
	r.api.dur = 3000 + i % 100;
	r.api.corr = i;
	r.api.stream = 2;
	return r;
}

/* Skip the GP_REC_THREAD record (and its name string) that every ring starts
 * with; returns the index of the first group after them. */
static size_t skip_thread_intro(const struct tu_trace *t, size_t g)
{
	while (g < t->ngroups && (t->recs[t->group[g]].type == GP_REC_THREAD ||
				  t->recs[t->group[g]].type == GP_REC_STRING))
		g++;
	return g;
}

Test(format, round_trip)
{
	const char *path = tu_path("rt.gpht");
	struct gp_kv kv[] = { { "window", "all" }, { "cuda_runtime", "13000" } };
	struct gp_collector_config c = tu_config(path, 1024);
	c.kv = kv;
	c.nkv = 2;
	c.clock_offset_ns = -42;
	cr_assert_eq(gp_collector_start(&c), 0);
	cr_assert_eq(gp_collector_start(&c), -EBUSY, "a second start is refused");

	/* a long string (3000 bytes, not a multiple of anything) and a stack */
	static char longname[3000];
	for (size_t i = 0; i < sizeof(longname); i++)
		longname[i] = (char)('a' + i % 26);
	uint32_t id_long = gp_collector_intern(longname, sizeof(longname));
	uint32_t id_k = gp_collector_intern("kernel_a", 8);
	cr_assert_gt(id_long, 0);
	cr_assert_gt(id_k, 0);
	cr_assert_neq(id_long, id_k);
	cr_assert_eq(gp_collector_intern("kernel_a", 8), id_k, "seen text: same id");

	const uint32_t N = 10000; /* several blocks */
	uint64_t refused = 0;
	for (uint32_t i = 0; i < N; i++) {
		union gp_rec r = mk_api(i);
		while (gp_collector_emit(&r, 1) == -ENOBUFS) {
			refused++;
			usleep(100);
		}
	}
	cr_assert_eq(gp_collector_dropped(), refused);
	union gp_rec st[3];
	memset(st, 0, sizeof(st));
	st[0].stack.type = GP_REC_STACK;
	st[0].stack.id = 9;
	st[0].stack.depth = 7; /* 2 inline + 5 in 2 continuation slots */
	uint64_t pcs[8] = { 1, 2, 3, 4, 5, 6, 7, 0 };
	memcpy(st[0].stack.pc, pcs, 16);
	memcpy(&st[1], pcs + 2, 32);
	memcpy(&st[2], pcs + 6, 16);
	cr_assert_eq(gp_collector_emit(st, 2), -EINVAL, "wrong slot count refused");
	cr_assert_eq(gp_collector_emit(st, 3), 0);
	gp_collector_stop();
	gp_collector_stop(); /* idempotent */
	cr_assert_eq(gp_collector_emit(st, 3), -EPIPE);

	struct stat sb;
	cr_assert_eq(stat(path, &sb), 0);
	cr_assert_eq(sb.st_mode & 0777, 0600);

	struct gp_reader *rd;
	char err[256];
	cr_assert_eq(gp_reader_open(path, &rd, err, sizeof(err)), 0, "%s", err);
	const struct gp_trace_info *in = gp_reader_info(rd);
	cr_assert_eq(in->version, GP_FORMAT_VERSION);
	cr_assert_eq(in->clock_id, CLOCK_MONOTONIC);
	cr_assert_eq(in->clock_offset_ns, -42);
	cr_assert_eq(in->pid, (uint32_t)getpid());
	int seen_window = 0, seen_host = 0, seen_cmd = 0;
	for (size_t i = 0; i < in->nkv; i++) {
		if (!strcmp(in->keys[i], "window"))
			seen_window = !strcmp(in->values[i], "all");
		seen_host |= !strcmp(in->keys[i], "host");
		seen_cmd |= !strcmp(in->keys[i], "cmdline");
	}
	cr_assert(seen_window && seen_host && seen_cmd);
	gp_reader_close(rd);

	struct tu_trace t = tu_read(path);
	cr_assert_eq(t.rc, 0, "%s", t.err);
	cr_assert_eq(t.end.complete, 1);
	cr_assert_eq(t.end.truncated_bytes, 0);
	cr_assert_eq(t.end.dropped_ring, refused, "every refused emit is a counted drop");
	cr_assert_gt(t.end.blocks, 2);
	size_t g = 0;
	/* the ring opens with the thread's name string and GP_REC_THREAD */
	cr_assert(t.recs[t.group[0]].type == GP_REC_THREAD ||
		  (t.recs[t.group[0]].type == GP_REC_STRING && t.recs[t.group[1]].type == GP_REC_THREAD));
	/* the interned strings come in order, ahead of their users */
	for (; g < t.ngroups && t.recs[t.group[g]].type != GP_REC_HOOK_API; g++) {
		const union gp_rec *h = &t.recs[t.group[g]];
		if (h->type != GP_REC_STRING || h->string.id != id_long)
			continue;
		static char back[4000];
		uint32_t ns = gp_rec_slots(h);
		cr_assert_eq(ns, 1 + (3000 - 16 + 31) / 32);
		cr_assert_eq(gp_string_text(h, ns, back, sizeof(back)), 3000);
		cr_assert_eq(memcmp(back, longname, 3000), 0, "long string intact");
	}
	for (uint32_t i = 0; i < N; i++, g++) {
		union gp_rec want = mk_api(i);
		cr_assert_lt(g, t.ngroups);
		cr_assert_eq(memcmp(&t.recs[t.group[g]], &want, 32), 0, "record %u intact", i);
	}
	cr_assert_eq(memcmp(&t.recs[t.group[g]], st, sizeof(st)), 0, "stack group intact");
	g++;
	/* the writer closes each ring that lost records with a GP_REC_DROPS */
	if (refused) {
		cr_assert_lt(g, t.ngroups);
		const union gp_rec *d = &t.recs[t.group[g++]];
		cr_assert_eq(d->type, GP_REC_DROPS);
		cr_assert_eq(d->drops.source, GP_DROP_RING);
		cr_assert_eq(d->drops.tid, (uint32_t)gettid());
		cr_assert_eq(d->drops.dropped, refused);
	}
	cr_assert_eq(g, t.ngroups, "nothing after the last record");
	cr_assert_eq(t.end.records, t.nslots);
	cr_assert_eq(t.end.footer_records[GP_REC_HOOK_API], N);
	cr_assert_eq(t.end.footer_records[GP_REC_STACK], 1);
	cr_assert_eq(t.end.footer_records[GP_REC_THREAD], 1);
	tu_free(&t);
	(void)skip_thread_intro;
}
