/*
 * elfscan.c — tells `gpuphase record`, before it runs anything, how the
 * target executable uses the CUDA runtime: through a DT_NEEDED
 * libcudart.so.N (the preload hooks can interpose it), linked in statically
 * (nvcc's default: only CUPTI through CUDA_INJECTION64_PATH sees the app),
 * or not at all (a script, python: cudart may still be dlopened later).
 *
 * Also the value of a function in a shared object's dynamic symbol table
 * (gp_elfscan_dynsym), which `gpuphase attach` adds to the object's load
 * address in the target to find dlopen() and gpuphase_attach_begin().
 *
 * Called by record.c and attach.c on the main thread of the command.
 * Invariants: the file is mapped read-only and every offset, size and count
 * read from it is checked against the mapping before use, so a truncated or
 * hostile file gives -EINVAL (and, from gp_elfscan_inspect, a message),
 * never a crash.
 *
 * Static cudart is recognised by a string every libcudart_static carries in
 * its error-name table ("cudaErrorCudartUnloading") or by the
 * "libcudart_static" symbol prefix when the binary is not stripped; a
 * dynamically linked app has neither (they live in libcudart.so).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

struct gp_elf_map {
	const uint8_t *p;
	size_t n;
};

/* True when [off, off+len) lies inside the mapping (overflow-safe). */
static int gp_elfscan_in(const struct gp_elf_map *m, uint64_t off, uint64_t len)
{
	return off <= m->n && len <= m->n - off;
}

/* File offset of virtual address va through the PT_LOAD segments, or
 * UINT64_MAX when no segment maps it. */
static uint64_t gp_elfscan_va2off(const struct gp_elf_map *m, const Elf64_Phdr *ph, unsigned nph,
				  uint64_t va)
{
	for (unsigned i = 0; i < nph; i++) {
		if (ph[i].p_type != PT_LOAD)
			continue;
		if (va >= ph[i].p_vaddr && va - ph[i].p_vaddr < ph[i].p_filesz) {
			uint64_t off = ph[i].p_offset + (va - ph[i].p_vaddr);
			return gp_elfscan_in(m, off, 1) ? off : UINT64_MAX;
		}
	}
	return UINT64_MAX;
}

/* Walk the dynamic section for a DT_NEEDED libcudart.so*; copies its name. */
static int gp_elfscan_needed(const struct gp_elf_map *m, const Elf64_Phdr *ph, unsigned nph,
			     const Elf64_Phdr *dyn, struct gp_elf_info *out, char *err, size_t errlen)
{
	if (!gp_elfscan_in(m, dyn->p_offset, dyn->p_filesz)) {
		snprintf(err, errlen, "dynamic segment lies outside the file");
		return -EINVAL;
	}
	const uint8_t *base = m->p + dyn->p_offset;
	size_t ndyn = dyn->p_filesz / sizeof(Elf64_Dyn);
	uint64_t strtab_va = 0, strsz = 0;
	int have_strtab = 0;
	for (size_t i = 0; i < ndyn; i++) {
		Elf64_Dyn d;
		memcpy(&d, base + i * sizeof d, sizeof d);
		if (d.d_tag == DT_NULL)
			break;
		if (d.d_tag == DT_STRTAB) {
			strtab_va = d.d_un.d_ptr;
			have_strtab = 1;
		} else if (d.d_tag == DT_STRSZ) {
			strsz = d.d_un.d_val;
		}
	}
	if (!have_strtab)
		return 0; /* no names at all: nothing needed */
	uint64_t stroff = gp_elfscan_va2off(m, ph, nph, strtab_va);
	if (stroff == UINT64_MAX || !gp_elfscan_in(m, stroff, strsz)) {
		snprintf(err, errlen, "dynamic string table lies outside the file");
		return -EINVAL;
	}
	const char *strtab = (const char *)m->p + stroff;
	for (size_t i = 0; i < ndyn; i++) {
		Elf64_Dyn d;
		memcpy(&d, base + i * sizeof d, sizeof d);
		if (d.d_tag == DT_NULL)
			break;
		if (d.d_tag != DT_NEEDED)
			continue;
		if (d.d_un.d_val >= strsz) {
			snprintf(err, errlen, "DT_NEEDED name offset %llu beyond the string table",
				 (unsigned long long)d.d_un.d_val);
			return -EINVAL;
		}
		const char *name = strtab + d.d_un.d_val;
		size_t maxlen = strsz - d.d_un.d_val;
		size_t len = strnlen(name, maxlen);
		if (len == maxlen) {
			snprintf(err, errlen, "unterminated DT_NEEDED name");
			return -EINVAL;
		}
		if (len >= 12 && strncmp(name, "libcudart.so", 12) == 0) {
			out->cudart = GP_ELF_CUDART_SHARED;
			snprintf(out->needed_cudart, sizeof out->needed_cudart, "%.*s",
				 (int)(sizeof out->needed_cudart - 1), name);
		}
	}
	return 0;
}

