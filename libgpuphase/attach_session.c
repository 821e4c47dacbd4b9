/*
 * attach_session.c — what libgpuphase.so does when `gpuphase attach PID` loads it
 * into a process that is already running: one capture session, started by
 * gpuphase_attach_begin and ended by the library itself, after which the
 * process is left as it was (the library's code stays mapped, inert).
 *
 * Threads: gpuphase_attach_begin runs on the target thread the attach
 * command stopped with ptrace (it only copies the request and starts the
 * session thread: the stop must stay short, and that thread may hold no lock
 * we can know of). Everything else runs on the session thread, which has
 * every signal blocked: connect back to the command's socket, wait for the
 * CUDA context, subscribe to CUPTI, start capture (lib.c), patch the GOT
 * entries of every loaded object that imports a hooked runtime function and
 * the runtime's own exports of those functions (st_value in libcudart's
 * .dynsym: every dlsym, dlvsym, lazy binding or dlopen made while attached
 * then finds the hook, with the caller's lookup rules untouched), wait for
 * the window, restore the entries, stop capture, unsubscribe and finalize
 * CUPTI, report, exit. The program's threads only ever run the hooks
 * (hooks.c) through the patched entries, or through pointers they looked up
 * while attached: those stay valid after the detach (the library stays
 * mapped and its hooks pass straight through once capture stops). A pointer
 * the program took BEFORE the attach points into the runtime itself and
 * cannot be re-pointed without patching code: such calls are seen by
 * CUPTI's API records only (the trace header's "attach_hooks" says so).
 *
 * The session talks to the command over one UNIX stream connection, one
 * line per message: "ok tid=N", "info TEXT", "error TEXT", "windows N" (a
 * duty cycle: the last window closed), "done PATH"; the command may send
 * "stop" (end the capture now); EOF from the command also ends it.
 *
 * A duty cycle (GPUPHASE_WINDOW=every=...: `attach --every`) runs until
 * stopped: the window's timer (window.c) turns CUPTI on and off and ends
 * each window's file as in a preloaded process, and this thread also
 * serves the process's control socket ${GPUPHASE_CONTROL_DIR}/<pid>.sock
 * (gp_window_control_*): `status` with its "windows dir=DIR last=SEQ" line,
 * so `gpuphase agent` finds the process like any other, and `stop`, which
 * ends the session exactly as the command's "stop" does (entries restored
 * before capture stops) and is answered once the process is left as it was.
 * Served here rather than by window.c's control thread, whose `stop` would
 * finish capture with the entries still patched and which would outlive the
 * session. While a session runs it holds the abstract socket
 * "@gpuphase-attach.<pid>", which the command reads in /proc/<pid>/net/unix
 * to refuse a second attach before touching the process; the name counts
 * only when this process holds that socket (any user may bind an abstract
 * name: another's would otherwise block the attach).
 *
 * Invariants: every entry written is restored (compare-and-swap: an entry
 * the loader or the program rewrote meanwhile is left alone) before capture
 * stops; a page made writable for a store gets its protection back (RELRO
 * GOT pages, the runtime's read-only symbol table; an executable page is
 * never made writable-and-not-executable, and one that may not be W+X is
 * left unpatched); an export is redirected only when it is the very function
 * its hook calls, and only after every hook's real function is resolved (a
 * hook resolving it later would find itself);
 * one session at a time (gp_attach_busy); nothing here writes to the
 * program's stdout/stderr (GPUPHASE_LOG=off unless the command says else).
 * x86-64 and aarch64 differ only in the relocation types (GP_ATTACH_R_*).
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "gp_collector.h"
#include "gp_fd.h"
#include "gp_lib.h"

#if defined(__x86_64__)
#define GP_ATTACH_R_JUMP_SLOT R_X86_64_JUMP_SLOT
#define GP_ATTACH_R_GLOB_DAT R_X86_64_GLOB_DAT
#elif defined(__aarch64__)
#define GP_ATTACH_R_JUMP_SLOT R_AARCH64_JUMP_SLOT
#define GP_ATTACH_R_GLOB_DAT R_AARCH64_GLOB_DAT
#else
#define GP_ATTACH_NO_RELOCS 1 /* not written for this architecture: nothing is patched */
#endif

