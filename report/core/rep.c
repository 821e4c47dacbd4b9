/*
 * rep.c — ownership, merging and statistics of gp_rep (rep.h): the aggregate
 * result of one trace, or of several traces (ranks/processes) merged by
 * group name and iteration number. Called on the report thread by the
 * pipeline (merge) and the outputs (statistics).
 *
 * Merge rules (docs/metrics.md "Several traces"): counts, phase sums, GPU busy
 * and host time add up (each rank has its own GPUs and threads); wall time is
 * the longest rank's; iterations with the same number are merged, their
 * duration being the longest rank's; execute distributions are merged.
 * Operators, iterations and call sites are found through hash indexes while
 * merging, so that a merge is linear in what the ranks hold (hundreds of
 * ranks of long runs: docs/performance.md "Partial results").
 */
#include "rep.h"
#include "report/util/map.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void gp_rep_free_group(struct gp_rep_group *g)
{
	free(g->name);
	free(g->long_name);
	gp_hist_free(&g->exec);
}

void gp_rep_free(struct gp_rep *rep)
{
	if (!rep)
		return;
	free(rep->path);
	for (size_t i = 0; i < rep->nkv; i++) {
		free(rep->kv[i].key);
		free(rep->kv[i].value);
	}
	free(rep->kv);
	for (size_t i = 0; i < rep->ndevices; i++)
		free(rep->devices[i]);
	free(rep->devices);
	for (size_t i = 0; i < rep->ngroups; i++)
		gp_rep_free_group(&rep->groups[i]);
	free(rep->groups);
	free(rep->iters);
	free(rep->windows);
	free(rep->gpu_clock);
	for (size_t i = 0; i < rep->ncallsites; i++) {
		free(rep->callsites[i].name);
		free(rep->callsites[i].stack);
	}
	free(rep->callsites);
	for (size_t i = 0; i < rep->nranks; i++)
		gp_rep_free(&rep->ranks[i]);
	free(rep->ranks);
	memset(rep, 0, sizeof *rep);
}

/* The merged tables' indexes, while gp_rep_merge runs: a name's hash or an
 * iteration number -> its index in dst (the first one made; a key that
 * collides, or cannot be a map key, is found by a scan), and the tables'
 * capacities. */
struct gp_rep_ix {
	struct gp_map groups, iters, sites;
	size_t capgroups, capiters, capsites;
};

static uint64_t gp_rep_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h == GP_MAP_EMPTY ? h - 1 : h; /* never the map's reserved key */
}

/* Room for one more element in *arr (elem bytes, n used, *cap allocated). */
static int gp_rep_room(void **arr, size_t n, size_t *cap, size_t elem)
{
	if (n < *cap)
		return 0;
	size_t c = *cap ? *cap * 2 : 16;
	while (c <= n) /* a table dst held before the merge */
		c *= 2;
	void *a = realloc(*arr, c * elem);
	if (!a)
		return -ENOMEM;
	*arr = a;
	*cap = c;
	return 0;
}

static struct gp_rep_group *gp_rep_find_group(struct gp_rep *d, struct gp_rep_ix *ix, const char *name)
{
	uint64_t h = gp_rep_hash(name), *v = gp_map_get(&ix->groups, h);
	if (v && !strcmp(d->groups[*v].name, name))
		return &d->groups[*v];
	for (size_t i = 0; v && i < d->ngroups; i++) /* another name with this hash */
		if (!strcmp(d->groups[i].name, name))
			return &d->groups[i];
	if (gp_rep_room((void **)&d->groups, d->ngroups, &ix->capgroups, sizeof *d->groups))
		return NULL;
	struct gp_rep_group *g = &d->groups[d->ngroups];
	memset(g, 0, sizeof *g);
	g->name = strdup(name);
	if (!g->name || (!v && gp_map_put(&ix->groups, h, d->ngroups) == -ENOMEM))
		return NULL;
	d->ngroups++;
	return g;
}

