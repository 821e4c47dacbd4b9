/*
 * trace_reorder.c — rewrite a trace with CUPTI's queue-full records
 * (GP_REC_OVERHEAD, GP_OVH_COMMAND_BUFFER_FULL) delivered late, for the
 * report's tests (tests/e2e/test_report_queue_late.sh): the report must apply
 * such a record even when its call's op was folded before it came
 * (docs/metrics.md §3, late records). simcuda always writes the record before
 * its call's API record, as CUPTI does in one thread's buffer; this is the
 * order a client sees when buffers of different threads and kinds complete
 * seconds apart.
 *
 *   trace_reorder IN OUT LATE
 *
 * Every COMMAND_BUFFER_FULL record moves LATE record groups later (to the
 * end of the data when fewer follow), those moved past the same point
 * keeping their order reversed (reordered among themselves too); every other
 * group keeps its place.
 *
 *   trace_reorder --drop-kernels TEXT N,N,... IN OUT
 *
 * A second rewrite, for the cross-rank test (tests/e2e/test_multinode.sh):
 * the kernel records whose (mangled) name contains TEXT and whose place
 * among those records (0-based, in trace order) is listed are
 * left out, as a CUPTI buffer drop or a trace cut at its start loses them;
 * graph kernels are never counted or dropped.
 *
 *   trace_reorder --drop-host-callbacks IN OUT
 *
 * Another, for the host-callback test (tests/e2e/test_report_host_callback.sh):
 * every GP_REC_HOST_CALLBACK left out, the trace a library that did not
 * record callbacks' runs would have written (the tamper control).
 *
 *   trace_reorder --rename IN OUT OLD NEW [OLD NEW]...
 *
 * A third, for the report's escaping test (tests/e2e/test_report_hostile.sh):
 * every string whose text is OLD gets the bytes NEW instead (any bytes but
 * NUL: terminal escapes, newlines, invalid UTF-8), its continuation slots
 * resized, so every section that names a kernel meets the hostile name.
 *
 * Every way the header is copied, the data written as raw (uncompressed)
 * blocks of at most 4096 slots, the footer rebuilt with the new block count
 * and record counts (docs/format.md). Exit 0, or 1 with a message.
 * Single-threaded; the whole trace is held in memory (test traces are small).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gp_file.h"
#include "gp_format.h"
#include "gp_reader.h"

struct group {
	size_t off;     /* first slot in the copy */
	uint32_t n;
	size_t key;     /* sort key: position x 2 (+1 for a moved record) */
	size_t tie;     /* among moved records at one key: reversed        */
};

static int cmp_group(const void *a, const void *b)
{
	const struct group *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->tie < y->tie ? 1 : x->tie > y->tie ? -1 : 0;
}

static int put_block(FILE *f, uint32_t magic, uint64_t seq, const void *p, uint32_t nslots, uint32_t len)
{
	struct gp_block_header h = { .magic = magic, .seq = seq, .nslots = nslots, .stored_len = len, .raw_len = len };
	h.crc = gp_crc32c(gp_crc32c(0, &h, offsetof(struct gp_block_header, crc)), p, len);
	return fwrite(&h, sizeof h, 1, f) == 1 && fwrite(p, 1, len, f) == len ? 0 : -1;
}

/* Is place k listed in "N,N,..."? */
static int listed(const char *list, size_t k)
{
	for (const char *p = list; *p;) {
		char *e;
		unsigned long long v = strtoull(p, &e, 10);
		if (e == p)
			return 0;
		if (v == k)
			return 1;
		p = *e == ',' ? e + 1 : e;
	}
	return 0;
}

/* Copy the file header of in to out; returns it (malloc'd) or NULL with a
 * message. */
static unsigned char *copy_header(FILE *in, FILE *out)
{
	unsigned char hb[24];
	if (!in || !out || fread(hb, 1, sizeof hb, in) != sizeof hb) {
		fprintf(stderr, "trace_reorder: cannot copy the header: %s\n", strerror(errno));
		return NULL;
	}
	uint32_t hlen;
	memcpy(&hlen, hb + 20, 4);
	unsigned char *hdr = malloc(hlen);
	rewind(in);
	if (!hdr || fread(hdr, 1, hlen, in) != hlen || fwrite(hdr, 1, hlen, out) != hlen) {
		fprintf(stderr, "trace_reorder: cannot copy the header\n");
		free(hdr);
		return NULL;
	}
	return hdr;
}

/* The footer: the counts read less the dropped records (of type
 * dropped_type), plus the slots the renamed strings grew by (the record
 * count counts slots), the new block count. */
