/*
 * advice.c — the whole run's first advice, read from the what-if analysis
 * (docs/metrics.md §5, "The whole run's advice"): the real change with the
 * largest priced saving, with its price, or "the GPU is the bottleneck" when
 * the host waits on a busy GPU. Called by the output writers (output.c,
 * export_html.c) on the report thread.
 *
 * The what-if's state is private to its file; what it shows the outputs is
 * its JSON value (registry.h a->json), so this file renders that value into
 * memory and reads the few members it needs ("window_ns", and of each
 * "whatif" item "change", "target", "saving_ns", "user"). Items come ranked
 * by saving; a hypothetical kernel speed-up (scale_kernel) and the user's own
 * --whatif are no change the report can advise, and are skipped.
 */
#include "output.h"
#include "report/analyses/registry.h"
#include "report/util/fmt.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* A JSON string at *p (just past its opening quote) into buf, unescaped
 * (\uXXXX kept as '?'); *p is left past the closing quote. */
static void gp_adv_str(const char **p, char *buf, size_t n)
{
	const char *s = *p;
	size_t k = 0;
	for (; *s && *s != '"'; s++) {
		char c = *s;
		if (c == '\\' && s[1]) {
			c = *++s;
			if (c == 'n')
				c = '\n';
			else if (c == 't')
				c = '\t';
			else if (c == 'u') {
				for (int i = 0; i < 4 && s[1]; i++)
					s++;
				c = '?';
			}
		}
		if (k + 1 < n)
			buf[k++] = c;
	}
	if (n)
		buf[k] = '\0';
	*p = *s ? s + 1 : s;
}

/* The value of member key in the object starting at obj (up to its end,
 * strings skipped): a pointer just past `"key": `, or NULL. */
static const char *gp_adv_member(const char *obj, const char *key)
{
	size_t kl = strlen(key);
	int depth = 0;
	for (const char *s = obj; *s; s++) {
		if (*s == '"') {
			const char *name = s + 1;
			char tmp[2];
			s++;
			gp_adv_str(&s, tmp, sizeof tmp);
			if (depth == 1 && (size_t)(s - name - 1) == kl && !strncmp(name, key, kl) && *s == ':')
				return s + 1 + (s[1] == ' ');
			s--;
		} else if (*s == '{' || *s == '[') {
			depth++;
		} else if (*s == '}' || *s == ']') {
			if (--depth == 0)
				return NULL;
		}
	}
	return NULL;
}

/* Past the JSON value at s (object, array, string or scalar). */
static const char *gp_adv_skip(const char *s)
{
	int depth = 0;
	for (; *s; s++) {
		if (*s == '"') {
			char tmp[2];
			s++;
			gp_adv_str(&s, tmp, sizeof tmp);
			s--;
			if (!depth)
				return s + 1;
		} else if (*s == '{' || *s == '[') {
			depth++;
		} else if (*s == '}' || *s == ']') {
			if (--depth <= 0)
				return s + (depth == 0);
		} else if (!depth && (*s == ',')) {
			return s;
		}
	}
	return s;
}

static const char *gp_adv_whatif_json(const struct gp_rep *rep, const struct gp_out_opts *o, char **mem)
{
	*mem = NULL;
	if (!o || !o->analyses || o->ntraces != 1 || !o->analyses[0])
		return NULL;
	const struct gp_analyses *set = o->analyses[0];
	for (size_t i = 0; i < set->n; i++) {
		if (strcmp(set->a[i]->name, "whatif") || !set->a[i]->json)
			continue;
		size_t len = 0;
		FILE *f = open_memstream(mem, &len);
		if (!f)
			return NULL;
		struct gp_analysis_style st = { 0 };
		set->a[i]->json(f, set->st[i], rep, &st);
		if (fclose(f))
			return NULL;
		return *mem;
	}
	return NULL;
}

/* One change as an instruction. */
static void gp_adv_wording(const char *change, const char *target, char *buf, size_t n)
{
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
		snprintf(buf, n, "copy %s from pinned memory with cudaMemcpyAsync", target);
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
	char *mem;
	const char *js = gp_adv_whatif_json(rep, o, &mem);
	const char *v = js ? gp_adv_member(js, "window_ns") : NULL;
	const char *list = js ? gp_adv_member(js, "whatif") : NULL;
	if (!v || !list || *list != '[') {
		free(mem);
		return 0;
	}
	c->window_ns = strtoull(v, NULL, 10);
	char site[256] = "";
	uint64_t site_saving = 0;
	for (const char *s = list + 1; *s == '{' || *s == ',' || *s == ' ';) {
		if (*s != '{') {
			s++;
			continue;
		}
		char change[64] = "", target[256] = "";
		const char *m = gp_adv_member(s, "change"), *t = gp_adv_member(s, "target");
		const char *sv = gp_adv_member(s, "saving_ns"), *u = gp_adv_member(s, "user");
		s = gp_adv_skip(s);
		if (!m || *m != '"' || !sv || (u && !strncmp(u, "true", 4)))
			continue;
		m++;
		gp_adv_str(&m, change, sizeof change);
		if (t && *t == '"') {
			t++;
			gp_adv_str(&t, target, sizeof target);
		}
		uint64_t saving = strtoull(sv, NULL, 10);
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
		if (c->found || !c->window_ns ||
		    100.0 * (double)saving / (double)c->window_ns < GP_OUT_MIN_SAVING_PCT)
			continue;
		c->found = 1;
		c->saving_ns = saving;
		gp_adv_wording(change, target, c->text, sizeof c->text);
		snprintf(c->change, sizeof c->change, "%s", change);
		snprintf(c->target, sizeof c->target, "%s", target);
	}
	free(mem);
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
