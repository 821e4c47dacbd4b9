/*
 * symbolize.c — native frame names from the files themselves, offline: for
 * every pc of the trace's stacks that lies in a GP_REC_MODULE (the program,
 * each library), the function from .symtab (static functions included) and,
 * when the file has DWARF line tables, "function (file.c:LINE)".
 *
 * elfutils' libdwfl does the ELF and DWARF work. It is loaded with dlopen
 * (libdw.so.1), never linked: a machine without it runs the report as
 * before, with the names dladdr gave at capture (GP_REC_SYMBOL). A module
 * whose file is gone or whose build id no longer matches the trace's is not
 * used (its pcs keep the capture-time names), nor one whose path is no
 * regular file (opened non-blocking, checked, then handed to libdwfl: a
 * FIFO named by a trace must not hang the report). gp_an_config.no_symbolize
 * turns it off (the fuzz harness: hermetic, and thousands of reports).
 *
 * Report thread only; called once by gp_an_prepare, after pass 1 (all
 * stacks, symbols and modules read). Results go to an->symnames
 * (pc -> canonical string), which gp_an_frame_name prefers.
 */
#include <dlfcn.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis_int.h"
#include "kernel_name.h"

/* The libdwfl entry points used, resolved from libdw.so.1. */
static struct {
	int tried, ok;
	__typeof__(dwfl_begin) *begin;
	__typeof__(dwfl_end) *end;
	__typeof__(dwfl_report_begin) *report_begin;
	__typeof__(dwfl_report_elf) *report_elf;
	__typeof__(dwfl_report_end) *report_end;
	__typeof__(dwfl_addrmodule) *addrmodule;
	__typeof__(dwfl_module_addrinfo) *addrinfo;
	__typeof__(dwfl_module_getsrc) *getsrc;
	__typeof__(dwfl_lineinfo) *lineinfo;
	__typeof__(dwfl_module_build_id) *build_id;
	__typeof__(dwfl_standard_find_debuginfo) *find_debuginfo;
	__typeof__(dwfl_offline_section_address) *section_address;
} gp_dw;

