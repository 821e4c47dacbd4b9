/*
 * sim_copy.c — copies and sets: cudaMemcpy / 2D / ToSymbol / FromSymbol /
 * Peer and cudaMemset / 2D, each synchronous and Async, with their
 * _ptds/_ptsz twins, all through one path (sim_xfer).
 *
 * A copy or set moves its bytes at call time, whole, under the device-memory
 * lock g_mem_mx; spends api_ns of host time; is placed on its stream
 * (memcpy_latency_ns + bytes / memcpy_gbps) and reported by a MEMCPY or
 * MEMSET record and a truth line. A synchronous one then waits until it ends;
 * when earlier GPU work was outstanding at entry, the part of the call spent
 * waiting for it is a truth "sync" line. The copy kind comes from the memory
 * kind of both addresses (sim_memory.c) when cudaMemcpyDefault is given.
 *
 * Real-CUDA behaviours (docs/simcuda.md): an async copy between device and
 * pageable host memory is synchronous (`pageable_async_blocks`: it waits
 * for earlier work on its stream, truth "sync" kind "pageable_copy", then
 * for the copy itself); an async copy that stays asynchronous first passes
 * the device's launch queue (`queue_depth`). Peer copies name two devices;
 * each record carries the device its stream belongs to.
 *
 * Threads: application threads, any number. Locks: g_mem_mx while bytes
 * move, g_dev.mx while scheduling; never both.
 */
#include <string.h>

#include "sim_cudart.h"

static const char *sim_copy_kind_name(uint8_t k)
{
	switch (k) {
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "HtoD";
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "DtoH";
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "DtoD";
	case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "PtoP";
	default: return "HtoH";
	}
}

static uint64_t sim_xfer_ns(uint64_t bytes)
{
	return g_cfg.memcpy_latency_ns + (uint64_t)((double)bytes / g_cfg.memcpy_gbps);
}

/* One copy or set. is_set: memset with value; peer: PtoP copy. */
struct sim_xfer {
	const char *name;
	CUpti_CallbackId cbid;
	int async, per_thread, is_set, peer;
	int src_dev, dst_dev; /* peer copies: the two devices */
	cudaStream_t stream;
	void *dst;
	const void *src;
	size_t dpitch, spitch, width, height; /* rows; 1D: height 1 */
	int value;
	enum cudaMemcpyKind kind;
	uint64_t entry; /* the call's first clock read, in its exported function */
};

static CUpti_CallbackId sim_copy_drv_cbid(uint8_t ck, int async, int is_set, int peer, int two_d)
{
	if (is_set)
		return two_d ? (async ? SIM_DRV(cuMemsetD2D8Async) : SIM_DRV(cuMemsetD2D8_v2))
			     : (async ? SIM_DRV(cuMemsetD8Async) : SIM_DRV(cuMemsetD8_v2));
	if (peer)
		return async ? SIM_DRV(cuMemcpyPeerAsync) : SIM_DRV(cuMemcpyPeer);
	if (two_d)
		return async ? SIM_DRV(cuMemcpy2DAsync_v2) : SIM_DRV(cuMemcpy2D_v2);
	switch (ck) {
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
		return async ? SIM_DRV(cuMemcpyHtoDAsync_v2) : SIM_DRV(cuMemcpyHtoD_v2);
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
		return async ? SIM_DRV(cuMemcpyDtoHAsync_v2) : SIM_DRV(cuMemcpyDtoH_v2);
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
		return async ? SIM_DRV(cuMemcpyDtoDAsync_v2) : SIM_DRV(cuMemcpyDtoD_v2);
	default:
		return async ? SIM_DRV(cuMemcpyAsync) : SIM_DRV(cuMemcpy);
	}
}

/* The copy's kind: x->kind, or from the memory kinds (dk, sk) of both
 * addresses for cudaMemcpyDefault; *kind gets the resolved runtime kind. */