#define GP_ATTACH_REQ_MAX 4096
#define GP_ATTACH_ENV_MAX 24

/* One word the session rewrites: a GOT entry of an object that imports a
 * hooked function, or the st_value of a hooked function in the runtime's
 * dynamic symbol table (an export: what dlsym, dlvsym and the loader's later
 * bindings read). */
struct gp_attach_slot {
	void **addr;  /* the GOT entry, or &st_value of the export       */
	void *old;    /* its value before the patch                      */
	void *hook;   /* the value written: the hook (minus the runtime's
	                 load base for an export); NULL once not ours    */
	int prot;     /* 0: a writable page; else its protection, made
	                 writable for the store and restored after       */
	int is_export;
};

static int gp_attach_busy; /* a session exists (exchange in begin, cleared by the session) */
static char gp_attach_req[GP_ATTACH_REQ_MAX];
static struct gp_attach_slot *gp_attach_slots;
static size_t gp_attach_nslots, gp_attach_cap;
static size_t gp_attach_nexports;  /* of the slots, runtime exports     */
static unsigned gp_attach_nobjs;   /* objects with a GOT entry to patch */
static void **gp_attach_real;      /* by hook id: its real function     */
static char gp_attach_hooks_kv[256]; /* the trace's "attach_hooks" note */
static int gp_attach_fd = -1;

/* ---- messages to the command ------------------------------------------- */

static void gp_attach_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void gp_attach_say(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof line - 1, fmt, ap);
	va_end(ap);
	if (n < 0 || gp_attach_fd < 0)
		return;
	if ((size_t)n > sizeof line - 2)
		n = (int)sizeof line - 2;
	line[n++] = '\n';
	(void)!send(gp_attach_fd, line, (size_t)n, MSG_NOSIGNAL);
}

/* 1 when the command asked to stop (a "stop" line) or went away (EOF). */
static int gp_attach_stop_asked(int timeout_ms)
{
	struct pollfd p = {gp_attach_fd, POLLIN, 0};
	if (poll(&p, 1, timeout_ms) <= 0)
		return 0;
	char buf[64];
	ssize_t r = recv(gp_attach_fd, buf, sizeof buf, MSG_DONTWAIT);
	return r == 0 || (r > 0 && memmem(buf, (size_t)r, "stop", 4) != NULL) || (r < 0 && errno != EAGAIN);
}

/* Wait up to timeout_ms for a reason to stop: the command's "stop" or EOF,
 * or a `stop` on the control socket ctl (-1: none; its other requests are
 * answered here), whose connection is then left in *ctl_stop for the
 * answer. 1 to stop. */
static int gp_attach_wait(int ctl, int timeout_ms, int *ctl_stop)
{
	struct pollfd p[2] = {{gp_attach_fd, POLLIN, 0}, {ctl, POLLIN, 0}};
	if (poll(p, ctl >= 0 ? 2 : 1, timeout_ms) <= 0)
		return 0;
	if (ctl >= 0 && (p[1].revents & POLLIN)) {
		int c = gp_fd_lift(accept4(ctl, NULL, NULL, SOCK_CLOEXEC));
		if (c >= 0 && gp_window_control_serve(c)) {
			*ctl_stop = c;
			return 1;
		}
		if (c >= 0)
			close(c);
	}
	return p[0].revents && gp_attach_stop_asked(0);
}

/* ---- GOT entries --------------------------------------------------------- */

/* The hook id of a hooked runtime name, or -1. No loader call: this runs
 * inside dl_iterate_phdr, which holds the loader's lock. */
static int gp_attach_hook_id(const char *name)
{
	if (strncmp(name, "cuda", 4) != 0 && strncmp(name, "__cuda", 6) != 0)
		return -1;
	for (unsigned i = 0, n = gp_hooks_count(); i < n; i++)
		if (!strcmp(gp_hooks_name(i), name))
			return (int)i;
	return -1;
}

/* Does the file name of path start with prefix? */
static int gp_attach_base_is(const char *path, const char *prefix)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	return !strncmp(base, prefix, strlen(prefix));
}

/* Objects whose imports are never patched: the runtime and CUPTI
 * themselves, the driver, the C library and the loader, the vDSO. */
