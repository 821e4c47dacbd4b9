/*
 * test_lib_config.c — the GPUPHASE_* table: parsing (config.c, linked in
 * directly), the one-line diagnostics, docs/configuration.md agreeing with
 * the table, and — end to end — every variable's bad value leaving the
 * application exactly as it runs without the library.
 */
#include "libgpuphase/gp_lib.h"
#include "lt_util.h"

static int lt_parse(const char *const *env, struct gp_config *c, char *msg, size_t len)
{
	return gp_config_parse((char *const *)env, c, msg, len, NULL);
}

Test(lib_config, defaults)
{
	const char *env[] = {"PATH=/bin", NULL};
	struct gp_config c;
	char msg[256];
	cr_assert(lt_parse(env, &c, msg, sizeof msg) == 0);
	cr_assert_str_eq(c.output, "gpuphase-%h-%p.gpht");
	cr_assert(c.win_mode == GP_WINMODE_ALL && c.marker == GP_MARKER_SYNC && c.stacks == GP_STACKS_SYNC);
	cr_assert(c.log_level == GP_LOG_ERROR && c.cupti == 1 && !c.disable);
	cr_assert_str_eq(c.cupti_lib, "libcupti.so.13");
}

Test(lib_config, windows)
{
	struct gp_config c;
	char msg[256];
	const char *e1[] = {"GPUPHASE_WINDOW=skip=10,iters=5,repeat=3", NULL};
	cr_assert(lt_parse(e1, &c, msg, sizeof msg) == 0);
	cr_assert(c.win_mode == GP_WINMODE_ITERS && c.skip == 10 && c.iters == 5 && c.repeat == 3);
	const char *e2[] = {"GPUPHASE_WINDOW=iters=2", NULL};
	cr_assert(lt_parse(e2, &c, msg, sizeof msg) == 0);
	cr_assert(c.win_mode == GP_WINMODE_ITERS && c.skip == 0 && c.iters == 2 && c.repeat == 1);
	const char *e3[] = {"GPUPHASE_WINDOW=delay=500ms,duration=2s", NULL};
	cr_assert(lt_parse(e3, &c, msg, sizeof msg) == 0);
	cr_assert(c.win_mode == GP_WINMODE_TIME && c.delay_ns == 500000000u && c.duration_ns == 2000000000u);
	const char *e4[] = {"GPUPHASE_WINDOW=trigger", NULL};
	cr_assert(lt_parse(e4, &c, msg, sizeof msg) == 0 && c.win_mode == GP_WINMODE_TRIGGER);
	cr_assert(c.every_ns == 0 && c.keep_bytes == GP_KEEP_BYTES_DEFAULT);
	/* the duty cycle: a window each period, a 60th of it by default */
	const char *e5[] = {"GPUPHASE_WINDOW=every=60s,duration=1s", "GPUPHASE_WINDOW_KEEP_BYTES=1M", NULL};
	cr_assert(lt_parse(e5, &c, msg, sizeof msg) == 0);
	cr_assert(c.win_mode == GP_WINMODE_TIME && c.every_ns == 60000000000u && c.duration_ns == 1000000000u &&
		  c.delay_ns == 0 && c.keep_bytes == 1u << 20);
	const char *e6[] = {"GPUPHASE_WINDOW=every=1s", NULL};
	cr_assert(lt_parse(e6, &c, msg, sizeof msg) == 0);
	cr_assert(c.win_mode == GP_WINMODE_TIME && c.every_ns == 1000000000u && c.duration_ns == 1000000000u / 60);
	const char *e7[] = {"GPUPHASE_WINDOW_KEEP_BYTES=63k", NULL};
	cr_assert(lt_parse(e7, &c, msg, sizeof msg) == -EINVAL);
	static const char *const bad[] = {"skip=3", "skip=1,iters=0", "skip=-1,iters=2", "iters=2,delay=1s",
					  "delay=1s", "duration=0s", "skip=1,iters=2,repeat=0", "skip=1,skip=2,iters=1",
					  "delay=1x,duration=1s", "sometimes", "skip=1;iters=2", "every=1s,duration=1s",
					  "every=1s,duration=2s", "every=0s,duration=1s", "every=1s,iters=2",
					  "every=1s,every=2s", ""};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char v[128];
		snprintf(v, sizeof v, "GPUPHASE_WINDOW=%s", bad[i]);
		const char *e[] = {v, NULL};
		cr_assert(lt_parse(e, &c, msg, sizeof msg) == -EINVAL, "%s accepted", bad[i]);
	}
}

