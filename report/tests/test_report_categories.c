/*
 * test_report_categories.c — Criterion suite for the kernel-name → category
 * table (report/core/category.c, report/core/categories.tsv): every real
 * kernel name of tests/data/kernel_names.tsv (cuBLAS/cuBLASLt, cuDNN,
 * FlashAttention, NCCL, PyTorch ATen, Triton, vLLM; at least 15 each)
 * lands in its expected category, mangled names through the report's own
 * demangling; each default rule is needed by the data (dropped, at least
 * one name lands elsewhere: the tamper control); user rules come first and
 * may name new categories; bad tables are refused with their line; and
 * the pipeline puts a category on each operator and sums them. Reads
 * GP_SRC (default "."). Runs on the test thread only.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel_name.h"
#include "report/core/category.h"
#include "report/core/rep.h"
#include "report/pipeline.h"
#include "trace_builder.h"

#define NAMES_MAX 400

struct kname {
	char *name, *full, *want, *lib;
};

static struct kname names[NAMES_MAX];
static size_t nnames;

/* tests/data/kernel_names.tsv into names[], each demangled the way the
 * report does it (trace/kernel_name.c). */
static void load_names(void)
{
	const char *src = getenv("GP_SRC");
	char path[1024];
	snprintf(path, sizeof path, "%s/tests/data/kernel_names.tsv", src && *src ? src : ".");
	FILE *f = fopen(path, "r");
	cr_assert(f, "cannot open %s", path);
	char *line = NULL;
	size_t cap = 0;
	nnames = 0;
	while (getline(&line, &cap, f) > 0) {
		line[strcspn(line, "\n")] = 0;
		if (!*line || *line == '#')
			continue;
		cr_assert_lt(nnames, NAMES_MAX);
		struct kname *k = &names[nnames++];
		char *save = NULL, *name = strtok_r(line, "\t", &save), *want = strtok_r(NULL, "\t", &save),
		     *lib = strtok_r(NULL, "\t", &save), *source = strtok_r(NULL, "\t", &save);
		cr_assert(name && want && lib && source && *source, "kernel_names.tsv line %zu: 4 columns", nnames);
		k->name = strdup(name);
		k->want = strdup(want);
		k->lib = strdup(lib);
		char *short_name = NULL; /* the report's rule: demangled, or as recorded */
		cr_assert_eq(gp_kernel_name_names(k->name, &k->full, &short_name), 0);
		free(short_name);
	}
	free(line);
	fclose(f);
}

static void free_names(void)
{
	for (size_t i = 0; i < nnames; i++) {
		free(names[i].name);
		free(names[i].full);
		free(names[i].want);
		free(names[i].lib);
	}
	nnames = 0;
}

static const char *category_of(const char *full)
{
	return gp_category_name(gp_category_of(full, GP_GKIND_KERNEL));
}

static void defaults_only(void)
{
	char err[256] = "";
	unsetenv("GPUPHASE_CATEGORIES");
	cr_assert_eq(gp_category_load(NULL, err, sizeof err), 0, "%s", err);
}

TestSuite(categories, .init = load_names, .fini = free_names);

Test(categories, every_real_name_in_its_category)
{
	defaults_only();
	size_t bad = 0;
	for (size_t i = 0; i < nnames; i++) {
		const char *got = category_of(names[i].full);
		if (strcmp(got, names[i].want)) {
			bad++;
			cr_log_error("%s %s: %s, not %s", names[i].lib, names[i].name, got, names[i].want);
		}
	}
	cr_assert_eq(bad, 0, "%zu of %zu names misfiled", bad, nnames);
}

Test(categories, fifteen_real_names_per_library_and_mangled_ones_demangled)
{
	static const char *const libs[] = { "cuBLAS", "cuDNN", "FlashAttention", "NCCL", "ATen", "Triton", "vLLM" };
	for (size_t l = 0; l < sizeof libs / sizeof libs[0]; l++) {
		size_t n = 0;
		for (size_t i = 0; i < nnames; i++)
			n += !strcmp(names[i].lib, libs[l]);
		cr_expect_geq(n, 15, "%s: %zu names", libs[l], n);
	}
	/* mangled names go through the report's demangling; one a profiler cut
	 * short stays as recorded (the report does the same), so count those
	 * that demangled */
	size_t demangled = 0;
	for (size_t i = 0; i < nnames; i++)
		demangled += !strncmp(names[i].name, "_Z", 2) && strcmp(names[i].full, names[i].name);
	cr_assert_geq(demangled, 2);
}

