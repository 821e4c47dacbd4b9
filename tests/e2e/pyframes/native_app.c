/* native_app.c — a native program without exported symbols that waits on the
 * GPU in a static function (test_native_names.sh): the report must name it
 * (and native_app.c:LINE when built with -g). Many calls: a trace this
 * short would end with the hooks' ring flushed after CUPTI's records, and
 * the report joins a stack to a wait only when the hook comes first. */
#include <cuda_runtime_api.h>

static void *na_buf;
static char na_host[4096];

static __attribute__((noinline)) int na_static_wait(int i)
{
	int r = cudaMemcpy(na_buf, na_host, sizeof na_host, cudaMemcpyHostToDevice); /* the wait */
	return r + cudaDeviceSynchronize() + (i & 0);
}

int main(void)
{
	if (cudaMalloc(&na_buf, 1 << 20))
		return 1;
	for (int i = 0; i < 2000; i++)
		if (na_static_wait(i))
			return 1;
	return 0;
}
