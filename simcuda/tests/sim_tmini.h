/*
 * sim_tmini.h — a minimal stand-in for the subset of Criterion the simcuda
 * suites use, for ThreadSanitizer builds (Criterion cannot start under TSAN:
 * "Could not initialize inheritable arena"). Compiled in with -DSIM_TEST_MINI.
 *
 * Like Criterion, every test runs in its own forked process (simcuda's
 * runtime and CUPTI state must start fresh per test), with the suite's .init
 * before it and .fini after it, under the suite's .timeout. cr_assert* ends
 * the test at the first failure, cr_expect* records it and goes on. main()
 * prints a Criterion-style "Synthesis:" line so tests/run-tests.sh counts it.
 * Single-threaded runner; tests themselves may start threads.
 */
#ifndef SIM_TMINI_H
#define SIM_TMINI_H

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct sm_suite_cfg {
	void (*init)(void);
	void (*fini)(void);
	int timeout;
};

struct sm_suite {
	const char *name;
	struct sm_suite_cfg cfg;
};

struct sm_test {
	const char *suite, *name;
	void (*fn)(void);
};

static struct sm_test sm_tests[128];
static int sm_ntests;
static struct sm_suite sm_suites[16];
static int sm_nsuites;
static int sm_failed; /* in the child: a cr_expect failed */

static inline void sm_add_test(const char *suite, const char *name, void (*fn)(void))
{
	if (sm_ntests < 128)
		sm_tests[sm_ntests++] = (struct sm_test){suite, name, fn};
}

static inline void sm_add_suite(const char *name, struct sm_suite_cfg cfg)
{
	if (sm_nsuites < 16)
		sm_suites[sm_nsuites++] = (struct sm_suite){name, cfg};
}

