/*
 * stacks.c — optional call-stack capture (GPUPHASE_STACKS) with libunwind.
 *
 * Called from hooks.c on application threads, inside the window only, for the
 * classes GPUPHASE_STACKS selects; gp_stacks_symbolize at finish from the
 * drain (lib.c's drain thread, or the finishing thread when it drains
 * itself) and, under a duty cycle, on the window timer's thread at each
 * window's close; gp_stacks_new_trace when a trace starts (lib start, an
 * attach session's too); gp_stacks_forget in a fork child. Each thread interns
 * its stacks in its own table (taken on its first capture, never freed while
 * the process lives, so exit-time symbolisation sees the tables of threads
 * that already ended). When a thread ends, its table goes on a free list and
 * the next thread to capture takes it over with its stacks and ids (already
 * written to the trace), so memory is bounded by the most threads capturing
 * at once, not by every thread the process ever had:
 * a stack seen before costs one unw_backtrace plus a hash probe; a new one is
 * written once as GP_REC_STACK (+ continuation slots), ids taken from one
 * process-wide atomic counter. The hook then emits a GP_REC_STACK_REF.
 * In a Python process the thread's Python frames (pyframes.c) come first in
 * the stack, as GP_PC_PYFRAME pseudo pcs, the native frames after them.
 * Symbols (dladdr: "function+0xoff (library)") are resolved off the hot
 * path, into GP_REC_SYMBOL records, and every loaded object holding a
 * captured pc into a GP_REC_MODULE (path, load bias, build id) so that the
 * report can symbolise from the file (.symtab, DWARF lines) offline: at
 * exit, and under a duty cycle as each window closes (window.c's timer),
 * so that every window's file names its own stacks (the collector repeats
 * them in the files after it). Each call reads only the pcs captured since
 * the last (each table's watermark, sym_npcs) and writes only the names and
 * modules not written before in this trace (gp_stacks_done), so a window's
 * close costs what it captured, not what the process ever did; a pc or
 * module whose record could not be written is taken again next time. A
 * second trace in the same process (attach again) starts with no names
 * written (gp_stacks_new_trace), but its threads keep their stack tables:
 * a stack interned for the first trace keeps its id and is not described
 * again in the second (a limit: its references there name no stack).
 *
 * libunwind is loaded with dlopen on the first capture, not linked: a
 * machine without libunwind.so.8 (the H200 PyTorch machine had none) must
 * still run the program, and a DT_NEEDED on it made every profiled run exit
 * 127 there. Without it, stacks come from glibc's backtrace() (same contract).
 *
 * Invariants: a table is only written by its owning thread (one at a time:
 * the owner hands it over at its exit); gp_stacks_done is only touched
 * under gp_stacks_sym_mu; the global list of tables is
 * push-only (lock-free, release/acquire pair below); the free list is taken
 * whole (exchange) and pushed onto node by node, so it has no ABA; a full
 * table stops interning for that thread (returns 0, no reference written).
 */
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gp_collector.h"
#include "gp_lib.h"

#define GP_ST_SLOTS 1024u   /* distinct stacks per thread (power of two) */
#define GP_ST_PCS 16384u    /* pcs stored per thread                     */
#define GP_ST_MAXDEPTH 64u

struct gp_stack_table {
	struct gp_stack_table *next; /* global list, set before publication */
	struct gp_stack_table *free_next; /* free list link, set before its push */
	uint32_t npcs, nstacks;
	/* pcs[0..sym_npcs) are symbolised in this trace, sym_seen the npcs a
	 * symbolisation in progress read (both under gp_stacks_sym_mu) */
	uint32_t sym_npcs, sym_seen;
	struct {
		uint64_t hash;
		uint32_t id, off;
		uint32_t depth;
	} slot[GP_ST_SLOTS];
	uint64_t pcs[GP_ST_PCS];
	struct gp_pyframes_cache py; /* Python frame names (pyframes.c) */
};

/* Classes (GP_CLASS_BIT) that get a stack: lib.c stores gp_stacks_mask of
 * the configuration once, before its release store of RUNNING; hooks.c and
 * cupti.c read it after an acquire load of the state. */
