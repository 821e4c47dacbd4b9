/*
 * trace/tests/test_trace_kernel_name.c — the names of a kernel (kernel_name.h):
 * the full demangled name, the short name the operator table shows, the base
 * identifier read from the mangling, and the kernel:GLOB rule (a glob written
 * as the table shows a name matches it; the name as recorded and the base
 * still match). Demangling uses the C++ runtime this test links.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tests/common/tcrit.h" /* Criterion, or its stand-in under TSan */
#include "kernel_name.h"

/* The short name of a full name, as a NUL-terminated copy in buf. */
static const char *short_of(const char *full, char *buf, size_t cap)
{
	size_t len, off = gp_kernel_name_short(full, &len);
	cr_assert_lt(len, cap, "short name of %s: %zu bytes", full, len);
	memcpy(buf, full + off, len);
	buf[len] = 0;
	return buf;
}

/* The full and short names of a recorded name checked against expectations. */
static void expect_names(const char *name, const char *full, const char *shrt)
{
	char *f = NULL, *s = NULL;
	cr_assert_eq(gp_kernel_name_names(name, &f, &s), 0, "%s", name);
	cr_assert_str_eq(f, full, "full name of %s: %s", name, f);
	cr_assert_str_eq(s, shrt, "short name of %s: %s", name, s);
	free(f);
	free(s);
}

static const char *base_of(const char *mangled, char *buf, size_t cap)
{
	size_t len, off = gp_kernel_name_mangled_base(mangled, &len);
	cr_assert_lt(len, cap);
	memcpy(buf, mangled + off, len);
	buf[len] = 0;
	return buf;
}

Test(kernel_name, plain_c_names_stay_as_recorded)
{
	expect_names("layer_add", "layer_add", "layer_add");
	expect_names("sgemm_128x64_nn", "sgemm_128x64_nn", "sgemm_128x64_nn");
	/* a plain name is never shortened, whatever it holds */
	expect_names("my kernel(v2)", "my kernel(v2)", "my kernel(v2)");
	/* "i" is also the mangling of the type int: only _Z names are demangled */
	expect_names("i", "i", "i");
	char *f = (char *)1;
	cr_assert_eq(gp_kernel_name_demangle("layer_add", &f), -EINVAL);
	cr_assert_null(f);
}

Test(kernel_name, mangled_c_plus_plus)
{
	expect_names("_Z9layer_addPji", "layer_add(unsigned int*, int)", "layer_add");
	expect_names("_Z7aten_mmPfi", "aten_mm(float*, int)", "aten_mm");
	expect_names("_ZN2ns3fooEv", "ns::foo()", "ns::foo");
	expect_names("_ZN2ns1AIiE1kEv", "ns::A<int>::k()", "ns::A<int>::k");
	expect_names("_ZL7privatePf", "private(float*)", "private");
}

Test(kernel_name, templates_drop_the_void_return_type)
{
	expect_names("_ZN2ns1kIiEEvPfi", "void ns::k<int>(float*, int)", "ns::k<int>");
	expect_names("_Z1kILi256EEvPf", "void k<256>(float*)", "k<256>");
	expect_names("_ZN2ns1kINS_4PairIiNS_3BoxIfEEEEEEvPFviEi",
		     "void ns::k<ns::Pair<int, ns::Box<float> > >(void (*)(int), int)",
		     "ns::k<ns::Pair<int, ns::Box<float> > >");
	expect_names("_ZN3cub19DeviceForEachKernelIN2at6native10AddFunctorIfEEEEvT_",
		     "void cub::DeviceForEachKernel<at::native::AddFunctor<float> >(at::native::AddFunctor<float>)",
		     "cub::DeviceForEachKernel<at::native::AddFunctor<float> >");
}

Test(kernel_name, function_pointers)
{
	/* in a template argument and in the parameters */
	expect_names("_ZN2ns5applyIPFvfEEEvT_", "void ns::apply<void (*)(float)>(void (*)(float))",
		     "ns::apply<void (*)(float)>");
	expect_names("_ZN2ns1kIiEEvPFPFviEfE", "void ns::k<int>(void (*(*)(float))(int))", "ns::k<int>");
}