Test(lib_config, durations)
{
	uint64_t ns;
	cr_assert(gp_config_duration("500ms", &ns) == 0 && ns == 500000000u);
	cr_assert(gp_config_duration("1.5s", &ns) == 0 && ns == 1500000000u);
	cr_assert(gp_config_duration("2", &ns) == 0 && ns == 2000000000u);
	cr_assert(gp_config_duration("250us", &ns) == 0 && ns == 250000u);
	cr_assert(gp_config_duration("1m", &ns) == 0 && ns == 60000000000u);
	cr_assert(gp_config_duration("ms", &ns) != 0 && gp_config_duration("5h", &ns) != 0 &&
		  gp_config_duration("-1s", &ns) != 0);
	/* Plain decimals only (docs/configuration.md): digits first, no
	 * exponent, hex, inf or nan, which strtod alone would take. */
	cr_assert(gp_config_duration("0.5s", &ns) == 0 && ns == 500000000u);
	cr_assert(gp_config_duration("2.", &ns) == 0 && ns == 2000000000u);
	static const char *const bad[] = {".5s", "1e3ms", "0x10", "1e3", "9inf", "0nan", "+1s", " 1s", "1 s",
					  "1.5.5s", "1..5s"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		cr_assert(gp_config_duration(bad[i], &ns) != 0, "duration '%s' accepted", bad[i]);
}

Test(lib_config, check_one_variable)
{
	struct gp_config c;
	const char *acc = "x";
	cr_assert_eq(gp_config_check("GPUPHASE_WINDOW", "skip=1,iters=2", &c, &acc), 0);
	cr_assert(c.win_mode == GP_WINMODE_ITERS && c.skip == 1 && c.iters == 2 && c.repeat == 1 && acc == NULL);
	cr_assert_eq(gp_config_check("GPUPHASE_WINDOW", "duration=.5s", &c, &acc), -EINVAL);
	cr_assert(acc && strstr(acc, "accepted: all"), "accepted text: %s", acc ? acc : "(null)");
	cr_assert_eq(gp_config_check("GPUPHASE_MAX_BYTES", "2k", &c, &acc), 0);
	cr_assert_eq(c.max_bytes, 2048u);
	cr_assert_eq(gp_config_check("GPUPHASE_NOPE", "1", &c, &acc), -ENOENT);
}

Test(lib_config, cupti_modes)
{
	struct gp_config c;
	const char *acc = NULL;
	char text[192];
	cr_assert_eq(gp_config_check("GPUPHASE_CUPTI", "1", &c, &acc), 0);
	cr_assert(c.cupti == 1);
	gp_config_cupti_text(&c.cupti_mode, text, sizeof text);
	cr_expect_str_eq(text, GP_CUPTI_MODE_DEFAULT, "1 is the default mode");
	cr_expect(c.cupti_mode.runtime == GP_CUPTI_API_NEEDED && c.cupti_mode.driver == GP_CUPTI_API_NEEDED &&
		  c.cupti_mode.extcorr == GP_CUPTI_EXT_SYNC && c.cupti_mode.sync && c.cupti_mode.overhead);
	cr_assert_eq(gp_config_check("GPUPHASE_CUPTI", "off", &c, &acc), 0);
	cr_expect(c.cupti == 0);
	cr_assert_eq(gp_config_check("GPUPHASE_CUPTI", "full", &c, &acc), 0);
	cr_expect(c.cupti == 1 && c.cupti_mode.runtime == GP_CUPTI_API_ALL && c.cupti_mode.extcorr == GP_CUPTI_EXT_ALL);
	static const struct {
		const char *in, *canonical;
	} ok[] = {
		{"activity", "activity"},
		{"minimal", "minimal"},
		{"lean", "lean"},
		{"full", "full"},
		{"full,extcorr=off", "full,extcorr=off"},
		{"sync=0", "lean,sync=0"},
		{"minimal,sync=1,overhead=1,extcorr=sync", "lean"},
		{"lean,buffer=8M,flush=100ms,per_thread=0", "lean,per_thread=0,buffer=8M,flush=100ms"},
		{"activity,runtime=all", "activity,runtime=all"},
		{"lean,buffer=65536", "lean,buffer=64k"},
		{"lean,flush=0", "lean"},
		{"runtime=all,driver=all,extcorr=all", "full"},
	};
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		cr_assert_eq(gp_config_check("GPUPHASE_CUPTI", ok[i].in, &c, &acc), 0, "'%s' refused", ok[i].in);
		gp_config_cupti_text(&c.cupti_mode, text, sizeof text);
		cr_expect_str_eq(text, ok[i].canonical, "'%s'", ok[i].in);
		/* the canonical text reads back as the same mode */
		struct gp_config c2;
		cr_assert_eq(gp_config_check("GPUPHASE_CUPTI", text, &c2, &acc), 0, "'%s' refused", text);
		cr_expect(!memcmp(&c.cupti_mode, &c2.cupti_mode, sizeof c.cupti_mode), "'%s' round trip", text);
	}
	static const char *const bad[] = {"", "2", "lean,", ",lean", "lean,full", "medium", "runtime=some",
					  "extcorr=needed", "sync=2", "buffer=1k", "buffer=1G", "buffer=100001",
					  "flush=1500us", "flush=2m", "lean,sync=0,sync=1", "runtime", "lean,,sync=0"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		cr_expect_eq(gp_config_check("GPUPHASE_CUPTI", bad[i], &c, &acc), -EINVAL, "'%s' accepted", bad[i]);
		cr_expect(acc && strstr(acc, "lean"), "accepted text names the modes");
	}
}

