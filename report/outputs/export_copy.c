/*
 * export_copy.c — what the exports say of a copy's or a set's memory, shared
 * by the Chrome trace and SQLite exports: the CUPTI memory kinds
 * (CUpti_ActivityMemoryKind) of a memcpy's source and destination, and the
 * names Kineto gives copies and sets ("Memcpy HtoD (Pageable -> Device)",
 * "Memset (Unknown)"), which Holistic Trace Analysis reads to tell memory
 * from computation.
 *
 * Invariant: a kind the trace does not record is UNKNOWN, never a guess. The
 * trace keeps, per copy, CUPTI's copy kind (whose letters say which side is
 * device memory, an array or host memory) and one bit, GP_COPYF_PAGEABLE,
 * set when either side was pageable host memory. So a device side is Device,
 * an array side Array, the host side of a one-host-side copy Pageable when
 * the bit is set and Unknown when it is not (pinned and managed memory are
 * not told apart in the trace), both sides of a host-to-host copy Unknown;
 * a set's memory is Unknown. Pure functions, any thread.
 */
#include <stdio.h>

#include "export.h"

/* CUpti_ActivityMemoryKind values (cupti_activity.h) */
enum { GP_MEM_UNKNOWN = 0, GP_MEM_PAGEABLE = 1, GP_MEM_DEVICE = 3, GP_MEM_ARRAY = 4 };

/* CUpti_ActivityMemcpyKind 1..10 as Kineto writes them, and the memory
 * class of each side: H host, D device, A array. */
static const struct {
	const char *name;
	char src, dst;
} gp_copy_kinds[] = {
	[1] = { "HtoD", 'H', 'D' },  [2] = { "DtoH", 'D', 'H' },  [3] = { "HtoA", 'H', 'A' },
	[4] = { "AtoH", 'A', 'H' },  [5] = { "AtoA", 'A', 'A' },  [6] = { "AtoD", 'A', 'D' },
	[7] = { "DtoA", 'D', 'A' },  [8] = { "DtoD", 'D', 'D' },  [9] = { "HtoH", 'H', 'H' },
	[10] = { "PtoP", 'D', 'D' },
};

static unsigned gp_copy_side(char side, int one_host_side, int pageable)
{
	switch (side) {
	case 'D':
		return GP_MEM_DEVICE;
	case 'A':
		return GP_MEM_ARRAY;
	default: /* host memory: only the pageable bit is known, and only where one side is host */
		return one_host_side && pageable ? GP_MEM_PAGEABLE : GP_MEM_UNKNOWN;
	}
}

void gp_export_copy_sides(const struct gp_an_op *op, unsigned *src, unsigned *dst)
{
	*src = *dst = GP_MEM_UNKNOWN;
	if (op->kind != GP_OP_MEMCPY || op->copy_kind == 0 ||
	    op->copy_kind >= sizeof gp_copy_kinds / sizeof gp_copy_kinds[0])
		return;
	char s = gp_copy_kinds[op->copy_kind].src, d = gp_copy_kinds[op->copy_kind].dst;
	int one_host_side = (s == 'H') != (d == 'H');
	*src = gp_copy_side(s, one_host_side, op->pageable);
	*dst = gp_copy_side(d, one_host_side, op->pageable);
}

const char *gp_export_mem_kind_name(unsigned kind)
{
	static const char *const names[] = { "Unknown", "Pageable", "Pinned", "Device",
					     "Array", "Managed", "Device Static", "Managed Static" };
	return kind < sizeof names / sizeof names[0] ? names[kind] : "Unknown";
}

void gp_export_kineto_name(const struct gp_an_op *op, char *buf, size_t n)
{
	if (op->kind == GP_OP_MEMSET) {
		snprintf(buf, n, "Memset (%s)", gp_export_mem_kind_name(GP_MEM_UNKNOWN));
		return;
	}
	unsigned src, dst;
	gp_export_copy_sides(op, &src, &dst);
	const char *kind = op->copy_kind > 0 && op->copy_kind < sizeof gp_copy_kinds / sizeof gp_copy_kinds[0]
				   ? gp_copy_kinds[op->copy_kind].name
				   : "Unknown";
	snprintf(buf, n, "Memcpy %s (%s -> %s)", kind, gp_export_mem_kind_name(src), gp_export_mem_kind_name(dst));
}