static int gp_attach_skip_object(const char *path)
{
	static const char *const skip[] = {"libcudart.so", "libcupti.so", "libcuda.so", "libc.so", "ld-linux",
					   "ld-musl", "linux-vdso", "linux-gate", "libpthread.so", "libdl.so"};
	for (size_t i = 0; i < sizeof skip / sizeof skip[0]; i++)
		if (gp_attach_base_is(path, skip[i]))
			return 1;
	return 0;
}

static int gp_attach_add(void **addr, void *hook, int prot, int is_export)
{
	if (gp_attach_nslots == gp_attach_cap) {
		size_t cap = gp_attach_cap ? gp_attach_cap * 2 : 64;
		void *p = realloc(gp_attach_slots, cap * sizeof *gp_attach_slots);
		if (!p)
			return -ENOMEM;
		gp_attach_slots = p;
		gp_attach_cap = cap;
	}
	gp_attach_slots[gp_attach_nslots++] = (struct gp_attach_slot){addr, NULL, hook, prot, is_export};
	return 0;
}

struct gp_attach_scan {
	uintptr_t self_base;
};

/* glibc relocates the d_ptr entries of the dynamic section in place; other
 * loaders may not: an address below the load base is still relative. */
static uintptr_t gp_attach_ptr(uintptr_t base, uintptr_t v)
{
	return v < base ? v + base : v;
}

/* The protection of the page holding addr, from the PT_LOAD segment that
 * maps it: 0 when it is writable already. */
static int gp_attach_prot(const struct dl_phdr_info *info, uintptr_t addr)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type != PT_LOAD || addr < lo || addr >= lo + ph->p_memsz)
			continue;
		if (ph->p_flags & PF_W)
			return 0;
		return PROT_READ | (ph->p_flags & PF_X ? PROT_EXEC : 0);
	}
	return PROT_READ;
}

/* The number of entries of a dynamic symbol table, which the dynamic
 * section does not give: DT_HASH's nchain, else one past the end of the
 * last DT_GNU_HASH chain. 0 when the object has neither. */
static size_t gp_attach_nsyms(const uint32_t *hash, const uint32_t *gnu)
{
	if (hash)
		return hash[1];
	if (!gnu)
		return 0;
	uint32_t nbuckets = gnu[0], symoffset = gnu[1], bloom_words = gnu[2];
	const uint32_t *buckets = (const uint32_t *)((const ElfW(Addr) *)(gnu + 4) + bloom_words);
	const uint32_t *chain = buckets + nbuckets;
	uint32_t last = 0;
	for (uint32_t i = 0; i < nbuckets; i++)
		if (buckets[i] > last)
			last = buckets[i];
	if (last < symoffset)
		return symoffset;
	while (!(chain[last - symoffset] & 1)) /* the last entry of a chain has bit 0 set */
		last++;
	return (size_t)last + 1;
}

/* A runtime (libcudart.so.N): each hooked function it exports — the
 * default version, the very function the hook calls — gets its st_value
 * pointed at the hook, so that a lookup made while attached (dlsym, dlvsym,
 * a lazy PLT binding, an object dlopened meanwhile) finds the hook, with
 * the caller's own lookup rules (RTLD_NEXT, RTLD_DEFAULT) untouched. */
static int gp_attach_exports(struct dl_phdr_info *info, const ElfW(Sym) *sym, const char *str, size_t nsyms,
			     const uint16_t *versym)
{
	uintptr_t base = info->dlpi_addr;
	for (size_t k = 1; k < nsyms; k++) {
		const ElfW(Sym) *sy = &sym[k];
		if (sy->st_shndx == SHN_UNDEF || ELF64_ST_TYPE(sy->st_info) != STT_FUNC ||
		    (versym && (versym[k] & 0x8000))) /* a hidden, non-default version */
			continue;
		int id = gp_attach_hook_id(str + sy->st_name);
		if (id < 0 || !gp_attach_real[id] || (uintptr_t)gp_attach_real[id] != base + sy->st_value)
			continue; /* not the function the hook passes to */
		/* the loader adds the base back, modulo 2^64 */
		void *rel = (void *)((uintptr_t)gp_hooks_fn((unsigned)id) - base);
		if (gp_attach_add((void **)&((ElfW(Sym) *)sy)->st_value, rel, gp_attach_prot(info, (uintptr_t)&sy->st_value),
				  1))
			return 1;
		gp_attach_nexports++;
	}
	return 0;
}