static uint8_t sim_copy_kind(const struct sim_xfer *x, uint8_t dk, uint8_t sk, enum cudaMemcpyKind *kind)
{
	uint8_t ck = CUPTI_ACTIVITY_MEMCPY_KIND_HTOH;
	int dev_d = dk == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, dev_s = sk == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	*kind = x->kind;
	if (*kind == cudaMemcpyDefault)
		*kind = dev_s ? (dev_d ? cudaMemcpyDeviceToDevice : cudaMemcpyDeviceToHost)
			      : (dev_d ? cudaMemcpyHostToDevice : cudaMemcpyHostToHost);
	switch (*kind) {
	case cudaMemcpyHostToDevice: ck = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD; break;
	case cudaMemcpyDeviceToHost: ck = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH; break;
	case cudaMemcpyDeviceToDevice: ck = CUPTI_ACTIVITY_MEMCPY_KIND_DTOD; break;
	default: ck = CUPTI_ACTIVITY_MEMCPY_KIND_HTOH; break;
	}
	if (x->peer)
		ck = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
	return ck;
}

/* Move the bytes now, row by row, as one op on device memory. */
static void sim_copy_move(const struct sim_xfer *x)
{
	pthread_mutex_lock(&g_mem_mx);
	for (size_t r = 0; r < x->height; r++) {
		char *d = (char *)x->dst + r * x->dpitch;
		if (x->is_set)
			memset(d, x->value, x->width);
		else
			memmove(d, (const char *)x->src + r * x->spitch, x->width);
	}
	pthread_mutex_unlock(&g_mem_mx);
}

/* A copy or set placed on the timeline. */
struct sim_copy_op {
	uint8_t ck, dk, sk; /* copy kind, destination and source memory kinds */
	int device;
	uint32_t stream_id;
	uint32_t corr, api_corr; /* the op's (a copy: the driver call's) and the runtime call's */
	uint64_t bytes, start, end;
};

/* Its MEMSET or MEMCPY record (if enabled) and its truth line. */
static void sim_copy_report(const struct sim_xfer *x, const struct sim_copy_op *o)
{
	if (x->is_set) {
		if (simcupti_enabled(CUPTI_ACTIVITY_KIND_MEMSET)) {
			CUpti_ActivityMemset4 m;
			memset(&m, 0, sizeof m);
			m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
			m.value = (uint32_t)x->value;
			m.bytes = o->bytes;
			m.start = o->start;
			m.end = o->end;
			m.deviceId = (uint32_t)o->device;
			m.contextId = SIM_CONTEXT_ID + (uint32_t)o->device;
			m.streamId = o->stream_id;
			m.correlationId = o->corr;
			m.flags = x->async ? CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC : 0;
			m.memoryKind = o->dk;
			m.channelType = CUPTI_CHANNEL_TYPE_COMPUTE;
			simcupti_emit(&m, sizeof m, o->end, offsetof(CUpti_ActivityMemset4, start),
				      offsetof(CUpti_ActivityMemset4, end), SIM_NO_OFF);
		}
		sim_truth_memset(o->stream_id, o->start, o->end, o->corr, o->api_corr, o->bytes);
		return;
	}
	if (simcupti_enabled(CUPTI_ACTIVITY_KIND_MEMCPY)) {
		CUpti_ActivityMemcpy6 m;
		memset(&m, 0, sizeof m);
		m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
		m.copyKind = o->ck;
		m.srcKind = o->sk;
		m.dstKind = o->dk;
		m.flags = x->async ? CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC : 0;
		m.bytes = o->bytes;
		m.start = o->start;
		m.end = o->end;
		m.deviceId = (uint32_t)o->device;
		m.contextId = SIM_CONTEXT_ID + (uint32_t)o->device;
		m.streamId = o->stream_id;
		m.correlationId = o->corr;
		m.runtimeCorrelationId = o->api_corr;
		m.channelType = CUPTI_CHANNEL_TYPE_ASYNC_MEMCPY;
		m.copyCount = 1;
		simcupti_emit(&m, sizeof m, o->end, offsetof(CUpti_ActivityMemcpy6, start),
			      offsetof(CUpti_ActivityMemcpy6, end), SIM_NO_OFF);
	}
	/* the host side's memory, for a copy to or from the host */
	int host = o->ck == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD ? o->sk : o->ck == CUPTI_ACTIVITY_MEMCPY_KIND_DTOH ? o->dk : -1;
	sim_truth_memcpy(sim_copy_kind_name(o->ck), o->stream_id, o->start, o->end, o->corr, o->api_corr,
			 o->bytes, host < 0 ? -1 : host == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE);
}