/* Iteration iter of dst, or NULL. */
static struct gp_rep_iter *gp_rep_find_iter(struct gp_rep *d, struct gp_rep_ix *ix, int64_t iter)
{
	uint64_t key = (uint64_t)iter + 1; /* -1 (before the first mark) is common, UINT64_MAX is no key */
	uint64_t *v = key != GP_MAP_EMPTY ? gp_map_get(&ix->iters, key) : NULL;
	if (v)
		return &d->iters[*v];
	for (size_t j = 0; key == GP_MAP_EMPTY && j < d->niters; j++)
		if (d->iters[j].iter == iter)
			return &d->iters[j];
	return NULL;
}

/* Call site name of dst, or NULL. */
static struct gp_rep_callsite *gp_rep_find_site(struct gp_rep *d, struct gp_rep_ix *ix, const char *name)
{
	uint64_t *v = gp_map_get(&ix->sites, gp_rep_hash(name));
	if (v && !strcmp(d->callsites[*v].name, name))
		return &d->callsites[*v];
	for (size_t j = 0; v && j < d->ncallsites; j++) /* another name with this hash */
		if (!strcmp(d->callsites[j].name, name))
			return &d->callsites[j];
	return NULL;
}

static const char *gp_rep_kv(const struct gp_rep *r, const char *key)
{
	for (size_t i = 0; i < r->nkv; i++)
		if (r->kv[i].key && !strcmp(r->kv[i].key, key))
			return r->kv[i].value ? r->kv[i].value : "";
	return NULL;
}

int gp_rep_one_job(const struct gp_rep *const *reps, size_t n)
{
	if (n < 2)
		return 1;
	int same_job = 1, ranks = 1;
	const char *job0 = gp_rep_kv(reps[0], "job_id"), *world0 = gp_rep_kv(reps[0], "world_size");
	for (size_t i = 0; i < n; i++) {
		const char *job = gp_rep_kv(reps[i], "job_id"), *world = gp_rep_kv(reps[i], "world_size");
		const char *rank = gp_rep_kv(reps[i], "rank");
		if (!job || !job0 || strcmp(job, job0))
			same_job = 0;
		if (!rank || (world0 ? !world || strcmp(world, world0) : world != NULL))
			ranks = 0;
		for (size_t k = 0; ranks && k < i; k++) {
			const char *other = gp_rep_kv(reps[k], "rank");
			if (other && !strcmp(other, rank))
				ranks = 0; /* the same rank twice: two runs, not one job */
		}
	}
	return same_job || ranks;
}

/* The run's facts of one rank's report s added into d: its counts, drops,
 * operator and phase totals, sync waits; flags that any rank raises stay
 * raised, the wall time is the longest rank's. */