#define Test(suite_, name_, ...)                                                       \
	static void sm_t_##suite_##_##name_(void);                                      \
	__attribute__((constructor)) static void sm_r_##suite_##_##name_(void)          \
	{                                                                               \
		sm_add_test(#suite_, #name_, sm_t_##suite_##_##name_);                  \
	}                                                                               \
	static void sm_t_##suite_##_##name_(void)

#define TestSuite(suite_, ...)                                                          \
	__attribute__((constructor)) static void sm_s_##suite_(void)                    \
	{                                                                               \
		struct sm_suite_cfg c_ = {__VA_ARGS__};                                 \
		sm_add_suite(#suite_, c_);                                              \
	}

static inline void sm_check(int ok, int fatal, const char *expr, const char *file, int line, const char *fmt,
			    ...)
{
	if (ok)
		return;
	fprintf(stderr, "[----] %s:%d: %s failed: %s", file, line, fatal ? "assertion" : "expectation", expr);
	if (fmt && *fmt) {
		va_list ap;
		va_start(ap, fmt);
		fputs(" — ", stderr);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
	}
	fputc('\n', stderr);
	sm_failed = 1;
	if (fatal)
		_exit(1);
}

/* String equality (NULL-safe), out of line so gcc does not second-guess sizes. */
__attribute__((noinline)) static int sm_streq(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	while (*a && *a == *b)
		a++, b++;
	return *a == *b;
}

#define SM_CHECK(fatal, cond, text, ...) sm_check(!!(cond), fatal, text, __FILE__, __LINE__, "" __VA_ARGS__)
#define cr_assert(c, ...) SM_CHECK(1, (c), #c, __VA_ARGS__)
#define cr_expect(c, ...) SM_CHECK(0, (c), #c, __VA_ARGS__)
#define cr_assert_fail(...) SM_CHECK(1, 0, "fail", __VA_ARGS__)
#define cr_assert_eq(a, b, ...) SM_CHECK(1, (a) == (b), #a " == " #b, __VA_ARGS__)
#define cr_assert_neq(a, b, ...) SM_CHECK(1, (a) != (b), #a " != " #b, __VA_ARGS__)
#define cr_assert_lt(a, b, ...) SM_CHECK(1, (a) < (b), #a " < " #b, __VA_ARGS__)
#define cr_assert_leq(a, b, ...) SM_CHECK(1, (a) <= (b), #a " <= " #b, __VA_ARGS__)
#define cr_assert_gt(a, b, ...) SM_CHECK(1, (a) > (b), #a " > " #b, __VA_ARGS__)
#define cr_assert_geq(a, b, ...) SM_CHECK(1, (a) >= (b), #a " >= " #b, __VA_ARGS__)
#define cr_assert_not_null(p, ...) SM_CHECK(1, (p) != NULL, #p " != NULL", __VA_ARGS__)
#define cr_assert_str_eq(a, b, ...) SM_CHECK(1, sm_streq((a), (b)), #a " == " #b, __VA_ARGS__)
#define cr_expect_eq(a, b, ...) SM_CHECK(0, (a) == (b), #a " == " #b, __VA_ARGS__)
#define cr_expect_neq(a, b, ...) SM_CHECK(0, (a) != (b), #a " != " #b, __VA_ARGS__)
#define cr_expect_lt(a, b, ...) SM_CHECK(0, (a) < (b), #a " < " #b, __VA_ARGS__)
#define cr_expect_leq(a, b, ...) SM_CHECK(0, (a) <= (b), #a " <= " #b, __VA_ARGS__)
#define cr_expect_gt(a, b, ...) SM_CHECK(0, (a) > (b), #a " > " #b, __VA_ARGS__)
#define cr_expect_geq(a, b, ...) SM_CHECK(0, (a) >= (b), #a " >= " #b, __VA_ARGS__)
#define cr_expect_null(p, ...) SM_CHECK(0, (p) == NULL, #p " == NULL", __VA_ARGS__)
#define cr_expect_not_null(p, ...) SM_CHECK(0, (p) != NULL, #p " != NULL", __VA_ARGS__)
#define cr_assert_null(p, ...) SM_CHECK(1, (p) == NULL, #p " == NULL", __VA_ARGS__)
#define cr_expect_str_eq(a, b, ...) SM_CHECK(0, sm_streq((a), (b)), #a " == " #b, __VA_ARGS__)
#define cr_expect_float_eq(a, b, eps, ...)                                               \
	SM_CHECK(0, (a) - (b) <= (eps) && (b) - (a) <= (eps), #a " ~= " #b, __VA_ARGS__)
#define cr_log_warn(...) (fprintf(stderr, "[WARN] " __VA_ARGS__), fputc('\n', stderr))
#define cr_log_info(...) (fprintf(stderr, "[----] " __VA_ARGS__), fputc('\n', stderr))

int main(void)
{
	int pass = 0, fail = 0, crash = 0;
	for (int i = 0; i < sm_ntests; i++) {
		const struct sm_test *t = &sm_tests[i];
		struct sm_suite_cfg cfg = {0};
		for (int s = 0; s < sm_nsuites; s++)
			if (sm_streq(sm_suites[s].name, t->suite))
				cfg = sm_suites[s].cfg;
		fflush(NULL);
		pid_t pid = fork();
		if (pid == 0) {
			alarm(cfg.timeout > 0 ? (unsigned)cfg.timeout : 60u);
			if (cfg.init)
				cfg.init();
			t->fn();
			if (cfg.fini)
				cfg.fini();
			fflush(NULL);
			_exit(sm_failed);
		}
		int st = 0;
		waitpid(pid, &st, 0);
		const char *res = "PASS";
		if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
			pass++;
		} else if (WIFEXITED(st)) {
			fail++;
			res = "FAIL";
		} else {
			crash++;
			res = "CRASH";
		}
		fprintf(stderr, "[%s] %s::%s\n", res, t->suite, t->name);
	}
	fprintf(stderr, "[====] Synthesis: Tested: %d | Passing: %d | Failing: %d | Crashing: %d \n",
		sm_ntests, pass, fail, crash);
	return fail || crash;
}

#endif
