/*
 * sim_truth_reader.c — reads back the ground truth sim_truth_writer.c writes:
 * a parser for its JSON Lines (sim_truth_reader.h), for tests. Accepts
 * exactly what simcuda writes: flat objects of string and unsigned integer
 * values; unknown keys, and lines of unknown types, are skipped, so the
 * format can grow.
 */
#include "sim_truth_reader.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Parse one flat JSON object line into *e; 0, 1 when the line is of a type
 * this reader does not load ("gpu_clock", any later one: skipped whatever
 * its values), or -1 when malformed. "type" comes first in simcuda's lines. */
static int sim_truth_line(const char *s, struct sim_ev *e)
{
	memset(e, 0, sizeof *e);
	int have_type = 0;
	while (*s == ' ')
		s++;
	if (*s++ != '{')
		return -1;
	for (;;) {
		while (*s == ' ' || *s == ',')
			s++;
		if (*s == '}')
			break;
		if (*s++ != '"')
			return -1;
		char key[32];
		size_t kl = 0;
		while (*s && *s != '"' && kl < sizeof key - 1)
			key[kl++] = *s++;
		key[kl] = 0;
		if (*s++ != '"' || *s++ != ':')
			return -1;
		if (*s == '"') {
			char val[256];
			size_t vl = 0;
			s++;
			while (*s && *s != '"') {
				if (*s == '\\' && s[1])
					s++;
				if (vl < sizeof val - 1)
					val[vl++] = *s;
				s++;
			}
			if (*s++ != '"')
				return -1;
			val[vl] = 0;
			if (strcmp(key, "type") == 0) {
				have_type = 1;
				if (strcmp(val, "api") == 0)
					e->type = SIM_EV_API;
				else if (strcmp(val, "kernel") == 0)
					e->type = SIM_EV_KERNEL;
				else if (strcmp(val, "memcpy") == 0)
					e->type = SIM_EV_MEMCPY;
				else if (strcmp(val, "memset") == 0)
					e->type = SIM_EV_MEMSET;
				else if (strcmp(val, "sync") == 0)
					e->type = SIM_EV_SYNC;
				else if (strcmp(val, "overhead") == 0)
					e->type = SIM_EV_OVERHEAD;
				else if (strcmp(val, "cupti_kind") == 0)
					return 1; /* CUPTI's switches: for the Python checkers */
				else
					return 1; /* a type this reader does not know: skipped */
			} else if (strcmp(key, "name") == 0) {
				snprintf(e->name, sizeof e->name, "%s", val);
			} else if (strcmp(key, "kind") == 0) {
				size_t kn = strnlen(val, sizeof e->kind - 1);
				memcpy(e->kind, val, kn);
				e->kind[kn] = 0;
			}
			continue;
		}
		if (*s < '0' || *s > '9')
			return -1;
		char *end;
		errno = 0;
		unsigned long long v = strtoull(s, &end, 10);
		if (errno)
			return -1;
		s = end;
		if (strcmp(key, "tid") == 0)
			e->tid = (uint32_t)v;
		else if (strcmp(key, "stream") == 0)
			e->stream = (uint32_t)v;
		else if (strcmp(key, "corr") == 0)
			e->corr = (uint32_t)v;
		else if (strcmp(key, "api_corr") == 0)
			e->api_corr = (uint32_t)v;
		else if (strcmp(key, "waited_corr") == 0)
			e->waited_corr = (uint32_t)v;
		else if (strcmp(key, "start") == 0)
			e->start = v;
		else if (strcmp(key, "end") == 0)
			e->end = v;
		else if (strcmp(key, "replay") == 0)
			e->replay = (uint32_t)v;
		else if (strcmp(key, "bytes") == 0)
			e->bytes = v;
	}
	return have_type ? 0 : -1;
}

int sim_truth_load(const char *path, struct sim_ev **out, size_t *n)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -errno;
	struct sim_ev *v = NULL;
	size_t cnt = 0, cap = 0;
	char *line = NULL;
	size_t lcap = 0;
	ssize_t len;
	int lineno = 0, rc = 0;
	while ((len = getline(&line, &lcap, f)) >= 0) {
		lineno++;
		if (len == 0 || line[0] == '\n')
			continue;
		if (cnt == cap) {
			size_t nc = cap ? cap * 2 : 256;
			struct sim_ev *nv = realloc(v, nc * sizeof *nv);
			if (!nv) {
				rc = -ENOMEM;
				break;
			}
			v = nv;
			cap = nc;
		}
		int lr = sim_truth_line(line, &v[cnt]);
		if (lr < 0) {
			fprintf(stderr, "sim_truth_reader: %s:%d: malformed truth line\n", path, lineno);
			rc = -EINVAL;
			break;
		}
		if (lr == 0)
			cnt++;
	}
	free(line);
	fclose(f);
	if (rc) {
		free(v);
		return rc;
	}
	*out = v;
	*n = cnt;
	return 0;
}
