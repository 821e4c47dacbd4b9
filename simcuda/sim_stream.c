/*
 * sim_stream.c — streams, events and the calls that synchronize with the
 * device: cudaStreamCreate[WithFlags] / Destroy / GetId / Query /
 * Synchronize / WaitEvent, cudaEventCreate[WithFlags] / Destroy / Record /
 * Query / Synchronize / ElapsedTime, cudaDeviceSynchronize (with their
 * _ptsz twins).
 *
 * An event records when the work before it on its stream ends (and which op
 * that is); cudaStreamWaitEvent moves the stream's tail to it, blocking no
 * host thread. A synchronizing call really waits on CUPTI's clock until its
 * scope's work ends, spends sync_ns, and is reported by a SYNCHRONIZATION
 * record and a truth "sync" line over the whole call.
 *
 * Threads: application threads, any number. Streams and events are plain
 * objects handed out as handles; their timeline fields are read and written
 * under g_dev.mx. A destroyed stream stays on the list (its pending work
 * still completes and device syncs still wait for it).
 */
#include <stdlib.h>
#include <string.h>

#include "sim_cudart.h"

/* A SYNCHRONIZATION record of one call, if that kind is enabled. */
static void sim_stream_sync_record(const struct sim_call *c, uint64_t end,
				   CUpti_ActivitySynchronizationType type, uint32_t stream_id,
				   uint32_t event_id, uint32_t event_sync_id)
{
	if (!simcupti_enabled(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION))
		return;
	CUpti_ActivitySynchronization2 r;
	memset(&r, 0, sizeof r);
	r.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
	r.type = type;
	r.start = c->start;
	r.end = end;
	r.correlationId = c->corr;
	r.contextId = SIM_CONTEXT_ID + (uint32_t)sim_timeline_device();
	r.streamId = stream_id;
	r.cudaEventId = event_id;
	r.cudaEventSyncId = event_sync_id;
	simcupti_emit(&r, sizeof r, 0, offsetof(CUpti_ActivitySynchronization2, start),
		      offsetof(CUpti_ActivitySynchronization2, end), SIM_NO_OFF);
}

static cudaError_t sim_stream_create(cudaStream_t *p, int nonblocking, const char *nm, CUpti_CallbackId cbid)
{
	struct sim_call c;
	sim_call_enter(&c, nm, cbid, SIM_DRV(cuStreamCreate));
	cudaError_t r = cudaSuccess;
	struct sim_stream *s = p ? sim_timeline_stream_new(nonblocking) : NULL;
	if (!s)
		r = p ? cudaErrorMemoryAllocation : cudaErrorInvalidValue;
	else
		*p = (cudaStream_t)(void *)s;
	sim_timeline_spin_until(c.start + g_cfg.api_ns);
	return sim_call_exit(&c, r, 0);
}

SIM_EXPORT cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags)
{
	return sim_stream_create(pStream, (flags & cudaStreamNonBlocking) != 0, "cudaStreamCreateWithFlags",
				 SIM_RT(cudaStreamCreateWithFlags_v5000));
}

SIM_EXPORT cudaError_t cudaStreamCreate(cudaStream_t *pStream)
{
	return sim_stream_create(pStream, 0, "cudaStreamCreate", SIM_RT(cudaStreamCreate_v3020));
}

SIM_EXPORT cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
	/* Pending work still completes (and device syncs still wait for it), so
	 * the stream object stays on the list, marked destroyed. */
	SIM_SIMPLE("cudaStreamDestroy", cudaStreamDestroy_v5050, SIM_DRV(cuStreamDestroy_v2), {
		if (stream == NULL || stream == cudaStreamLegacy || stream == cudaStreamPerThread)
			r_ = cudaErrorInvalidResourceHandle;
		else
			((struct sim_stream *)(void *)stream)->destroyed = 1;
	});
}