/* x->entry: the call's first clock read, taken where the call comes in (the
 * exported function, or its one helper) and not here: the path from the
 * caller to a first clock read is time no truth line can hold, and on a
 * call's first run its code is cold (a first cudaMemcpy read 0.8-1.7 us
 * there when this function read it, 0.35-0.75 us now, against 45 ns once
 * warm), which a hook-only check would see as the hook's */
static cudaError_t sim_xfer(const struct sim_xfer *x)
{
	uint64_t entry = x->entry; /* the pointers' lookup is the call's time too */
	struct sim_copy_op o = {.dk = sim_memory_kind(x->dst)};
	o.sk = x->is_set ? o.dk : sim_memory_kind(x->src);
	enum cudaMemcpyKind kind;
	o.ck = sim_copy_kind(x, o.dk, o.sk, &kind);
	struct sim_call c;
	sim_call_enter(&c, x->name, x->cbid,
		       sim_copy_drv_cbid(o.ck, x->async, x->is_set, x->peer, x->height > 1));
	c.entry = entry;
	cudaError_t ret = cudaSuccess;
	if (!x->dst || (!x->is_set && !x->src) || (int)kind < 0 || kind > cudaMemcpyDefault ||
	    (x->height > 1 && (x->dpitch < x->width || (!x->is_set && x->spitch < x->width))))
		ret = cudaErrorInvalidValue;
	o.bytes = (uint64_t)x->width * x->height;
	struct sim_stream *cs = sim_timeline_stream_of(x->stream, x->per_thread);
	if (ret == cudaSuccess && x->async && sim_graph_capturing(cs)) { /* a graph node (sim_graph.c) */
		struct sim_gxfer gx = {.dst = x->dst, .src = x->src, .dpitch = x->dpitch, .spitch = x->spitch,
				       .width = x->width, .height = x->height, .is_set = x->is_set,
				       .value = (unsigned char)x->value, .elem = 1};
		sim_timeline_spin_until(c.start + g_cfg.api_ns);
		return sim_graph_add_xfer(&c, cs, &gx);
	}
	if (ret == cudaSuccess) /* bytes really move, at call time, one op at a time */
		sim_copy_move(x);
	sim_timeline_spin_until(c.start + g_cfg.api_ns);
	if (ret != cudaSuccess)
		return sim_call_exit(&c, ret, 0);
	/* a synchronous peer copy runs on the source device's legacy stream */
	struct sim_stream *s = x->peer && !x->async ? sim_timeline_legacy(x->src_dev)
						     : sim_timeline_stream_of(x->stream, x->per_thread);
	/* pageable host memory: the async call is synchronous (CUDA's "API
	 * synchronization behavior"); memsets are asynchronous whatever the memory */
	int blocks = x->async && g_cfg.pageable_async_blocks && !x->is_set && !x->peer &&
		     ((o.ck == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD && o.sk == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE) ||
		      (o.ck == CUPTI_ACTIVITY_MEMCPY_KIND_DTOH && o.dk == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE));
	if (x->async && !blocks)
		sim_timeline_queue_admit(s->device, c.corr);
	uint64_t q = simcupti_now();
	uint32_t prior_corr;
	o.device = s->device;
	o.stream_id = s->id;
	o.corr = x->is_set ? c.corr : c.drv_corr;
	o.api_corr = c.corr;
	pthread_mutex_lock(&g_dev.mx);
	uint64_t prior = sim_timeline_deps(s, &prior_corr), earliest = q + g_cfg.launch_latency_ns;
	if (x->peer && !x->async && x->dst_dev != x->src_dev) { /* serialized with the destination too */
		uint32_t dc;
		uint64_t d = sim_timeline_deps(sim_timeline_legacy(x->dst_dev), &dc);
		if (d > prior) {
			prior = d;
			prior_corr = dc;
		}
		/* (the launch queue then takes `earliest` for "now": it may drop
		 * ops of the source device that end before d a little early) */
		earliest = sim_max(earliest, d);
	}
	o.start = sim_timeline_schedule(s, earliest, sim_xfer_ns(o.bytes), o.corr, &o.end);
	pthread_mutex_unlock(&g_dev.mx);
	uint64_t end = q;
	if (!x->async || blocks) {
		if (prior > c.start)
			sim_truth_sync(blocks ? "pageable_copy" : x->is_set ? "memset" : "memcpy",
				       simcupti_thread_id(), c.start, prior, c.corr, prior_corr);
		sim_timeline_wait_until(o.end);
		end = simcupti_now();
	}
	sim_copy_report(x, &o);
	return sim_call_exit(&c, cudaSuccess, end);
}