static int put_footer(FILE *out, const struct gp_trace_end *end, uint64_t seq, size_t dropped, unsigned dropped_type,
		      int64_t grown)
{
	struct gp_footer_entry fe[GP_FOOTER_MAX_ENTRIES];
	uint32_t nf = 0;
	fe[nf++] = (struct gp_footer_entry){ GP_FT_RECORDS, 0, end->records - dropped + (uint64_t)grown };
	fe[nf++] = (struct gp_footer_entry){ GP_FT_BLOCKS, 0, seq };
	fe[nf++] = (struct gp_footer_entry){ GP_FT_DROPPED_RING, 0, end->dropped_ring };
	fe[nf++] = (struct gp_footer_entry){ GP_FT_DROPPED_CUPTI, 0, end->dropped_cupti };
	fe[nf++] = (struct gp_footer_entry){ GP_FT_WRITE_ERRORS, 0, end->write_errors };
	fe[nf++] = (struct gp_footer_entry){ GP_FT_END_REASON, 0, (uint64_t)(int64_t)end->end_reason };
	fe[nf++] = (struct gp_footer_entry){ GP_FT_LOST_AFTER_STOP, 0, end->lost_after_stop };
	for (unsigned t = 0; t < GP_REC_TYPE_COUNT; t++)
		if (end->footer_records[t])
			fe[nf++] = (struct gp_footer_entry){ GP_FT_TYPE_BASE + t, 0,
							     end->footer_records[t] - (t == dropped_type ? dropped : 0) };
	return put_block(out, GP_FOOTER_MAGIC, seq, fe, nf, nf * (uint32_t)sizeof *fe);
}

/* The renamed string of string record rec, or NULL: NEW of the first pair
 * (OLD, NEW) in pairs[0..2n) whose OLD is rec's text. */
static const char *renamed(const union gp_rec *rec, char **pairs, size_t n)
{
	for (size_t i = 0; rec->type == GP_REC_STRING && i < n; i++)
		if (strlen(pairs[2 * i]) == rec->string.len && !memcmp(rec->string.text, pairs[2 * i], rec->string.len))
			return pairs[2 * i + 1];
	return NULL;
}

/* Write string record rec with text to into slots (room for its slots):
 * the head's first 16 bytes inline, the rest in raw continuation slots.
 * Returns the slots written. */
static uint32_t put_string(union gp_rec *slots, const union gp_rec *rec, const char *to)
{
	uint32_t len = (uint32_t)strlen(to), n = 1 + gp_string_cont_slots(len);
	memset(slots, 0, n * sizeof *slots);
	slots[0].string = rec->string;
	slots[0].string.len = len;
	memset(slots[0].string.text, 0, GP_STRING_INLINE);
	/* the text runs on from the head into the continuation slots */
	memcpy((char *)slots + offsetof(struct gp_rec_string, text), to, len);
	return n;
}

/* What a rename or a drop did, in one line. */
static void say_dropped(size_t npairs, const char *text, int drop_hostcb, size_t dropped, size_t seen)
{
	if (npairs)
		printf("trace_reorder: %zu names replaced\n", npairs);
	else if (drop_hostcb)
		printf("trace_reorder: %zu host callback records dropped\n", dropped);
	else
		printf("trace_reorder: %zu of %zu *%s* kernels dropped\n", dropped, seen, text);
}

