/*
 * trace/gp_file.h — the framing of a gpuphase trace file around the 32-byte
 * records of gp_format.h: file header, block header, footer. docs/format.md is
 * the prose contract; this header is the same contract in C. Shared by the
 * writer (collector/writer.c, one writer thread) and the reader (reader.c,
 * any thread, one reader object per thread). Not used by the capture side.
 *
 * Invariants: everything is little-endian and naturally aligned; every on-disk
 * struct has a _Static_assert on its size; a file is
 *     header, block*, [footer block]
 * and every block is self-delimiting (its header gives the stored length and
 * a CRC32C over header + payload), so a file cut at any byte is readable up to
 * the last whole block.
 */
#ifndef GP_FILE_H
#define GP_FILE_H

#include <stddef.h>
#include <stdint.h>
#include "gp_format.h"

#define GP_FILE_MAGIC "GPHTRACE"      /* 8 bytes, no NUL on disk            */
#define GP_FORMAT_VERSION 1u
#define GP_BYTE_ORDER_MARK 0x01020304u /* reads 0x04030201 on a foreign host */

/* Fixed part of the file header; nkv key/value entries follow, then padding
 * to a multiple of 8. header_len covers all of it. hdr_crc is CRC32C of the
 * header_len bytes with hdr_crc itself taken as 0. */
struct gp_file_header {
	char magic[8];
	uint32_t version;
	uint32_t byte_order;     /* GP_BYTE_ORDER_MARK                        */
	uint32_t rec_size;       /* GP_REC_SIZE                                */
	uint32_t header_len;     /* bytes, including kv area and padding       */
	uint32_t hdr_crc;
	uint32_t clock_id;
	int64_t clock_offset_ns;
	uint64_t start_wall_ns;
	uint64_t start_clock_ns;
	uint32_t pid;
	uint32_t nkv;
	uint32_t flags;          /* reserved, 0                                 */
	uint32_t max_block_slots;/* largest nslots any block of this file has   */
};
_Static_assert(sizeof(struct gp_file_header) == 72, "file header size");

/* One header key/value entry: klen bytes of key then vlen bytes of value, no
 * NUL terminators, no padding between entries. */
struct gp_file_kv {
	uint32_t klen;
	uint32_t vlen;
};
_Static_assert(sizeof(struct gp_file_kv) == 8, "kv entry size");

#define GP_HEADER_MAX_LEN (1u << 20) /* reader refuses larger headers        */
#define GP_HEADER_MAX_KV 4096u

/* Block header; `stored_len` payload bytes follow. crc = CRC32C over the 28
 * header bytes before `crc` and then the stored payload. */
#define GP_BLOCK_MAGIC 0x4b4c4250u  /* "PBLK" little-endian: data block     */
#define GP_FOOTER_MAGIC 0x54465047u /* "GPFT" little-endian: footer block   */
#define GP_BLOCKF_LZ4 0x1u          /* payload is one LZ4 block             */
struct gp_block_header {
	uint32_t magic;
	uint32_t flags;       /* GP_BLOCKF_*                                     */
	uint64_t seq;         /* 0, 1, 2, ... in file order (footer included)   */
	uint32_t nslots;      /* data: slots (records) after decompression;
	                         footer: number of footer entries               */
	uint32_t stored_len;  /* payload bytes on disk                          */
	uint32_t raw_len;     /* payload bytes after decompression             */
	uint32_t crc;
};
_Static_assert(sizeof(struct gp_block_header) == 32, "block header size");

/* The writer seals a block once it holds GP_BLOCK_TARGET_SLOTS slots; only a
 * single record group larger than that (a very long string or stack) makes a
 * bigger block. No block holds more than GP_BLOCK_MAX_SLOTS slots (1 MiB raw):
 * the reader refuses more, which bounds its memory, and emit refuses groups
 * that could not fit. */
#define GP_BLOCK_TARGET_SLOTS 4096u
#define GP_BLOCK_MAX_SLOTS 32768u
#define GP_BLOCK_MAX_RAW (GP_BLOCK_MAX_SLOTS * GP_REC_SIZE)

/* Footer: a block with GP_FOOTER_MAGIC whose raw payload is nslots entries. */
enum gp_footer_key {
	GP_FT_RECORDS = 1,       /* slots written in data blocks              */
	GP_FT_BLOCKS = 2,        /* data blocks written                       */
	GP_FT_DROPPED_RING = 3,  /* records dropped because a ring was full   */
	GP_FT_DROPPED_CUPTI = 4, /* largest cumulative CUPTI drop count seen  */
	GP_FT_WRITE_ERRORS = 5,
	GP_FT_END_REASON = 6,    /* 0 or -errno, as int64                      */
	GP_FT_RINGS = 7,         /* rings (producer threads) seen             */
	GP_FT_LOST_AFTER_STOP = 8, /* records drained but not written (error/cap) */
	GP_FT_TYPE_BASE = 0x100  /* + record type: head records of that type  */
};
struct gp_footer_entry {
	uint32_t key;
	uint32_t pad;
	uint64_t value;
};
_Static_assert(sizeof(struct gp_footer_entry) == 16, "footer entry size");
#define GP_FOOTER_MAX_ENTRIES 512u

/* CRC32C (Castagnoli), crc32c.c. `crc` is the running value (0 to start). */
uint32_t gp_crc32c(uint32_t crc, const void *buf, size_t len);
uint32_t gp_crc32c_sw(uint32_t crc, const void *buf, size_t len);

#endif /* GP_FILE_H */
