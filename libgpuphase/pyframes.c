/*
 * pyframes.c — the calling thread's CPython stack, read in place.
 *
 * Called from stacks.c (gp_stacks_capture) on application threads, inside a
 * CUDA hook, whenever a stack is captured. When the process runs CPython,
 * the thread's frame chain is read through the interpreter's structures the
 * way sampling profilers read it, but from inside the process: no Python
 * code runs, no reference count changes, the GIL is not taken (ctypes
 * released it before calling the CUDA library; this thread's frames cannot
 * change while it is inside that call, so reading them is safe).
 *
 * Detection happens once, at the first capture, at run time: the interpreter
 * is found by its exported symbols (PyGILState_GetThisThreadState: a TLS
 * read that neither runs Python nor takes the GIL; Py_Version: the exact
 * version). There is no build-time dependency on Python. Field offsets come
 * from a table of the versions whose layout was checked against their
 * headers; any other version (or a Python without Py_Version, i.e. older
 * than 3.11) gets native frames only, and one log line says so. Adding a
 * version = one table row, checked with tests/e2e/pyframes_offsets.c.
 *
 * Each Python frame becomes one pseudo pc (GP_PC_PYFRAME | string id of
 * "file.py:LINE (function)", gp_format.h). Naming a frame decodes the code
 * object's line table, so names are cached per stack table (stacks.c: one
 * per capturing thread) by (code object, instruction offset, first line):
 * a frame seen before costs one probe. A freed code object whose address is
 * reused by one with the same first line and offset would keep the old
 * name; the first-line check makes that rare, not impossible.
 *
 * Invariants: nothing here allocates, locks or calls into the interpreter
 * beyond the one TLS getter; every pointer read is checked for NULL and the
 * walk is bounded (GP_PY_MAXFRAMES); a cache is used by one thread at a
 * time (its stack table's owner).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "gp_collector.h"
#include "gp_lib.h"

#define GP_PY_MAXFRAMES 16u

/* Offsets (bytes) into the interpreter's structures for one version, as
 * printed by tests/e2e/pyframes_offsets.c compiled against its headers. */
struct gp_py_layout {
	unsigned long version; /* Py_Version >> 16: 0x030b = 3.11 */
	unsigned direct;       /* 1: ts_frame is the frame (3.13); 0: a _PyCFrame */
	unsigned ts_frame;     /* PyThreadState.cframe / .current_frame        */
	unsigned cf_current;   /* _PyCFrame.current_frame                      */
	unsigned fr_code;      /* _PyInterpreterFrame.f_code / .f_executable   */
	unsigned fr_previous;  /* _PyInterpreterFrame.previous                 */
	unsigned fr_instr;     /* _PyInterpreterFrame.prev_instr / .instr_ptr  */
	unsigned fr_owner;     /* _PyInterpreterFrame.owner (char)             */
	unsigned co_filename, co_qualname, co_firstlineno, co_linetable, co_code;
	unsigned bytes_size, bytes_data;                 /* PyBytesObject   */
	unsigned str_length, str_state, str_ascii_data; /* PyASCIIObject   */
};

/* x86_64 / aarch64 (LP64) builds without Py_DEBUG (Py_TRACE_REFS) or free
 * threading (refused below by the interpreter's file name). */
static const struct gp_py_layout gp_py_layouts[] = {
	{ 0x030b, 0, 56, 8, 32, 48, 56, 69, 112, 128, 72, 136, 184, 16, 32, 16, 32, 48 },
	{ 0x030c, 0, 56, 0, 0, 8, 56, 70, 112, 128, 68, 136, 192, 16, 32, 16, 32, 40 },
	{ 0x030d, 1, 72, 0, 0, 8, 56, 70, 112, 128, 68, 136, 200, 16, 32, 16, 32, 40 },
};
#define GP_PY_OWNED_BY_CSTACK 3 /* a C entry shim frame (3.12+): not the program's */

enum { GP_PY_UNKNOWN = 0, GP_PY_NONE, GP_PY_ON };
static int gp_py_state;
static pthread_once_t gp_py_once = PTHREAD_ONCE_INIT;
static const struct gp_py_layout *gp_py;
static void *(*gp_py_tstate)(void);
static uintptr_t gp_py_code_type; /* &PyCode_Type: what a frame's code must be */