/* The tamper control: each default rule, dropped, misfiles at least one
 * real name, so no rule is untested and a lost rule fails this suite. */
Test(categories, every_default_rule_is_needed)
{
	char err[256] = "";
	size_t rules = 0;
	for (const char *p = gp_category_defaults(); *p; p += strcspn(p, "\n") + (p[strcspn(p, "\n")] == '\n')) {
		const char *t = p + strspn(p, " \t");
		rules += *t && *t != '\n' && *t != '#';
	}
	cr_assert_geq(rules, 10);
	for (size_t skip = 0; skip < rules; skip++) {
		gp_category_reset();
		cr_assert_eq(gp_category_parse(gp_category_defaults(), "defaults", skip, err, sizeof err), 0, "%s", err);
		size_t moved = 0;
		for (size_t i = 0; i < nnames; i++)
			moved += !!strcmp(category_of(names[i].full), names[i].want);
		cr_expect_gt(moved, 0, "default rule %zu dropped: no real name notices", skip);
	}
	defaults_only();
}

Test(categories, copies_and_sets_by_kind_hook_only_other)
{
	defaults_only();
	/* a name that a rule would file elsewhere: the kind decides */
	cr_assert_str_eq(gp_category_name(gp_category_of("ncclDevKernel_SendRecv", GP_GKIND_COPY)), "memory");
	cr_assert_str_eq(gp_category_name(gp_category_of("memset", GP_GKIND_SET)), "memory");
	cr_assert_str_eq(gp_category_name(gp_category_of("cudaLaunchKernel", GP_GKIND_OTHER)), "other");
	cr_assert_str_eq(gp_category_name(gp_category_of("my_own_kernel", GP_GKIND_KERNEL)), "other");
	cr_assert_null(gp_category_name(GP_CAT_NONE));
}