unsigned gp_stacks_classes;
static struct gp_stack_table *gp_stacks_all; /* pair: release push / acquire walk */
/* Tables of ended threads. Pair: release CAS in gp_stacks_put (the old
 * owner's writes to the table) / acquire exchange in gp_stacks_take. */
static struct gp_stack_table *gp_stacks_free;
static pthread_key_t gp_stacks_key; /* destructor hands the table back */
static pthread_once_t gp_stacks_key_once = PTHREAD_ONCE_INIT;
static int gp_stacks_key_ok;
static uint32_t gp_stacks_next_id = 1;
/* The library's own code, whose frames a stack skips: written once under
 * gp_stacks_key_once, read by the capturing threads after it. */
static uintptr_t gp_stacks_self_lo, gp_stacks_self_hi;
static uint64_t gp_stacks_py_ns, gp_stacks_py_n; /* GPUPHASE_LOG=debug only */

unsigned gp_stacks_mask(enum gp_stacks mode)
{
	switch (mode) {
	case GP_STACKS_OFF: return 0;
	case GP_STACKS_ALL: return GP_WATCH_ALL;
	case GP_STACKS_SYNC:
		return GP_CLASS_BIT(GP_API_SYNC_DEVICE) | GP_CLASS_BIT(GP_API_SYNC_STREAM) |
		       GP_CLASS_BIT(GP_API_SYNC_EVENT) | GP_CLASS_BIT(GP_API_MEMCPY_SYNC) |
		       GP_CLASS_BIT(GP_API_MEMSET_SYNC) | GP_CLASS_BIT(GP_API_SYNC_IMPLICIT) |
		       GP_CLASS_BIT(GP_API_MEMCPY_ASYNC); /* a pageable async copy blocks */
	case GP_STACKS_LAUNCH:
		return GP_CLASS_BIT(GP_API_LAUNCH) | GP_CLASS_BIT(GP_API_GRAPH_LAUNCH) | GP_CLASS_BIT(GP_API_HOST_FUNC);
	}
	return 0;
}

static int gp_stacks_find_self(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	uintptr_t me = (uintptr_t)gp_stacks_find_self;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
		if (me >= lo && me < hi) {
			gp_stacks_self_lo = lo;
			gp_stacks_self_hi = hi;
			return 1;
		}
	}
	return 0;
}