static int gp_attach_phdr(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct gp_attach_scan *s = arg;
	const char *path = info->dlpi_name ? info->dlpi_name : "";
	int runtime = path[0] && gp_attach_base_is(path, "libcudart.so");
	if (info->dlpi_addr == s->self_base || (!runtime && path[0] && gp_attach_skip_object(path)))
		return 0;
	const ElfW(Dyn) *dyn = NULL;
	uintptr_t relro_lo = 0, relro_hi = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr + ph->p_vaddr);
		else if (ph->p_type == PT_GNU_RELRO) {
			relro_lo = info->dlpi_addr + ph->p_vaddr;
			relro_hi = relro_lo + ph->p_memsz;
		}
	}
	if (!dyn)
		return 0;
	uintptr_t base = info->dlpi_addr, symtab = 0, strtab = 0, jmprel = 0, rela = 0, hash = 0, gnuhash = 0,
		  versym = 0;
	size_t pltrelsz = 0, relasz = 0;
	int pltrel_is_rela = 1;
	for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++) {
		switch (d->d_tag) {
		case DT_SYMTAB: symtab = gp_attach_ptr(base, d->d_un.d_ptr); break;
		case DT_STRTAB: strtab = gp_attach_ptr(base, d->d_un.d_ptr); break;
		case DT_JMPREL: jmprel = gp_attach_ptr(base, d->d_un.d_ptr); break;
		case DT_PLTRELSZ: pltrelsz = d->d_un.d_val; break;
		case DT_RELA: rela = gp_attach_ptr(base, d->d_un.d_ptr); break;
		case DT_RELASZ: relasz = d->d_un.d_val; break;
		case DT_PLTREL: pltrel_is_rela = d->d_un.d_val == DT_RELA; break;
		case DT_HASH: hash = gp_attach_ptr(base, d->d_un.d_ptr); break;
		case DT_GNU_HASH: gnuhash = gp_attach_ptr(base, d->d_un.d_ptr); break;
		case DT_VERSYM: versym = gp_attach_ptr(base, d->d_un.d_ptr); break;
		}
	}
	if (!symtab || !strtab)
		return 0;
	const ElfW(Sym) *sym = (const ElfW(Sym) *)symtab;
	const char *str = (const char *)strtab;
	if (runtime) /* its own imports stay: the runtime calls itself directly */
		return gp_attach_exports(info, sym, str,
					 gp_attach_nsyms((const uint32_t *)hash, (const uint32_t *)gnuhash),
					 (const uint16_t *)versym);
	size_t before = gp_attach_nslots;
	for (int t = 0; t < 2; t++) {
		const ElfW(Rela) *r = (const ElfW(Rela) *)(t ? rela : jmprel);
		size_t n = (t ? relasz : pltrelsz) / sizeof(ElfW(Rela));
		if (!r || (!t && !pltrel_is_rela)) /* REL tables: not on x86-64 or aarch64 */
			continue;
		for (size_t i = 0; i < n; i++) {
#ifdef GP_ATTACH_NO_RELOCS
			break;
#else
			unsigned type = (unsigned)ELF64_R_TYPE(r[i].r_info);
			if (type != GP_ATTACH_R_JUMP_SLOT && type != GP_ATTACH_R_GLOB_DAT)
				continue;
#endif
			const ElfW(Sym) *sy = &sym[ELF64_R_SYM(r[i].r_info)];
			if (sy->st_shndx != SHN_UNDEF || !sy->st_name)
				continue;
			int id = gp_attach_hook_id(str + sy->st_name);
			if (id < 0)
				continue;
			uintptr_t a = base + r[i].r_offset;
			if (gp_attach_add((void **)a, gp_hooks_fn((unsigned)id),
					  a >= relro_lo && a < relro_hi ? PROT_READ : 0, 0))
				return 1;
		}
	}
	gp_attach_nobjs += gp_attach_nslots > before;
	return 0;
}

/* Collect the entries to patch (nothing written yet). Every hook's real
 * function is resolved first: a hook resolving it lazily once the exports
 * point at the hooks would find itself. */