Test(lib_config, markers_stacks_log)
{
	struct gp_config c;
	char msg[256];
	const char *e1[] = {"GPUPHASE_ITER_MARKER=kernel:*gemm*", "GPUPHASE_STACKS=all", "GPUPHASE_LOG=debug:/tmp/x.log",
			    NULL};
	cr_assert(lt_parse(e1, &c, msg, sizeof msg) == 0);
	cr_assert(c.marker == GP_MARKER_KERNEL && !strcmp(c.marker_arg, "*gemm*"));
	cr_assert(c.stacks == GP_STACKS_ALL && c.log_level == GP_LOG_DEBUG && !strcmp(c.log_file, "/tmp/x.log"));
	const char *e2[] = {"GPUPHASE_ITER_MARKER=nvtx:train step", NULL};
	cr_assert(lt_parse(e2, &c, msg, sizeof msg) == 0 && c.marker == GP_MARKER_NVTX &&
		  !strcmp(c.marker_arg, "train step"));
	const char *e3[] = {"GPUPHASE_ITER_MARKER=profiler", NULL};
	cr_assert(lt_parse(e3, &c, msg, sizeof msg) == 0 && c.marker == GP_MARKER_PROFILER);
}

/* GPUPHASE_COUNTERS: off, top=N or kernel=GLOB;GLOB (last, commas and all),
 * with samples/skip (and warmup for top) in any order before. */