int main(int argc, char **argv)
{
	char **pairs = NULL;
	size_t npairs = 0;
	if (argc >= 6 && argc % 2 == 0 && !strcmp(argv[1], "--rename")) {
		pairs = argv + 4;
		npairs = (size_t)(argc - 4) / 2;
		argv += 1;
		argc = 4;
	}
	const char *text = NULL, *drop = NULL;
	int drop_hostcb = argc == 4 && !strcmp(argv[1], "--drop-host-callbacks");
	argv += drop_hostcb; /* then IN OUT, as --drop-kernels leaves them */
	argc -= drop_hostcb;
	if (argc == 6 && !strcmp(argv[1], "--drop-kernels")) {
		text = argv[2];
		drop = argv[3];
		argv += 3;
		argc -= 3;
	}
	if (argc != (text || drop_hostcb ? 3 : 4) || (text && !*text)) {
		fprintf(stderr, "usage: trace_reorder IN OUT LATE\n"
				"       trace_reorder --drop-kernels TEXT N,N,... IN OUT\n"
				"       trace_reorder --drop-host-callbacks IN OUT\n"
				"       trace_reorder --rename IN OUT OLD NEW [OLD NEW]...\n");
		return 1;
	}
	size_t late = text || npairs || drop_hostcb ? 0 : strtoull(argv[3], NULL, 10);
	uint32_t *ids = NULL; /* string ids whose text contains text */
	size_t nids = 0, capids = 0, seen = 0, dropped = 0;
	char err[512];
	struct gp_reader *r;
	if (gp_reader_open(argv[1], &r, err, sizeof err) < 0) {
		fprintf(stderr, "trace_reorder: %s\n", err);
		return 1;
	}
	union gp_rec *slots = NULL;
	struct group *g = NULL;
	size_t nslots = 0, capslots = 0, ng = 0, capg = 0, moved = 0;
	int64_t grown = 0;
	const union gp_rec *rec;
	uint32_t n;
	int rc;
	while ((rc = gp_reader_next(r, &rec, &n, err, sizeof err)) == 1) {
		const char *to = renamed(rec, pairs, npairs);
		uint32_t room = to ? 1 + gp_string_cont_slots((uint32_t)strlen(to)) : n;
		if (nslots + room > capslots) {
			capslots = (nslots + room) * 2;
			slots = realloc(slots, capslots * sizeof *slots);
		}
		if (ng == capg) {
			capg = capg ? capg * 2 : 4096;
			g = realloc(g, capg * sizeof *g);
		}
		if (!slots || !g) {
			fprintf(stderr, "trace_reorder: out of memory\n");
			return 1;
		}
		/* a string's text runs on from its first slot into the next ones */
		if (text && rec->type == GP_REC_STRING &&
		    memmem(rec->string.text, rec->string.len, text, strlen(text))) {
			if (nids == capids) {
				capids = capids ? capids * 2 : 16;
				ids = realloc(ids, capids * sizeof *ids);
				if (!ids) {
					fprintf(stderr, "trace_reorder: out of memory\n");
					return 1;
				}
			}
			ids[nids++] = rec->string.id;
		}
		if (text && rec->type == GP_REC_KERNEL && !(rec->kernel.flags & GP_OPF_GRAPH)) {
			size_t k = 0;
			while (k < nids && ids[k] != rec->kernel.name)
				k++;
			if (k < nids && listed(drop, seen++)) {
				dropped++;
				continue;
			}
		}
		if (drop_hostcb && rec->type == GP_REC_HOST_CALLBACK) {
			dropped++;
			continue;
		}
		if (to) {
			uint32_t was = n;
			n = put_string(slots + nslots, rec, to);
			grown += (int64_t)n - (int64_t)was;
		}
		else
			memcpy(slots + nslots, rec, n * sizeof *slots);
		g[ng] = (struct group){ nslots, n, 2 * ng, ng };
		if (rec->type == GP_REC_OVERHEAD && rec->overhead.kind == GP_OVH_COMMAND_BUFFER_FULL) {
			g[ng].key = 2 * (ng + late) + 1;
			moved++;
		}
		nslots += n;
		ng++;
	}
	if (rc < 0) {
		fprintf(stderr, "trace_reorder: %s\n", err);
		return 1;
	}
	const struct gp_trace_end *end = gp_reader_end(r);
	if (!end->complete) {
		fprintf(stderr, "trace_reorder: %s has no footer\n", argv[1]);
		return 1;
	}
	qsort(g, ng, sizeof *g, cmp_group);
	/* the header, as it is */
	FILE *in = fopen(argv[1], "rb"), *out = fopen(argv[2], "wb");
	unsigned char *hdr = copy_header(in, out);
	if (!hdr)
		return 1;
	/* the data, in blocks of whole groups */
	union gp_rec *blk = malloc(GP_BLOCK_MAX_SLOTS * sizeof *blk);
	uint64_t seq = 0;
	uint32_t nb = 0;
	for (size_t i = 0; i <= ng; i++) {
		if (nb && (i == ng || nb + g[i].n > GP_BLOCK_TARGET_SLOTS)) {
			if (put_block(out, GP_BLOCK_MAGIC, seq++, blk, nb, nb * (uint32_t)sizeof *blk)) {
				fprintf(stderr, "trace_reorder: write failed\n");
				return 1;
			}
			nb = 0;
		}
		if (i < ng) {
			memcpy(blk + nb, slots + g[i].off, g[i].n * sizeof *blk);
			nb += g[i].n;
		}
	}
	if (put_footer(out, end, seq, dropped, drop_hostcb ? GP_REC_HOST_CALLBACK : GP_REC_KERNEL, grown) ||
	    fclose(out)) {
		fprintf(stderr, "trace_reorder: write failed\n");
		return 1;
	}
	fclose(in);
	gp_reader_close(r);
	if (npairs || text || drop_hostcb)
		say_dropped(npairs, text, drop_hostcb, dropped, seen);
	else
		printf("trace_reorder: %zu of %zu record groups moved %zu later\n", moved, ng, late);
	free(ids);
	free(slots);
	free(g);
	free(hdr);
	free(blk);
	return 0;
}
