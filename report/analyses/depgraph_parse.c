/*
 * depgraph_parse.c — the grammar of a user's what-if (gpuphase-report
 * --whatif SPEC, depgraph.h gp_dg_parse): one change of the dependency
 * graph, its target copied into the caller's buffer. No state, no
 * allocation; any thread. Returns 0 or -EINVAL with the reason.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "depgraph.h"

static int gp_dg_refuse(char *why, size_t wn, const char *msg)
{
	if (why && wn)
		snprintf(why, wn, "%s", msg);
	return -EINVAL;
}

/* A non-negative integer after "key=" at *p, up to ':' or the end. */
static int gp_dg_parse_u64(const char *p, uint64_t *v)
{
	char *end;
	if (*p < '0' || *p > '9')
		return -EINVAL;
	unsigned long long x = strtoull(p, &end, 10);
	if (*end)
		return -EINVAL;
	*v = x;
	return 0;
}

int gp_dg_parse(const char *spec, struct gp_dg_change *ch, char *buf, size_t n, char *why, size_t wn)
{
	memset(ch, 0, sizeof *ch);
	if (!spec)
		return gp_dg_refuse(why, wn, "empty");
	static const struct {
		const char *word;
		enum gp_dg_change_kind kind;
	} words[] = { { "empty-waits", GP_DG_DROP_EMPTY },
		      { "overlap-copies", GP_DG_OVERLAP_COPIES },
		      { "queue-waits", GP_DG_QUEUE } };
	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
		if (!strcmp(spec, words[i].word)) {
			ch->kind = words[i].kind;
			return 0;
		}
	static const struct {
		const char *key, *opt;
		enum gp_dg_change_kind kind;
	} kinds[] = { { "kernel=", "scale=", GP_DG_SCALE },
		      { "sync=", NULL, GP_DG_DROP_SYNC },
		      { "hoist=", NULL, GP_DG_HOIST },
		      { "site=", NULL, GP_DG_DROP_SITE },
		      { "graph=", "node_ns=", GP_DG_GRAPH_LAUNCH },
		      { "pinned=", "call_ns=", GP_DG_PINNED },
		      { "pinned-site=", "call_ns=", GP_DG_PINNED_SITE },
		      { "defer=", "call_ns=", GP_DG_DEFER },
		      { "defer-site=", "call_ns=", GP_DG_DEFER_SITE } };
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
		size_t kl = strlen(kinds[i].key);
		if (strncmp(spec, kinds[i].key, kl))
			continue;
		const char *t = spec + kl, *colon = strrchr(t, ':');
		const char *opt = NULL;
		if (colon && kinds[i].opt && !strncmp(colon + 1, kinds[i].opt, strlen(kinds[i].opt)))
			opt = colon + 1 + strlen(kinds[i].opt);
		else
			colon = NULL;
		size_t tl = colon ? (size_t)(colon - t) : strlen(t);
		if (!tl)
			return gp_dg_refuse(why, wn, "the name is empty");
		if (tl >= n)
			return gp_dg_refuse(why, wn, "the name is too long");
		memcpy(buf, t, tl);
		buf[tl] = 0;
		ch->kind = kinds[i].kind;
		ch->target = buf;
		if (ch->kind == GP_DG_SCALE) {
			char *end;
			if (!opt)
				return gp_dg_refuse(why, wn, "kernel=NAME needs :scale=F");
			ch->factor = strtod(opt, &end);
			if (*end || end == opt || !(ch->factor > 0) || ch->factor > 1e6)
				return gp_dg_refuse(why, wn, "scale=F needs a positive number");
		} else if (opt && gp_dg_parse_u64(opt, &ch->cost_ns)) {
			return gp_dg_refuse(why, wn, "node_ns= / call_ns= need a non-negative integer");
		}
		return 0;
	}
	return gp_dg_refuse(why, wn,
			    "expected kernel=NAME:scale=F, sync=API, hoist=API, site=GLOB, empty-waits, graph=NAME[:node_ns=N], "
			    "pinned=NAME[:call_ns=N], pinned-site=GLOB[:call_ns=N], defer=NAME[:call_ns=N], "
			    "defer-site=GLOB[:call_ns=N], queue-waits or overlap-copies");
}