Test(lib_config, counters)
{
	struct gp_config c;
	char msg[256];
	const char *e0[] = {"PATH=/bin", NULL};
	cr_assert(lt_parse(e0, &c, msg, sizeof msg) == 0);
	cr_assert(c.counters == GP_COUNTERS_OFF && c.counters_samples == 3 && c.counters_skip == 1 &&
		  c.counters_warmup == 100);
	const char *e1[] = {"GPUPHASE_COUNTERS=samples=5,top=4,warmup=20", NULL};
	cr_assert(lt_parse(e1, &c, msg, sizeof msg) == 0, "%s", msg);
	cr_assert(c.counters == GP_COUNTERS_TOP && c.counters_top == 4 && c.counters_samples == 5 &&
		  c.counters_warmup == 20 && c.counters_skip == 1);
	const char *e2[] = {"GPUPHASE_COUNTERS=skip=0,kernel=ns::k<int, float>;*gemm*", NULL};
	cr_assert(lt_parse(e2, &c, msg, sizeof msg) == 0, "%s", msg);
	cr_assert(c.counters == GP_COUNTERS_KERNEL && c.counters_skip == 0);
	cr_assert_str_eq(c.counters_kernels, "ns::k<int, float>;*gemm*");
	cr_assert_str_eq(c.counters_text, "skip=0,kernel=ns::k<int, float>;*gemm*");
	const char *bad[] = {"top=0", "top=65", "samples=3", "kernel=", "top=2,kernel=x", "top=2,top=3", "deep",
			     "top=2,samples=0", "top=x", ""};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		const char *accepted;
		cr_assert(gp_config_check("GPUPHASE_COUNTERS", bad[i], &c, &accepted) == -EINVAL, "'%s' accepted",
			  bad[i]);
	}
}

Test(lib_config, message_names_variable_value_and_accepted)
{
	struct gp_config c;
	char msg[512];
	const char *e[] = {"GPUPHASE_STACKS=deep", NULL};
	cr_assert(lt_parse(e, &c, msg, sizeof msg) == -EINVAL);
	cr_assert_str_eq(msg, "gpuphase: GPUPHASE_STACKS='deep': accepted: off, sync, launch or all");
	/* an empty value is refused like any other bad one (GPUPHASE_WINDOW too) */
	for (size_t i = 0; i < gp_config_nvars; i++) {
		char v[128];
		snprintf(v, sizeof v, "%s=", gp_config_vars[i].name);
		const char *ee[] = {v, NULL};
		cr_assert(lt_parse(ee, &c, msg, sizeof msg) == -EINVAL, "%s accepted", v);
		char want[512];
		snprintf(want, sizeof want, "gpuphase: %s='': %s", gp_config_vars[i].name, gp_config_vars[i].accepted);
		cr_assert_str_eq(msg, want);
	}
}

Test(lib_config, disable_wins)
{
	struct gp_config c;
	char msg[256];
	const char *e[] = {"GPUPHASE_WINDOW=bogus", "GPUPHASE_DISABLE=1", NULL};
	cr_assert(lt_parse(e, &c, msg, sizeof msg) == 0 && c.disable == 1);
}

static char lt_warned[512];
static void lt_warn(const char *line)
{
	snprintf(lt_warned, sizeof lt_warned, "%s", line);
}

Test(lib_config, unknown_variable_suggestion)
{
	struct gp_config c;
	char msg[256];
	const char *e[] = {"GPUPHASE_WINDWO=all", NULL};
	cr_assert(gp_config_parse((char *const *)e, &c, msg, sizeof msg, lt_warn) == 0);
	cr_assert_str_eq(lt_warned, "gpuphase: unknown variable GPUPHASE_WINDWO ignored (did you mean GPUPHASE_WINDOW?)");
}

Test(lib_config, output_expansion)
{
	char out[256];
	struct gp_config_job j3 = { .rank = "3" }, j0 = { 0 };
	cr_assert(gp_config_expand("t-%h-%p-r%r-%%.gpht", 42, "node1", &j3, 0, out, sizeof out) == 0);
	cr_assert_str_eq(out, "t-node1-42-r3-%.gpht");
	cr_assert(gp_config_expand("%t", 1, "h", &j0, 86400, out, sizeof out) == 0);
	cr_assert_str_eq(out, "19700102T000000Z");
	cr_assert(gp_config_expand("x%q", 1, "h", &j0, 0, out, sizeof out) == -EINVAL);
	cr_assert(gp_config_expand("x%", 1, "h", &j0, 0, out, sizeof out) == -EINVAL);
	cr_assert(gp_config_expand("%h%h%h", 1, "abcdefgh", &j0, 0, out, 10) == -ENAMETOOLONG);
	/* unknown rank and job: "0" and "nojob" */
	cr_assert(gp_config_expand("%j/r%r", 1, "h", &j0, 0, out, sizeof out) == 0);
	cr_assert_str_eq(out, "nojob/r0");
	/* a launcher's value is one file-name component, never a path */
	struct gp_config_job odd = { .rank = "../1", .job_id = ".." };
	cr_assert(gp_config_expand("%j/%j-r%r", 1, "h", &odd, 0, out, sizeof out) == 0);
	cr_assert_str_eq(out, "_../_..-r.._1");
	const char *env1[] = {"SLURM_PROCID=5", "OMPI_COMM_WORLD_RANK=4", NULL};
	cr_assert_str_eq(gp_config_rank((char *const *)env1), "4");
	const char *env2[] = {"SLURM_PROCID=5", "RANK=2", NULL};
	cr_assert_str_eq(gp_config_rank((char *const *)env2), "2");
	const char *env3[] = {"X=1", NULL};
	cr_assert_str_eq(gp_config_rank((char *const *)env3), "0");
	const char *env4[] = {"PMI_RANK=7", "SLURM_PROCID=5", NULL};
	cr_assert_str_eq(gp_config_rank((char *const *)env4), "7");
}

