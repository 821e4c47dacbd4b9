/*
 * tcrit.h — Criterion, or the one minimal stand-in for it that ThreadSanitizer
 * builds use. A suite that `make tsan` runs includes this instead of
 * <criterion/criterion.h> (and its module.mk adds -DGP_TEST_MINI and drops
 * -lcriterion when SAN=tsan).
 *
 * Criterion cannot start under ThreadSanitizer (its inheritable arena mmap
 * fails: "Could not initialize inheritable arena"), so `make tsan` compiles
 * the suites with -DGP_TEST_MINI: the same Test() bodies, TestSuite()
 * settings and cr_assert* / cr_expect* checks, run by the small runner below.
 * Like Criterion, every test runs in its own forked process, with its suite's
 * .init before it and .fini after it, under the suite's .timeout (default
 * TCRIT_DEFAULT_TIMEOUT seconds); the child ends with exit(), so atexit
 * handlers (temporary directories) run. cr_assert* ends the test at the first
 * failure, cr_expect* records it and goes on. main() prints one line per test
 * and a Criterion-style "Synthesis:" line that tests/run-tests.sh adds up;
 * its arguments (--jobs N, ...) are ignored.
 *
 * Threads: the runner is single-threaded; tests may start threads.
 * Test code only.
 */
#ifndef GP_TCRIT_H
#define GP_TCRIT_H

#ifndef GP_TEST_MINI
#include <criterion/criterion.h>
#else
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define TCRIT_MAX_TESTS 256
#define TCRIT_MAX_SUITES 32
#define TCRIT_DEFAULT_TIMEOUT 600

struct tcrit_suite_cfg {
	void (*init)(void);
	void (*fini)(void);
	int timeout; /* seconds; 0 = TCRIT_DEFAULT_TIMEOUT */
};

struct tcrit_suite {
	const char *name;
	struct tcrit_suite_cfg cfg;
};

struct tcrit_test {
	const char *suite, *name;
	void (*fn)(void);
};

static struct tcrit_test tcrit_tests[TCRIT_MAX_TESTS];
static int tcrit_ntests;
static struct tcrit_suite tcrit_suites[TCRIT_MAX_SUITES];
static int tcrit_nsuites;
static int tcrit_failed; /* in the child: a cr_expect failed */

static inline void tcrit_add_test(const char *suite, const char *name, void (*fn)(void))
{
	if (tcrit_ntests < TCRIT_MAX_TESTS)
		tcrit_tests[tcrit_ntests++] = (struct tcrit_test){ suite, name, fn };
}

static inline void tcrit_add_suite(const char *name, struct tcrit_suite_cfg cfg)
{
	if (tcrit_nsuites < TCRIT_MAX_SUITES)
		tcrit_suites[tcrit_nsuites++] = (struct tcrit_suite){ name, cfg };
}

