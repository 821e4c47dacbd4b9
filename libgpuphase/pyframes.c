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
 * read that neither runs Python nor takes the GIL) and its version read
 * from Py_Version (3.11+) or, before 3.11, parsed from Py_GetVersion() (C
 * that formats the version constants into a static buffer: no Python code,
 * no lock, no allocation). There is no build-time dependency on Python.
 * Field offsets come from a table of the versions whose layout was checked
 * against their headers; any other version gets native frames only, and
 * one log line says so. Adding a version = one table row, printed by
 * tests/e2e/pyframes_offsets.c against that version's headers.
 *
 * Two frame models: 3.11+ chains _PyInterpreterFrame structs (a code object
 * and an instruction pointer each); 3.9 and 3.10 chain PyFrameObjects
 * (PyThreadState.frame, f_back, f_code and f_lasti: the last instruction's
 * byte offset in 3.9, its index in 2-byte code units in 3.10). f_lineno is
 * not read (valid only under a tracer): the line comes from the code
 * object's table, decoded here, in the version's own format (3.9 co_lnotab,
 * 3.10 co_linetable, 3.11+ the location table). 3.9/3.10 code objects have
 * no co_qualname: their frames are named by co_name (`step`, not
 * `Optimizer.step`).
 *
 * Reads: plain loads from the thread's own frame chain, which cannot change
 * under it (the thread is inside this call). What guards against a frame
 * that is not what the table says (a build with another object header, a
 * foreign or half-made frame) is checking before use: every pointer for
 * NULL, each 3.9/3.10 frame's type against &PyFrame_Type (the walk stops at
 * the first that is not one), each code object's type against &PyCode_Type
 * (its frame is skipped otherwise), string and table lengths clamped, and
 * the walk bounded (GP_PY_MAXFRAMES).
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
 * beyond the one TLS getter (and Py_GetVersion once, before 3.11); every
 * pointer read is checked as above and the walk is bounded; a cache is used
 * by one thread at a time (its stack table's owner).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "gp_collector.h"
#include "gp_lib.h"

#define GP_PY_MAXFRAMES 16u

/* How a code object maps an instruction's byte offset to its line. */
enum gp_py_lines {
	GP_PY_LNOTAB = 1, /* 3.9 co_lnotab: (byte delta, line delta) pairs       */
	GP_PY_RANGES,     /* 3.10 co_linetable: (range length, line delta) pairs */
	GP_PY_LOCATIONS,  /* 3.11+ location table (Objects/locations.md)         */
};

/* Offsets (bytes) into the interpreter's structures for one version, as
 * printed by tests/e2e/pyframes_offsets.c compiled against its headers. */
struct gp_py_layout {
	unsigned long version; /* (major << 8 | minor): 0x030b = 3.11 */
	enum gp_py_lines lines;
	unsigned frame_object; /* 1: frames are PyFrameObjects (3.9, 3.10)     */
	unsigned lasti_unit;   /* frame_object: bytes per f_lasti unit         */
	unsigned direct;       /* 1: ts_frame is the frame (3.9, 3.10, 3.13+);
	                          0: a _PyCFrame (3.11, 3.12)                  */
	unsigned ts_frame;     /* PyThreadState.frame / .cframe / .current_frame */
	unsigned cf_current;   /* _PyCFrame.current_frame                      */
	unsigned fr_code;      /* f_code / _PyInterpreterFrame.f_executable    */
	unsigned fr_previous;  /* PyFrameObject.f_back / _PyInterpreterFrame.previous */
	unsigned fr_instr;     /* PyFrameObject.f_lasti (int) / .prev_instr / .instr_ptr */
	unsigned fr_owner;     /* _PyInterpreterFrame.owner (char); 3.11+      */
	unsigned co_filename;
	unsigned co_qualname;  /* co_name before 3.11 (no co_qualname there)   */
	unsigned co_firstlineno;
	unsigned co_linetable; /* co_lnotab in 3.9                             */
	unsigned co_code;      /* the inline code units (3.11+)                */
	unsigned bytes_size, bytes_data;                 /* PyBytesObject   */
	unsigned str_length, str_state, str_ascii_data; /* PyASCIIObject   */
};

/* x86_64 / aarch64 (LP64) builds without Py_TRACE_REFS (which widens every
 * object header) or free threading (refused below by the interpreter's file
 * name). */
static const struct gp_py_layout gp_py_layouts[] = {
	{ .version = 0x0309, .lines = GP_PY_LNOTAB, .frame_object = 1, .lasti_unit = 1, .direct = 1,
	  .ts_frame = 24, .fr_code = 32, .fr_previous = 24, .fr_instr = 104,
	  .co_filename = 104, .co_qualname = 112, .co_firstlineno = 40, .co_linetable = 120,
	  .bytes_size = 16, .bytes_data = 32, .str_length = 16, .str_state = 32, .str_ascii_data = 48 },
	{ .version = 0x030a, .lines = GP_PY_RANGES, .frame_object = 1, .lasti_unit = 2, .direct = 1,
	  .ts_frame = 24, .fr_code = 32, .fr_previous = 24, .fr_instr = 96,
	  .co_filename = 104, .co_qualname = 112, .co_firstlineno = 40, .co_linetable = 120,
	  .bytes_size = 16, .bytes_data = 32, .str_length = 16, .str_state = 32, .str_ascii_data = 48 },
	{ .version = 0x030b, .lines = GP_PY_LOCATIONS, .direct = 0,
	  .ts_frame = 56, .cf_current = 8, .fr_code = 32, .fr_previous = 48, .fr_instr = 56, .fr_owner = 69,
	  .co_filename = 112, .co_qualname = 128, .co_firstlineno = 72, .co_linetable = 136, .co_code = 184,
	  .bytes_size = 16, .bytes_data = 32, .str_length = 16, .str_state = 32, .str_ascii_data = 48 },
	{ .version = 0x030c, .lines = GP_PY_LOCATIONS, .direct = 0,
	  .ts_frame = 56, .cf_current = 0, .fr_code = 0, .fr_previous = 8, .fr_instr = 56, .fr_owner = 70,
	  .co_filename = 112, .co_qualname = 128, .co_firstlineno = 68, .co_linetable = 136, .co_code = 192,
	  .bytes_size = 16, .bytes_data = 32, .str_length = 16, .str_state = 32, .str_ascii_data = 40 },
	{ .version = 0x030d, .lines = GP_PY_LOCATIONS, .direct = 1,
	  .ts_frame = 72, .cf_current = 0, .fr_code = 0, .fr_previous = 8, .fr_instr = 56, .fr_owner = 70,
	  .co_filename = 112, .co_qualname = 128, .co_firstlineno = 68, .co_linetable = 136, .co_code = 200,
	  .bytes_size = 16, .bytes_data = 32, .str_length = 16, .str_state = 32, .str_ascii_data = 40 },
};
#define GP_PY_OWNED_BY_CSTACK 3 /* a C entry shim frame (3.12+): not the program's */
#define GP_PY_OB_TYPE 8         /* PyObject.ob_type */

enum { GP_PY_UNKNOWN = 0, GP_PY_NONE, GP_PY_ON };
static int gp_py_state; /* atomic: release-stored once by gp_pyframes_detect */
static pthread_once_t gp_py_once = PTHREAD_ONCE_INIT;
static const struct gp_py_layout *gp_py;
static void *(*gp_py_tstate)(void);
static uintptr_t gp_py_code_type;  /* &PyCode_Type: what a frame's code must be */
static uintptr_t gp_py_frame_type; /* &PyFrame_Type: what a 3.9/3.10 frame must be */

/* The running interpreter's (major << 8 | minor), 0 if it cannot be told:
 * Py_Version where it exists (3.11+), else the "3.X.Y ..." that
 * Py_GetVersion() formats. */
static unsigned long gp_py_version(void)
{
	const unsigned long *ver = dlsym(RTLD_DEFAULT, "Py_Version");
	if (ver)
		return *ver >> 16;
	dlerror();
	const char *(*getver)(void);
	*(void **)&getver = dlsym(RTLD_DEFAULT, "Py_GetVersion");
	if (!getver) {
		dlerror();
		return 0;
	}
	const char *s = getver();
	unsigned long major = 0, minor = 0;
	if (!s || *s < '0' || *s > '9')
		return 0;
	while (*s >= '0' && *s <= '9' && major < 100)
		major = major * 10 + (unsigned long)(*s++ - '0');
	if (*s++ != '.' || *s < '0' || *s > '9')
		return 0;
	while (*s >= '0' && *s <= '9' && minor < 1000)
		minor = minor * 10 + (unsigned long)(*s++ - '0');
	return major > 0 && major < 256 && minor < 256 ? major << 8 | minor : 0;
}

/* What the process's Python allows: GP_PY_ON with the layout and symbols
 * set, or GP_PY_NONE. */
static int gp_pyframes_probe(void)
{
	void *get = dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState");
	if (!get) {
		dlerror();
		return GP_PY_NONE; /* not a Python process: nothing to say */
	}
	unsigned long ver = gp_py_version();
	if (!ver) {
		gp_log(GP_LOG_ERROR, "Python whose version cannot be read (no Py_Version, none in Py_GetVersion()): "
				    "Python frames not read, native frames only");
		return GP_PY_NONE;
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
				return GP_PY_NONE;
			}
		}
	}
	for (size_t i = 0; i < sizeof gp_py_layouts / sizeof gp_py_layouts[0]; i++)
		if (gp_py_layouts[i].version == ver)
			gp_py = &gp_py_layouts[i];
	if (!gp_py) {
		gp_log(GP_LOG_ERROR, "Python %lu.%lu: frame layout not known to gpuphase, native frames only", ver >> 8,
		       ver & 0xff);
		return GP_PY_NONE;
	}
	gp_py_code_type = (uintptr_t)dlsym(RTLD_DEFAULT, "PyCode_Type");
	if (gp_py->frame_object)
		gp_py_frame_type = (uintptr_t)dlsym(RTLD_DEFAULT, "PyFrame_Type");
	if (!gp_py_code_type || (gp_py->frame_object && !gp_py_frame_type)) {
		dlerror();
		gp_log(GP_LOG_ERROR, "Python %lu.%lu without PyCode_Type or PyFrame_Type: native frames only",
		       ver >> 8, ver & 0xff);
		gp_py = NULL;
		return GP_PY_NONE;
	}
	*(void **)&gp_py_tstate = get;
	gp_log(GP_LOG_INFO, "Python %lu.%lu: Python frames in call stacks", ver >> 8, ver & 0xff);
	return GP_PY_ON;
}