/* What launchers say, in precedence: under `srun torchrun` the worker's
 * torchrun variables win over Slurm's (which describe the agent). */
Test(lib_config, job_from_launchers)
{
	struct gp_config_job j;
	const char *torchrun_in_slurm[] = {"SLURM_PROCID=1", "SLURM_LOCALID=0", "SLURM_NTASKS=2", "SLURM_NODEID=1",
					   "SLURM_JOB_ID=9911", "RANK=5", "LOCAL_RANK=1", "WORLD_SIZE=8",
					   "GROUP_RANK=1", "TORCHELASTIC_RUN_ID=none", NULL};
	gp_config_job((char *const *)torchrun_in_slurm, &j);
	cr_assert_str_eq(j.rank, "5");
	cr_assert_str_eq(j.local_rank, "1");
	cr_assert_str_eq(j.world_size, "8");
	cr_assert_str_eq(j.node, "1");
	cr_assert_str_eq(j.job_id, "9911"); /* torchrun's "none" is no id */
	const char *openmpi[] = {"OMPI_COMM_WORLD_RANK=3", "OMPI_COMM_WORLD_LOCAL_RANK=1", "OMPI_COMM_WORLD_SIZE=4",
				 "EMPTY=", "RANK=", NULL};
	gp_config_job((char *const *)openmpi, &j);
	cr_assert_str_eq(j.rank, "3"); /* an empty RANK says nothing */
	cr_assert_str_eq(j.local_rank, "1");
	cr_assert_str_eq(j.world_size, "4");
	cr_assert_null(j.node);
	cr_assert_null(j.job_id);
	const char *torchrun[] = {"RANK=0", "TORCHELASTIC_RUN_ID=run-7", "SLURM_JOB_ID=1", "RANKX=9", NULL};
	gp_config_job((char *const *)torchrun, &j);
	cr_assert_str_eq(j.job_id, "run-7");
	cr_assert_str_eq(j.rank, "0");
}

/* The default output: per host and pid alone, one directory per job and
 * one file per rank inside a job; GPUPHASE_OUTPUT always wins. */
Test(lib_config, output_default_in_a_job)
{
	struct gp_config c;
	char msg[256];
	const char *none[] = {NULL};
	cr_assert(gp_config_parse((char *const *)none, &c, msg, sizeof msg, NULL) == 0);
	struct gp_config_job alone = { 0 }, job = { .rank = "3", .job_id = "77" };
	cr_assert_str_eq(gp_config_output(&c, &alone), "gpuphase-%h-%p.gpht");
	cr_assert_str_eq(gp_config_output(&c, &job), "gpuphase-%j/gpuphase-%j-r%r.gpht");
	char out[256];
	cr_assert(gp_config_expand(gp_config_output(&c, &job), 1, "h", &job, 0, out, sizeof out) == 0);
	cr_assert_str_eq(out, "gpuphase-77/gpuphase-77-r3.gpht");
	const char *set[] = {"GPUPHASE_OUTPUT=mine-%r.gpht", NULL};
	cr_assert(gp_config_parse((char *const *)set, &c, msg, sizeof msg, NULL) == 0);
	cr_assert_str_eq(gp_config_output(&c, &job), "mine-%r.gpht");
}

