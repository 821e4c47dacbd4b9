/*
 * nvtx.c — NVTX injection: InitializeInjectionNvtx2, exported so that an
 * application run with NVTX_INJECTION64_PATH=libgpuphase.so sends its NVTX
 * core calls (mark, range start/end, push/pop; ASCII, wide and Ex variants)
 * here. Each becomes a GP_REC_MARKER on the calling thread, so the report can
 * name operators by their innermost range; nvtx:NAME iteration markers are
 * detected here too.
 *
 * Called by NVTX's own initialisation (once, on the first NVTX call of the
 * process) and then on application threads. Markers are recorded whenever the
 * library runs (also outside the window: ranges opened before a window must
 * still name the operators inside it). Push depth is per thread; range ids of
 * start/end are process-unique (one atomic counter).
 */
#define NVTX_NO_IMPL
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include <nvtx3/nvToolsExt.h>

#include "gp_collector.h"
#include "gp_lib.h"

int gp_nvtx_used;
static GP_TLS int gp_nvtx_depth;
static uint64_t gp_nvtx_next_id = 1;

/* UTF-8 of a wide string, cut to fit. */
static const char *gp_nvtx_utf8(const wchar_t *w, char *buf, size_t len)
{
	size_t o = 0;
	for (; w && *w && o + 4 < len; w++) {
		uint32_t c = (uint32_t)*w;
		if (c < 0x80) {
			buf[o++] = (char)c;
		} else if (c < 0x800) {
			buf[o++] = (char)(0xc0 | (c >> 6));
			buf[o++] = (char)(0x80 | (c & 0x3f));
		} else if (c < 0x10000) {
			buf[o++] = (char)(0xe0 | (c >> 12));
			buf[o++] = (char)(0x80 | ((c >> 6) & 0x3f));
			buf[o++] = (char)(0x80 | (c & 0x3f));
		} else {
			buf[o++] = (char)(0xf0 | (c >> 18));
			buf[o++] = (char)(0x80 | ((c >> 12) & 0x3f));
			buf[o++] = (char)(0x80 | ((c >> 6) & 0x3f));
			buf[o++] = (char)(0x80 | (c & 0x3f));
		}
	}
	buf[o] = 0;
	return buf;
}

static const char *gp_nvtx_attr_text(const nvtxEventAttributes_t *a, char *buf, size_t len)
{
	if (!a)
		return NULL;
	if (a->messageType == NVTX_MESSAGE_TYPE_ASCII)
		return a->message.ascii;
	if (a->messageType == NVTX_MESSAGE_TYPE_UNICODE)
		return gp_nvtx_utf8(a->message.unicode, buf, len);
	return NULL;
}

/* errno is the program's: whatever fails in here (a ring that cannot be
 * allocated, CUPTI calls of a window transition) must not change it. */
static void gp_nvtx_record_in(uint8_t kind, const char *text, uint64_t id);
static void gp_nvtx_record(uint8_t kind, const char *text, uint64_t id)
{
	int saved = errno;
	gp_nvtx_record_in(kind, text, id);
	errno = saved;
}

static void gp_nvtx_record_in(uint8_t kind, const char *text, uint64_t id)
{
	uint64_t ts = gp_now();
	uint32_t tid = gp_state_tid();
	if (text && (kind == GP_MARK_PUSH || kind == GP_MARK_START))
		gp_window_nvtx(text, tid);
	if (__atomic_load_n(&gp_state, __ATOMIC_ACQUIRE) != GP_STATE_RUNNING && !gp_lib_ensure_started())
		return;
	union gp_rec r;
	memset(&r, 0, sizeof r);
	r.marker.type = GP_REC_MARKER;
	r.marker.kind = kind;
	r.marker.tid = tid;
	r.marker.ts = ts;
	r.marker.id = id;
	r.marker.name = text ? gp_collector_intern(text, strlen(text)) : 0;
	gp_collector_emit(&r, 1);
}

static void NVTX_API gp_nvtx_mark_ex(const nvtxEventAttributes_t *a)
{
	char buf[256];
	gp_nvtx_record(GP_MARK_INSTANT, gp_nvtx_attr_text(a, buf, sizeof buf), 0);
}
static void NVTX_API gp_nvtx_mark_a(const char *m)
{
	gp_nvtx_record(GP_MARK_INSTANT, m, 0);
}
static void NVTX_API gp_nvtx_mark_w(const wchar_t *m)
{
	char buf[256];
	gp_nvtx_record(GP_MARK_INSTANT, gp_nvtx_utf8(m, buf, sizeof buf), 0);
}