#define SIM_COPY1(nm, cb, asy, pt, d, s_, n, k, st)                                               \
	do {                                                                                       \
		uint64_t e_ = simcupti_now(); /* before the arguments' own work (a symbol's lookup) */ \
		struct sim_xfer x_ = {.entry = e_, .name = nm, .cbid = SIM_RT(cb), .async = asy,          \
				      .per_thread = pt, .stream = st, .dst = d, .src = s_, .width = n, \
				      .height = 1, .kind = k};                                      \
		return sim_xfer(&x_);                                                              \
	} while (0)

SIM_EXPORT cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
	SIM_COPY1("cudaMemcpy", cudaMemcpy_v3020, 0, 0, dst, src, count, kind, NULL);
}

SIM_EXPORT cudaError_t cudaMemcpy_ptds(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
	SIM_COPY1("cudaMemcpy_ptds", cudaMemcpy_ptds_v7000, 0, 1, dst, src, count, kind, NULL);
}

SIM_EXPORT cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
				       cudaStream_t stream)
{
	SIM_COPY1("cudaMemcpyAsync", cudaMemcpyAsync_v3020, 1, 0, dst, src, count, kind, stream);
}

SIM_EXPORT cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count,
					    enum cudaMemcpyKind kind, cudaStream_t stream)
{
	SIM_COPY1("cudaMemcpyAsync_ptsz", cudaMemcpyAsync_ptsz_v7000, 1, 1, dst, src, count, kind, stream);
}

static cudaError_t sim_copy2d(const char *nm, CUpti_CallbackId cbid, int async, int pt, void *dst,
			      size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
			      enum cudaMemcpyKind kind, cudaStream_t st)
{
	struct sim_xfer x = {.entry = simcupti_now(), .name = nm, .cbid = cbid, .async = async, .per_thread = pt,
			     .stream = st,
			     .dst = dst, .src = src, .dpitch = dpitch, .spitch = spitch, .width = width,
			     .height = height, .kind = kind};
	return sim_xfer(&x);
}

SIM_EXPORT cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
				    size_t height, enum cudaMemcpyKind kind)
{
	return sim_copy2d("cudaMemcpy2D", SIM_RT(cudaMemcpy2D_v3020), 0, 0, dst, dpitch, src, spitch, width,
			  height, kind, NULL);
}

SIM_EXPORT cudaError_t cudaMemcpy2D_ptds(void *dst, size_t dpitch, const void *src, size_t spitch,
					 size_t width, size_t height, enum cudaMemcpyKind kind)
{
	return sim_copy2d("cudaMemcpy2D_ptds", SIM_RT(cudaMemcpy2D_ptds_v7000), 0, 1, dst, dpitch, src,
			  spitch, width, height, kind, NULL);
}

SIM_EXPORT cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch,
					 size_t width, size_t height, enum cudaMemcpyKind kind,
					 cudaStream_t stream)
{
	return sim_copy2d("cudaMemcpy2DAsync", SIM_RT(cudaMemcpy2DAsync_v3020), 1, 0, dst, dpitch, src,
			  spitch, width, height, kind, stream);
}

SIM_EXPORT cudaError_t cudaMemcpy2DAsync_ptsz(void *dst, size_t dpitch, const void *src, size_t spitch,
					      size_t width, size_t height, enum cudaMemcpyKind kind,
					      cudaStream_t stream)
{
	return sim_copy2d("cudaMemcpy2DAsync_ptsz", SIM_RT(cudaMemcpy2DAsync_ptsz_v7000), 1, 1, dst, dpitch,
			  src, spitch, width, height, kind, stream);
}