/* Put t on the free list. Any thread. */
static void gp_stacks_put(struct gp_stack_table *t)
{
	struct gp_stack_table *head = __atomic_load_n(&gp_stacks_free, __ATOMIC_RELAXED);
	do
		t->free_next = head;
	while (!__atomic_compare_exchange_n(&gp_stacks_free, &head, t, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
}

/* Take one table off the free list, or NULL. Taking the whole list makes the
 * pop ABA-free; the rest goes back one by one (a racing taker meanwhile finds
 * the list empty and allocates: bounded by the threads racing). */
static struct gp_stack_table *gp_stacks_take(void)
{
	struct gp_stack_table *t = __atomic_exchange_n(&gp_stacks_free, NULL, __ATOMIC_ACQUIRE);
	if (!t)
		return NULL;
	for (struct gp_stack_table *r = t->free_next, *nx; r; r = nx) {
		nx = r->free_next;
		gp_stacks_put(r);
	}
	return t;
}

/* Key destructor: the thread ends; its table serves the next thread. */
static void gp_stacks_thread_exit(void *arg)
{
	struct gp_stack_table *t = arg;
	if (gp_tls.stacks == t)
		gp_tls.stacks = NULL;
	gp_stacks_put(t);
}

/* unw_backtrace from libunwind.so.8, else glibc's backtrace(); written once
 * under gp_stacks_key_once, read by the capturing threads after it. */
static int (*gp_stacks_unwind)(void **, int);

static void gp_stacks_key_init(void)
{
	dl_iterate_phdr(gp_stacks_find_self, NULL); /* the library's own frames: written once, here */
	gp_stacks_key_ok = pthread_key_create(&gp_stacks_key, gp_stacks_thread_exit) == 0;
	void *h = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
	if (h)
		*(void **)&gp_stacks_unwind = dlsym(h, "unw_backtrace");
	if (!gp_stacks_unwind) {
		dlerror(); /* leave no pending error string for the program */
		gp_stacks_unwind = backtrace;
		gp_log(GP_LOG_INFO, "libunwind.so.8 not loadable: call stacks through glibc backtrace()");
	}
}

static struct gp_stack_table *gp_stacks_table(void)
{
	struct gp_stack_table *t = gp_tls.stacks;
	if (GP_LIKELY(t))
		return t;
	pthread_once(&gp_stacks_key_once, gp_stacks_key_init);
	t = gp_stacks_take();
	if (!t) {
		t = calloc(1, sizeof *t);
		if (!t)
			return NULL;
		struct gp_stack_table *head = __atomic_load_n(&gp_stacks_all, __ATOMIC_RELAXED);
		do
			t->next = head;
		while (!__atomic_compare_exchange_n(&gp_stacks_all, &head, t, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
	}
	/* Without the key the table stays with this thread (the old behaviour). */
	if (gp_stacks_key_ok)
		pthread_setspecific(gp_stacks_key, t);
	gp_tls.stacks = t;
	return t;
}

/* What the trace already has: the pcs symbolised and the modules described
 * (sorted distinct pcs; modules by load bias and path), so that each call
 * writes only what is new. Under gp_stacks_sym_mu. */
static pthread_mutex_t gp_stacks_sym_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
	uint64_t *pc;
	size_t n;
	struct gp_stacks_mod {
		uint64_t bias;
		char *path;
	} *mod;
	size_t nmod, modcap;
} gp_stacks_done;

void gp_stacks_forget(void)
{
	/* fork child: the free tables' stacks were written to the parent's
	 * trace, not to a file this process will write; never hand them out.
	 * Leaked, as the parent's other state is. */
	__atomic_store_n(&gp_stacks_free, NULL, __ATOMIC_RELAXED);
	if (gp_stacks_key_ok)
		pthread_setspecific(gp_stacks_key, NULL);
	if (gp_tls.stacks) /* its Python frame names are the parent's string ids */
		memset(&((struct gp_stack_table *)gp_tls.stacks)->py, 0, sizeof(struct gp_pyframes_cache));
	/* what the parent's trace had symbolised is not in the child's: its
	 * set forgotten (leaked), its lock made afresh (a parent's thread may
	 * have held it) */
	pthread_mutex_init(&gp_stacks_sym_mu, NULL);
	memset(&gp_stacks_done, 0, sizeof gp_stacks_done);
}

static void gp_stacks_emit(uint32_t id, const uint64_t *pcs, uint32_t depth)
{
	union gp_rec g[1 + (GP_ST_MAXDEPTH + 3) / 4];
	uint32_t n = 1 + gp_stack_cont_slots(depth);
	memset(g, 0, n * sizeof g[0]);
	g[0].stack.type = GP_REC_STACK;
	g[0].stack.depth = (uint16_t)depth;
	g[0].stack.id = id;
	uint64_t *dst = g[0].stack.pc;
	for (uint32_t i = 0; i < depth; i++) {
		if (i < GP_STACK_INLINE)
			dst[i] = pcs[i];
		else
			memcpy(g[1].raw + (size_t)(i - GP_STACK_INLINE) * 8u, &pcs[i], 8);
	}
	gp_collector_emit(g, n);
}

uint32_t gp_stacks_capture(unsigned skip)
{
	(void)skip;
	struct gp_stack_table *t = gp_stacks_table();
	if (!t)
		return 0;
	uint64_t pcs[GP_ST_MAXDEPTH];
	uint32_t npy;
	if (GP_UNLIKELY(gp_cfg.log_level >= GP_LOG_DEBUG)) { /* its cost, said at exit (make bench reads it) */
		uint64_t t0 = gp_now();
		npy = gp_pyframes_capture(&t->py, pcs, GP_ST_MAXDEPTH / 4);
		if (npy) {
			__atomic_fetch_add(&gp_stacks_py_ns, gp_now() - t0, __ATOMIC_RELAXED);
			__atomic_fetch_add(&gp_stacks_py_n, 1, __ATOMIC_RELAXED);
		}
	} else {
		npy = gp_pyframes_capture(&t->py, pcs, GP_ST_MAXDEPTH / 4);
	}
	void *raw[GP_ST_MAXDEPTH + 8];
	int n = gp_stacks_unwind(raw, (int)(gp_cfg.stack_depth + 8));
	int first = 0;
	while (first < n && (uintptr_t)raw[first] >= gp_stacks_self_lo && (uintptr_t)raw[first] < gp_stacks_self_hi)
		first++;
	uint32_t depth = (uint32_t)(n - first);
	if (depth > gp_cfg.stack_depth)
		depth = gp_cfg.stack_depth;
	if (depth > GP_ST_MAXDEPTH - npy)
		depth = GP_ST_MAXDEPTH - npy;
	for (uint32_t i = 0; i < depth; i++)
		pcs[npy + i] = (uint64_t)(uintptr_t)raw[first + (int)i];
	depth += npy;
	if (depth == 0)
		return 0;
	uint64_t h = 1469598103934665603ull;
	for (uint32_t i = 0; i < depth; i++)
		h = (h ^ pcs[i]) * 1099511628211ull;
	for (uint32_t k = 0; k < GP_ST_SLOTS; k++) {
		uint32_t s = (uint32_t)(h + k) & (GP_ST_SLOTS - 1);
		if (!t->slot[s].id) {
			if (t->npcs + depth > GP_ST_PCS || t->nstacks >= GP_ST_SLOTS * 3 / 4)
				return 0;
			uint32_t id = __atomic_fetch_add(&gp_stacks_next_id, 1, __ATOMIC_RELAXED);
			memcpy(&t->pcs[t->npcs], pcs, depth * sizeof pcs[0]);
			t->slot[s].hash = h;
			t->slot[s].off = t->npcs;
			t->slot[s].depth = depth;
			t->nstacks++;
			__atomic_store_n(&t->npcs, t->npcs + depth, __ATOMIC_RELEASE);
			/* id last: the exit-time walker skips slots without one */
			__atomic_store_n(&t->slot[s].id, id, __ATOMIC_RELEASE);
			gp_stacks_emit(id, pcs, depth);
			return id;
		}
		if (t->slot[s].hash == h && t->slot[s].depth == depth &&
		    !memcmp(&t->pcs[t->slot[s].off], pcs, depth * sizeof pcs[0]))
			return t->slot[s].id;
	}
	return 0;
}

static int gp_stacks_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* 0 when the record was written (a name of 0: no string, not written). */
static int gp_stacks_symbol(uint64_t pc, uint32_t name)
{
	if (!name)
		return -ENOMEM;
	union gp_rec r;
	memset(&r, 0, sizeof r);
	r.symbol.type = GP_REC_SYMBOL;
	r.symbol.name = name;
	r.symbol.pc = pc;
	return gp_collector_emit(&r, 1);
}

struct gp_stacks_pcs {
	const uint64_t *pc; /* sorted */
	size_t n;
	int failed; /* a record could not be written */
};

/* The index of the first of the sorted v[0..n) that is >= x (n if none). */
static size_t gp_stacks_lower(const uint64_t *v, size_t n, uint64_t x)
{
	size_t a = 0, b = n;
	while (a < b) {
		size_t m = a + (b - a) / 2;
		if (v[m] < x)
			a = m + 1;
		else
			b = m;
	}
	return a;
}

/* Whether a sorted pc lies in [lo, hi). */
static int gp_stacks_any_in(const struct gp_stacks_pcs *s, uint64_t lo, uint64_t hi)
{
	size_t a = gp_stacks_lower(s->pc, s->n, lo);
	return a < s->n && s->pc[a] < hi;
}

/* Whether module (bias, path) was described in this trace. */
static int gp_stacks_module_known(uint64_t bias, const char *path)
{
	for (size_t i = 0; i < gp_stacks_done.nmod; i++)
		if (gp_stacks_done.mod[i].bias == bias && !strcmp(gp_stacks_done.mod[i].path, path))
			return 1;
	return 0;
}

/* Notes module (bias, path) as described; on no memory it is not noted
 * (described again later: a duplicate the report takes as the same). */
static void gp_stacks_module_note(uint64_t bias, const char *path)
{
	if (gp_stacks_done.nmod == gp_stacks_done.modcap) {
		size_t cap = gp_stacks_done.modcap ? gp_stacks_done.modcap * 2 : 16;
		struct gp_stacks_mod *m = realloc(gp_stacks_done.mod, cap * sizeof *m);
		if (!m)
			return;
		gp_stacks_done.mod = m;
		gp_stacks_done.modcap = cap;
	}
	char *dup = strdup(path);
	if (dup)
		gp_stacks_done.mod[gp_stacks_done.nmod++] = (struct gp_stacks_mod){bias, dup};
}

/* dl_iterate_phdr callback: a GP_REC_MODULE for each object holding a
 * captured pc (the program's own name from /proc/self/exe), unless an
 * earlier call described it (caller holds gp_stacks_sym_mu). */
static int gp_stacks_module(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct gp_stacks_pcs *set = arg;
	union gp_rec r;
	memset(&r, 0, sizeof r);
	int hit = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && gp_stacks_any_in(set, lo + 1, lo + ph->p_memsz + 1))
			hit = 1; /* pcs are return addresses: (lo, hi] */
		if (ph->p_type != PT_NOTE)
			continue;
		const char *p = (const char *)(uintptr_t)lo, *end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)(const void *)p;
			const char *name = p + sizeof *nh, *desc = name + ((nh->n_namesz + 3) & ~3u);
			if (desc + nh->n_descsz > end)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && !memcmp(name, "GNU", 4)) {
				r.module.build_id_len = (uint8_t)(nh->n_descsz < GP_MODULE_BUILD_ID ? nh->n_descsz
												: GP_MODULE_BUILD_ID);
				memcpy(r.module.build_id, desc, r.module.build_id_len);
			}
			p = desc + ((nh->n_descsz + 3) & ~3u);
		}
	}
	if (!hit)
		return 0;
	char path[4096];
	const char *name = info->dlpi_name;
	if (!name || !*name) {
		ssize_t k = readlink("/proc/self/exe", path, sizeof path - 1);
		if (k <= 0)
			return 0;
		path[k] = 0;
		name = path;
	}
	if (name[0] != '/' && !strchr(name, '/'))
		return 0; /* the vDSO and the like: no file to read */
	if (gp_stacks_module_known(info->dlpi_addr, name))
		return 0; /* described for an earlier call's pcs */
	r.module.type = GP_REC_MODULE;
	r.module.path = gp_collector_intern(name, strlen(name));
	r.module.bias = info->dlpi_addr;
	if (r.module.path && gp_collector_emit(&r, 1) == 0)
		gp_stacks_module_note(info->dlpi_addr, name);
	else
		set->failed = 1; /* not written: described at the next call */
	return 0;
}

