/*
 * strtab.c — the report's string table (strtab.h): texts interned by keyed
 * FNV-1a hash with probing on collision, trace string ids mapped to canonical
 * indexes, kernel names' full and short forms (trace/kernel_name.h, the
 * one rule the capture side and simcuda use too) cached beside each text.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_name.h"
#include "strtab.h"

/* FNV-1a from a secret offset basis (the maps' key, map.h): two texts of a
 * trace that collide for one basis do not for another, so no trace can make
 * the probe chain below long. */
static uint64_t gp_strtab_hash(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ULL ^ gp_map_key[0];
	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 1099511628211ULL;
	}
	return h == GP_MAP_EMPTY ? 0 : h;
}

static uint64_t gp_strtab_probe_next(uint64_t probe)
{
	probe = probe * 0x9e3779b97f4a7c15ULL + 1u;
	return probe == GP_MAP_EMPTY ? 0 : probe;
}

int gp_strtab_intern(struct gp_strtab *t, const char *text, size_t len, uint32_t *out)
{
	uint64_t probe = gp_strtab_hash(text, len);
	uint64_t *v;
	*out = GP_STR_NONE;
	while ((v = gp_map_get(&t->by_hash, probe))) {
		struct gp_str *s = &t->strs[*v];
		if (s->len == len && !memcmp(s->text, text, len)) {
			*out = (uint32_t)*v;
			return 0;
		}
		probe = gp_strtab_probe_next(probe);
	}
	if (t->nstrs == t->capstrs) {
		size_t nc = t->capstrs ? t->capstrs * 2 : 16;
		struct gp_str *ns = realloc(t->strs, nc * sizeof *ns);
		if (!ns)
			return -ENOMEM;
		t->strs = ns;
		t->capstrs = nc;
	}
	char *copy = malloc(len + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, text, len);
	copy[len] = 0;
	uint32_t idx = (uint32_t)t->nstrs++;
	t->strs[idx] = (struct gp_str){ .text = copy, .len = (uint32_t)len };
	*out = idx;
	return gp_map_put(&t->by_hash, probe, idx);
}

int gp_strtab_bind(struct gp_strtab *t, uint32_t id, uint32_t c)
{
	return gp_map_put(&t->by_id, id, c);
}

const char *gp_strtab_text(const struct gp_strtab *t, uint32_t c)
{
	return c == GP_STR_NONE ? NULL : t->strs[c].text;
}

static void gp_strtab_demangle(struct gp_strtab *t, uint32_t c, int *err)
{
	struct gp_str *s = &t->strs[c];
	if (s->shortname)
		return;
	if (gp_kernel_name_names(s->text, &s->longname, &s->shortname))
		*err = -ENOMEM;
}

const char *gp_strtab_short(struct gp_strtab *t, uint32_t c, int *err)
{
	if (c == GP_STR_NONE)
		return NULL;
	gp_strtab_demangle(t, c, err);
	return t->strs[c].shortname ? t->strs[c].shortname : t->strs[c].text;
}

const char *gp_strtab_long(struct gp_strtab *t, uint32_t c, int *err)
{
	if (c == GP_STR_NONE)
		return NULL;
	gp_strtab_demangle(t, c, err);
	return t->strs[c].longname;
}

void gp_strtab_free(struct gp_strtab *t)
{
	for (size_t i = 0; i < t->nstrs; i++) {
		free(t->strs[i].text);
		free(t->strs[i].shortname);
		free(t->strs[i].longname);
	}
	free(t->strs);
	gp_map_free(&t->by_id);
	gp_map_free(&t->by_hash);
	memset(t, 0, sizeof *t);
}