/* docs/configuration.md has the same table: one row per variable, with its
 * default and accepted values exactly as the code says. */
Test(lib_config, docs_table_matches_code)
{
	char p[1200];
	snprintf(p, sizeof p, "%s/docs/configuration.md", lt_src());
	size_t len;
	char *doc = lt_slurp(p, &len);
	cr_assert(len > 0, "cannot read %s", p);
	size_t rows = 0;
	for (char *l = strstr(doc, "\n| `GPUPHASE_"); l; l = strstr(l + 1, "\n| `GPUPHASE_"))
		rows++;
	cr_assert(rows == gp_config_nvars, "%zu rows in docs/configuration.md, %zu variables in the code", rows,
		  gp_config_nvars);
	for (size_t i = 0; i < gp_config_nvars; i++) {
		const struct gp_config_var *v = &gp_config_vars[i];
		const char *acc = v->accepted + strlen("accepted: ");
		char row[1024];
		snprintf(row, sizeof row, "| `%s` | `%s` | %s | %s |", v->name, v->def, acc, v->doc);
		cr_assert(strstr(doc, row), "docs/configuration.md lacks the row\n%s", row);
	}
	free(doc);
}

/* Every variable, a bad value: the documented line, nothing else from the
 * library, no trace, the program's output and exit status unchanged. */
Test(lib_config, bad_values_end_to_end, .timeout = 240)
{
	static const char *const bad[][2] = {
		{"GPUPHASE_DISABLE", "maybe"},         {"GPUPHASE_OUTPUT", "trace-%q.gpht"},
		{"GPUPHASE_WINDOW", "skip=two,iters=1"}, {"GPUPHASE_WINDOW_KEEP_BYTES", "1k"},
		{"GPUPHASE_ITER_MARKER", "kernel:"},
		{"GPUPHASE_STACKS", "deep"},           {"GPUPHASE_STACK_DEPTH", "0"},
		{"GPUPHASE_LOG", "loud"},              {"GPUPHASE_RING_RECORDS", "1000"},
		{"GPUPHASE_FLUSH_MS", "0"},            {"GPUPHASE_MAX_BYTES", "12X"},
		{"GPUPHASE_CUPTI", "2"},               {"GPUPHASE_CUPTI_LIB", ""},
		{"GPUPHASE_CUPTI_CALIBRATE", "sometimes"},
		{"GPUPHASE_CONTROL_DIR", "relative/dir"}, {"GPUPHASE_FOLLOW_FORK", "sometimes"},
		{"GPUPHASE_COUNTERS", "top=0"},
	};
	cr_assert(sizeof bad / sizeof bad[0] == gp_config_nvars, "a variable has no bad-value case");
	char dir[256], bin[1200], cfg[1200];
	lt_tmpdir(dir, sizeof dir);
	snprintf(bin, sizeof bin, "%s/examples/sync_bound", lt_build());
	snprintf(cfg, sizeof cfg, "SIMCUDA_CONFIG=%s/examples/sync_bound.simcuda", lt_src());
	const char *argv[] = {bin, NULL};
	const char *env0[] = {cfg, NULL};
	struct lt_result bare;
	lt_run(dir, argv, env0, LT_BARE, 60, &bare);
	cr_assert(bare.status == 0);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		const struct gp_config_var *v = NULL;
		for (size_t j = 0; j < gp_config_nvars; j++)
			if (!strcmp(gp_config_vars[j].name, bad[i][0]))
				v = &gp_config_vars[j];
		cr_assert(v, "%s not in the table", bad[i][0]);
		char set[256], expect[1024];
		snprintf(set, sizeof set, "%s=%s", bad[i][0], bad[i][1]);
		snprintf(expect, sizeof expect, "gpuphase: %s='%s': %s\n", bad[i][0], bad[i][1], v->accepted);
		const char *env[] = {cfg, set, NULL};
		for (int load = LT_PRELOAD; load <= LT_INJECT; load++) {
			struct lt_result r;
			lt_run(dir, argv, env, (enum lt_load)load, 60, &r);
			cr_assert(r.status == bare.status, "%s: exit %d", set, r.status);
			cr_assert(r.outlen == bare.outlen && !memcmp(r.out, bare.out, r.outlen), "%s: stdout differs", set);
			char *first = strstr(r.err, "gpuphase:");
			cr_assert(first && !strncmp(first, expect, strlen(expect)), "%s: expected\n%sgot\n%s", set, expect,
				  r.err);
			cr_assert(!strstr(first + 1, "gpuphase:"), "%s: more than one line:\n%s", set, r.err);
			cr_assert(lt_count_traces(dir) == 0, "%s: a trace was written", set);
			lt_free(&r);
		}
	}
	lt_free(&bare);
	lt_rmdir(dir);
}

