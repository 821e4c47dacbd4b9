/*
 * peaks.h — what a GPU can do at most, per architecture: device-memory
 * bandwidth, the host link (PCIe or NVLink-C2C) and peer link (NVLink) per
 * direction, and FP64 / FP32 / FP16 (CUDA cores) and FP16 tensor-core
 * throughput. One documented table (peaks.c; docs/metrics.md "Peaks" holds
 * the same rows and their sources), looked up by the device name a trace's
 * GP_REC_DEVICE record carries, with the host link alone estimated from the
 * compute capability when the name is not in the table.
 *
 * Used by the copy-bandwidth and roofline analyses. Pure: constant data,
 * any thread.
 */
#ifndef GP_REPORT_PEAKS_H
#define GP_REPORT_PEAKS_H

struct gp_peaks {
	const char *model;        /* the table row ("H200"), or NULL: not in the
	                             table (only host_* may be known, by cc)   */
	double dram_gbps;         /* device memory, GB/s (1e9 bytes/s); 0 = unknown */
	double host_gbps;         /* host link, one direction, GB/s; 0 = unknown */
	const char *host_link;    /* "PCIe 5.0 x16", ... or NULL                */
	double peer_gbps;         /* peer link, one direction, GB/s; 0 = unknown */
	const char *peer_link;
	double fp64_gflops, fp32_gflops, fp16_gflops; /* CUDA cores; 0 = unknown */
	double tensor_fp16_gflops; /* dense FP16 tensor cores; 0 = unknown    */
};

/* The peaks of a device named name (NULL allowed) of compute capability
 * major.minor: its table row when the name matches one (case-insensitive
 * substrings, most specific row first), else only the host link of that
 * compute capability's usual PCIe generation (x16). Always fills *out;
 * returns 1 when a table row matched, 0 otherwise. */
int gp_peaks_lookup(const char *name, unsigned cc_major, unsigned cc_minor, struct gp_peaks *out);

#endif
