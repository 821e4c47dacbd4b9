/*
 * tcrit.h — Criterion, or a minimal stand-in for ThreadSanitizer builds.
 *
 * Criterion cannot start under ThreadSanitizer (its inheritable arena mmap
 * fails: Snaipe/Criterion issue #274), so `make tsan` builds the collector's
 * suites with -DGP_TEST_MINI: the same Test() bodies and cr_assert* checks,
 * run one per forked process by the small runner below, which prints a
 * Criterion-style "Synthesis:" line that tests/run-tests.sh understands.
 * Test code only.
 */
#ifndef GP_TCRIT_H
#define GP_TCRIT_H

#ifndef GP_TEST_MINI
#include <criterion/criterion.h>
#else
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct tm_test {
	const char *suite, *name;
	void (*fn)(void);
};
static struct tm_test tm_tests[64];
static int tm_ntests;

#define Test(suite_, name_, ...)                                                     \
	static void tm_fn_##suite_##_##name_(void);                                  \
	__attribute__((constructor)) static void tm_reg_##suite_##_##name_(void)     \
	{                                                                            \
		if (tm_ntests < 64)                                                  \
			tm_tests[tm_ntests++] = (struct tm_test){ #suite_, #name_,   \
								   tm_fn_##suite_##_##name_ }; \
	}                                                                            \
	static void tm_fn_##suite_##_##name_(void)


static inline void tm_check(int ok, const char *expr, const char *file, int line, const char *fmt, ...)
{
	if (ok)
		return;
	fprintf(stderr, "[----] %s:%d: Assertion Failed\n[----]   The expression %s is false.\n", file, line, expr);
	if (fmt && *fmt) {
		va_list ap;
		va_start(ap, fmt);
		fprintf(stderr, "[----]   ");
		vfprintf(stderr, fmt, ap);
		fprintf(stderr, "\n");
		va_end(ap);
	}
	fflush(stderr);
	_exit(1);
}

#define TM_CHECK(cond, text, ...) tm_check(!!(cond), text, __FILE__, __LINE__, "" __VA_ARGS__)
#define cr_assert(c, ...) TM_CHECK((c), #c, __VA_ARGS__)
#define cr_assert_not(c, ...) TM_CHECK(!(c), "!(" #c ")", __VA_ARGS__)
#define cr_assert_eq(a, b, ...) TM_CHECK((a) == (b), "(" #a ") == (" #b ")", __VA_ARGS__)
#define cr_assert_neq(a, b, ...) TM_CHECK((a) != (b), "(" #a ") != (" #b ")", __VA_ARGS__)
#define cr_assert_lt(a, b, ...) TM_CHECK((a) < (b), "(" #a ") < (" #b ")", __VA_ARGS__)
#define cr_assert_leq(a, b, ...) TM_CHECK((a) <= (b), "(" #a ") <= (" #b ")", __VA_ARGS__)
#define cr_assert_gt(a, b, ...) TM_CHECK((a) > (b), "(" #a ") > (" #b ")", __VA_ARGS__)
#define cr_assert_geq(a, b, ...) TM_CHECK((a) >= (b), "(" #a ") >= (" #b ")", __VA_ARGS__)
#define cr_assert_null(p, ...) TM_CHECK((p) == NULL, #p " == NULL", __VA_ARGS__)
#define cr_assert_not_null(p, ...) TM_CHECK((p) != NULL, #p " != NULL", __VA_ARGS__)
#define cr_assert_str_eq(a, b, ...) TM_CHECK(strcmp((a), (b)) == 0, #a " == " #b, __VA_ARGS__)

/* Runs every test in its own child process; arguments (--jobs N) ignored. */
int main(void)
{
	int pass = 0, fail = 0, crash = 0;
	for (int i = 0; i < tm_ntests; i++) {
		fflush(stdout);
		fflush(stderr);
		pid_t pid = fork();
		if (pid == 0) {
			tm_tests[i].fn();
			fflush(stdout);
			exit(0); /* run atexit handlers (temp dir cleanup) */
		}
		int st = 0;
		if (pid < 0 || waitpid(pid, &st, 0) != pid) {
			crash++;
			continue;
		}
		if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
			pass++;
		} else if (WIFEXITED(st)) {
			fail++;
			fprintf(stderr, "[FAIL] %s::%s\n", tm_tests[i].suite, tm_tests[i].name);
		} else {
			crash++;
			fprintf(stderr, "[FAIL] %s::%s: crashed (signal %d)\n", tm_tests[i].suite, tm_tests[i].name,
				WIFSIGNALED(st) ? WTERMSIG(st) : 0);
		}
	}
	fprintf(stderr, "[====] Synthesis: Tested: %d | Passing: %d | Failing: %d | Crashing: %d\n",
		tm_ntests, pass, fail, crash);
	return fail || crash;
}
#endif
#endif /* GP_TCRIT_H */
