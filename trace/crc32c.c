/*
 * trace/crc32c.c — CRC32C (Castagnoli, reflected polynomial 0x82F63B78), the
 * block checksum of the trace format (gp_file.h). Called by the collector's
 * writer thread when it seals a block and by readers when they load one; pure
 * functions, any thread.
 *
 * On x86-64 with SSE4.2 the crc32 instruction does the work (about 8 bytes
 * per cycle); elsewhere a slicing-by-8 table does. Both give identical results
 * (tested). The table is built once, lazily; building it twice concurrently is
 * harmless because both threads write the same values, but to keep ThreadSanitizer
 * quiet it is built under pthread_once.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include "gp_file.h"

static uint32_t crc_table[8][256];
static pthread_once_t crc_table_once = PTHREAD_ONCE_INIT;

static void gp_crc32c_init_table(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c & 1u) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
		crc_table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^ crc_table[0][crc_table[t - 1][i] & 0xffu];
}

/* Software CRC32C; contract as gp_crc32c. */
uint32_t gp_crc32c_sw(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	uint32_t c = ~crc;

	pthread_once(&crc_table_once, gp_crc32c_init_table);
	while (len >= 8) {
		uint32_t lo, hi;
		memcpy(&lo, p, 4);
		memcpy(&hi, p + 4, 4);
		lo ^= c;
		c = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff] ^
		    crc_table[5][(lo >> 16) & 0xff] ^ crc_table[4][lo >> 24] ^
		    crc_table[3][hi & 0xff] ^ crc_table[2][(hi >> 8) & 0xff] ^
		    crc_table[1][(hi >> 16) & 0xff] ^ crc_table[0][hi >> 24];
		p += 8;
		len -= 8;
	}
	while (len--)
		c = (c >> 8) ^ crc_table[0][(c ^ *p++) & 0xffu];
	return ~c;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2")))
static uint32_t gp_crc32c_hw(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	uint64_t c = ~crc;

	while (len >= 8) {
		uint64_t v;
		memcpy(&v, p, 8);
		c = __builtin_ia32_crc32di(c, v);
		p += 8;
		len -= 8;
	}
	uint32_t c32 = (uint32_t)c;
	while (len--)
		c32 = __builtin_ia32_crc32qi(c32, *p++);
	return ~c32;
}

/* 0 = not yet probed, 1 = software, 2 = SSE4.2. Relaxed: a racy re-probe
 * stores the same value; no other memory depends on it. */
static _Atomic int crc_impl;
#endif

/* CRC32C of len bytes at buf, continuing from crc (0 for a fresh sum).
 * Never fails. */
uint32_t gp_crc32c(uint32_t crc, const void *buf, size_t len)
{
#if defined(__x86_64__)
	int impl = atomic_load_explicit(&crc_impl, memory_order_relaxed);
	if (impl == 0) {
		__builtin_cpu_init();
		impl = __builtin_cpu_supports("sse4.2") ? 2 : 1;
		atomic_store_explicit(&crc_impl, impl, memory_order_relaxed);
	}
	if (impl == 2)
		return gp_crc32c_hw(crc, buf, len);
#endif
	return gp_crc32c_sw(crc, buf, len);
}