static void gp_rep_merge_facts(struct gp_rep *d, const struct gp_rep *s)
{
	d->group_by = s->group_by;
	d->clock_id = s->clock_id;
	d->version = s->version;
	d->complete &= s->complete;
	d->truncated_bytes += s->truncated_bytes;
	if (!d->end_reason || (s->end_reason && s->write_errors))
		d->end_reason = s->end_reason;
	d->write_errors += s->write_errors;
	d->lost_after_stop += s->lost_after_stop;
	d->cupti_unavailable |= s->cupti_unavailable;
	d->hooks_absent |= s->hooks_absent;
	d->clock_calibrated |= s->clock_calibrated;
	d->size_cap |= s->size_cap;
	d->records += s->records;
	for (int t = 0; t < GP_REC_TYPE_COUNT; t++)
		d->rec_count[t] += s->rec_count[t];
	d->dropped_ring += s->dropped_ring;
	d->dropped_cupti += s->dropped_cupti;
	d->dropped_write += s->dropped_write;
	d->dropped_records += s->dropped_records;
	d->ops += s->ops;
	d->ops_joined += s->ops_joined;
	d->ops_no_api += s->ops_no_api;
	d->ops_no_hook += s->ops_no_hook;
	d->ops_no_gpu += s->ops_no_gpu;
	d->ops_end_missing += s->ops_end_missing;
	d->hooks_unjoined += s->hooks_unjoined;
	d->api_unjoined += s->api_unjoined;
	d->launches_captured += s->launches_captured;
	d->ops_replayed += s->ops_replayed;
	d->replayed_ns += s->replayed_ns;
	d->evicted += s->evicted;
	if (s->wall_ns > d->wall_ns)
		d->wall_ns = s->wall_ns;
	d->gpu_busy_ns += s->gpu_busy_ns;
	d->gpu_idle_ns += s->gpu_idle_ns;
	d->gpu_busy_sum_ns += s->gpu_busy_sum_ns;
	d->gpu_busy_late += s->gpu_busy_late;
	d->host_api_ns += s->host_api_ns;
	d->covered_ns += s->covered_ns;
	d->unattributed_ns += s->unattributed_ns;
	d->launch_ns += s->launch_ns;
	d->launch_raw_ns += s->launch_raw_ns;
	d->queue_ns += s->queue_ns;
	d->execute_ns += s->execute_ns;
	d->sync_ns += s->sync_ns;
	d->sync_unattributed_ns += s->sync_unattributed_ns;
	d->sync_unattributed_calls += s->sync_unattributed_calls;
	d->queue_full_calls += s->queue_full_calls;
	d->waits_late += s->waits_late;
	d->queue_waits_late += s->queue_waits_late;
	for (int k = 0; k < GP_API_CLASS_COUNT; k++)
		d->lost_by_class[k] += s->lost_by_class[k];
	d->queue_full_ns += s->queue_full_ns;
	for (int k = 0; k < GP_API_CLASS_COUNT; k++) {
		d->sync_calls[k] += s->sync_calls[k];
		d->sync_kind_ns[k] += s->sync_kind_ns[k];
	}
}

/* CUPTI's own cost in s added into d: its calls and time summed, the
 * source is the best any rank has, the calibration the first rank's. */
static void gp_rep_merge_cupti(struct gp_rep *d, const struct gp_rep *s)
{
	if (!d->cupti.source || (s->cupti.source && s->cupti.source < d->cupti.source))
		d->cupti.source = s->cupti.source; /* records where any rank has them */
	d->cupti.calls += s->cupti.calls;
	d->cupti.in_calls_ns += s->cupti.in_calls_ns;
	d->cupti.launch_ns += s->cupti.launch_ns;
	d->cupti.sync_ns += s->cupti.sync_ns;
	if (s->cupti.calibrated && !d->cupti.calibrated) { /* the first rank's */
		d->cupti.calibrated = 1;
		d->cupti.calib_flags = s->cupti.calib_flags;
		d->cupti.calib_rt_ns = s->cupti.calib_rt_ns;
		d->cupti.calib_drv_ns = s->cupti.calib_drv_ns;
		d->cupti.calib_launch_ns = s->cupti.calib_launch_ns;
		d->cupti.calib_start = s->cupti.calib_start;
	}
	d->cupti.calib_dur_ns += s->cupti.calib_dur_ns;
}

/* The operator groups of s added into d's group of the same name (made
 * when d has none). Returns -ENOMEM when out of memory; a histogram that
 * could not be merged sets *hist_rc to -ENOMEM and the merge goes on. */
void gp_rep_cfg_from_rec(struct gp_rep_launch_cfg *c, const struct gp_rec_launch_cfg *r, uint32_t sms)
{
	memset(c, 0, sizeof *c);
	for (int i = 0; i < 3; i++) {
		c->grid[i] = r->grid[i];
		c->block[i] = r->block[i];
	}
	c->regs = r->regs;
	c->static_smem = r->static_smem;
	c->dynamic_smem = r->dynamic_smem;
	c->sms = sms;
	c->launches = 1;
}

void gp_rep_cfg_add(struct gp_rep_launch_cfg *d, const struct gp_rep_launch_cfg *s)
{
	if (!s->launches && !s->others)
		return;
	if (!d->launches && !d->others) {
		*d = *s;
		return;
	}
	if (memcmp(d, s, offsetof(struct gp_rep_launch_cfg, launches)) == 0) {
		d->launches += s->launches;
		d->others += s->others;
	} else {
		d->others += s->launches + s->others;
	}
}