SIM_EXPORT cudaError_t cudaMemcpyToSymbol(const void *symbol, const void *src, size_t count, size_t offset,
					  enum cudaMemcpyKind kind)
{
	SIM_COPY1("cudaMemcpyToSymbol", cudaMemcpyToSymbol_v3020, 0, 0,
		  sim_register_symbol(symbol, count, offset), src, count, kind, NULL);
}

SIM_EXPORT cudaError_t cudaMemcpyToSymbol_ptds(const void *symbol, const void *src, size_t count,
					       size_t offset, enum cudaMemcpyKind kind)
{
	SIM_COPY1("cudaMemcpyToSymbol_ptds", cudaMemcpyToSymbol_ptds_v7000, 0, 1,
		  sim_register_symbol(symbol, count, offset), src, count, kind, NULL);
}

SIM_EXPORT cudaError_t cudaMemcpyFromSymbol(void *dst, const void *symbol, size_t count, size_t offset,
					    enum cudaMemcpyKind kind)
{
	SIM_COPY1("cudaMemcpyFromSymbol", cudaMemcpyFromSymbol_v3020, 0, 0, dst,
		  sim_register_symbol(symbol, count, offset), count, kind, NULL);
}

SIM_EXPORT cudaError_t cudaMemcpyFromSymbol_ptds(void *dst, const void *symbol, size_t count, size_t offset,
						 enum cudaMemcpyKind kind)
{
	SIM_COPY1("cudaMemcpyFromSymbol_ptds", cudaMemcpyFromSymbol_ptds_v7000, 0, 1, dst,
		  sim_register_symbol(symbol, count, offset), count, kind, NULL);
}

SIM_EXPORT cudaError_t cudaMemcpyToSymbolAsync(const void *symbol, const void *src, size_t count,
					       size_t offset, enum cudaMemcpyKind kind, cudaStream_t stream)
{
	SIM_COPY1("cudaMemcpyToSymbolAsync", cudaMemcpyToSymbolAsync_v3020, 1, 0,
		  sim_register_symbol(symbol, count, offset), src, count, kind, stream);
}

SIM_EXPORT cudaError_t cudaMemcpyToSymbolAsync_ptsz(const void *symbol, const void *src, size_t count,
						    size_t offset, enum cudaMemcpyKind kind, cudaStream_t stream)
{
	SIM_COPY1("cudaMemcpyToSymbolAsync_ptsz", cudaMemcpyToSymbolAsync_ptsz_v7000, 1, 1,
		  sim_register_symbol(symbol, count, offset), src, count, kind, stream);
}

SIM_EXPORT cudaError_t cudaMemcpyFromSymbolAsync(void *dst, const void *symbol, size_t count, size_t offset,
						 enum cudaMemcpyKind kind, cudaStream_t stream)
{
	SIM_COPY1("cudaMemcpyFromSymbolAsync", cudaMemcpyFromSymbolAsync_v3020, 1, 0, dst,
		  sim_register_symbol(symbol, count, offset), count, kind, stream);
}

SIM_EXPORT cudaError_t cudaMemcpyFromSymbolAsync_ptsz(void *dst, const void *symbol, size_t count,
						      size_t offset, enum cudaMemcpyKind kind,
						      cudaStream_t stream)
{
	SIM_COPY1("cudaMemcpyFromSymbolAsync_ptsz", cudaMemcpyFromSymbolAsync_ptsz_v7000, 1, 1, dst,
		  sim_register_symbol(symbol, count, offset), count, kind, stream);
}

static int sim_copy_bad_device(int d)
{
	return d < 0 || d >= sim_timeline_device_count();
}

SIM_EXPORT cudaError_t cudaMemcpyPeer(void *dst, int dstDevice, const void *src, int srcDevice, size_t count)
{
	if (sim_copy_bad_device(dstDevice) || sim_copy_bad_device(srcDevice))
		return t_last_error = cudaErrorInvalidDevice;
	struct sim_xfer x = {.entry = simcupti_now(), .name = "cudaMemcpyPeer", .cbid = SIM_RT(cudaMemcpyPeer_v4000),
			     .peer = 1,
			     .src_dev = srcDevice, .dst_dev = dstDevice, .dst = dst, .src = src,
			     .width = count, .height = 1, .kind = cudaMemcpyDefault};
	return sim_xfer(&x);
}

