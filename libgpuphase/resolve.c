/*
 * resolve.c — finds the real cudart function behind each hook.
 *
 * Called from a hook the first time it runs (any application thread), and
 * again until it succeeds. Order: dlsym(RTLD_NEXT) — the normal preload case;
 * then, for a cudart that was loaded RTLD_LOCAL (ctypes, a plugin dlopened
 * privately), walk the loaded objects with dl_iterate_phdr, take each
 * libcudart.so.N, dlopen it RTLD_NOLOAD (no new load, just a handle) and look
 * the symbol up with dlvsym(name, "libcudart.so.N"), falling back to dlsym for
 * an unversioned build. Handles are cached per soname (12 and 13 may coexist),
 * a small fixed table under a mutex (slow path only).
 *
 * Invariants: never returns one of our own hooks (that would recurse); a
 * failed lookup is not cached (the library may be loaded later) and the hook
 * returns cudaErrorSharedObjectSymbolNotFound instead of crashing.
 */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <string.h>

#include "gp_lib.h"

#define GP_RESOLVE_MAX 4

static struct {
	char soname[32];
	void *handle;
} gp_resolve_libs[GP_RESOLVE_MAX];
static int gp_resolve_nlibs;
static pthread_mutex_t gp_resolve_lock = PTHREAD_MUTEX_INITIALIZER;

/* Our own object, to refuse resolving a symbol to ourselves. */
static int gp_resolve_is_self(void *p)
{
	Dl_info self, other;
	if (!dladdr((void *)gp_resolve_is_self, &self) || !dladdr(p, &other))
		return 0;
	return self.dli_fbase == other.dli_fbase;
}

struct gp_resolve_walk {
	char paths[GP_RESOLVE_MAX][256];
	int n;
};

static int gp_resolve_phdr(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct gp_resolve_walk *w = arg;
	const char *path = info->dlpi_name;
	if (!path || !*path)
		return 0;
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if (strncmp(base, "libcudart.so", 12) != 0 || w->n >= GP_RESOLVE_MAX)
		return 0;
	if (strlen(path) >= sizeof w->paths[0])
		return 0;
	strcpy(w->paths[w->n++], path);
	return 0;
}

/* Refresh the soname table from the loaded objects. Caller holds the lock. */
static void gp_resolve_scan(void)
{
	struct gp_resolve_walk w;
	w.n = 0;
	dl_iterate_phdr(gp_resolve_phdr, &w);
	for (int i = 0; i < w.n; i++) {
		const char *base = strrchr(w.paths[i], '/');
		base = base ? base + 1 : w.paths[i];
		/* soname: "libcudart.so.N" (cut any further ".x.y") */
		char soname[32];
		size_t n = strlen(base);
		if (n >= sizeof soname)
			continue;
		memcpy(soname, base, n + 1);
		char *dot = strchr(soname + 13, '.');
		if (strlen(soname) > 13 && dot)
			*dot = 0;
		int known = 0;
		for (int j = 0; j < gp_resolve_nlibs; j++)
			known |= !strcmp(gp_resolve_libs[j].soname, soname);
		if (known || gp_resolve_nlibs >= GP_RESOLVE_MAX)
			continue;
		void *h = dlopen(w.paths[i], RTLD_LAZY | RTLD_NOLOAD);
		if (!h) {
			(void)dlerror(); /* leave no error string of ours for the program */
			continue;
		}
		strcpy(gp_resolve_libs[gp_resolve_nlibs].soname, soname);
		gp_resolve_libs[gp_resolve_nlibs].handle = h;
		gp_resolve_nlibs++;
	}
}

void *gp_resolve_real(const char *name, void **slot)
{
	void *p = dlsym(RTLD_NEXT, name);
	if (!p)
		(void)dlerror(); /* a failed lookup leaves a string the program could read */
	if (p && gp_resolve_is_self(p))
		p = NULL;
	if (!p) {
		int cs = gp_state_lock(&gp_resolve_lock);
		for (int pass = 0; pass < 2 && !p; pass++) {
			if (pass == 1)
				gp_resolve_scan();
			for (int i = 0; i < gp_resolve_nlibs && !p; i++) {
				p = dlvsym(gp_resolve_libs[i].handle, name, gp_resolve_libs[i].soname);
				if (!p) {
					(void)dlerror();
					p = dlsym(gp_resolve_libs[i].handle, name);
					if (!p)
						(void)dlerror();
				}
				if (p && gp_resolve_is_self(p))
					p = NULL;
			}
		}
		gp_state_unlock(&gp_resolve_lock, cs);
	}
	if (p)
		__atomic_store_n(slot, p, __ATOMIC_RELAXED);
	else
		gp_log(GP_LOG_DEBUG, "real %s not found", name);
	return p;
}

void gp_resolve_forget(void)
{
	/* fork child: only the forking thread exists; another thread of the
	 * parent may have held the lock mid-lookup (the RTLD_LOCAL path), which
	 * would block the child's first call of a hook not yet resolved. The
	 * table itself stays valid (the same objects are mapped). */
	pthread_mutex_init(&gp_resolve_lock, NULL);
}