/* Inspect the mapped file; see cli.h for the contract. */
static int gp_elfscan_map(const struct gp_elf_map *m, struct gp_elf_info *out, char *err, size_t errlen)
{
	if (m->n < EI_NIDENT || memcmp(m->p, ELFMAG, SELFMAG) != 0 || m->p[EI_CLASS] != ELFCLASS64)
		return 0; /* GP_ELF_NOT_ELF */
	if (m->n < sizeof(Elf64_Ehdr)) {
		snprintf(err, errlen, "ELF header cut short (%zu bytes)", m->n);
		return -EINVAL;
	}
	Elf64_Ehdr eh;
	memcpy(&eh, m->p, sizeof eh);
	if (eh.e_phnum > 0 && eh.e_phentsize != sizeof(Elf64_Phdr)) {
		snprintf(err, errlen, "unexpected program header size %u", (unsigned)eh.e_phentsize);
		return -EINVAL;
	}
	if (!gp_elfscan_in(m, eh.e_phoff, (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr))) {
		snprintf(err, errlen, "program headers lie outside the file");
		return -EINVAL;
	}
	out->cudart = GP_ELF_NO_CUDART;
	/* Copy the headers out: the mapping need not be suitably aligned. */
	Elf64_Phdr ph[256];
	unsigned nph = eh.e_phnum < 256 ? eh.e_phnum : 256;
	memcpy(ph, m->p + eh.e_phoff, nph * sizeof(Elf64_Phdr));
	const Elf64_Phdr *dyn = NULL;
	int interp = 0;
	for (unsigned i = 0; i < nph; i++) {
		if (ph[i].p_type == PT_DYNAMIC)
			dyn = &ph[i];
		else if (ph[i].p_type == PT_INTERP)
			interp = 1;
	}
	out->is_static_exe = !interp && !dyn && eh.e_type == ET_EXEC;
	if (dyn) {
		int rc = gp_elfscan_needed(m, ph, nph, dyn, out, err, errlen);
		if (rc < 0)
			return rc;
	}
	if (out->cudart == GP_ELF_CUDART_SHARED)
		return 0;
	static const char *const markers[] = { "cudaErrorCudartUnloading", "libcudart_static" };
	for (size_t i = 0; i < sizeof markers / sizeof markers[0]; i++) {
		if (memmem(m->p, m->n, markers[i], strlen(markers[i]))) {
			out->cudart = GP_ELF_CUDART_STATIC;
			break;
		}
	}
	return 0;
}

/* Map the regular file at path read-only into *m (m->p NULL and m->n 0 for
 * an empty file). 0 or -errno; unmap with gp_elfscan_unmap. */
static int gp_elfscan_mmap(const char *path, struct gp_elf_map *m)
{
	m->p = NULL;
	m->n = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct stat st;
	if (fstat(fd, &st) != 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
	}
	if (st.st_size == 0) {
		close(fd);
		return 0;
	}
	void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	int e = errno;
	close(fd);
	if (p == MAP_FAILED)
		return -e;
	m->p = p;
	m->n = (size_t)st.st_size;
	return 0;
}

static void gp_elfscan_unmap(struct gp_elf_map *m)
{
	if (m->p)
		munmap((void *)m->p, m->n);
}

int gp_elfscan_inspect(const char *path, struct gp_elf_info *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof *out);
	if (errlen)
		err[0] = '\0';
	struct gp_elf_map m;
	int rc = gp_elfscan_mmap(path, &m);
	if (rc || !m.p)
		return rc; /* empty: not ELF */
	rc = gp_elfscan_map(&m, out, err, errlen);
	gp_elfscan_unmap(&m);
	return rc;
}

/* The value of the defined function name in the mapped file's dynamic
 * symbol tables (every SHT_DYNSYM section). 0, -ENOENT or -EINVAL. */
static int gp_elfscan_dynsym_map(const struct gp_elf_map *m, const char *name, uint64_t *value)
{
	Elf64_Ehdr eh;
	if (m->n < sizeof eh || memcmp(m->p, ELFMAG, SELFMAG) != 0 || m->p[EI_CLASS] != ELFCLASS64)
		return -EINVAL;
	memcpy(&eh, m->p, sizeof eh);
	if (eh.e_shnum && (eh.e_shentsize != sizeof(Elf64_Shdr) ||
			   !gp_elfscan_in(m, eh.e_shoff, (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr))))
		return -EINVAL;
	size_t nlen = strlen(name);
	for (unsigned i = 0; i < eh.e_shnum; i++) {
		Elf64_Shdr sh, ss;
		memcpy(&sh, m->p + eh.e_shoff + i * sizeof sh, sizeof sh);
		if (sh.sh_type != SHT_DYNSYM || sh.sh_link >= eh.e_shnum)
			continue;
		memcpy(&ss, m->p + eh.e_shoff + sh.sh_link * sizeof ss, sizeof ss);
		if (!gp_elfscan_in(m, sh.sh_offset, sh.sh_size) || !gp_elfscan_in(m, ss.sh_offset, ss.sh_size))
			continue;
		const char *str = (const char *)m->p + ss.sh_offset;
		for (uint64_t k = 0; k < sh.sh_size / sizeof(Elf64_Sym); k++) {
			Elf64_Sym sym;
			memcpy(&sym, m->p + sh.sh_offset + k * sizeof sym, sizeof sym);
			if (sym.st_name >= ss.sh_size || sym.st_shndx == SHN_UNDEF || !sym.st_value ||
			    ELF64_ST_TYPE(sym.st_info) != STT_FUNC)
				continue;
			/* the name and its NUL inside the string table */
			if (ss.sh_size - sym.st_name > nlen && !memcmp(str + sym.st_name, name, nlen + 1)) {
				*value = sym.st_value;
				return 0;
			}
		}
	}
	return -ENOENT;
}

int gp_elfscan_dynsym(const char *path, const char *name, uint64_t *value)
{
	struct gp_elf_map m;
	int rc = gp_elfscan_mmap(path, &m);
	if (rc)
		return rc;
	rc = m.p ? gp_elfscan_dynsym_map(&m, name, value) : -EINVAL;
	gp_elfscan_unmap(&m);
	return rc;
}