static void gp_pyframes_detect(void)
{
	gp_py_state = GP_PY_NONE;
	void *get = dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState");
	if (!get) {
		dlerror();
		return; /* not a Python process: nothing to say */
	}
	const unsigned long *ver = dlsym(RTLD_DEFAULT, "Py_Version");
	if (!ver) {
		dlerror();
		gp_log(GP_LOG_ERROR, "Python without Py_Version (older than 3.11): Python frames not read, native "
				    "frames only");
		return;
	}
	/* A free-threaded build (python3.13t: libpython3.13t.so) has another
	 * object header, so none of the offsets below hold there. */
	Dl_info di;
	if (dladdr(get, &di) && di.dli_fname) {
		const char *b = strrchr(di.dli_fname, '/');
		b = b ? b + 1 : di.dli_fname;
		const char *v = strstr(b, "python3.");
		if (v) {
			v += 8;
			while (*v >= '0' && *v <= '9')
				v++;
			if (*v == 't') {
				gp_log(GP_LOG_ERROR, "free-threaded Python (%s): Python frames not read, native frames only",
				       b);
				return;
			}
		}
	}
	for (size_t i = 0; i < sizeof gp_py_layouts / sizeof gp_py_layouts[0]; i++)
		if (gp_py_layouts[i].version == *ver >> 16)
			gp_py = &gp_py_layouts[i];
	if (!gp_py) {
		gp_log(GP_LOG_ERROR, "Python %lu.%lu: frame layout not known to gpuphase, native frames only",
		       (*ver >> 24) & 0xff, (*ver >> 16) & 0xff);
		return;
	}
	gp_py_code_type = (uintptr_t)dlsym(RTLD_DEFAULT, "PyCode_Type");
	if (!gp_py_code_type) {
		dlerror();
		gp_py = NULL;
		gp_log(GP_LOG_ERROR, "Python without PyCode_Type: native frames only");
		return;
	}
	*(void **)&gp_py_tstate = get;
	gp_py_state = GP_PY_ON;
	gp_log(GP_LOG_INFO, "Python %lu.%lu: Python frames in call stacks", (*ver >> 24) & 0xff, (*ver >> 16) & 0xff);
}

static inline uintptr_t gp_py_ptr(uintptr_t base, unsigned off)
{
	uintptr_t v;
	memcpy(&v, (const void *)(base + off), sizeof v);
	return v;
}

/* A str's text if it is compact ASCII (file names and identifiers almost
 * always are), else "?". */
static const char *gp_py_str(uintptr_t s, size_t *len)
{
	const struct gp_py_layout *L = gp_py;
	if (!s) {
		*len = 1;
		return "?";
	}
	unsigned state;
	memcpy(&state, (const void *)(s + L->str_state), sizeof state);
	/* bits: interned:2 kind:3 compact:1 ascii:1 */
	if (!(state & (1u << 5)) || !(state & (1u << 6))) {
		*len = 1;
		return "?";
	}
	intptr_t n;
	memcpy(&n, (const void *)(s + L->str_length), sizeof n);
	*len = n < 0 ? 0 : n > 400 ? 400 : (size_t)n;
	return (const char *)(s + L->str_ascii_data);
}

static uint32_t gp_py_varint(const uint8_t **p, const uint8_t *end)
{
	uint32_t v = 0;
	unsigned shift = 0;
	while (*p < end) {
		uint8_t b = *(*p)++;
		v |= (uint32_t)(b & 63) << shift;
		shift += 6;
		if (!(b & 64) || shift > 30)
			break;
	}
	return v;
}

/* Line of the instruction at byte offset addr, from a 3.11 location table
 * (CPython's Objects/locations.md): -1 when it has none. */
