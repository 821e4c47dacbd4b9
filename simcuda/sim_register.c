/*
 * sim_register.c — what an nvcc-built program registers before main(): fat
 * binaries, kernels (__cudaRegisterFunction: the host stub and the mangled
 * device name) and __device__ variables (their host shadows), and the
 * <<<>>> launch configuration stack (__cudaPush/PopCallConfiguration).
 * Lookups for the rest of the runtime: a kernel by host stub or
 * cudaKernel_t, its host body and cost rule, a variable by symbol.
 *
 * Host twins: simcuda_kernel_<plain> is looked up process-wide (RTLD_DEFAULT),
 * then in the object that registered the kernel (dladdr on its host stub),
 * so a library loaded RTLD_LOCAL (Python ctypes) finds its own twins.
 *
 * Kernel names: CUPTI records and the truth carry the mangled name as
 * registered; sim_plain_name shortens it only to find the host body
 * (simcuda_kernel_<plain>) and to match cost-model rules (sim_config_match:
 * a rule applies when its glob matches either name).
 *
 * Threads: registration runs in static constructors (usually one thread);
 * lookups on application threads. The registries are lists under g_dev.mx;
 * entries are never removed (names must outlive the records that point at
 * them). The call configuration stack is per thread.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_name.h"
#include "sim_cudart.h"

static __thread struct {
	dim3 grid, block;
	size_t shmem;
	cudaStream_t stream;
} t_cfg[16];
static __thread int t_ncfg;

/* The bare function identifier of a kernel, whose host body is
 * simcuda_kernel_<this>: kernel_name.h's base name (_Z6aten_mmPfi -> aten_mm,
 * _ZN2ns3fooEv -> foo); unmangled names stay as they are. */
static char *sim_plain_name(const char *m)
{
	size_t len, off = gp_kernel_name_mangled_base(m, &len);
	return strndup(m + off, len);
}

SIM_EXPORT void **__cudaRegisterFatBinary(void *fatCubin)
{
	void **h = calloc(1, sizeof(void *));
	if (h)
		*h = fatCubin;
	return h;
}

SIM_EXPORT void __cudaRegisterFatBinaryEnd(void **fatCubinHandle)
{
	(void)fatCubinHandle;
}

SIM_EXPORT void __cudaUnregisterFatBinary(void **fatCubinHandle)
{
	free(fatCubinHandle); /* its functions stay registered: names must outlive records */
}

SIM_EXPORT char __cudaInitModule(void **fatCubinHandle)
{
	(void)fatCubinHandle;
	return 1;
}

SIM_EXPORT void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun,
				       const char *deviceName, int thread_limit, uint3 *tid, uint3 *bid,
				       dim3 *bDim, dim3 *gDim, int *wSize)
{
	(void)fatCubinHandle, (void)deviceFun, (void)thread_limit, (void)tid, (void)bid, (void)bDim,
		(void)gDim, (void)wSize;
	struct sim_func *f = calloc(1, sizeof *f);
	if (!f)
		return;
	f->host_fun = hostFun;
	f->mangled = strdup(deviceName ? deviceName : "?");
	f->plain = sim_plain_name(f->mangled ? f->mangled : "?");
	pthread_mutex_lock(&g_dev.mx);
	f->next = g_dev.funcs;
	g_dev.funcs = f;
	pthread_mutex_unlock(&g_dev.mx);
}

SIM_EXPORT void __cudaRegisterVar(void **fatCubinHandle, char *hostVar, char *deviceAddress,
				  const char *deviceName, int ext, size_t size, int constant, int global)
{
	(void)fatCubinHandle, (void)deviceAddress, (void)deviceName, (void)ext, (void)constant,
		(void)global;
	struct sim_var *v = calloc(1, sizeof *v);
	if (!v)
		return;
	v->host_var = hostVar;
	v->size = size;
	pthread_mutex_lock(&g_dev.mx);
	v->next = g_dev.vars;
	g_dev.vars = v;
	pthread_mutex_unlock(&g_dev.mx);
}

