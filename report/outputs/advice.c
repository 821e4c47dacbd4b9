/*
 * advice.c — the whole run's first advice, read from the what-if analysis
 * (docs/metrics.md §5, "The whole run's advice"): the real change with the
 * largest priced saving, with its price, or "the GPU is the bottleneck" when
 * the host waits on a busy GPU. Called by the output writers (output.c,
 * export_html.c) on the report thread.
 *
 * It reads the what-if's ranked changes through analyses/whatif.h (its
 * window, and each change's name, target, saving and whether the user asked
 * for it). Items come ranked by saving; a hypothetical kernel speed-up
 * (scale_kernel) and the user's own --whatif are no change the report can
 * advise, and are skipped.
 */
#include "output.h"
#include "report/analyses/registry.h"
#include "report/analyses/whatif.h"
#include "report/util/fmt.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* One change as an instruction; a copy change says "pinned memory" only
 * when the trace saw its copies on pageable host memory (pageable); the
 * queue waits' change names the call site whose launches waited most
 * (site, NULL when unknown). */
static void gp_adv_wording(const char *change, const char *target, int pageable, const char *site, char *buf,
			   size_t n)
{
	const char *pin = pageable ? " from pinned memory" : "";
	if (!strcmp(change, "hoist_implicit_sync"))
		snprintf(buf, n, "move the %s calls out of the loop (allocate once, reuse the memory)", target);
	else if (!strcmp(change, "remove_sync"))
		snprintf(buf, n, "remove the %s calls (wait on an event where a result is needed)", target);
	else if (!strcmp(change, "remove_sync_site"))
		snprintf(buf, n, "remove the synchronizing call at %s", target);
	else if (!strcmp(change, "remove_empty_waits"))
		snprintf(buf, n, "drop the blocking calls that found nothing outstanding");
	else if (!strcmp(change, "graph_launch"))
		snprintf(buf, n, "launch %s from a CUDA graph", target);
	else if (!strcmp(change, "pinned_async_copy"))
		snprintf(buf, n, "copy %s%s with cudaMemcpyAsync", target, pin);
	else if (!strcmp(change, "pinned_async_copy_site"))
		snprintf(buf, n, "make the copies at %s asynchronous (cudaMemcpyAsync%s)", target, pin);
	else if (!strcmp(change, "defer_copy_wait"))
		snprintf(buf, n, "copy %s%s with cudaMemcpyAsync and wait on an event one step later", target, pin);
	else if (!strcmp(change, "defer_copy_wait_site"))
		snprintf(buf, n, "make the copies at %s asynchronous (cudaMemcpyAsync%s) and wait on an event one step "
				 "later", target, pin);
	else if (!strcmp(change, "remove_queue_waits"))
		snprintf(buf, n, "keep the launches%s%s from waiting on a full launch queue (fewer, larger kernels; host "
				 "work moved before the launches)", site ? " at " : "", site ? site : "");
	else if (!strcmp(change, "overlap_copies"))
		snprintf(buf, n, "move the copies to a stream of their own");
	else
		snprintf(buf, n, "%s%s%s", change, *target ? " " : "", target);
}

/* A function's change at its call site. */
static void gp_adv_wording_at(const char *change, const char *target, const char *site, char *buf, size_t n)
{
	if (!strcmp(change, "hoist_implicit_sync"))
		snprintf(buf, n, "move the %s at %s out of the loop (allocate once, reuse the memory)", target, site);
	else
		snprintf(buf, n, "remove the %s at %s (wait on an event where a result is needed)", target, site);
}

static int gp_adv_is_wait(const char *change)
{
	return !strcmp(change, "hoist_implicit_sync") || !strcmp(change, "remove_sync") ||
	       !strcmp(change, "remove_sync_site") || !strcmp(change, "remove_empty_waits");
}

double gp_out_busy_wait_pct(const struct gp_rep *rep)
{
	uint64_t busy = rep->sync_ns > rep->sync_unattributed_ns ? rep->sync_ns - rep->sync_unattributed_ns : 0;
	return gp_fmt_pct(busy, rep->sync_ns);
}