Test(kernel_name, operators_and_lambdas)
{
	expect_names("_ZNK2ns7FunctorclEi", "ns::Functor::operator()(int) const", "ns::Functor::operator()");
	expect_names("_ZN2ns7FunctorclEv", "ns::Functor::operator()()", "ns::Functor::operator()");
	expect_names("_ZN2nslsERiS0_", "ns::operator<<(int&, int&)", "ns::operator<<");
	expect_names("_ZZ4mainENKUliE_clEi", "main::{lambda(int)#1}::operator()(int) const",
		     "main::{lambda(int)#1}::operator()");
	expect_names("_Z3runIZ4mainEUliE_EvT_", "void run<main::{lambda(int)#1}>(main::{lambda(int)#1})",
		     "run<main::{lambda(int)#1}>");
	/* a return type that is itself parenthesised */
	expect_names("_ZN4cuda3std3__44plusIvEclIiiEEDTplfp_fp0_EOT_OT0_",
		     "decltype ({parm#1}+{parm#2}) cuda::std::__4::plus<void>::operator()<int, int>(int&&, int&&)",
		     "cuda::std::__4::plus<void>::operator()<int, int>");
	char buf[64];
	cr_assert_str_eq(short_of("S::operator new[](unsigned long)", buf, sizeof buf), "S::operator new[]");
	cr_assert_str_eq(short_of("S::operator int() const", buf, sizeof buf), "S::operator int");
	cr_assert_str_eq(short_of("bool ns::less<&ns::operator<>(int)", buf, sizeof buf), "ns::less<&ns::operator<>");
	cr_assert_str_eq(short_of("roperator(int)", buf, sizeof buf), "roperator");
}

Test(kernel_name, anonymous_namespaces)
{
	expect_names("_ZN12_GLOBAL__N_16kernelEPf", "(anonymous namespace)::kernel(float*)",
		     "(anonymous namespace)::kernel");
	expect_names("_ZN12_GLOBAL__N_11kIfEEvT_", "void (anonymous namespace)::k<float>(float)",
		     "(anonymous namespace)::k<float>");
}

Test(kernel_name, invalid_manglings_stay_as_recorded)
{
	const char *bad[] = {"_Z", "_Z9tooshort", "_ZN2ns", "_Z3fooILi", "_ZZZZ", "_Z999999999999999999999x"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char *f = (char *)1;
		cr_assert_eq(gp_kernel_name_demangle(bad[i], &f), -EINVAL, "%s", bad[i]);
		cr_assert_null(f);
		expect_names(bad[i], bad[i], bad[i]);
	}
}

Test(kernel_name, null_and_empty)
{
	char *f = (char *)1;
	size_t len = 99;
	cr_assert_eq(gp_kernel_name_demangle(NULL, &f), -EINVAL);
	cr_assert_null(f);
	cr_assert_eq(gp_kernel_name_short(NULL, &len), 0u);
	cr_assert_eq(len, 0u);
	len = 99;
	cr_assert_eq(gp_kernel_name_short("", &len), 0u);
	cr_assert_eq(len, 0u);
	len = 99;
	cr_assert_eq(gp_kernel_name_mangled_base(NULL, &len), 0u);
	cr_assert_eq(len, 0u);
	expect_names("", "", "");
	cr_assert_not(gp_kernel_name_match(NULL, "k"));
	cr_assert_not(gp_kernel_name_match("k", NULL));
	cr_assert(gp_kernel_name_match("", ""));
	cr_assert(gp_kernel_name_match("*", ""));
	/* degenerate full names keep something rather than nothing */
	char buf[32];
	cr_assert_str_eq(short_of("void ", buf, sizeof buf), "void ");
	cr_assert_str_eq(short_of("(", buf, sizeof buf), "(");
}

/* The short name the table shows for name matches name as a glob. */
static void expect_table_name_matches(const char *name)
{
	char *f = NULL, *s = NULL;
	cr_assert_eq(gp_kernel_name_names(name, &f, &s), 0);
	cr_assert(gp_kernel_name_match(s, name), "%.60s... does not match its own short name", name);
	free(f);
	free(s);
}

