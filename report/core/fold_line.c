/*
 * fold_line.c — the fold line's bookkeeping (analysis_int.h, struct
 * gp_fold_line): arrived ops in arrival order, by sequence number, and what
 * holds each (waits that may still take time out of its launch). The waits
 * (sync.c, queue_full.c) hold, release and shorten an op here; only the
 * fold (analysis_fold.c) adds ops and takes them off the head, so calls go
 * one way: analysis_fold.c -> sync.c, queue_full.c -> fold_line.c.
 *
 * Memory: the ring doubles when full (it holds the ops of at most the
 * waits' horizons). Report thread only; errors: NULL on ENOMEM.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis_int.h"

static struct gp_fold_ent *gp_line_ent(struct gp_an *an, uint64_t seq)
{
	struct gp_fold_line *l = &an->line;
	if (seq < l->head_seq || seq - l->head_seq >= l->n)
		return NULL;
	return &l->e[(l->head + (seq - l->head_seq)) & (l->cap - 1)];
}

struct gp_fold_ent *gp_line_push(struct gp_an *an, uint64_t *seq)
{
	struct gp_fold_line *l = &an->line;
	if (l->n == l->cap) {
		size_t nc = l->cap ? l->cap * 2 : 64;
		struct gp_fold_ent *e = malloc(nc * sizeof *e);
		if (!e)
			return NULL;
		for (size_t i = 0; i < l->n; i++)
			e[i] = l->e[(l->head + i) & (l->cap - 1)];
		free(l->e);
		l->e = e;
		l->cap = nc;
		l->head = 0;
	}
	*seq = l->head_seq + l->n;
	return &l->e[(l->head + l->n++) & (l->cap - 1)];
}

struct gp_fold_ent *gp_line_head(struct gp_an *an, int final)
{
	struct gp_fold_line *l = &an->line;
	return l->n && (final || !l->e[l->head].holds) ? &l->e[l->head] : NULL;
}

void gp_line_pop(struct gp_an *an)
{
	struct gp_fold_line *l = &an->line;
	l->head = (l->head + 1) & (l->cap - 1);
	l->n--;
	l->head_seq++;
}

struct gp_an_op *gp_line_op(struct gp_an *an, uint64_t seq)
{
	struct gp_fold_ent *e = gp_line_ent(an, seq);
	return e ? &e->op : NULL;
}

uint32_t gp_line_stack(struct gp_an *an, uint64_t seq)
{
	struct gp_fold_ent *e = gp_line_ent(an, seq);
	return e ? e->hook_stack : 0;
}

void gp_line_hold(struct gp_an *an, uint64_t seq)
{
	struct gp_fold_ent *e = gp_line_ent(an, seq);
	if (e)
		e->holds++;
}

void gp_line_release(struct gp_an *an, uint64_t seq)
{
	struct gp_fold_ent *e = gp_line_ent(an, seq);
	if (e && e->holds)
		e->holds--;
}

void gp_line_less(struct gp_an *an, uint64_t seq, uint64_t w, uint64_t w_raw)
{
	struct gp_fold_ent *e = gp_line_ent(an, seq);
	if (!e)
		return;
	e->op.launch_ns -= w < e->op.launch_ns ? w : e->op.launch_ns;
	e->op.launch_raw_ns -= w_raw < e->op.launch_raw_ns ? w_raw : e->op.launch_raw_ns;
}

void gp_line_free(struct gp_an *an)
{
	free(an->line.e);
	an->line = (struct gp_fold_line){ 0 };
}
