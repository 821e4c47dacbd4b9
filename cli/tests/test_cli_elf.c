/*
 * test_cli_elf.c — specification of cli/elfscan.c, the check `gpuphase
 * record` runs before starting a program: is the CUDA runtime a DT_NEEDED
 * shared library (hooks work), linked in statically (injection only), or
 * absent? Ground truth: the same CUDA source built by nvcc both ways
 * ($GP_BUILD/tests/cli_app_shared, cli_app_static; tests/module.mk), the
 * system shell, a script, and damaged copies of a real binary, which must
 * give -EINVAL with a message and never crash. Also the dynamic-symbol
 * lookup `gpuphase attach` uses (gp_elfscan_dynsym), checked against this
 * process's own dynamic loader on the C library.
 *
 * Single-threaded; each Test runs in its own process (Criterion).
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

static void app_path(char *buf, size_t len, const char *name)
{
	const char *b = getenv("GP_BUILD");
	snprintf(buf, len, "%s/tests/%s", b ? b : "build", name);
}

/* Read a whole file into a malloc'd buffer. */
static unsigned char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f, "cannot open %s", path);
	fseek(f, 0, SEEK_END);
	long sz = ftell(f);
	fseek(f, 0, SEEK_SET);
	unsigned char *p = malloc((size_t)sz);
	cr_assert_eq(fread(p, 1, (size_t)sz, f), (size_t)sz);
	fclose(f);
	*n = (size_t)sz;
	return p;
}

static void spill(const char *path, const unsigned char *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	cr_assert_not_null(f);
	cr_assert_eq(fwrite(p, 1, n, f), n);
	fclose(f);
}

Test(cli_elf, shared_cudart_is_hookable)
{
	char p[4096];
	app_path(p, sizeof p, "cli_app_shared");
	struct gp_elf_info info;
	char err[256];
	cr_assert_eq(gp_elfscan_inspect(p, &info, err, sizeof err), 0, "%s", err);
	cr_assert_eq(info.cudart, GP_ELF_CUDART_SHARED);
	cr_assert_str_eq(info.needed_cudart, "libcudart.so.13");
	cr_assert_eq(info.is_static_exe, 0);
}

Test(cli_elf, static_cudart_is_injection_only)
{
	char p[4096];
	app_path(p, sizeof p, "cli_app_static");
	struct gp_elf_info info;
	char err[256];
	cr_assert_eq(gp_elfscan_inspect(p, &info, err, sizeof err), 0, "%s", err);
	cr_assert_eq(info.cudart, GP_ELF_CUDART_STATIC);
	cr_assert_eq(info.is_static_exe, 0, "dynamically linked to libc, only cudart is static");
}

Test(cli_elf, stripped_static_cudart_still_recognised)
{
	char p[4096], out[] = "/tmp/gp_cli_elf_strippedXXXXXX", cmd[9000];
	app_path(p, sizeof p, "cli_app_static");
	int fd = mkstemp(out);
	cr_assert_geq(fd, 0);
	close(fd);
	snprintf(cmd, sizeof cmd, "strip -o '%s' '%s'", out, p);
	cr_assert_eq(system(cmd), 0, "strip failed");
	struct gp_elf_info info;
	char err[256];
	int rc = gp_elfscan_inspect(out, &info, err, sizeof err);
	unlink(out);
	cr_assert_eq(rc, 0, "%s", err);
	cr_assert_eq(info.cudart, GP_ELF_CUDART_STATIC);
}

Test(cli_elf, plain_program_and_script)
{
	struct gp_elf_info info;
	char err[256];
	cr_assert_eq(gp_elfscan_inspect("/bin/sh", &info, err, sizeof err), 0, "%s", err);
	cr_assert_eq(info.cudart, GP_ELF_NO_CUDART);
	char script[] = "/tmp/gp_cli_elf_scriptXXXXXX";
	int fd = mkstemp(script);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "#!/bin/sh\necho hi\n", 18), 18);
	close(fd);
	int rc = gp_elfscan_inspect(script, &info, err, sizeof err);
	unlink(script);
	cr_assert_eq(rc, 0);
	cr_assert_eq(info.cudart, GP_ELF_NOT_ELF);
}

Test(cli_elf, unreadable_inputs)
{
	struct gp_elf_info info;
	char err[256];
	cr_assert_eq(gp_elfscan_inspect("/nonexistent/gp_cli_app", &info, err, sizeof err), -ENOENT);
	cr_assert_eq(gp_elfscan_inspect("/tmp", &info, err, sizeof err), -EISDIR);
}

/* Every truncation of a real binary's first 4 KiB: no crash, and either a
 * clean answer or -EINVAL with a message. */
Test(cli_elf, truncated_copies_never_crash)
{
	char p[4096], out[] = "/tmp/gp_cli_elf_cutXXXXXX";
	app_path(p, sizeof p, "cli_app_shared");
	size_t n;
	unsigned char *img = slurp(p, &n);
	int fd = mkstemp(out);
	cr_assert_geq(fd, 0);
	close(fd);
	int invalid = 0;
	for (size_t cut = 1; cut < 4096 && cut < n; cut += 7) {
		spill(out, img, cut);
		struct gp_elf_info info;
		char err[256];
		int rc = gp_elfscan_inspect(out, &info, err, sizeof err);
		cr_assert(rc == 0 || rc == -EINVAL, "cut at %zu: rc %d", cut, rc);
		if (rc == -EINVAL) {
			cr_assert(err[0], "cut at %zu: -EINVAL without a message", cut);
			invalid++;
		}
	}
	unlink(out);
	free(img);
	cr_assert_gt(invalid, 0, "some cut must leave the program headers short");
}

