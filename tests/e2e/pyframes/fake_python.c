/* fake_python.c — a native program that looks like a CPython to
 * libgpuphase/pyframes.c (test_pyframes_fallback.sh), so that the version
 * detection, the fallback for versions it does not know and the 3.9 / 3.10
 * frame walk and line tables are tested where no such Python is installed.
 *
 * It exports what the detection reads (built with -rdynamic):
 * PyGILState_GetThisThreadState, PyCode_Type, PyFrame_Type and either
 * Py_Version (built with -DFAKE_PY_VERSION=0x...: a 3.11+ one) or
 * Py_GetVersion (returning argv[1], as 3.9 and 3.10 would: "3.10.99 (fake)").
 *
 * For a "3.9..." or "3.10..." version string, the thread state holds a
 * chain of PyFrameObject images laid out as in those versions' headers:
 *   fake_fn  at fake.py:44 (3.9 co_lnotab) / fake.py:42 (3.10 co_linetable)
 *   <module> at fake.py:1 (f_lasti -1: not started, its first line)
 *   then an object that is not a frame (its type is not PyFrame_Type):
 *   the walk must stop there, without reading it as one.
 * Then it waits on the GPU 2000 times (short traces may lose the join:
 * native_app.c). Test code only. */
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct fake_type {
	intptr_t refcnt;
	void *type;
	char rest[400];
};
struct fake_type PyCode_Type, PyFrame_Type;

#ifdef FAKE_PY_VERSION
const unsigned long Py_Version = FAKE_PY_VERSION;
#endif
static const char *fake_version = "";
const char *Py_GetVersion(void);
const char *Py_GetVersion(void)
{
	return fake_version;
}

static _Alignas(16) unsigned char fake_ts[256];
void *PyGILState_GetThisThreadState(void);
void *PyGILState_GetThisThreadState(void)
{
	return fake_ts;
}

/* object images, 16-byte aligned, big enough for any offset used */
static _Alignas(16) unsigned char fr_fn[256], fr_mod[256], not_a_frame[256];
static _Alignas(16) unsigned char co_fn[256], co_mod[256];
static _Alignas(16) unsigned char s_file[128], s_fn[128], s_mod[128], tab_fn[128], tab_mod[128];

static void put_ptr(unsigned char *o, unsigned off, const void *p)
{
	memcpy(o + off, &p, sizeof p);
}
static void put_int(unsigned char *o, unsigned off, int v)
{
	memcpy(o + off, &v, sizeof v);
}

/* PyASCIIObject: length at 16, state at 32 (compact | ascii), text at 48 */
static void make_str(unsigned char *o, const char *text)
{
	intptr_t n = (intptr_t)strlen(text);
	unsigned state = 1u << 5 | 1u << 6;
	memcpy(o + 16, &n, sizeof n);
	memcpy(o + 32, &state, sizeof state);
	memcpy(o + 48, text, (size_t)n + 1);
}

/* PyBytesObject: ob_size at 16, bytes at 32 */
static void make_bytes(unsigned char *o, const signed char *b, intptr_t n)
{
	memcpy(o + 16, &n, sizeof n);
	memcpy(o + 32, b, (size_t)n);
}

/* PyCodeObject (3.9 / 3.10): co_firstlineno 40, co_filename 104, co_name
 * 112, co_lnotab / co_linetable 120 */
static void make_code(unsigned char *o, int first, unsigned char *name, unsigned char *tab)
{
	put_ptr(o, 8, &PyCode_Type);
	put_int(o, 40, first);
	put_ptr(o, 104, s_file);
	put_ptr(o, 112, name);
	put_ptr(o, 120, tab);
}

/* PyFrameObject: f_back 24, f_code 32, f_lasti 104 (3.9) / 96 (3.10) */
static void make_frame(unsigned char *o, unsigned lasti_off, void *back, unsigned char *code, int lasti)
{
	put_ptr(o, 8, &PyFrame_Type);
	put_ptr(o, 24, back);
	put_ptr(o, 32, code);
	put_int(o, lasti_off, lasti);
}

static void make_stack(int minor)
{
	make_str(s_file, "fake.py");
	make_str(s_fn, "fake_fn");
	make_str(s_mod, "<module>");
	put_ptr(not_a_frame, 8, &PyCode_Type); /* an object, but not a frame */
	put_ptr(not_a_frame, 24, (void *)16);  /* a "next" that must not be read */
	static const signed char empty[1];
	make_bytes(tab_mod, empty, 0);
	if (minor == 9) {
		/* (byte delta, line delta): at 2 -> 41, at 6 -> 46 then 44, at 106 -> 51 */
		static const signed char lnotab[] = { 2, 1, 4, 5, 0, -2, 100, 7 };
		make_bytes(tab_fn, lnotab, sizeof lnotab);
		make_code(co_fn, 40, s_fn, tab_fn);
		make_code(co_mod, 1, s_mod, tab_mod);
		make_frame(fr_fn, 104, fr_mod, co_fn, 8); /* byte 8: line 44 */
		make_frame(fr_mod, 104, not_a_frame, co_mod, -1);
	} else {
		/* (range bytes, line delta): [0,6) 41, [6,6) 45, [6,10) none,
		 * [10,18) 42, [18,28) 44 */
		static const signed char ranges[] = { 6, 1, 0, 4, 4, -128, 8, -3, 10, 2 };
		make_bytes(tab_fn, ranges, sizeof ranges);
		make_code(co_fn, 40, s_fn, tab_fn);
		make_code(co_mod, 1, s_mod, tab_mod);
		make_frame(fr_fn, 96, fr_mod, co_fn, 6); /* unit 6 = byte 12: line 42 */
		make_frame(fr_mod, 96, not_a_frame, co_mod, -1);
	}
	put_ptr(fake_ts, 24, fr_fn); /* PyThreadState.frame */
}

int main(int argc, char **argv)
{
	static char host[4096];
	void *buf;
	if (argc > 1)
		fake_version = argv[1];
	if (!strncmp(fake_version, "3.9.", 4))
		make_stack(9);
	else if (!strncmp(fake_version, "3.10.", 5))
		make_stack(10);
	if (cudaMalloc(&buf, 1 << 20))
		return 1;
	for (int i = 0; i < 2000; i++)
		if (cudaMemcpy(buf, host, sizeof host, cudaMemcpyHostToDevice) || cudaDeviceSynchronize())
			return 1;
	puts("done");
	return 0;
}