/* Once (gp_py_once): the state is published last, with release, so a
 * thread that reads GP_PY_ON with acquire sees the layout and symbols. */
static void gp_pyframes_detect(void)
{
	__atomic_store_n(&gp_py_state, gp_pyframes_probe(), __ATOMIC_RELEASE);
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
	/* bits: interned:2 kind:3 compact:1 ascii:1 (the same 3.9 to 3.13) */
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

/* Line of the instruction at byte offset addr from a 3.11+ location table
 * (CPython's Objects/locations.md): -1 when it has none. */
static int gp_py_line_locations(const uint8_t *p, const uint8_t *end, int line, intptr_t addr)
{
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

/* 3.9 co_lnotab (Objects/lnotab_notes.txt there): pairs of an unsigned
 * byte-offset increment and a signed line increment; the line of addr is
 * the first line plus every line increment whose offset is <= addr (as
 * PyCode_Addr2Line). Before the first instruction (f_lasti -1): the first
 * line. */
static int gp_py_line_lnotab(const uint8_t *p, const uint8_t *end, int line, intptr_t addr)
{
	intptr_t at = 0;
	for (; end - p >= 2; p += 2) {
		at += p[0];
		if (at > addr)
			break;
		line += (int8_t)p[1];
	}
	return line;
}

/* 3.10 co_linetable (Objects/lnotab_notes.txt there): pairs of an unsigned
 * range length in bytes and a signed line increment, -128 for "no line";
 * ranges follow each other from offset 0, zero-length ones only move the
 * line. -1 when addr has no line. */
static int gp_py_line_ranges(const uint8_t *p, const uint8_t *end, int line, intptr_t addr)
{
	if (addr < 0)
		return line; /* not started: its first line, as PyCode_Addr2Line */
	intptr_t at = 0;
	for (; end - p >= 2; p += 2) {
		intptr_t next = at + p[0];
		int delta = (int8_t)p[1], cur = -1;
		if (delta != -128) {
			line += delta;
			cur = line;
		}
		if (addr >= at && addr < next)
			return cur;
		at = next;
	}
	return -1;
}

/* Line of the instruction at byte offset addr in a code object: -1 when its
 * table has none. */
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
	if (n > (1 << 24))
		n = 0; /* not a line table's size: no line */
	const uint8_t *p = (const uint8_t *)(tab + L->bytes_data), *end = p + (n > 0 ? n : 0);
	switch (L->lines) {
	case GP_PY_LNOTAB: return gp_py_line_lnotab(p, end, line, addr);
	case GP_PY_RANGES: return gp_py_line_ranges(p, end, line, addr);
	case GP_PY_LOCATIONS: return gp_py_line_locations(p, end, line, addr);
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

/* 3.9 / 3.10: the PyFrameObject chain from PyThreadState.frame. */
static uint32_t gp_py_walk_objects(struct gp_pyframes_cache *c, uintptr_t f, uint64_t *pcs, uint32_t max)
{
	const struct gp_py_layout *L = gp_py;
	uint32_t n = 0;
	for (unsigned walked = 0; f && n < max && walked < 4 * GP_PY_MAXFRAMES; walked++) {
		if (gp_py_ptr(f, GP_PY_OB_TYPE) != gp_py_frame_type)
			break; /* not a frame of this layout: stop here */
		uintptr_t code = gp_py_ptr(f, L->fr_code);
		int lasti;
		memcpy(&lasti, (const void *)(f + L->fr_instr), sizeof lasti);
		if (code && gp_py_ptr(code, GP_PY_OB_TYPE) == gp_py_code_type) {
			uint32_t id = gp_py_name(c, code, lasti < 0 ? -1 : (intptr_t)lasti * L->lasti_unit);
			if (id)
				pcs[n++] = GP_PC_PYFRAME | id;
		}
		f = gp_py_ptr(f, L->fr_previous);
	}
	return n;
}

/* 3.11+: the _PyInterpreterFrame chain. */
static uint32_t gp_py_walk_interp(struct gp_pyframes_cache *c, uintptr_t f, uint64_t *pcs, uint32_t max)
{
	const struct gp_py_layout *L = gp_py;
	uint32_t n = 0;
	for (unsigned walked = 0; f && n < max && walked < 4 * GP_PY_MAXFRAMES; walked++) {
		uintptr_t code = gp_py_ptr(f, L->fr_code), instr = gp_py_ptr(f, L->fr_instr);
		uintptr_t start = code + L->co_code;
		char owner;
		memcpy(&owner, (const void *)(f + L->fr_owner), 1);
		/* an incomplete frame (being set up) has no instruction yet; a
		 * shim frame or a non-code executable is not a Python line */
		if (code && owner != GP_PY_OWNED_BY_CSTACK && gp_py_ptr(code, GP_PY_OB_TYPE) == gp_py_code_type &&
		    instr >= start) {
			uint32_t id = gp_py_name(c, code, (intptr_t)(instr - start));
			if (id)
				pcs[n++] = GP_PC_PYFRAME | id;
		}
		f = gp_py_ptr(f, L->fr_previous);
	}
	return n;
}

uint32_t gp_pyframes_capture(struct gp_pyframes_cache *c, uint64_t *pcs, uint32_t max)
{
	int state = __atomic_load_n(&gp_py_state, __ATOMIC_ACQUIRE);
	if (GP_UNLIKELY(state != GP_PY_ON)) {
		if (state == GP_PY_NONE)
			return 0;
		pthread_once(&gp_py_once, gp_pyframes_detect);
		if (__atomic_load_n(&gp_py_state, __ATOMIC_ACQUIRE) != GP_PY_ON)
			return 0;
	}
	const struct gp_py_layout *L = gp_py;
	uintptr_t ts = (uintptr_t)gp_py_tstate();
	if (!ts)
		return 0; /* a thread Python does not know */
	uintptr_t f = gp_py_ptr(ts, L->ts_frame);
	if (!L->direct && f)
		f = gp_py_ptr(f, L->cf_current);
	if (max > GP_PY_MAXFRAMES)
		max = GP_PY_MAXFRAMES;
	return L->frame_object ? gp_py_walk_objects(c, f, pcs, max) : gp_py_walk_interp(c, f, pcs, max);
}