static int gp_attach_scan_objects(void)
{
	Dl_info di;
	if (!dladdr((void *)gp_attach_scan_objects, &di) || !di.dli_fname)
		return -ENOENT;
	unsigned n = gp_hooks_count();
	if (!gp_attach_real && !(gp_attach_real = calloc(n, sizeof *gp_attach_real)))
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++)
		gp_attach_real[i] = gp_hooks_real(i);
	/* dli_fbase is the lowest mapping; dlpi_addr the load bias: equal for
	 * a shared object linked at 0, which ours is. */
	struct gp_attach_scan s = {(uintptr_t)di.dli_fbase};
	gp_attach_nslots = 0;
	gp_attach_nexports = 0;
	gp_attach_nobjs = 0;
	dl_iterate_phdr(gp_attach_phdr, &s);
	return 0;
}

static int gp_attach_write(struct gp_attach_slot *sl, void *expect, void *val)
{
	long pg = sysconf(_SC_PAGESIZE);
	void *page = (void *)((uintptr_t)sl->addr & ~(uintptr_t)(pg - 1));
	if (sl->prot && mprotect(page, (size_t)pg, sl->prot | PROT_WRITE))
		return -errno; /* e.g. a W^X policy on an executable page: left alone */
	int ok = __atomic_compare_exchange_n(sl->addr, &expect, val, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	if (sl->prot)
		mprotect(page, (size_t)pg, sl->prot);
	return ok ? 0 : -EAGAIN;
}

/* Write every slot (each is one atomic store: the order does not matter).
 * Returns the slots written; *exports: how many of them are exports. */
static size_t gp_attach_patch(size_t *exports)
{
	size_t done = 0;
	for (size_t i = 0; i < gp_attach_nslots; i++) {
		struct gp_attach_slot *sl = &gp_attach_slots[i];
		sl->old = __atomic_load_n(sl->addr, __ATOMIC_SEQ_CST);
		if (gp_attach_write(sl, sl->old, sl->hook) == 0) {
			done++;
			*exports += sl->is_export;
		} else {
			sl->hook = NULL; /* not ours: never restored */
		}
	}
	return done;
}

static void gp_attach_unpatch(void)
{
	for (size_t i = 0; i < gp_attach_nslots; i++)
		if (gp_attach_slots[i].hook)
			(void)gp_attach_write(&gp_attach_slots[i], gp_attach_slots[i].hook, gp_attach_slots[i].old);
	gp_attach_nslots = 0;
}

/* ---- the CUDA context ------------------------------------------------------ */

/* 1 when a primary context is active on some device (libcuda loaded), or
 * when the driver cannot be asked (simcuda has no libcuda: cudart mapped is
 * all we know); 0 while none exists yet. */
static int gp_attach_context_exists(void)
{
	void *cu = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
	if (!cu) {
		(void)dlerror();
		return 1;
	}
	int (*count)(int *) = (int (*)(int *))dlsym(cu, "cuDeviceGetCount");
	int (*state)(int, unsigned *, int *) = (int (*)(int, unsigned *, int *))dlsym(cu, "cuDevicePrimaryCtxGetState");
	int n = 0, active = 0;
	if (!count || !state || count(&n) != 0)
		active = 1; /* not initialised or not askable: let CUPTI decide */
	for (int d = 0; d < n && !active; d++) {
		unsigned flags;
		int a = 0;
		if (state(d, &flags, &a) == 0 && a)
			active = 1;
	}
	(void)dlerror();
	dlclose(cu);
	return active;
}

/* ---- the session --------------------------------------------------------- */

static void gp_attach_cupti_finalize(void)
{
	void *lib = dlopen(gp_cfg.cupti_lib, RTLD_LAZY | RTLD_NOLOAD);
	if (!lib) {
		(void)dlerror();
		return;
	}
	int (*fin)(void) = (int (*)(void))dlsym(lib, "cuptiFinalize");
	if (fin)
		fin();
	else
		(void)dlerror();
	dlclose(lib);
}

static int gp_attach_connect(const char *path)
{
	struct sockaddr_un sa;
	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof sa.sun_path)
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa)) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

/* The abstract socket that says "a session runs here" (see the top). */
static int gp_attach_flag(void)
{
	struct sockaddr_un sa;
	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	int n = snprintf(sa.sun_path + 1, sizeof sa.sun_path - 1, "gpuphase-attach.%ld", (long)getpid());
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n))) {
		close(fd);
		return -1;
	}
	return fd;
}