static int gp_rep_merge_groups(struct gp_rep *d, struct gp_rep_ix *ix, struct gp_rep *s, int *hist_rc)
{
	for (size_t i = 0; i < s->ngroups; i++) {
		struct gp_rep_group *sg = &s->groups[i], *g = gp_rep_find_group(d, ix, sg->name);
		if (!g)
			return -ENOMEM;
		if (!g->long_name) { /* new here: the first trace's names it */
			if (!(g->long_name = strdup(sg->long_name ? sg->long_name : sg->name)))
				return -ENOMEM;
			g->category = sg->category;
		}
		g->count += sg->count;
		g->launch_ns += sg->launch_ns;
		g->launch_raw_ns += sg->launch_raw_ns;
		g->queue_ns += sg->queue_ns;
		g->execute_ns += sg->execute_ns;
		g->sync_ns += sg->sync_ns;
		g->no_api += sg->no_api;
		g->no_gpu += sg->no_gpu;
		g->sync_calls += sg->sync_calls;
		g->kinds |= sg->kinds;
		g->bytes += sg->bytes;
		g->pageable += sg->pageable;
		g->pageable_host += sg->pageable_host;
		g->sync_queue_ns += sg->sync_queue_ns;
		gp_rep_cfg_add(&g->cfg, &sg->cfg);
		if (!g->bound) /* the first trace's counters that say */
			g->bound = sg->bound;
		if (gp_hist_merge(&g->exec, &sg->exec))
			*hist_rc = -ENOMEM;
	}
	return 0;
}

/* The iterations of s added into d's of the same number (made when d has
 * none); an iteration's window is the longest rank's. 0 or -ENOMEM. */
static int gp_rep_merge_iters(struct gp_rep *d, struct gp_rep_ix *ix, const struct gp_rep *s)
{
	for (size_t i = 0; i < s->niters; i++) {
		struct gp_rep_iter *si = &s->iters[i], *it = gp_rep_find_iter(d, ix, si->iter);
		if (!it) {
			if (gp_rep_room((void **)&d->iters, d->niters, &ix->capiters, sizeof *d->iters) ||
			    gp_map_put(&ix->iters, (uint64_t)si->iter + 1, d->niters) == -ENOMEM)
				return -ENOMEM;
			it = &d->iters[d->niters++];
			*it = *si;
			it->ops = it->launch_ns = it->queue_ns = it->execute_ns = it->sync_ns = 0;
			it->start = 0;
			it->end = 0;
		}
		if (si->end - si->start > it->end - it->start) {
			it->start = si->start;
			it->end = si->end;
		}
		it->open |= si->open;
		it->ops += si->ops;
		it->replayed += si->replayed;
		it->launch_ns += si->launch_ns;
		it->queue_ns += si->queue_ns;
		it->execute_ns += si->execute_ns;
		it->sync_ns += si->sync_ns;
	}
	return 0;
}

/* The call sites of s added into d's of the same name (made when d has
 * none). 0 or -ENOMEM. */
static int gp_rep_merge_sites(struct gp_rep *d, struct gp_rep_ix *ix, const struct gp_rep *s)
{
	for (size_t i = 0; i < s->ncallsites; i++) {
		struct gp_rep_callsite *c = gp_rep_find_site(d, ix, s->callsites[i].name);
		if (!c) {
			uint64_t h = gp_rep_hash(s->callsites[i].name);
			if (gp_rep_room((void **)&d->callsites, d->ncallsites, &ix->capsites, sizeof *d->callsites) ||
			    (!gp_map_get(&ix->sites, h) && gp_map_put(&ix->sites, h, d->ncallsites)))
				return -ENOMEM;
			c = &d->callsites[d->ncallsites++];
			c->name = strdup(s->callsites[i].name);
			c->stack = s->callsites[i].stack ? strdup(s->callsites[i].stack) : NULL;
			c->calls = c->sync_ns = 0;
			if (!c->name || (s->callsites[i].stack && !c->stack))
				return -ENOMEM;
		}
		c->calls += s->callsites[i].calls;
		c->sync_ns += s->callsites[i].sync_ns;
	}
	return 0;
}

