/*
 * sim_cupti_state.h — the state the files of the simulated libcupti.so.13
 * share, and the calls they make into each other. Nothing here is exported:
 * the library's version script (cupti.map) exports cupti* and simcupti_*
 * only, so the names below are sim_cupti_*.
 *
 * The library, by concern (sim_internal.h has its interface to the runtime):
 *   sim_cupti.c           CUPTI's clock and ids, external correlation, the
 *                         API / overhead records, the last error, finalize
 *   sim_cupti_buffers.c   staging, the client buffers and their lanes, the
 *                         delivery thread, flushes, buffer attributes
 *   sim_cupti_kinds.c     the activity kinds and per-cbid API switches
 *   sim_cupti_callback.c  the callback API: one subscriber, callback names
 *   sim_profiler.c        the profiling API (Range Profiler, Profiler Host)
 *
 * Threads and locks: g_cupti.mx guards every field below not marked
 * otherwise, whichever file touches it; g_cupti.deliver_mx serialises what
 * touches client buffers (sim_cupti_buffers.c says the order: deliver_mx
 * before mx, and mx is never held while a client callback runs).
 */
#ifndef SIM_CUPTI_STATE_H
#define SIM_CUPTI_STATE_H

#include <pthread.h>
#include <stdint.h>

#include "sim_internal.h"

#define SIM_MAX_KIND 64
#define SIM_MAX_CBID 4096
#define SIM_MAX_DOMAIN 8
#define SIM_LANES 16 /* client buffers: 0 the device, 1.. host threads */

/* One record produced and not yet copied into a client buffer. */
struct sim_staged {
	struct sim_staged *next;
	uint64_t ready;
	uint16_t size, start_off, end_off, completed_off;
	uint8_t lane;   /* client buffer it goes to */
	uint8_t gpu;    /* device record: clock shift, device buffer */
	uint8_t on_dev; /* still counted in g_cupti.ndev */
	uint64_t data[]; /* 8-byte aligned record bytes */
};

struct sim_lane {
	uint8_t *buf; /* current client buffer, under deliver_mx */
	size_t size, valid;
};

struct sim_cupti_state {
	pthread_mutex_t mx;
	/* staging and delivery (sim_cupti_buffers.c) */
	pthread_cond_t cv;      /* worker wake-up; pairs with flush requests */
	pthread_cond_t done_cv; /* flush completion; pairs with flush_done */
	pthread_cond_t room_cv; /* host staging below its hard limit again */
	int room_waiters;       /* threads waiting on room_cv, under mx */
	pthread_mutex_t deliver_mx;
	struct sim_staged *head, **tail;
	size_t nstaged;
	int worker_running;
	int worker_stop; /* cuptiFinalize asks the delivery thread to end */
	pthread_t worker;
	uint64_t flush_req, flush_done; /* sequence numbers, under mx */
	int flush_forced;               /* a forced flush is requested */
	CUpti_BuffersCallbackRequestFunc req_cb;
	CUpti_BuffersCallbackCompleteFunc done_cb;
	struct sim_lane lanes[SIM_LANES]; /* under deliver_mx */
	unsigned rot;                     /* first lane a flush completes, under deliver_mx */
	size_t nhost, ndev_all;           /* staged host / device records, under mx */
	size_t ndev;                      /* device records in the device buffer, under mx */
	int dev_buf_attr;                 /* the client set DEVICE_BUFFER_SIZE, under mx */
	uint32_t flush_period_ms;
	/* the cost model's keys and the clock (sim_cupti.c) */
	struct simcupti_params par; /* under mx */
	uint64_t t0;                /* drift origin (CUPTI clock), under mx */
	void (*rebase)(int64_t);
	/* the subscriber (sim_cupti_callback.c) */
	int subscribed;
	CUpti_CallbackFunc sub_cb;
	void *sub_user;
	uint8_t cb_on[SIM_MAX_DOMAIN][SIM_MAX_CBID / 8];
	/* the runtime's switch hook (sim_cupti_kinds.c): truth line, under mx */
	void (*switched)(const char *kind, int cbid, int on, uint64_t t);
};
extern struct sim_cupti_state g_cupti; /* defined in sim_cupti.c */

/* Remember r as the calling thread's last error (unless success); returns r. */
CUptiResult sim_cupti_err(CUptiResult r);

/* sim_cupti_buffers.c. Rebase every staged timestamp by delta (a clock
 * switch); g_cupti.mx held. */
void sim_cupti_rebase_staged_locked(int64_t delta);
/* End the delivery thread after what it holds is delivered and forget the
 * buffer callbacks (cuptiFinalize); g_cupti.mx held, not on that thread. */
void sim_cupti_delivery_stop_locked(void);

/* sim_cupti_kinds.c. Switch every activity kind off (cuptiFinalize); g_cupti.mx held. */
void sim_cupti_kinds_off_locked(void);

/* sim_cupti_callback.c. Forget the subscriber and its enabled callbacks; g_cupti.mx held. */
void sim_cupti_unsubscribe_locked(void);

#endif