static void gp_attach_session(void)
{
	/* the request: "sock=PATH" then GPUPHASE_* lines; "duration_ns=N" for a time window */
	char *env[GP_ATTACH_ENV_MAX + 1], *save = NULL, *sock = NULL;
	size_t nenv = 0;
	uint64_t duration_ns = 0;
	for (char *l = strtok_r(gp_attach_req, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(l, "sock=", 5))
			sock = l + 5;
		else if (!strncmp(l, "duration_ns=", 12))
			duration_ns = strtoull(l + 12, NULL, 10);
		else if (!strncmp(l, "GPUPHASE_", 9) && nenv < GP_ATTACH_ENV_MAX)
			env[nenv++] = l;
	}
	env[nenv] = NULL;
	if (!sock || (gp_attach_fd = gp_attach_connect(sock)) < 0)
		return;
	int flag = gp_attach_flag();
	gp_attach_say("ok tid=%ld", (long)syscall(SYS_gettid));

	int st = __atomic_load_n(&gp_state, __ATOMIC_ACQUIRE);
	char msg[512];
	if (st == GP_STATE_RUNNING || st == GP_STATE_STARTING) {
		gp_attach_say("error this process is already profiled by gpuphase (started under gpuphase record)");
		goto out;
	}
	if (gp_config_parse(env, &gp_cfg, msg, sizeof msg, NULL)) {
		gp_attach_say("error %s", msg);
		goto out;
	}
	gp_log_init(&gp_cfg);
	int duty = gp_cfg.win_mode == GP_WINMODE_TIME && gp_cfg.every_ns;
	if (duration_ns)
		snprintf(gp_cfg.window_text, sizeof gp_cfg.window_text, "attach duration=%.3fs", duration_ns / 1e9);

	/* CUPTI only once the context exists (activity enabled before it would
	 * be, with real CUPTI, a different and heavier attach path). */
	int waited = 0;
	while (!gp_attach_context_exists()) {
		if (!waited++)
			gp_attach_say("info waiting for the process to create its CUDA context");
		if (gp_attach_stop_asked(50))
			goto out;
	}
	const char *why = NULL;
	int cres = 0, crc = -EPERM;
	gp_cupti_keep_clock = 1;
	if (gp_cfg.cupti)
		crc = gp_cupti_open(&gp_cfg, &why, &cres);
	if (crc == -EBUSY) {
		gp_attach_say("error another tool holds CUPTI in this process (cuptiSubscribe: CUptiResult %d)", cres);
		goto out;
	}
	if (crc)
		gp_attach_say("info CUPTI unavailable (%s): hook records only", why ? why : "disabled");

	if (gp_attach_scan_objects())
		gp_attach_nslots = gp_attach_nexports = 0;
	/* the trace says what was hooked and what cannot be */
	snprintf(gp_attach_hooks_kv, sizeof gp_attach_hooks_kv,
		 "%zu GOT entries in %u objects, %zu runtime exports; function pointers the program took before "
		 "the attach are not hooked: CUPTI API records only for those calls",
		 gp_attach_nslots - gp_attach_nexports, gp_attach_nobjs, gp_attach_nexports);
	struct gp_lib_attach_info info = {gp_attach_nslots > 0, crc, why, cres, gp_attach_hooks_kv};
	/* held until the patch is complete: a marker the program reaches while
	 * some entries are still the runtime's (the sync's GOT entry patched,
	 * the launch exports not yet) must not count, or the first captured
	 * iteration could have begun with lookups that returned the runtime */
	gp_window_hold(1);
	if (!gp_lib_attach_start(&info)) {
		gp_window_hold(0);
		gp_attach_say("error cannot start capture in the process (trace file %s?)", gp_cfg.output);
		if (crc == 0)
			gp_cupti_close();
		goto out;
	}
	/* the window turns on at the first iteration boundary after the patch
	 * and off after the last: counted from here (a short window may open
	 * and close before this thread's next look, even before its next line) */
	unsigned turns0 = __atomic_load_n(&gp_window_turns, __ATOMIC_RELAXED);
	size_t exports = 0, patched = gp_attach_patch(&exports);
	gp_window_hold(0);
	if (patched)
		gp_attach_say("info %zu runtime entries patched in %u objects, %zu runtime exports redirected for "
			      "later lookups; capturing",
			      patched - exports, gp_attach_nobjs, exports);
	else
		gp_attach_say("info no loaded object imports a hooked runtime function: CUPTI API records only");

	int ctl = duty ? gp_window_control_open() : -1, ctl_stop = -1;
	if (duty && ctl < 0)
		gp_attach_say("info no control socket in %s (%s): `gpuphase stop` and `gpuphase agent` cannot reach "
			      "this process; end the duty cycle with Ctrl-C on the attach command",
			      gp_cfg.control_dir[0] ? gp_cfg.control_dir : "/tmp/gpuphase-UID", strerror(-ctl));
	else if (duty)
		gp_attach_say("info duty cycle: windows in %s until `gpuphase stop %ld` or Ctrl-C",
			      gp_collector_windows_dir(), (long)getpid());

	uint64_t t_end = duration_ns ? gp_now() + duration_ns : 0;
	int early = 0;
	for (;;) {
		if (!duty && !duration_ns && __atomic_load_n(&gp_window_turns, __ATOMIC_RELAXED) - turns0 >= 2)
			break;
		if (t_end && gp_now() >= t_end)
			break;
		if (gp_attach_wait(ctl, 20, &ctl_stop)) {
			early = !duty; /* a duty cycle ends only when asked */
			break;
		}
	}
	if (ctl >= 0) /* nothing more is answered: the session is ending */
		gp_window_control_close();
	gp_attach_unpatch();
	/* a program thread inside a hook when its entry was restored finishes
	 * that call on our code: let it, before CUPTI and the collector stop */
	struct timespec grace = {0, 20 * 1000000L};
	nanosleep(&grace, NULL);
	char path[GP_PATH_MAX];
	gp_lib_attach_stop(path, sizeof path);
	/* the timer (a time window) returns within its slice once capture
	 * stopped: the process is left with the threads it had */
	for (int i = 0; i < 500 && gp_window_timer_live(); i++)
		nanosleep(&grace, NULL);
	if (crc == 0) {
		gp_cupti_close();
		gp_attach_cupti_finalize();
	}
	if (duty) {
		unsigned long long last = (unsigned long long)gp_collector_windows_closed();
		gp_attach_say("windows %llu", last);
		if (ctl_stop >= 0) {
			char reply[GP_PATH_MAX + 128];
			snprintf(reply, sizeof reply, "ok capture ended, the attach session detached: %llu windows in %s",
				 last, path);
			gp_window_control_reply(ctl_stop, reply);
		}
	}
	if (ctl_stop >= 0)
		close(ctl_stop);
	gp_attach_say("done %s%s", path, early ? " (stopped early)" : "");
out:
	if (flag >= 0)
		close(flag);
	close(gp_attach_fd);
	gp_attach_fd = -1;
}