SIM_EXPORT cudaError_t cudaMemcpyPeerAsync(void *dst, int dstDevice, const void *src, int srcDevice,
					   size_t count, cudaStream_t stream)
{
	if (sim_copy_bad_device(dstDevice) || sim_copy_bad_device(srcDevice))
		return t_last_error = cudaErrorInvalidDevice;
	struct sim_xfer x = {.entry = simcupti_now(), .name = "cudaMemcpyPeerAsync",
			     .cbid = SIM_RT(cudaMemcpyPeerAsync_v4000),
			     .peer = 1, .async = 1, .src_dev = srcDevice, .dst_dev = dstDevice,
			     .stream = stream, .dst = dst, .src = src, .width = count, .height = 1,
			     .kind = cudaMemcpyDefault};
	return sim_xfer(&x);
}

static cudaError_t sim_set(const char *nm, CUpti_CallbackId cbid, int async, int pt, void *p, size_t pitch,
			   int value, size_t width, size_t height, cudaStream_t st)
{
	struct sim_xfer x = {.entry = simcupti_now(), .name = nm, .cbid = cbid, .async = async, .per_thread = pt,
			     .is_set = 1,
			     .stream = st, .dst = p, .dpitch = pitch, .width = width, .height = height,
			     .value = value, .kind = cudaMemcpyDeviceToDevice};
	return sim_xfer(&x);
}

SIM_EXPORT cudaError_t cudaMemset(void *devPtr, int value, size_t count)
{
	return sim_set("cudaMemset", SIM_RT(cudaMemset_v3020), 0, 0, devPtr, count, value, count, 1, NULL);
}

SIM_EXPORT cudaError_t cudaMemset_ptds(void *devPtr, int value, size_t count)
{
	return sim_set("cudaMemset_ptds", SIM_RT(cudaMemset_ptds_v7000), 0, 1, devPtr, count, value, count, 1,
		       NULL);
}

SIM_EXPORT cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream)
{
	return sim_set("cudaMemsetAsync", SIM_RT(cudaMemsetAsync_v3020), 1, 0, devPtr, count, value, count, 1,
		       stream);
}

SIM_EXPORT cudaError_t cudaMemsetAsync_ptsz(void *devPtr, int value, size_t count, cudaStream_t stream)
{
	return sim_set("cudaMemsetAsync_ptsz", SIM_RT(cudaMemsetAsync_ptsz_v7000), 1, 1, devPtr, count, value,
		       count, 1, stream);
}

SIM_EXPORT cudaError_t cudaMemset2D(void *devPtr, size_t pitch, int value, size_t width, size_t height)
{
	return sim_set("cudaMemset2D", SIM_RT(cudaMemset2D_v3020), 0, 0, devPtr, pitch, value, width, height,
		       NULL);
}

SIM_EXPORT cudaError_t cudaMemset2D_ptds(void *devPtr, size_t pitch, int value, size_t width, size_t height)
{
	return sim_set("cudaMemset2D_ptds", SIM_RT(cudaMemset2D_ptds_v7000), 0, 1, devPtr, pitch, value, width,
		       height, NULL);
}

SIM_EXPORT cudaError_t cudaMemset2DAsync(void *devPtr, size_t pitch, int value, size_t width, size_t height,
					 cudaStream_t stream)
{
	return sim_set("cudaMemset2DAsync", SIM_RT(cudaMemset2DAsync_v3020), 1, 0, devPtr, pitch, value, width,
		       height, stream);
}

SIM_EXPORT cudaError_t cudaMemset2DAsync_ptsz(void *devPtr, size_t pitch, int value, size_t width,
					      size_t height, cudaStream_t stream)
{
	return sim_set("cudaMemset2DAsync_ptsz", SIM_RT(cudaMemset2DAsync_ptsz_v7000), 1, 1, devPtr, pitch,
		       value, width, height, stream);
}