static cudaError_t sim_stream_get_id(cudaStream_t st, unsigned long long *id, int pt, const char *nm,
				     CUpti_CallbackId cbid)
{
	struct sim_call c;
	sim_call_enter(&c, nm, cbid, SIM_DRV(cuStreamGetId));
	cudaError_t r = cudaSuccess;
	if (!id)
		r = cudaErrorInvalidValue;
	else
		*id = sim_timeline_stream_of(st, pt)->id;
	sim_timeline_spin_until(c.start + g_cfg.api_ns);
	return sim_call_exit(&c, r, 0);
}

SIM_EXPORT cudaError_t cudaStreamGetId(cudaStream_t hStream, unsigned long long *streamId)
{
	return sim_stream_get_id(hStream, streamId, 0, "cudaStreamGetId", SIM_RT(cudaStreamGetId_v12000));
}

SIM_EXPORT cudaError_t cudaStreamGetId_ptsz(cudaStream_t hStream, unsigned long long *streamId)
{
	return sim_stream_get_id(hStream, streamId, 1, "cudaStreamGetId_ptsz",
				 SIM_RT(cudaStreamGetId_ptsz_v12000));
}

static cudaError_t sim_stream_query(cudaStream_t st, int pt, const char *nm, CUpti_CallbackId cbid)
{
	struct sim_call c;
	sim_call_enter(&c, nm, cbid, SIM_DRV(cuStreamQuery));
	struct sim_stream *s = sim_timeline_stream_of(st, pt);
	sim_timeline_spin_until(c.start + g_cfg.api_ns);
	pthread_mutex_lock(&g_dev.mx);
	uint64_t t = s->tail_end;
	uint32_t held = s->hostfn_pending; /* a host function still running */
	pthread_mutex_unlock(&g_dev.mx);
	return sim_call_exit(&c, !held && simcupti_now() >= t ? cudaSuccess : cudaErrorNotReady, 0);
}

SIM_EXPORT cudaError_t cudaStreamQuery(cudaStream_t stream)
{
	return sim_stream_query(stream, 0, "cudaStreamQuery", SIM_RT(cudaStreamQuery_v3020));
}

SIM_EXPORT cudaError_t cudaStreamQuery_ptsz(cudaStream_t stream)
{
	return sim_stream_query(stream, 1, "cudaStreamQuery_ptsz", SIM_RT(cudaStreamQuery_ptsz_v7000));
}

/*
 * A synchronizing call: wait until `target` (the end of the waited scope,
 * `wcorr` its last op), spend sync_ns, then emit the SYNCHRONIZATION record
 * and the truth sync line over the whole call.
 */
static cudaError_t sim_stream_sync_wait(struct sim_call *c, uint64_t target, uint32_t wcorr,
					CUpti_ActivitySynchronizationType type, const char *tkind,
					uint32_t stream_id, uint32_t event_id)
{
	sim_timeline_wait_until(target);
	uint64_t after = simcupti_now();
	sim_timeline_spin_until(after + g_cfg.sync_ns);
	uint64_t end = simcupti_now();
	sim_stream_sync_record(c, end, type, stream_id, event_id, event_id == SIM_INVALID ? 0 : event_id);
	sim_truth_sync(tkind, simcupti_thread_id(), c->start, end, c->corr, target > c->start ? wcorr : 0);
	return sim_call_exit(c, cudaSuccess, end);
}

SIM_EXPORT cudaError_t cudaDeviceSynchronize(void)
{
	struct sim_call c;
	sim_call_enter(&c, "cudaDeviceSynchronize", SIM_RT(cudaDeviceSynchronize_v3020),
		       SIM_DRV(cuCtxSynchronize));
	uint32_t wc;
	uint64_t t = sim_timeline_device_tail(&wc);
	return sim_stream_sync_wait(&c, t, wc, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE, "device",
				    SIM_INVALID, SIM_INVALID);
}

static cudaError_t sim_stream_sync(cudaStream_t st, int pt, const char *nm, CUpti_CallbackId cbid)
{
	struct sim_call c;
	sim_call_enter(&c, nm, cbid, pt ? SIM_DRV(cuStreamSynchronize_ptsz) : SIM_DRV(cuStreamSynchronize));
	struct sim_stream *s = sim_timeline_stream_of(st, pt);
	pthread_mutex_lock(&g_dev.mx);
	sim_timeline_settle(s); /* a host function on it: its return is the tail */
	uint64_t t = s->tail_end;
	uint32_t wc = s->tail_corr;
	pthread_mutex_unlock(&g_dev.mx);
	return sim_stream_sync_wait(&c, t, wc, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, "stream",
				    s->id, SIM_INVALID);
}