static void *gp_attach_main(void *arg)
{
	(void)arg;
	gp_tls.internal++; /* this thread's CUDA calls are the library's */
	gp_attach_session();
	gp_tls.internal--;
	__atomic_store_n(&gp_attach_busy, 0, __ATOMIC_RELEASE);
	return NULL;
}

/* Called by `gpuphase attach` on a ptrace-stopped thread of the process,
 * right after dlopen. Returns 0 (session thread started), -EBUSY (a session
 * runs), -E2BIG (request too long) or -errno of pthread_create. */
GP_EXPORT int gpuphase_attach_begin(const char *request);
GP_EXPORT int gpuphase_attach_begin(const char *request)
{
	int saved = errno;
	size_t n = strnlen(request, GP_ATTACH_REQ_MAX);
	if (n >= GP_ATTACH_REQ_MAX)
		return -E2BIG;
	if (__atomic_exchange_n(&gp_attach_busy, 1, __ATOMIC_ACQ_REL))
		return -EBUSY;
	memcpy(gp_attach_req, request, n + 1);
	pthread_t th;
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int r = pthread_create(&th, &at, gp_attach_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&at);
	if (r)
		__atomic_store_n(&gp_attach_busy, 0, __ATOMIC_RELEASE);
	errno = saved;
	return -r;
}
