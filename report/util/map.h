/*
 * map.h — gp_map: an open-addressing hash map from uint64_t keys to uint64_t
 * values (linear probing, backward-shift deletion), used by the report's join
 * tables and string tables. Single-threaded; owned by one analyser.
 *
 * Invariants: capacity is a power of two, load factor <= 1/2, key
 * GP_MAP_EMPTY (UINT64_MAX) is reserved and never stored.
 */
#ifndef GP_REPORT_MAP_H
#define GP_REPORT_MAP_H

#include <stddef.h>
#include <stdint.h>

#define GP_MAP_EMPTY UINT64_MAX

struct gp_map {
	uint64_t *keys;
	uint64_t *vals;
	size_t cap;   /* power of two, or 0 before the first insert */
	size_t count;
};

/* Insert or overwrite. Returns 0, or -ENOMEM (map unchanged), or -EINVAL for
 * the reserved key. */
int gp_map_put(struct gp_map *m, uint64_t key, uint64_t val);

/*
 * The hash is keyed: gp_map_key (two 64-bit words, the second odd) is drawn
 * from getrandom(2) when the program starts (map.c), so keys taken from a
 * trace cannot be chosen to collide. (An unkeyed, invertible mix let a
 * crafted 2.5 MB trace put every key in one probe run: quadratic time.) A
 * 64x64->128-bit multiply of the key-xored key by the second word, high
 * half xored into the low half. Iteration order (gp_map_next) therefore
 * differs between runs: whatever prints from a map must not depend on it.
 */
extern uint64_t gp_map_key[2];

static inline size_t gp_map_hash(uint64_t k)
{
	unsigned __int128 m = (unsigned __int128)(k ^ gp_map_key[0]) * gp_map_key[1];
	return (size_t)((uint64_t)m ^ (uint64_t)(m >> 64));
}

/* Pointer to the value of key, or NULL. Valid until the next put/del.
 * Inline: the report's join calls it several times per record. */
static inline uint64_t *gp_map_get(const struct gp_map *m, uint64_t key)
{
	if (!m->cap || key == GP_MAP_EMPTY)
		return NULL;
	size_t j = gp_map_hash(key) & (m->cap - 1);
	while (m->keys[j] != GP_MAP_EMPTY) {
		if (m->keys[j] == key)
			return &m->vals[j];
		j = (j + 1) & (m->cap - 1);
	}
	return NULL;
}

/* Remove key; returns 1 if it was present, 0 otherwise. */
int gp_map_del(struct gp_map *m, uint64_t key);

void gp_map_free(struct gp_map *m);

/* Iterate: start with *pos = 0; returns 1 with key/val set, 0 at the end. */
int gp_map_next(const struct gp_map *m, size_t *pos, uint64_t *key, uint64_t *val);

/*
 * gp_dmap: the same contract as gp_map, for keys that are dense and mostly
 * increasing (CUPTI correlation ids, hook op ids): a direct-mapped table
 * (slot = key & (GP_DMAP_SLOTS - 1)) in front of a gp_map. The newest key
 * takes its slot; an older occupant moves to the overflow map. A key is in
 * exactly one of the two. Live join entries are recent ids, so lookups,
 * inserts and deletes touch one slot next to the previous one's, without
 * hashing or probing.
 */
#define GP_DMAP_SLOTS (1u << 14)
struct gp_dmap {
	uint64_t *keys;       /* GP_DMAP_SLOTS, GP_MAP_EMPTY = free, or NULL   */
	uint64_t *vals;
	size_t ndirect;
	struct gp_map over;
};

static inline uint64_t *gp_dmap_get(const struct gp_dmap *d, uint64_t key)
{
	if (d->keys) {
		size_t j = (size_t)key & (GP_DMAP_SLOTS - 1u);
		if (d->keys[j] == key && key != GP_MAP_EMPTY)
			return &d->vals[j];
	}
	return d->over.count ? gp_map_get(&d->over, key) : NULL;
}

/* Insert or overwrite: 0, -ENOMEM (map unchanged), -EINVAL (reserved key). */
int gp_dmap_put(struct gp_dmap *d, uint64_t key, uint64_t val);
/* Remove key; 1 if it was present. */
int gp_dmap_del(struct gp_dmap *d, uint64_t key);
static inline size_t gp_dmap_count(const struct gp_dmap *d)
{
	return d->ndirect + d->over.count;
}
void gp_dmap_free(struct gp_dmap *d);

#endif