#define Test(suite_, name_, ...)                                                        \
	static void tcrit_t_##suite_##_##name_(void);                                    \
	__attribute__((constructor)) static void tcrit_r_##suite_##_##name_(void)        \
	{                                                                                \
		tcrit_add_test(#suite_, #name_, tcrit_t_##suite_##_##name_);             \
	}                                                                                \
	static void tcrit_t_##suite_##_##name_(void)

#define TestSuite(suite_, ...)                                                           \
	__attribute__((constructor)) static void tcrit_s_##suite_(void)                  \
	{                                                                                \
		struct tcrit_suite_cfg c_ = { __VA_ARGS__ };                             \
		tcrit_add_suite(#suite_, c_);                                            \
	}

static inline void tcrit_check(int ok, int fatal, const char *expr, const char *file, int line,
			       const char *fmt, ...)
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
	fflush(stderr);
	tcrit_failed = 1;
	if (fatal)
		_exit(1);
}

/* String equality (NULL-safe), out of line so gcc does not second-guess sizes. */
__attribute__((noinline)) static int tcrit_streq(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	while (*a && *a == *b)
		a++, b++;
	return *a == *b;
}

#define TCRIT_CHECK(fatal, cond, text, ...) \
	tcrit_check(!!(cond), fatal, text, __FILE__, __LINE__, "" __VA_ARGS__)
#define cr_assert(c, ...) TCRIT_CHECK(1, (c), #c, __VA_ARGS__)
#define cr_assert_not(c, ...) TCRIT_CHECK(1, !(c), "!(" #c ")", __VA_ARGS__)
#define cr_assert_fail(...) TCRIT_CHECK(1, 0, "fail", __VA_ARGS__)
#define cr_assert_eq(a, b, ...) TCRIT_CHECK(1, (a) == (b), #a " == " #b, __VA_ARGS__)
#define cr_assert_neq(a, b, ...) TCRIT_CHECK(1, (a) != (b), #a " != " #b, __VA_ARGS__)
#define cr_assert_lt(a, b, ...) TCRIT_CHECK(1, (a) < (b), #a " < " #b, __VA_ARGS__)
#define cr_assert_leq(a, b, ...) TCRIT_CHECK(1, (a) <= (b), #a " <= " #b, __VA_ARGS__)
#define cr_assert_gt(a, b, ...) TCRIT_CHECK(1, (a) > (b), #a " > " #b, __VA_ARGS__)
#define cr_assert_geq(a, b, ...) TCRIT_CHECK(1, (a) >= (b), #a " >= " #b, __VA_ARGS__)
#define cr_assert_null(p, ...) TCRIT_CHECK(1, (p) == NULL, #p " == NULL", __VA_ARGS__)
#define cr_assert_not_null(p, ...) TCRIT_CHECK(1, (p) != NULL, #p " != NULL", __VA_ARGS__)
#define cr_assert_str_eq(a, b, ...) TCRIT_CHECK(1, tcrit_streq((a), (b)), #a " == " #b, __VA_ARGS__)
#define cr_expect(c, ...) TCRIT_CHECK(0, (c), #c, __VA_ARGS__)
#define cr_expect_eq(a, b, ...) TCRIT_CHECK(0, (a) == (b), #a " == " #b, __VA_ARGS__)
#define cr_expect_neq(a, b, ...) TCRIT_CHECK(0, (a) != (b), #a " != " #b, __VA_ARGS__)
#define cr_expect_lt(a, b, ...) TCRIT_CHECK(0, (a) < (b), #a " < " #b, __VA_ARGS__)
#define cr_expect_leq(a, b, ...) TCRIT_CHECK(0, (a) <= (b), #a " <= " #b, __VA_ARGS__)
#define cr_expect_gt(a, b, ...) TCRIT_CHECK(0, (a) > (b), #a " > " #b, __VA_ARGS__)
#define cr_expect_geq(a, b, ...) TCRIT_CHECK(0, (a) >= (b), #a " >= " #b, __VA_ARGS__)
#define cr_expect_null(p, ...) TCRIT_CHECK(0, (p) == NULL, #p " == NULL", __VA_ARGS__)
#define cr_expect_not_null(p, ...) TCRIT_CHECK(0, (p) != NULL, #p " != NULL", __VA_ARGS__)
#define cr_expect_str_eq(a, b, ...) TCRIT_CHECK(0, tcrit_streq((a), (b)), #a " == " #b, __VA_ARGS__)
#define cr_expect_float_eq(a, b, eps, ...) \
	TCRIT_CHECK(0, (a) - (b) <= (eps) && (b) - (a) <= (eps), #a " ~= " #b, __VA_ARGS__)
#define cr_log_warn(...) (fprintf(stderr, "[WARN] " __VA_ARGS__), fputc('\n', stderr))
#define cr_log_info(...) (fprintf(stderr, "[----] " __VA_ARGS__), fputc('\n', stderr))

int main(void)
{
	int pass = 0, fail = 0, crash = 0;
	for (int i = 0; i < tcrit_ntests; i++) {
		const struct tcrit_test *t = &tcrit_tests[i];
		struct tcrit_suite_cfg cfg = { 0 };
		for (int s = 0; s < tcrit_nsuites; s++)
			if (tcrit_streq(tcrit_suites[s].name, t->suite))
				cfg = tcrit_suites[s].cfg;
		fflush(NULL);
		pid_t pid = fork();
		if (pid == 0) {
			alarm(cfg.timeout > 0 ? (unsigned)cfg.timeout : TCRIT_DEFAULT_TIMEOUT);
			if (cfg.init)
				cfg.init();
			t->fn();
			if (cfg.fini)
				cfg.fini();
			fflush(NULL);
			exit(tcrit_failed); /* atexit handlers run, as under Criterion */
		}
		int st = 0;
		const char *res = "PASS";
		if (pid < 0 || waitpid(pid, &st, 0) != pid) {
			crash++;
			res = "CRASH";
		} else if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
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
		tcrit_ntests, pass, fail, crash);
	return fail || crash;
}
#endif /* GP_TEST_MINI */
#endif /* GP_TCRIT_H */