Test(lib_config, disable_is_inert, .timeout = 60)
{
	char dir[256], bin[1200], cfg[1200];
	lt_tmpdir(dir, sizeof dir);
	snprintf(bin, sizeof bin, "%s/examples/sync_bound", lt_build());
	snprintf(cfg, sizeof cfg, "SIMCUDA_CONFIG=%s/examples/sync_bound.simcuda", lt_src());
	const char *argv[] = {bin, NULL};
	const char *env[] = {cfg, "GPUPHASE_DISABLE=1", NULL};
	struct lt_result r;
	lt_run(dir, argv, env, LT_BOTH, 60, &r);
	cr_assert(r.status == 0 && !strstr(r.err, "gpuphase:") && lt_count_traces(dir) == 0, "%s", r.err);
	lt_free(&r);
	const char *env2[] = {cfg, "GPUPHASE_WINDWO=all", NULL};
	lt_run(dir, argv, env2, LT_PRELOAD, 60, &r);
	cr_assert(r.status == 0 && strstr(r.err, "gpuphase: unknown variable GPUPHASE_WINDWO ignored (did you mean "
						  "GPUPHASE_WINDOW?)"),
		  "%s", r.err);
	cr_assert(lt_count_traces(dir) == 1, "a typo must not disable the library");
	lt_free(&r);
	lt_rmdir(dir);
}

/* Op-id blocks across the 32-bit wrap (gp_state_op_range is gp_state_op_block's
 * arithmetic): replay gp_state_op_block + gp_state_next_op from a counter 3 blocks
 * (and, for other alignments, a few ids) short of 2^32 for 8 blocks; every id
 * handed out must be nonzero, each exactly one more than the last (mod 2^32,
 * skipping 0), so nothing is lost or repeated. */
Test(lib_config, op_ids_skip_zero_at_wrap)
{
	static const uint32_t starts[] = {UINT32_MAX - 191u, UINT32_MAX - 63u, UINT32_MAX - 64u, UINT32_MAX,
					  UINT32_MAX - 10u, 0u};
	for (size_t s = 0; s < sizeof starts / sizeof starts[0]; s++) {
		uint32_t counter = starts[s], next = 0, end = 0, prev = 0, handed = 0;
		int first = 1;
		for (int blocks = 0; blocks < 8;) {
			uint32_t id, want;
			if (next != end) {
				id = next++;
				want = prev + 1u;
			} else {
				gp_state_op_range(counter, &next, &end);
				want = counter ? counter : 1u; /* a new block starts at the counter */
				counter += 64u;
				blocks++;
				id = next++;
			}
			cr_assert(id != 0, "start %u: id 0 handed out after %u ids", starts[s], handed);
			/* the library's own alignment (= 1 mod 64): no id skipped but 0 */
			if (!first && starts[s] % 64u == 1u)
				cr_assert(id == (prev + 1u ? prev + 1u : 1u), "start %u: id %u after %u", starts[s], id,
					  prev);
			if (!first)
				cr_assert(id == want, "start %u: id %u, want %u", starts[s], id, want);
			first = 0;
			prev = id;
			handed++;
		}
		cr_assert(handed >= 6u * 64u,  "start %u: only %u ids", starts[s], handed);
	}
}