SIM_EXPORT void __cudaRegisterManagedVar(void **fatCubinHandle, void **hostVarPtrAddress,
					 char *deviceAddress, const char *deviceName, int ext, size_t size,
					 int constant, int global)
{
	(void)fatCubinHandle, (void)hostVarPtrAddress, (void)deviceAddress, (void)deviceName, (void)ext,
		(void)size, (void)constant, (void)global;
}

struct sim_func *sim_register_find(const void *p)
{
	pthread_mutex_lock(&g_dev.mx);
	struct sim_func *f = g_dev.funcs;
	while (f && f->host_fun != p && (const void *)f != p)
		f = f->next;
	pthread_mutex_unlock(&g_dev.mx);
	return f;
}

/* The host twin `sym` in the object that holds host_fun (the kernel's stub,
 * in the library that registered it), which RTLD_DEFAULT does not search when
 * that library was loaded RTLD_LOCAL; NULL if none. */
static sim_body_fn sim_register_body_near(const void *host_fun, const char *sym)
{
	Dl_info info;
	if (!host_fun || !dladdr(host_fun, &info) || !info.dli_fname)
		return NULL;
	void *h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return NULL;
	sim_body_fn fn = (sim_body_fn)dlsym(h, sym);
	dlclose(h); /* only drops our reference: the program's keeps it loaded */
	return fn;
}

/* Body and cost rule of f, looked up once (after the config is loaded). The
 * dynamic-linker calls run without g_dev.mx: they take the loader's lock,
 * which a thread running a library's constructors holds while it registers
 * kernels (taking g_dev.mx) — the other order would deadlock. */
void sim_register_resolve(struct sim_func *f)
{
	pthread_mutex_lock(&g_dev.mx);
	int done = f->resolved;
	pthread_mutex_unlock(&g_dev.mx);
	if (done)
		return;
	char sym[300];
	snprintf(sym, sizeof sym, "simcuda_kernel_%s", f->plain);
	sim_body_fn body = (sim_body_fn)dlsym(RTLD_DEFAULT, sym);
	if (!body) /* a library loaded RTLD_LOCAL (Python ctypes): ask the one that registered f */
		body = sim_register_body_near(f->host_fun, sym);
	const struct sim_kernel_rule *rule = sim_config_match(&g_cfg, f->mangled, f->plain);
	pthread_mutex_lock(&g_dev.mx);
	if (!f->resolved) { /* two first launches may race here: same answer */
		f->body = body;
		f->rule = rule;
		f->resolved = 1;
	}
	pthread_mutex_unlock(&g_dev.mx);
}

SIM_EXPORT cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *hostFun)
{
	struct sim_func *f = sim_register_find(hostFun);
	if (!kernel || !f)
		return cudaErrorInvalidDeviceFunction;
	*kernel = (cudaKernel_t)(void *)f;
	return cudaSuccess;
}

SIM_EXPORT unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
						struct CUstream_st *stream)
{
	if (t_ncfg >= 16)
		return 1;
	t_cfg[t_ncfg].grid = gridDim;
	t_cfg[t_ncfg].block = blockDim;
	t_cfg[t_ncfg].shmem = sharedMem;
	t_cfg[t_ncfg].stream = stream;
	t_ncfg++;
	return 0;
}

SIM_EXPORT cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem,
						  void *stream)
{
	if (t_ncfg == 0)
		return cudaErrorMissingConfiguration;
	t_ncfg--;
	*gridDim = t_cfg[t_ncfg].grid;
	*blockDim = t_cfg[t_ncfg].block;
	*sharedMem = t_cfg[t_ncfg].shmem;
	*(cudaStream_t *)stream = t_cfg[t_ncfg].stream;
	return cudaSuccess;
}

/* A __device__ symbol is its host shadow (registered by __cudaRegisterVar). */
char *sim_register_symbol(const void *symbol, size_t count, size_t offset)
{
	pthread_mutex_lock(&g_dev.mx);
	struct sim_var *v = g_dev.vars;
	while (v && v->host_var != symbol)
		v = v->next;
	pthread_mutex_unlock(&g_dev.mx);
	if (!v || offset + count > v->size)
		return NULL;
	return (char *)v->host_var + offset;
}