SIM_EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
	return sim_stream_sync(stream, 0, "cudaStreamSynchronize", SIM_RT(cudaStreamSynchronize_v3020));
}

SIM_EXPORT cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream)
{
	return sim_stream_sync(stream, 1, "cudaStreamSynchronize_ptsz", SIM_RT(cudaStreamSynchronize_ptsz_v7000));
}

/* ---- events ---------------------------------------------------------------------------------- */

static cudaError_t sim_event_create(cudaEvent_t *p, unsigned flags, const char *nm, CUpti_CallbackId cbid)
{
	struct sim_call c;
	sim_call_enter(&c, nm, cbid, SIM_DRV(cuEventCreate));
	cudaError_t r = cudaSuccess;
	struct sim_event *e = p ? calloc(1, sizeof *e) : NULL;
	if (!e) {
		r = p ? cudaErrorMemoryAllocation : cudaErrorInvalidValue;
	} else {
		pthread_mutex_lock(&g_dev.mx);
		e->id = g_dev.next_event_id++;
		pthread_mutex_unlock(&g_dev.mx);
		e->flags = flags;
		*p = (cudaEvent_t)(void *)e;
	}
	sim_timeline_spin_until(c.start + g_cfg.api_ns);
	return sim_call_exit(&c, r, 0);
}

SIM_EXPORT cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
	return sim_event_create(event, flags, "cudaEventCreateWithFlags", SIM_RT(cudaEventCreateWithFlags_v3020));
}

SIM_EXPORT cudaError_t cudaEventCreate(cudaEvent_t *event)
{
	return sim_event_create(event, 0, "cudaEventCreate", SIM_RT(cudaEventCreate_v3020));
}

SIM_EXPORT cudaError_t cudaEventDestroy(cudaEvent_t event)
{
	SIM_SIMPLE("cudaEventDestroy", cudaEventDestroy_v3020, SIM_DRV(cuEventDestroy_v2), {
		if (!event)
			r_ = cudaErrorInvalidResourceHandle;
		else
			free(event);
	});
}

/* Enter a call that puts an event on a stream's queue (record, wait): its
 * host cost is spent before it touches the timeline. Returns when it ends. */
static uint64_t sim_event_enter(struct sim_call *c, const char *nm, CUpti_CallbackId cbid,
				CUpti_CallbackId drv)
{
	sim_call_enter(c, nm, cbid, drv);
	sim_timeline_spin_until(c->start + g_cfg.api_ns);
	return simcupti_now();
}

static cudaError_t sim_event_record(cudaEvent_t event, cudaStream_t st, int pt, const char *nm,
				    CUpti_CallbackId cbid)
{
	struct sim_call c;
	uint64_t end = sim_event_enter(&c, nm, cbid, pt ? SIM_DRV(cuEventRecord_ptsz) : SIM_DRV(cuEventRecord));
	if (!event)
		return sim_call_exit(&c, cudaErrorInvalidResourceHandle, end);
	struct sim_event *e = (struct sim_event *)(void *)event;
	struct sim_stream *s = sim_timeline_stream_of(st, pt);
	if (sim_graph_capture_record(s, e)) /* captured: a point in the graph (sim_graph.c) */
		return sim_call_exit(&c, cudaSuccess, end);
	pthread_mutex_lock(&g_dev.mx);
	uint32_t dc;
	uint64_t d = sim_timeline_deps(s, &dc);
	e->ts = sim_max(d, end);
	e->corr = dc;
	e->recorded = 1;
	pthread_mutex_unlock(&g_dev.mx);
	return sim_call_exit(&c, cudaSuccess, end);
}

SIM_EXPORT cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
	return sim_event_record(event, stream, 0, "cudaEventRecord", SIM_RT(cudaEventRecord_v3020));
}