int gp_rep_merge(struct gp_rep *d, struct gp_rep *src, size_t n)
{
	int rc = 0;
	struct gp_rep_ix ix;
	memset(&ix, 0, sizeof ix);
	d->ranks = calloc(n ? n : 1, sizeof *d->ranks);
	if (!d->ranks)
		return -ENOMEM;
	d->nranks = n;
	d->complete = 1;
	d->join_coverage = 1;
	d->host_busy_pct = d->proc_cpu_pct = d->host_busy_max_pct = -1;
	for (size_t r = 0; r < n; r++) {
		struct gp_rep *s = &src[r];
		gp_rep_merge_facts(d, s);
		gp_rep_merge_cupti(d, s);
		if (gp_rep_merge_groups(d, &ix, s, &rc) || gp_rep_merge_iters(d, &ix, s) ||
		    gp_rep_merge_sites(d, &ix, s))
			goto oom;
		d->ranks[r] = *s; /* ownership moves */
		memset(s, 0, sizeof *s);
	}
	d->join_coverage = d->ops ? (double)d->ops_joined / (double)d->ops : 1.0;
	goto out;
oom:
	rc = -ENOMEM;
out:
	gp_map_free(&ix.groups);
	gp_map_free(&ix.iters);
	gp_map_free(&ix.sites);
	return rc;
}

uint64_t gp_rep_group_total(const struct gp_rep_group *g)
{
	return g->launch_ns + g->execute_ns + g->sync_ns;
}

void gp_rep_iter_stats(const struct gp_rep *rep, double factor, uint64_t *p50, uint64_t *p99, uint8_t *outlier)
{
	*p50 = *p99 = 0;
	if (!rep->niters)
		return;
	/* the open last iteration (cut by the window end) is left out */
	uint64_t *d = malloc(rep->niters * sizeof *d);
	size_t n = 0;
	if (!d)
		return;
	for (size_t i = 0; i < rep->niters; i++)
		if (!rep->iters[i].open && !rep->iters[i].replayed)
			d[n++] = rep->iters[i].end - rep->iters[i].start;
	qsort(d, n, sizeof *d, gp_stats_cmp_u64);
	*p50 = gp_stats_nearest_rank(d, n, 0.5);
	*p99 = gp_stats_nearest_rank(d, n, 0.99);
	free(d);
	for (size_t i = 0; outlier && i < rep->niters; i++)
		outlier[i] = n >= 3 && !rep->iters[i].open && !rep->iters[i].replayed &&
			     (double)(rep->iters[i].end - rep->iters[i].start) > factor * (double)*p50;
}

uint64_t gp_rep_rank_busy(const struct gp_rep *r)
{
	uint64_t busy = 0;
	for (size_t i = 0; i < r->ngroups; i++) {
		const struct gp_rep_group *g = &r->groups[i];
		busy += g->launch_ns;
		if (!strcasestr(g->name, "nccl"))
			busy += g->execute_ns;
	}
	return busy;
}

uint64_t gp_rep_stragglers(const struct gp_rep *rep, double pct, uint8_t *flag)
{
	if (!rep->nranks)
		return 0;
	uint64_t *v = malloc(rep->nranks * sizeof *v);
	if (!v)
		return 0;
	for (size_t i = 0; i < rep->nranks; i++)
		v[i] = gp_rep_rank_busy(&rep->ranks[i]);
	qsort(v, rep->nranks, sizeof *v, gp_stats_cmp_u64);
	uint64_t med = gp_stats_nearest_rank(v, rep->nranks, 0.5);
	free(v);
	for (size_t i = 0; i < rep->nranks; i++)
		flag[i] = rep->nranks >= 2 && (double)gp_rep_rank_busy(&rep->ranks[i]) > (double)med * (1.0 + pct / 100.0);
	return med;
}