static int gp_sym_load(void)
{
	if (gp_dw.tried)
		return gp_dw.ok;
	gp_dw.tried = 1;
	void *h = dlopen("libdw.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return 0;
#define GP_DW(f, n) (*(void **)&gp_dw.f = dlsym(h, n))
	gp_dw.ok = GP_DW(begin, "dwfl_begin") && GP_DW(end, "dwfl_end") &&
		   GP_DW(report_begin, "dwfl_report_begin") && GP_DW(report_elf, "dwfl_report_elf") &&
		   GP_DW(report_end, "dwfl_report_end") && GP_DW(addrmodule, "dwfl_addrmodule") &&
		   GP_DW(addrinfo, "dwfl_module_addrinfo") && GP_DW(getsrc, "dwfl_module_getsrc") &&
		   GP_DW(lineinfo, "dwfl_lineinfo") && GP_DW(build_id, "dwfl_module_build_id") &&
		   GP_DW(find_debuginfo, "dwfl_standard_find_debuginfo") &&
		   GP_DW(section_address, "dwfl_offline_section_address");
#undef GP_DW
	return gp_dw.ok;
}

static int gp_sym_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static const char *gp_sym_base(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* Name one pc (a return address) from module m into buf; 0 if nothing known. */
static int gp_sym_name(Dwfl_Module *m, const char *path, uint64_t pc, char *buf, size_t n)
{
	Dwarf_Addr a = pc - 1; /* the call, not the instruction after it */
	GElf_Off off = 0;
	GElf_Sym sym;
	const char *fn = gp_dw.addrinfo(m, a, &off, &sym, NULL, NULL, NULL);
	/* a C++ function by the short name the report gives kernels
	 * (kernel_name.h): "_ZL6wait_aP11CUstream_st" -> "wait_a" */
	char *full = NULL, shrt[256];
	if (fn && fn[0] == '_' && fn[1] == 'Z' && gp_kernel_name_demangle(fn, &full) == 0) {
		size_t len, at = gp_kernel_name_short(full, &len);
		if (len && len < sizeof shrt) {
			memcpy(shrt, full + at, len);
			shrt[len] = 0;
			fn = shrt;
		}
	}
	Dwfl_Line *l = gp_dw.getsrc(m, a);
	int line = 0;
	const char *src = l ? gp_dw.lineinfo(l, NULL, &line, NULL, NULL, NULL) : NULL;
	if (fn && src && line > 0)
		snprintf(buf, n, "%s (%s:%d)", fn, gp_sym_base(src), line);
	else if (fn)
		snprintf(buf, n, "%s+0x%llx (%s)", fn, (unsigned long long)off + 1, path);
	else if (src && line > 0)
		snprintf(buf, n, "0x%llx (%s:%d)", (unsigned long long)pc, gp_sym_base(src), line);
	free(full);
	return fn || (src && line > 0);
}

void gp_sym_resolve(struct gp_an *an)
{
	if (an->cfg.no_symbolize || !an->nmodules || !an->npcs || !gp_sym_load())
		return;
	char *dbg = NULL;
	Dwfl_Callbacks cb = { .find_debuginfo = gp_dw.find_debuginfo,
			      .section_address = gp_dw.section_address,
			      .debuginfo_path = &dbg };
	Dwfl *d = gp_dw.begin(&cb);
	if (!d)
		return;
	gp_dw.report_begin(d);
	Dwfl_Module **mods = calloc(an->nmodules, sizeof *mods);
	if (!mods) {
		gp_dw.end(d);
		return gp_an_fail(an, -ENOMEM);
	}
	for (size_t i = 0; i < an->nmodules; i++) {
		const char *path = gp_an_string(an, an->modules[i].path);
		if (!path || !*path)
			continue;
		/* opened here, not by libdwfl: a path the trace names may be no
		 * regular file (a FIFO would block the open for ever) */
		int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		struct stat st;
		if (fd < 0)
			continue;
		if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
			close(fd);
			continue;
		}
		Dwfl_Module *m = gp_dw.report_elf(d, gp_sym_base(path), path, fd, an->modules[i].bias, false);
		if (!m) { /* consumed only on success */
			close(fd);
			continue;
		}
		const unsigned char *bits = NULL;
		GElf_Addr vaddr;
		int nb = gp_dw.build_id(m, &bits, &vaddr);
		unsigned want = an->modules[i].build_id_len; /* a corrupt length: at most the 16 kept */
		if (want > GP_MODULE_BUILD_ID)
			want = GP_MODULE_BUILD_ID;
		if (want && (nb < (int)want || memcmp(bits, an->modules[i].build_id, want)))
			continue; /* another file now: its names would be wrong */
		mods[i] = m;
	}
	gp_dw.report_end(d, NULL, NULL);

	uint64_t *pcs = malloc(an->npcs * sizeof *pcs);
	if (!pcs) {
		free(mods);
		gp_dw.end(d);
		return gp_an_fail(an, -ENOMEM);
	}
	memcpy(pcs, an->pcs, an->npcs * sizeof *pcs);
	qsort(pcs, an->npcs, sizeof *pcs, gp_sym_cmp);
	char buf[1024];
	for (size_t i = 0; i < an->npcs; i++) {
		if ((i && pcs[i] == pcs[i - 1]) || GP_PC_IS_PYFRAME(pcs[i]) || pcs[i] < 2)
			continue;
		Dwfl_Module *m = gp_dw.addrmodule(d, pcs[i] - 1);
		size_t k = 0;
		while (m && k < an->nmodules && mods[k] != m)
			k++;
		if (!m || k == an->nmodules)
			continue;
		if (gp_sym_name(m, gp_an_string(an, an->modules[k].path), pcs[i], buf, sizeof buf))
			gp_an_fail(an, gp_map_put(&an->symnames, pcs[i], gp_an_canon(an, buf, strlen(buf))));
	}
	free(pcs);
	free(mods);
	gp_dw.end(d);
}