static char *write_table(const char *text)
{
	static char path[64];
	snprintf(path, sizeof path, "/tmp/gp_categoriesXXXXXX");
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

Test(categories, user_rules_first_and_new_categories)
{
	char err[256] = "";
	char *opt = strdup(write_table("# mine\nkv_cache\treshape_and_cache\n\ncompute\t^ncclDevKernel_SendRecv$\n"));
	char *env = strdup(write_table("gemm\tvllm::rms_norm_kernel\nkv_cache\tcopy_blocks\n"));
	setenv("GPUPHASE_CATEGORIES", env, 1);
	cr_assert_eq(gp_category_load(opt, err, sizeof err), 0, "%s", err);
	cr_assert_str_eq(category_of("vllm::reshape_and_cache_flash_kernel"), "kv_cache");
	cr_assert_str_eq(category_of("vllm::copy_blocks_kernel"), "kv_cache");
	cr_assert_str_eq(category_of("ncclDevKernel_SendRecv"), "compute");
	cr_assert_str_eq(category_of("ncclDevKernel_Generic"), "communication"); /* the defaults still apply */
	cr_assert_str_eq(category_of("vllm::rms_norm_kernel"), "gemm");          /* the user's rule beats them */
	cr_assert_eq(gp_category_count(), 12);
	unlink(opt);
	unlink(env);
	free(opt);
	free(env);
	defaults_only();
	cr_assert_str_eq(category_of("vllm::reshape_and_cache_flash_kernel"), "memory");
}

Test(categories, bad_tables_refused_with_their_line)
{
	char err[256] = "";
	unsetenv("GPUPHASE_CATEGORIES");
	char *p = write_table("gemm\tsgemm\nGEMM\tfoo\n");
	cr_assert_eq(gp_category_load(p, err, sizeof err), -EINVAL);
	cr_assert(strstr(err, ":2: a category is"), "%s", err);
	unlink(p);
	p = write_table("# ok\nattention\tflash(\n");
	cr_assert_eq(gp_category_load(p, err, sizeof err), -EINVAL);
	cr_assert(strstr(err, ":2: bad regular expression"), "%s", err);
	unlink(p);
	p = write_table("gemm sgemm\n");
	cr_assert_eq(gp_category_load(p, err, sizeof err), -EINVAL);
	cr_assert(strstr(err, ":1: no TAB"), "%s", err);
	unlink(p);
	cr_assert_eq(gp_category_load("/nonexistent/categories.tsv", err, sizeof err), -ENOENT);
	cr_assert(strstr(err, "/nonexistent/categories.tsv"), "%s", err);
	/* a refused table leaves the defaults */
	cr_assert_str_eq(category_of("ampere_sgemm_128x64_nn"), "gemm");
}

/* Through the pipeline: each operator gets its category once, from its
 * demangled name (a mangled vLLM kernel) or its kind (a copy); the sums
 * per category add up to the operators'. */
Test(categories, pipeline_operators_and_sums)
{
	defaults_only();
	static struct recs t;
	t.n = 0;
	rec_string(&t, 1, "_ZN4vllm15rms_norm_kernelIfEEvPT_PKS1_lS4_fii");
	rec_string(&t, 2, "ampere_sgemm_128x64_nn");
	const uint64_t T0 = 1000000;
	for (uint32_t i = 0; i < 4; i++) {
		uint64_t at = T0 + i * 100000;
		rec_api(&t, GP_REC_RUNTIME_API, GP_API_LAUNCH, 7, at, 3000, 10 + i);
		rec_kernel(&t, 13, at + 5000, at + 25000, 10 + i, i % 2 ? 2 : 1);
	}
	rec_api(&t, GP_REC_RUNTIME_API, GP_API_MEMCPY_ASYNC, 7, T0 + 500000, 2000, 30);
	rec_copy(&t, GP_REC_MEMCPY, 1, 13, T0 + 505000, 8000, 30, 30, 1);
	struct gp_pipeline_opts po = { .group_by = GP_GROUP_KERNEL, .outlier_factor = 1.5 };
	struct gp_pipeline *p = gp_pipeline_new(&po);
	cr_assert(p);
	char err[256];
	cr_assert_eq(gp_pipeline_add_records(p, "records", t.r, t.n, err, sizeof err), 0, "%s", err);
	struct gp_rep rep;
	cr_assert_eq(gp_pipeline_report(p, 0, 1, &rep), 0);
	cr_assert_eq(rep.ngroups, 3);
	struct gp_category_sum sums[GP_CAT_MAX + 1];
	gp_category_sums(&rep, sums);
	uint64_t ops = 0;
	for (size_t i = 0; i < rep.ngroups; i++) {
		const struct gp_rep_group *g = &rep.groups[i];
		const char *want = g->kinds & GP_GKIND_COPY		  ? "memory"
				   : strstr(g->long_name, "rms_norm_kernel") ? "normalization"
									     : "gemm";
		cr_expect_str_eq(gp_category_name(g->category), want, "%s", g->long_name);
		ops += g->count;
	}
	uint64_t sum_ops = 0, sum_exec = 0, exec = 0;
	for (size_t c = 0; c <= GP_CAT_MAX; c++) {
		sum_ops += sums[c].count;
		sum_exec += sums[c].execute_ns;
	}
	for (size_t i = 0; i < rep.ngroups; i++)
		exec += rep.groups[i].execute_ns;
	cr_assert_eq(sum_ops, ops);
	cr_assert_eq(sum_exec, exec);
	cr_assert_eq(sums[GP_CAT_NONE].operators, 0);
	gp_rep_free(&rep);
	gp_pipeline_free(p);

	/* grouped by stream, an operator holds several kernels: no category */
	po.group_by = GP_GROUP_STREAM;
	p = gp_pipeline_new(&po);
	cr_assert_eq(gp_pipeline_add_records(p, "records", t.r, t.n, err, sizeof err), 0, "%s", err);
	cr_assert_eq(gp_pipeline_report(p, 0, 1, &rep), 0);
	for (size_t i = 0; i < rep.ngroups; i++)
		cr_expect_eq(rep.groups[i].category, GP_CAT_NONE);
	gp_rep_free(&rep);
	gp_pipeline_free(p);
}