Test(kernel_name, overly_long_names_are_never_truncated)
{
	/* ns::aaa...a(), 1000 characters in one identifier */
	enum { LONG = 1000 };
	char *m = malloc(LONG + 16), *f = NULL, *s = NULL;
	int n = sprintf(m, "_ZN2ns%d", LONG);
	memset(m + n, 'a', LONG);
	strcpy(m + n + LONG, "Ev");
	cr_assert_eq(gp_kernel_name_names(m, &f, &s), 0);
	cr_assert_eq(strlen(f), 4u + LONG + 2u, "%zu", strlen(f));
	cr_assert_eq(strlen(s), 4u + LONG, "%zu", strlen(s));
	cr_assert(!strncmp(s, "ns::aaaa", 8) && s[strlen(s) - 1] == 'a');
	cr_assert(gp_kernel_name_match("ns::a*a", m));
	free(f);
	free(s);
	expect_table_name_matches(m);
	free(m);

	/* ns::k<ns::L<...ns::L<int>...> > with a 40-character L, 100 deep: 5 KB
	 * mangled. Some C++ runtimes refuse names that long (libstdc++ 12 stops
	 * near 1 KB); then the name stays as recorded on every side, and the table
	 * name still matches. */
	static const char layer[] = "Layer_with_a_rather_long_name_0123456789";
	enum { DEPTH = 100 };
	size_t cap = DEPTH * (sizeof layer + 8) + 64;
	char *p = m = malloc(cap);
	p += sprintf(p, "_ZN2ns1kI");
	for (int i = 0; i < DEPTH; i++)
		p += sprintf(p, "N2ns%zu%sI", strlen(layer), layer);
	p += sprintf(p, "i");
	for (int i = 0; i < DEPTH; i++)
		p += sprintf(p, "EE");
	sprintf(p, "EEvv");
	expect_table_name_matches(m);
	char b[8];
	size_t len, off = gp_kernel_name_mangled_base(m, &len);
	cr_assert_lt(len, sizeof b);
	memcpy(b, m + off, len);
	b[len] = 0;
	cr_assert_str_eq(b, "k");
	cr_assert(gp_kernel_name_match("k", m));

	/* a base identifier longer than any real one does not match */
	memset(m, 'a', cap - 1);
	m[cap - 1] = 0;
	memcpy(m, "_Z4000", 6);
	cr_assert_not(gp_kernel_name_match("a*", m));
	free(m);
}

Test(kernel_name, mangled_base)
{
	char b[64];
	cr_assert_str_eq(base_of("_Z9layer_addPji", b, sizeof b), "layer_add");
	cr_assert_str_eq(base_of("_ZN2ns1kIiEEvT_", b, sizeof b), "k");
	cr_assert_str_eq(base_of("_ZN2ns3fooEv", b, sizeof b), "foo");
	cr_assert_str_eq(base_of("_ZNK2ns7FunctorclEi", b, sizeof b), "Functor");
	cr_assert_str_eq(base_of("_ZN12_GLOBAL__N_11kIfEEvT_", b, sizeof b), "k");
	cr_assert_str_eq(base_of("_ZL7privatePf", b, sizeof b), "private");
	cr_assert_str_eq(base_of("layer_add", b, sizeof b), "layer_add");
	cr_assert_str_eq(base_of("_Z9tooshort", b, sizeof b), "_Z9tooshort");
	cr_assert_str_eq(base_of("_ZZZZ", b, sizeof b), "_ZZZZ");
}

Test(kernel_name, glob_matches_what_the_table_shows)
{
	/* the short name, as the operator table shows it */
	cr_assert(gp_kernel_name_match("ns::k<int>", "_ZN2ns1kIiEEvPfi"));
	cr_assert(gp_kernel_name_match("ns::k<*>", "_ZN2ns1kIiEEvPfi"));
	cr_assert(gp_kernel_name_match("*::k<int>", "_ZN2ns1kIiEEvPfi"));
	cr_assert(gp_kernel_name_match("(anonymous namespace)::k<float>", "_ZN12_GLOBAL__N_11kIfEEvT_"));
	cr_assert(gp_kernel_name_match("ns::Functor::operator()", "_ZNK2ns7FunctorclEi"));
	cr_assert(gp_kernel_name_match("cub::DeviceForEachKernel<*AddFunctor*>",
				       "_ZN3cub19DeviceForEachKernelIN2at6native10AddFunctorIfEEEEvT_"));
	/* as recorded, and the base identifier: what older globs matched */
	cr_assert(gp_kernel_name_match("_ZN2ns1kIiEEvPfi", "_ZN2ns1kIiEEvPfi"));
	cr_assert(gp_kernel_name_match("_Z*", "_ZN2ns1kIiEEvPfi"));
	cr_assert(gp_kernel_name_match("k", "_ZN2ns1kIiEEvPfi"));
	cr_assert(gp_kernel_name_match("layer_*", "_Z9layer_addPji"));
	cr_assert(gp_kernel_name_match("layer_add", "layer_add"));
	/* not the return type, not the parameters: the table shows neither */
	cr_assert_not(gp_kernel_name_match("void ns::k<int>", "_ZN2ns1kIiEEvPfi"));
	cr_assert_not(gp_kernel_name_match("*float*", "_ZN2ns1kIiEEvPfi"));
	cr_assert_not(gp_kernel_name_match("ns::k<float>", "_ZN2ns1kIiEEvPfi"));
	cr_assert_not(gp_kernel_name_match("ns::k", "_ZN2ns1kIiEEvPfi"));
	cr_assert_not(gp_kernel_name_match("layer", "_Z9layer_addPji"));
}