/* Whether pc is in the sorted set. */
static int gp_stacks_has(const uint64_t *v, size_t n, uint64_t pc)
{
	size_t a = gp_stacks_lower(v, n, pc);
	return a < n && v[a] == pc;
}

/* Adds the sorted distinct pcs fresh[0..n) to the done set (sorted merge);
 * on no memory the set stays as it was (they are symbolised again next
 * time: duplicates, not losses). */
static void gp_stacks_note_done(const uint64_t *fresh, size_t n)
{
	size_t total = gp_stacks_done.n + n;
	uint64_t *m = malloc(total * sizeof *m);
	if (!m)
		return;
	size_t i = 0, j = 0, k = 0;
	while (i < gp_stacks_done.n || j < n)
		m[k++] = j == n || (i < gp_stacks_done.n && gp_stacks_done.pc[i] < fresh[j]) ? gp_stacks_done.pc[i++]
											       : fresh[j++];
	free(gp_stacks_done.pc);
	gp_stacks_done.pc = m;
	gp_stacks_done.n = total;
}

void gp_stacks_new_trace(void)
{
	pthread_mutex_lock(&gp_stacks_sym_mu);
	free(gp_stacks_done.pc);
	for (size_t i = 0; i < gp_stacks_done.nmod; i++)
		free(gp_stacks_done.mod[i].path);
	free(gp_stacks_done.mod);
	memset(&gp_stacks_done, 0, sizeof gp_stacks_done);
	for (struct gp_stack_table *t = __atomic_load_n(&gp_stacks_all, __ATOMIC_ACQUIRE); t; t = t->next)
		t->sym_npcs = 0;
	pthread_mutex_unlock(&gp_stacks_sym_mu);
}