/* Headers that point outside the file or past the string table. */
Test(cli_elf, hostile_offsets_rejected)
{
	char p[4096], out[] = "/tmp/gp_cli_elf_badXXXXXX";
	app_path(p, sizeof p, "cli_app_shared");
	size_t n;
	unsigned char *img = slurp(p, &n);
	int fd = mkstemp(out);
	cr_assert_geq(fd, 0);
	close(fd);
	struct gp_elf_info info;
	char err[256];

	unsigned char *bad = malloc(n);
	memcpy(bad, img, n);
	Elf64_Ehdr eh;
	memcpy(&eh, bad, sizeof eh);
	eh.e_phoff = (Elf64_Off)n - 8; /* program headers run off the end */
	memcpy(bad, &eh, sizeof eh);
	spill(out, bad, n);
	cr_assert_eq(gp_elfscan_inspect(out, &info, err, sizeof err), -EINVAL);
	cr_assert(strstr(err, "program headers"), "message: %s", err);

	/* DT_STRSZ shrunk to 1: every DT_NEEDED name offset lies beyond it. */
	memcpy(bad, img, n);
	memcpy(&eh, bad, sizeof eh);
	int patched = 0;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		memcpy(&ph, bad + eh.e_phoff + i * sizeof ph, sizeof ph);
		if (ph.p_type != PT_DYNAMIC)
			continue;
		for (size_t off = ph.p_offset; off + sizeof(Elf64_Dyn) <= ph.p_offset + ph.p_filesz;
		     off += sizeof(Elf64_Dyn)) {
			Elf64_Dyn d;
			memcpy(&d, bad + off, sizeof d);
			if (d.d_tag == DT_STRSZ) {
				d.d_un.d_val = 1;
				memcpy(bad + off, &d, sizeof d);
				patched = 1;
			}
		}
	}
	cr_assert(patched, "no DT_STRSZ found in %s", p);
	spill(out, bad, n);
	cr_assert_eq(gp_elfscan_inspect(out, &info, err, sizeof err), -EINVAL);
	cr_assert(strstr(err, "DT_NEEDED"), "message: %s", err);
	unlink(out);
	free(bad);
	free(img);
}

/* gp_elfscan_dynsym, attach's lookup of dlopen() in the target's C
 * library: the value it reads from the file is what the dynamic loader
 * resolved in this process, less the object's load base. */
Test(cli_elf, dynsym_matches_the_loader)
{
	void *fn = dlsym(RTLD_DEFAULT, "getpid");
	Dl_info di;
	cr_assert(fn && dladdr(fn, &di) && di.dli_fname, "getpid not found by the loader");
	uint64_t v = 0;
	cr_assert_eq(gp_elfscan_dynsym(di.dli_fname, "getpid", &v), 0, "getpid not in %s", di.dli_fname);
	cr_assert_eq(v, (uint64_t)((uintptr_t)fn - (uintptr_t)di.dli_fbase));
	cr_assert_eq(gp_elfscan_dynsym(di.dli_fname, "getpi", &v), -ENOENT, "a prefix is not the name");
	cr_assert_eq(gp_elfscan_dynsym(di.dli_fname, "gp_no_such_function", &v), -ENOENT);
}

Test(cli_elf, dynsym_refuses_what_is_not_elf)
{
	char out[] = "/tmp/gp_cli_elf_symXXXXXX";
	int fd = mkstemp(out);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "#!/bin/sh\n", 10), 10);
	close(fd);
	uint64_t v;
	cr_assert_eq(gp_elfscan_dynsym(out, "main", &v), -EINVAL);
	unlink(out);
	cr_assert_eq(gp_elfscan_dynsym("/nonexistent/libc.so.6", "dlopen", &v), -ENOENT);
	cr_assert_eq(gp_elfscan_dynsym("/tmp", "dlopen", &v), -EISDIR);
}

/* Every truncation of the C library's first 64 KiB (its dynamic symbols
 * lie in it): no crash, a symbol found or a clean refusal. */
Test(cli_elf, dynsym_truncated_copies_never_crash)
{
	Dl_info di;
	cr_assert(dladdr(dlsym(RTLD_DEFAULT, "getpid"), &di) && di.dli_fname);
	char out[] = "/tmp/gp_cli_elf_symcutXXXXXX";
	size_t n;
	unsigned char *img = slurp(di.dli_fname, &n);
	int fd = mkstemp(out);
	cr_assert_geq(fd, 0);
	close(fd);
	for (size_t cut = 1; cut < 65536 && cut < n; cut += 997) {
		spill(out, img, cut);
		uint64_t v;
		int rc = gp_elfscan_dynsym(out, "getpid", &v);
		cr_assert(rc == 0 || rc == -EINVAL || rc == -ENOENT, "cut at %zu: rc %d", cut, rc);
	}
	unlink(out);
	free(img);
}
