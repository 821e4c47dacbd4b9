/*
 * map.c — gp_map (see map.h): open addressing with linear probing and
 * backward-shift deletion, so lookups never cross tombstones; and gp_dmap,
 * a direct-mapped table in front of a gp_map for dense ids. Called by the
 * analyser on the report's single thread.
 */
#include "map.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

/* Non-zero defaults so a map works even before the constructor runs (a
 * constructor of another object that builds a map). */
uint64_t gp_map_key[2] = { 0x9e3779b97f4a7c15ULL, 0xff51afd7ed558ccdULL };

/* Draw the hash key once, before main. getrandom(2) with GRND_NONBLOCK
 * never waits; should it fail (early boot, old kernel), the clock, the pid
 * and a stack address still make the key unknown to a trace's author,
 * which is all this needs. */
__attribute__((constructor)) static void gp_map_key_init(void)
{
	uint64_t k[2];
	if (getrandom(k, sizeof k, GRND_NONBLOCK) != (ssize_t)sizeof k) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		k[0] = ((uint64_t)ts.tv_nsec << 32) ^ (uint64_t)ts.tv_sec ^ (uint64_t)getpid() * 0x9e3779b97f4a7c15ULL;
		k[1] = k[0] * 0xff51afd7ed558ccdULL + (uint64_t)(uintptr_t)&ts;
	}
	gp_map_key[0] = k[0];
	gp_map_key[1] = k[1] | 1u;
}

static int gp_map_grow(struct gp_map *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 64;
	uint64_t *nk = malloc(ncap * sizeof *nk);
	uint64_t *nv = malloc(ncap * sizeof *nv);
	if (!nk || !nv) {
		free(nk);
		free(nv);
		return -ENOMEM;
	}
	for (size_t i = 0; i < ncap; i++)
		nk[i] = GP_MAP_EMPTY;
	for (size_t i = 0; i < m->cap; i++) {
		if (m->keys[i] == GP_MAP_EMPTY)
			continue;
		size_t j = gp_map_hash(m->keys[i]) & (ncap - 1);
		while (nk[j] != GP_MAP_EMPTY)
			j = (j + 1) & (ncap - 1);
		nk[j] = m->keys[i];
		nv[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = nk;
	m->vals = nv;
	m->cap = ncap;
	return 0;
}

int gp_map_put(struct gp_map *m, uint64_t key, uint64_t val)
{
	if (key == GP_MAP_EMPTY)
		return -EINVAL;
	if ((m->count + 1) * 2 > m->cap) {
		int rc = gp_map_grow(m);
		if (rc)
			return rc;
	}
	size_t j = gp_map_hash(key) & (m->cap - 1);
	while (m->keys[j] != GP_MAP_EMPTY) {
		if (m->keys[j] == key) {
			m->vals[j] = val;
			return 0;
		}
		j = (j + 1) & (m->cap - 1);
	}
	m->keys[j] = key;
	m->vals[j] = val;
	m->count++;
	return 0;
}

int gp_map_del(struct gp_map *m, uint64_t key)
{
	if (!m->cap || key == GP_MAP_EMPTY)
		return 0;
	size_t mask = m->cap - 1, j = gp_map_hash(key) & mask;
	while (m->keys[j] != key) {
		if (m->keys[j] == GP_MAP_EMPTY)
			return 0;
		j = (j + 1) & mask;
	}
	/* Backward shift: move later members of the probe run into the hole. */
	size_t hole = j;
	for (size_t i = (j + 1) & mask; m->keys[i] != GP_MAP_EMPTY; i = (i + 1) & mask) {
		size_t home = gp_map_hash(m->keys[i]) & mask;
		/* i may move to hole iff home is not in (hole, i] cyclically. */
		int stays = hole <= i ? (home > hole && home <= i) : (home > hole || home <= i);
		if (!stays) {
			m->keys[hole] = m->keys[i];
			m->vals[hole] = m->vals[i];
			hole = i;
		}
	}
	m->keys[hole] = GP_MAP_EMPTY;
	m->count--;
	return 1;
}

void gp_map_free(struct gp_map *m)
{
	free(m->keys);
	free(m->vals);
	m->keys = m->vals = NULL;
	m->cap = m->count = 0;
}

int gp_map_next(const struct gp_map *m, size_t *pos, uint64_t *key, uint64_t *val)
{
	while (*pos < m->cap) {
		size_t i = (*pos)++;
		if (m->keys[i] != GP_MAP_EMPTY) {
			*key = m->keys[i];
			*val = m->vals[i];
			return 1;
		}
	}
	return 0;
}

int gp_dmap_put(struct gp_dmap *d, uint64_t key, uint64_t val)
{
	if (key == GP_MAP_EMPTY)
		return -EINVAL;
	if (!d->keys) {
		d->keys = malloc(GP_DMAP_SLOTS * sizeof *d->keys);
		d->vals = malloc(GP_DMAP_SLOTS * sizeof *d->vals);
		if (!d->keys || !d->vals) {
			free(d->keys);
			free(d->vals);
			d->keys = d->vals = NULL;
			return -ENOMEM;
		}
		for (size_t i = 0; i < GP_DMAP_SLOTS; i++)
			d->keys[i] = GP_MAP_EMPTY;
	}
	size_t j = (size_t)key & (GP_DMAP_SLOTS - 1u);
	if (d->keys[j] == key) {
		d->vals[j] = val;
		return 0;
	}
	uint64_t *v = d->over.count ? gp_map_get(&d->over, key) : NULL;
	if (v) {
		*v = val;
		return 0;
	}
	if (d->keys[j] != GP_MAP_EMPTY) { /* the older occupant moves out */
		int rc = gp_map_put(&d->over, d->keys[j], d->vals[j]);
		if (rc)
			return rc;
	} else {
		d->ndirect++;
	}
	d->keys[j] = key;
	d->vals[j] = val;
	return 0;
}

int gp_dmap_del(struct gp_dmap *d, uint64_t key)
{
	if (key == GP_MAP_EMPTY)
		return 0;
	size_t j = (size_t)key & (GP_DMAP_SLOTS - 1u);
	if (d->keys && d->keys[j] == key) {
		d->keys[j] = GP_MAP_EMPTY;
		d->ndirect--;
		return 1;
	}
	return d->over.count ? gp_map_del(&d->over, key) : 0;
}

void gp_dmap_free(struct gp_dmap *d)
{
	free(d->keys);
	free(d->vals);
	d->keys = d->vals = NULL;
	d->ndirect = 0;
	gp_map_free(&d->over);
}