SIM_EXPORT cudaError_t cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream)
{
	return sim_event_record(event, stream, 1, "cudaEventRecord_ptsz", SIM_RT(cudaEventRecord_ptsz_v7000));
}

SIM_EXPORT cudaError_t cudaEventQuery(cudaEvent_t event)
{
	SIM_SIMPLE("cudaEventQuery", cudaEventQuery_v3020, SIM_DRV(cuEventQuery), {
		struct sim_event *e = (struct sim_event *)(void *)event;
		if (!e) {
			r_ = cudaErrorInvalidResourceHandle;
		} else {
			pthread_mutex_lock(&g_dev.mx);
			uint64_t t = e->recorded ? e->ts : 0;
			pthread_mutex_unlock(&g_dev.mx);
			r_ = simcupti_now() >= t ? cudaSuccess : cudaErrorNotReady;
		}
	});
}

SIM_EXPORT cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
	struct sim_call c;
	sim_call_enter(&c, "cudaEventSynchronize", SIM_RT(cudaEventSynchronize_v3020),
		       SIM_DRV(cuEventSynchronize));
	if (!event)
		return sim_call_exit(&c, cudaErrorInvalidResourceHandle, 0);
	struct sim_event *e = (struct sim_event *)(void *)event;
	pthread_mutex_lock(&g_dev.mx);
	uint64_t t = e->recorded ? e->ts : 0;
	uint32_t wc = e->recorded ? e->corr : 0;
	uint32_t id = e->id;
	pthread_mutex_unlock(&g_dev.mx);
	return sim_stream_sync_wait(&c, t, wc, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE, "event",
				    SIM_INVALID, id);
}

SIM_EXPORT cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
	SIM_SIMPLE("cudaEventElapsedTime", cudaEventElapsedTime_v12080, SIM_DRV(cuEventElapsedTime), {
		struct sim_event *a = (struct sim_event *)(void *)start, *b = (struct sim_event *)(void *)end;
		if (!ms || !a || !b) {
			r_ = ms ? cudaErrorInvalidResourceHandle : cudaErrorInvalidValue;
		} else if ((a->flags | b->flags) & cudaEventDisableTiming || !a->recorded || !b->recorded) {
			r_ = cudaErrorInvalidResourceHandle;
		} else {
			uint64_t now = simcupti_now();
			if (now < a->ts || now < b->ts)
				r_ = cudaErrorNotReady;
			else
				*ms = (float)(((double)b->ts - (double)a->ts) / 1e6);
		}
	});
}

static cudaError_t sim_stream_wait_event(cudaStream_t st, cudaEvent_t event, int pt, const char *nm,
					 CUpti_CallbackId cbid)
{
	struct sim_call c;
	uint64_t end = sim_event_enter(&c, nm, cbid,
				       pt ? SIM_DRV(cuStreamWaitEvent_ptsz) : SIM_DRV(cuStreamWaitEvent));
	if (!event)
		return sim_call_exit(&c, cudaErrorInvalidResourceHandle, end);
	struct sim_event *e = (struct sim_event *)(void *)event;
	struct sim_stream *s = sim_timeline_stream_of(st, pt);
	if (sim_graph_capture_wait(s, e)) /* fork/join inside a capture (sim_graph.c) */
		return sim_call_exit(&c, cudaSuccess, end);
	pthread_mutex_lock(&g_dev.mx);
	if (e->recorded && e->ts > s->tail_end) {
		s->tail_end = e->ts;
		s->tail_corr = e->corr;
	}
	uint32_t id = e->id;
	pthread_mutex_unlock(&g_dev.mx);
	sim_stream_sync_record(&c, end, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT, s->id, id, id);
	return sim_call_exit(&c, cudaSuccess, end);
}

SIM_EXPORT cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
	(void)flags;
	return sim_stream_wait_event(stream, event, 0, "cudaStreamWaitEvent", SIM_RT(cudaStreamWaitEvent_v3020));
}

SIM_EXPORT cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
	(void)flags;
	return sim_stream_wait_event(stream, event, 1, "cudaStreamWaitEvent_ptsz",
				     SIM_RT(cudaStreamWaitEvent_ptsz_v7000));
}