static nvtxRangeId_t gp_nvtx_start(const char *text)
{
	uint64_t id = __atomic_fetch_add(&gp_nvtx_next_id, 1, __ATOMIC_RELAXED);
	gp_nvtx_record(GP_MARK_START, text, id);
	return id;
}
static nvtxRangeId_t NVTX_API gp_nvtx_start_ex(const nvtxEventAttributes_t *a)
{
	char buf[256];
	return gp_nvtx_start(gp_nvtx_attr_text(a, buf, sizeof buf));
}
static nvtxRangeId_t NVTX_API gp_nvtx_start_a(const char *m)
{
	return gp_nvtx_start(m);
}
static nvtxRangeId_t NVTX_API gp_nvtx_start_w(const wchar_t *m)
{
	char buf[256];
	return gp_nvtx_start(gp_nvtx_utf8(m, buf, sizeof buf));
}
static void NVTX_API gp_nvtx_end(nvtxRangeId_t id)
{
	gp_nvtx_record(GP_MARK_END, NULL, id);
}

static int gp_nvtx_push(const char *text)
{
	int level = gp_nvtx_depth++;
	gp_nvtx_record(GP_MARK_PUSH, text, (uint64_t)level);
	return level;
}
static int NVTX_API gp_nvtx_push_ex(const nvtxEventAttributes_t *a)
{
	char buf[256];
	return gp_nvtx_push(gp_nvtx_attr_text(a, buf, sizeof buf));
}
static int NVTX_API gp_nvtx_push_a(const char *m)
{
	return gp_nvtx_push(m);
}
static int NVTX_API gp_nvtx_push_w(const wchar_t *m)
{
	char buf[256];
	return gp_nvtx_push(gp_nvtx_utf8(m, buf, sizeof buf));
}
static int NVTX_API gp_nvtx_pop(void)
{
	if (gp_nvtx_depth <= 0)
		return -1;
	int level = --gp_nvtx_depth;
	gp_nvtx_record(GP_MARK_POP, NULL, (uint64_t)level);
	return level;
}

static int gp_nvtx_inject(NvtxGetExportTableFunc_t get_table);
/* NVTX's initialisation, on the program's first NVTX call: errno stays the
 * program's on every path. */
GP_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_table);
GP_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_table)
{
	int saved = errno;
	int rc = gp_nvtx_inject(get_table);
	errno = saved;
	return rc;
}

static int gp_nvtx_inject(NvtxGetExportTableFunc_t get_table)
{
	if (!get_table || __atomic_load_n(&gp_state, __ATOMIC_ACQUIRE) == GP_STATE_INERT)
		return 0;
	const NvtxExportTableCallbacks *cb = (const NvtxExportTableCallbacks *)get_table(NVTX_ETID_CALLBACKS);
	if (!cb || cb->struct_size < sizeof *cb || !cb->GetModuleFunctionTable)
		return 0;
	NvtxFunctionTable table = NULL;
	unsigned int size = 0;
	if (!cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &table, &size) || !table)
		return 0;
	static const struct {
		unsigned id;
		NvtxFunctionPointer fn;
	} fns[] = {
		{NVTX_CBID_CORE_MarkEx, (NvtxFunctionPointer)gp_nvtx_mark_ex},
		{NVTX_CBID_CORE_MarkA, (NvtxFunctionPointer)gp_nvtx_mark_a},
		{NVTX_CBID_CORE_MarkW, (NvtxFunctionPointer)gp_nvtx_mark_w},
		{NVTX_CBID_CORE_RangeStartEx, (NvtxFunctionPointer)gp_nvtx_start_ex},
		{NVTX_CBID_CORE_RangeStartA, (NvtxFunctionPointer)gp_nvtx_start_a},
		{NVTX_CBID_CORE_RangeStartW, (NvtxFunctionPointer)gp_nvtx_start_w},
		{NVTX_CBID_CORE_RangeEnd, (NvtxFunctionPointer)gp_nvtx_end},
		{NVTX_CBID_CORE_RangePushEx, (NvtxFunctionPointer)gp_nvtx_push_ex},
		{NVTX_CBID_CORE_RangePushA, (NvtxFunctionPointer)gp_nvtx_push_a},
		{NVTX_CBID_CORE_RangePushW, (NvtxFunctionPointer)gp_nvtx_push_w},
		{NVTX_CBID_CORE_RangePop, (NvtxFunctionPointer)gp_nvtx_pop},
	};
	for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
		if (fns[i].id < size && table[fns[i].id])
			*table[fns[i].id] = fns[i].fn;
	gp_nvtx_used = 1;
	return 1;
}
