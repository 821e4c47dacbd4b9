// report_devices.cu — two devices (simcuda `devices 2`) for the report's
// end-to-end test (tests/e2e/test_report_devices.sh): every phase must equal
// simcuda's truth when work runs on both devices at once.
//   set-up    per device (cudaSetDevice switching): a buffer, a non-blocking
//             stream, an event
//   ITERS x   device 0: dv_a on its stream, an event recorded after it;
//             device 1: dv_b on its stream, dv_c on its legacy stream, its
//             stream waits for device 0's event (cross-device dependency),
//             dv_d after the wait; then, with device 1 current,
//             cudaStreamSynchronize of device 0's stream and
//             cudaEventSynchronize of device 0's event (waits on the other
//             device); a blocking device-to-host copy on device 1 (it waits
//             for device 1's legacy stream); every 4th iteration a
//             cudaMemcpyPeer 1 -> 0; cudaDeviceSynchronize on device 0, then
//             on device 1; then dv_e on each device's stream and each
//             device synchronized in turn (the usual multi-GPU step)
//   tear-down cudaFree on each device (implicit syncs, per device)
// Cost model: report_devices.simcuda. Stdout: one line.
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define ITERS 12
#define N 4096

__global__ void dv_a(float *x) { x[threadIdx.x] += 1.0f; }
__global__ void dv_b(float *x) { x[threadIdx.x] *= 2.0f; }
__global__ void dv_c(float *x) { x[threadIdx.x] -= 1.0f; }
__global__ void dv_d(float *x) { x[threadIdx.x] *= 0.5f; }
__global__ void dv_e(float *x) { x[threadIdx.x] += 2.0f; }

#define CK(call)                                                                                   \
	do {                                                                                       \
		cudaError_t e_ = (call);                                                           \
		if (e_ != cudaSuccess) {                                                           \
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

int main(void)
{
	int n = 0;
	CK(cudaGetDeviceCount(&n));
	if (n < 2) {
		fprintf(stderr, "report_devices: needs 2 devices, found %d\n", n);
		return 1;
	}
	float *buf[2], host[64];
	cudaStream_t s[2];
	cudaEvent_t ev[2];
	for (int d = 0; d < 2; d++) {
		CK(cudaSetDevice(d));
		CK(cudaMalloc(&buf[d], N * sizeof(float)));
		CK(cudaStreamCreateWithFlags(&s[d], cudaStreamNonBlocking));
		CK(cudaEventCreateWithFlags(&ev[d], cudaEventDisableTiming));
	}
	for (int it = 0; it < ITERS; it++) {
		CK(cudaSetDevice(0));
		dv_a<<<1, 32, 0, s[0]>>>(buf[0]);
		CK(cudaEventRecord(ev[0], s[0]));
		CK(cudaSetDevice(1));
		dv_b<<<1, 32, 0, s[1]>>>(buf[1]);
		dv_c<<<1, 32>>>(buf[1]);
		CK(cudaStreamWaitEvent(s[1], ev[0], 0));
		dv_d<<<1, 32, 0, s[1]>>>(buf[1]);
		CK(cudaStreamSynchronize(s[0])); /* device 0's stream, device 1 current */
		CK(cudaEventSynchronize(ev[0]));
		CK(cudaMemcpy(host, buf[1], sizeof host, cudaMemcpyDeviceToHost));
		if (it % 4 == 3)
			CK(cudaMemcpyPeer(buf[0], 0, buf[1], 1, N * sizeof(float)));
		CK(cudaSetDevice(0));
		CK(cudaDeviceSynchronize());
		CK(cudaSetDevice(1));
		CK(cudaDeviceSynchronize());
		/* the usual multi-GPU step: the same kernel on each device,
		 * then each device synchronized in turn (device 1's ends just
		 * after device 0's synchronize returned) */
		for (int d = 0; d < 2; d++) {
			CK(cudaSetDevice(d));
			dv_e<<<1, 32, 0, s[d]>>>(buf[d]);
		}
		for (int d = 0; d < 2; d++) {
			CK(cudaSetDevice(d));
			CK(cudaDeviceSynchronize());
		}
	}
	for (int d = 0; d < 2; d++) {
		CK(cudaSetDevice(d));
		CK(cudaEventDestroy(ev[d]));
		CK(cudaStreamDestroy(s[d]));
		CK(cudaFree(buf[d]));
	}
	printf("report_devices: iters=%d ok\n", ITERS);
	return 0;
}