/* The pcs captured since the last symbolisation (each table's from its
 * watermark), sorted and distinct, in a malloc'd array; *n their count.
 * Caller holds gp_stacks_sym_mu. NULL when none (or no memory). */
static uint64_t *gp_stacks_new_pcs(size_t *n)
{
	size_t total = 0, k = 0;
	for (struct gp_stack_table *t = __atomic_load_n(&gp_stacks_all, __ATOMIC_ACQUIRE); t; t = t->next) {
		t->sym_seen = __atomic_load_n(&t->npcs, __ATOMIC_ACQUIRE);
		total += t->sym_seen - t->sym_npcs;
	}
	*n = 0;
	uint64_t *all = total ? malloc(total * sizeof *all) : NULL;
	if (!all)
		return NULL;
	for (struct gp_stack_table *t = __atomic_load_n(&gp_stacks_all, __ATOMIC_ACQUIRE); t; t = t->next)
		for (uint32_t i = t->sym_npcs; i < t->sym_seen && k < total; i++)
			all[k++] = t->pcs[i];
	qsort(all, k, sizeof *all, gp_stacks_cmp);
	size_t d = 0;
	for (size_t i = 0; i < k; i++)
		if (!d || all[i] != all[d - 1])
			all[d++] = all[i];
	*n = d;
	return all;
}