int gp_out_best_change(const struct gp_rep *rep, const struct gp_out_opts *o, struct gp_out_change *c)
{
	memset(c, 0, sizeof *c);
	if (!o || !o->analyses || o->ntraces != 1 || !o->analyses[0])
		return 0;
	const struct gp_analyses *set = o->analyses[0];
	c->window_ns = gp_whatif_window_ns(set);
	if (!c->window_ns)
		return 0;
	char site[256] = "";
	uint64_t site_saving = 0;
	struct gp_whatif_view it;
	for (size_t i = 0; gp_whatif_item(set, i, &it); i++) {
		if (it.user)
			continue;
		const char *change = it.change, *target = it.target;
		uint64_t saving = it.saving_ns;
		if (gp_adv_is_wait(change) && saving > c->wait_saving_ns)
			c->wait_saving_ns = saving;
		if (!strcmp(change, "remove_sync_site") && saving > site_saving) {
			site_saving = saving;
			snprintf(site, sizeof site, "%s", target);
		}
		if (!strcmp(change, "scale_kernel")) {
			if (!*c->kernel && saving) {
				snprintf(c->kernel, sizeof c->kernel, "%s", target);
				c->kernel_saving_ns = saving;
			}
			continue;
		}
		if (c->found || 100.0 * (double)saving / (double)c->window_ns < GP_OUT_MIN_SAVING_PCT)
			continue;
		c->found = 1;
		c->saving_ns = saving;
		gp_adv_wording(change, target, it.pageable, it.site, c->text, sizeof c->text);
		snprintf(c->change, sizeof c->change, "%s", change);
		snprintf(c->target, sizeof c->target, "%s", target);
	}
	/* a function's waits that one call site holds (removing the site saves
	 * as much): the advice names the site */
	if (c->found && *site && site_saving >= c->saving_ns - c->saving_ns / 20 &&
	    (!strcmp(c->change, "hoist_implicit_sync") || !strcmp(c->change, "remove_sync")))
		gp_adv_wording_at(c->change, c->target, site, c->text, sizeof c->text);
	/* the host waits on a busy GPU: removing every wait buys little and the
	 * GPU had work outstanding nearly all the time the host was blocked */
	c->gpu_bound = c->window_ns && rep->sync_ns &&
		       100.0 * (double)c->wait_saving_ns / (double)c->window_ns < GP_OUT_WAIT_SAVING_PCT &&
		       gp_out_busy_wait_pct(rep) >= GP_OUT_GPU_BUSY_PCT;
	return c->found || c->gpu_bound;
}

const char *gp_out_run_advice(const struct gp_rep *rep, const struct gp_out_opts *o, enum gp_verdict v,
			      const struct gp_out_change *c, char *buf, size_t n)
{
	const char *plain = gp_out_advice(rep, NULL, v);
	char d[32];
	if (v == GP_VERDICT_SYNC && c->gpu_bound) {
		int k = snprintf(buf, n, "the GPU is the bottleneck, not the sync points: the host waits on GPU work "
					 "(outstanding during %.1f%% of the blocked time) and removing the waits saves "
					 "%.1f%% (what-if): make the GPU work faster",
				 gp_out_busy_wait_pct(rep), gp_fmt_pct(c->wait_saving_ns, c->window_ns));
		if (*c->kernel && k > 0 && (size_t)k < n)
			snprintf(buf + k, n - (size_t)k, " (%s twice as fast would save %.1f%%)", c->kernel,
				 gp_fmt_pct(c->kernel_saving_ns, c->window_ns));
		return buf;
	}
	(void)o;
	if (!c->found || v == GP_VERDICT_NONE)
		return plain;
	snprintf(buf, n, "%s: -%.1f%% of the wall (saves %s, what-if)%s%s", c->text,
		 gp_fmt_pct(c->saving_ns, c->window_ns), gp_fmt_ns((double)c->saving_ns, d, sizeof d),
		 *plain ? "; then: " : "", plain);
	return buf;
}

void gp_out_json_run_advice(FILE *f, const struct gp_rep *rep, const struct gp_out_opts *o, enum gp_verdict v)
{
	struct gp_out_change ch;
	char adv[640];
	gp_out_best_change(rep, o, &ch);
	gp_fmt_json_str(f, gp_out_run_advice(rep, o, v, &ch, adv, sizeof adv));
	fprintf(f, ", \"advice_change\": ");
	if (!ch.found) {
		fputs("null", f);
	} else {
		fputs("{\"change\": ", f);
		gp_fmt_json_str(f, ch.change);
		fputs(", \"target\": ", f);
		if (*ch.target)
			gp_fmt_json_str(f, ch.target);
		else
			fputs("null", f);
		fprintf(f, ", \"saving_ns\": %" PRIu64 ", \"window_ns\": %" PRIu64 "}", ch.saving_ns, ch.window_ns);
	}
	fprintf(f, ", \"gpu_bottleneck\": %s", v == GP_VERDICT_SYNC && ch.gpu_bound ? "true" : "false");
}