static int gp_py_line(uintptr_t code, intptr_t addr)
{
	const struct gp_py_layout *L = gp_py;
	uintptr_t tab = gp_py_ptr(code, L->co_linetable);
	int line;
	memcpy(&line, (const void *)(code + L->co_firstlineno), sizeof line);
	if (!tab)
		return -1;
	intptr_t n;
	memcpy(&n, (const void *)(tab + L->bytes_size), sizeof n);
	const uint8_t *p = (const uint8_t *)(tab + L->bytes_data), *end = p + (n > 0 ? n : 0);
	intptr_t at = 0;
	while (p < end) {
		uint8_t first = *p++;
		if (!(first & 0x80))
			return -1; /* out of step with the table: no line */
		unsigned code4 = (first >> 3) & 15;
		intptr_t len = ((first & 7) + 1) * 2;
		int delta = 0, none = 0;
		switch (code4) {
		case 15: none = 1; break;
		case 14: case 13: {
			uint32_t u = gp_py_varint(&p, end);
			delta = (u & 1) ? -(int)(u >> 1) : (int)(u >> 1);
			if (code4 == 14) { /* end line, column, end column */
				gp_py_varint(&p, end);
				gp_py_varint(&p, end);
				gp_py_varint(&p, end);
			}
			break;
		}
		case 12: case 11: case 10: delta = (int)code4 - 10; p += 2; break;
		default: p += 1; break;
		}
		line += delta;
		if (addr >= at && addr < at + len)
			return none ? -1 : line;
		at += len;
	}
	return -1;
}

static uint32_t gp_py_name(struct gp_pyframes_cache *c, uintptr_t code, intptr_t offset)
{
	const struct gp_py_layout *L = gp_py;
	int firstline;
	memcpy(&firstline, (const void *)(code + L->co_firstlineno), sizeof firstline);
	uint32_t slot = (uint32_t)((code >> 4) ^ (uintptr_t)offset * 0x9e3779b1u) & (GP_PY_CACHE - 1);
	if (c->e[slot].code == code && c->e[slot].offset == offset &&
	    c->e[slot].firstline == firstline)
		return c->e[slot].id;
	size_t flen, nlen;
	const char *file = gp_py_str(gp_py_ptr(code, L->co_filename), &flen);
	const char *fn = gp_py_str(gp_py_ptr(code, L->co_qualname), &nlen);
	char buf[900];
	int k = snprintf(buf, sizeof buf, "%.*s:%d (%.*s)", (int)flen, file, gp_py_line(code, offset), (int)nlen, fn);
	if (k < 0)
		return 0;
	uint32_t id = gp_collector_intern(buf, (size_t)k < sizeof buf ? (size_t)k : sizeof buf - 1);
	if (id) {
		c->e[slot].code = code;
		c->e[slot].offset = offset;
		c->e[slot].firstline = firstline;
		c->e[slot].id = id;
	}
	return id;
}

uint32_t gp_pyframes_capture(struct gp_pyframes_cache *c, uint64_t *pcs, uint32_t max)
{
	if (GP_UNLIKELY(gp_py_state != GP_PY_ON)) {
		if (gp_py_state == GP_PY_NONE)
			return 0;
		pthread_once(&gp_py_once, gp_pyframes_detect);
		if (gp_py_state != GP_PY_ON)
			return 0;
	}
	const struct gp_py_layout *L = gp_py;
	uintptr_t ts = (uintptr_t)gp_py_tstate();
	if (!ts)
		return 0; /* a thread Python does not know */
	uintptr_t f = gp_py_ptr(ts, L->ts_frame);
	if (!L->direct && f)
		f = gp_py_ptr(f, L->cf_current);
	uint32_t n = 0;
	if (max > GP_PY_MAXFRAMES)
		max = GP_PY_MAXFRAMES;
	for (unsigned walked = 0; f && n < max && walked < 4 * GP_PY_MAXFRAMES; walked++) {
		uintptr_t code = gp_py_ptr(f, L->fr_code), instr = gp_py_ptr(f, L->fr_instr);
		uintptr_t start = code + L->co_code;
		char owner;
		memcpy(&owner, (const void *)(f + L->fr_owner), 1);
		/* an incomplete frame (being set up) has no instruction yet; a
		 * shim frame or a non-code executable is not a Python line */
		if (code && owner != GP_PY_OWNED_BY_CSTACK && gp_py_ptr(code, 8) == gp_py_code_type /* ob_type */ && instr >= start) {
			uint32_t id = gp_py_name(c, code, (intptr_t)(instr - start));
			if (id)
				pcs[n++] = GP_PC_PYFRAME | id;
		}
		f = gp_py_ptr(f, L->fr_previous);
	}
	return n;
}