/* One native pc's capture-time name, interned: "function+0xoff (object)"
 * from dladdr, else the object and offset, else the address; 0 if the
 * string could not be interned. */
static uint32_t gp_stacks_name(uint64_t pc)
{
	Dl_info di;
	char buf[512];
	/* pc is a return address: look up pc - 1 so a call at a function's
	 * end is attributed to that function. */
	if (!dladdr((void *)(uintptr_t)(pc - 1), &di) || !di.dli_fname)
		snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)pc);
	else if (di.dli_sname)
		snprintf(buf, sizeof buf, "%s+0x%llx (%s)", di.dli_sname, (unsigned long long)(pc - (uintptr_t)di.dli_saddr),
			 di.dli_fname);
	else
		snprintf(buf, sizeof buf, "0x%llx (%s+0x%llx)", (unsigned long long)pc, di.dli_fname,
			 (unsigned long long)(pc - (uintptr_t)di.dli_fbase));
	return gp_collector_intern(buf, strlen(buf));
}

void gp_stacks_symbolize(int final)
{
	uint64_t pyn = __atomic_load_n(&gp_stacks_py_n, __ATOMIC_RELAXED);
	if (final && pyn)
		gp_log(GP_LOG_DEBUG, "Python frames read at %llu stack captures, %.0f ns each on average",
		       (unsigned long long)pyn, (double)__atomic_load_n(&gp_stacks_py_ns, __ATOMIC_RELAXED) / (double)pyn);
	pthread_mutex_lock(&gp_stacks_sym_mu);
	size_t n = 0;
	uint64_t *all = gp_stacks_new_pcs(&n);
	if (!all) {
		pthread_mutex_unlock(&gp_stacks_sym_mu);
		return;
	}
	/* the new pcs not named before (another table's, an earlier call's),
	 * named now; those written kept in fresh[0..nok) */
	uint64_t *fresh = malloc(n * sizeof *fresh);
	struct gp_stacks_pcs set = { all, n, 0 };
	size_t nok = 0;
	for (size_t i = 0; fresh && i < n; i++) {
		if (gp_stacks_has(gp_stacks_done.pc, gp_stacks_done.n, all[i]))
			continue;
		/* Python frames (bit 63, sorted last) are named by their string */
		uint32_t name = GP_PC_IS_PYFRAME(all[i]) ? (uint32_t)all[i] : gp_stacks_name(all[i]);
		if (gp_stacks_symbol(all[i], name) == 0)
			fresh[nok++] = all[i];
		else
			set.failed = 1;
	}
	if (!fresh)
		set.failed = 1;
	/* every object holding one of the new pcs, unless described before */
	dl_iterate_phdr(gp_stacks_module, &set);
	if (nok)
		gp_stacks_note_done(fresh, nok);
	/* all written: these pcs need no second look; else the next call
	 * takes them again (those named are skipped, the rest retried) */
	if (!set.failed)
		for (struct gp_stack_table *t = __atomic_load_n(&gp_stacks_all, __ATOMIC_ACQUIRE); t; t = t->next)
			t->sym_npcs = t->sym_seen;
	pthread_mutex_unlock(&gp_stacks_sym_mu);
	free(fresh);
	free(all);
}
