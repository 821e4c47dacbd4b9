/*
 * peaks.c — the per-architecture table of peaks (peaks.h). Every number is
 * a vendor datasheet or whitepaper figure; docs/metrics.md "Peaks" repeats
 * the table with its sources. Links are per direction: a PCIe x16 link is
 * lanes x rate x 128/130 encoding (Gen3 15.75, Gen4 31.5, Gen5 63.0 GB/s);
 * NVLink's datasheet figure is both directions together, halved here.
 * Pure, constant data; any thread.
 */
#include <ctype.h>
#include <stddef.h>
#include <string.h>

#include "peaks.h"

#define GP_PCIE3 15.75
#define GP_PCIE4 31.5
#define GP_PCIE5 63.0

struct gp_peaks_row {
	const char *match[3];     /* all must occur in the name (any case)    */
	struct gp_peaks p;
};

/* Most specific rows first: "GH200" before "H200", "H100 PCIe" before
 * "H100". Sources: NVIDIA H100 Tensor Core GPU Architecture whitepaper
 * (H100 SXM5 and PCIe: FP64 33.5 / 25.6, FP32 66.9 / 51.2, FP16 133.8 /
 * 102.4, dense FP16 tensor 989.4 / 756.5 TFLOPS); H100 and H200 datasheets
 * (memory 3.35 TB/s SXM, 2 TB/s PCIe, 3.9 TB/s NVL, 4.8 TB/s H200; NVLink
 * 900 GB/s SXM, 600 GB/s PCIe/NVL bridge; PCIe Gen5); H200 is the same
 * GH100 part and clocks as H100 SXM, so the same compute peaks; GH200
 * datasheet (96 GB HBM3 at 4 TB/s, NVLink-C2C 900 GB/s to the Grace CPU);
 * A100 datasheet (FP64 9.7, FP32 19.5, FP16 tensor 312 TFLOPS; 1555 GB/s
 * 40 GB, 2039 GB/s 80 GB SXM, 1935 GB/s 80 GB PCIe; NVLink 600 GB/s; PCIe
 * Gen4) and the A100 whitepaper (FP16 on CUDA cores 78 TFLOPS). */
static const struct gp_peaks_row gp_peaks_table[] = {
	{ { "GH200" }, { "GH200", 4000, 450, "NVLink-C2C", 450, "NVLink 4", 33500, 66900, 133800, 989400 } },
	{ { "H200" }, { "H200", 4800, GP_PCIE5, "PCIe 5.0 x16", 450, "NVLink 4", 33500, 66900, 133800, 989400 } },
	{ { "H100", "PCIE" }, { "H100 PCIe", 2000, GP_PCIE5, "PCIe 5.0 x16", 300, "NVLink 4 bridge", 25600, 51200,
				102400, 756500 } },
	{ { "H100", "NVL" }, { "H100 NVL", 3900, GP_PCIE5, "PCIe 5.0 x16", 300, "NVLink 4 bridge", 30000, 60000,
			       120000, 835000 } },
	{ { "H100" }, { "H100 SXM", 3350, GP_PCIE5, "PCIe 5.0 x16", 450, "NVLink 4", 33500, 66900, 133800, 989400 } },
	{ { "A100", "PCIE", "80GB" }, { "A100 80GB PCIe", 1935, GP_PCIE4, "PCIe 4.0 x16", 300, "NVLink 3 bridge", 9700,
					19500, 78000, 312000 } },
	{ { "A100", "PCIE" }, { "A100 40GB PCIe", 1555, GP_PCIE4, "PCIe 4.0 x16", 300, "NVLink 3 bridge", 9700, 19500,
				78000, 312000 } },
	{ { "A100", "80GB" }, { "A100 80GB SXM", 2039, GP_PCIE4, "PCIe 4.0 x16", 300, "NVLink 3", 9700, 19500, 78000,
				312000 } },
	{ { "A100" }, { "A100 40GB SXM", 1555, GP_PCIE4, "PCIe 4.0 x16", 300, "NVLink 3", 9700, 19500, 78000,
			312000 } },
};

/* Does needle occur in hay, ignoring case? */
static int gp_peaks_has(const char *hay, const char *needle)
{
	size_t n = strlen(needle);
	for (const char *h = hay; *h; h++) {
		size_t i = 0;
		while (i < n && h[i] && toupper((unsigned char)h[i]) == toupper((unsigned char)needle[i]))
			i++;
		if (i == n)
			return 1;
	}
	return 0;
}

int gp_peaks_lookup(const char *name, unsigned cc_major, unsigned cc_minor, struct gp_peaks *out)
{
	(void)cc_minor;
	memset(out, 0, sizeof *out);
	for (size_t i = 0; name && i < sizeof gp_peaks_table / sizeof gp_peaks_table[0]; i++) {
		const struct gp_peaks_row *r = &gp_peaks_table[i];
		int all = 1;
		for (int k = 0; k < 3 && r->match[k] && all; k++)
			all = gp_peaks_has(name, r->match[k]);
		if (all) {
			*out = r->p;
			return 1;
		}
	}
	/* not in the table: the PCIe generation that compute capability's
	 * parts ship with (Volta Gen3, Ampere/Ada Gen4, Hopper and later Gen5) */
	if (cc_major >= 9) {
		out->host_gbps = GP_PCIE5;
		out->host_link = "PCIe 5.0 x16";
	} else if (cc_major == 8) {
		out->host_gbps = GP_PCIE4;
		out->host_link = "PCIe 4.0 x16";
	} else if (cc_major == 7) {
		out->host_gbps = GP_PCIE3;
		out->host_link = "PCIe 3.0 x16";
	}
	return 0;
}
