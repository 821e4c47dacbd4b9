/*
 * sim_cupti_callback.c — CUPTI's callback API: one subscriber
 * (cuptiSubscribe), the (domain, cbid) callbacks it enabled, and the names
 * of the callbacks (generated from the real cbid headers, module.mk).
 *
 * Who calls it: CUPTI clients (any thread) subscribe and enable; the
 * runtime (app threads) asks simcupti_callback_enabled and calls
 * simcupti_callback around each API call.
 *
 * Threads: the subscriber's fields are under g_cupti.mx; the client's
 * callback runs without any lock of libcupti held. g_cupti.mx checks its
 * owner, so that the exit handler can tell (simcupti_lock_settles) that
 * exit() came from a signal handler on top of a simcuda call holding it.
 * Invariant: at most one subscriber; with SIMCUDA_FOREIGN_SUBSCRIBER set
 * none (another tool is pretended to hold CUPTI).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim_cupti_state.h"

static int g_foreign_subscriber = -1; /* SIMCUDA_FOREIGN_SUBSCRIBER, lazily */

int simcupti_callback_enabled(CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	if ((unsigned)domain >= SIM_MAX_DOMAIN || cbid >= SIM_MAX_CBID)
		return 0;
	pthread_mutex_lock(&g_cupti.mx);
	int on = g_cupti.subscribed && (g_cupti.cb_on[domain][cbid / 8] >> (cbid % 8)) & 1;
	pthread_mutex_unlock(&g_cupti.mx);
	return on;
}

int simcupti_lock_settles(void)
{
	/* EDEADLK: this thread holds it; ETIMEDOUT: the lock is held past
	 * the bound, by this thread between taking it and noting itself its
	 * owner, or by a thread that will not let it go */
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 1;
	if (pthread_mutex_timedlock(&g_cupti.mx, &until) != 0)
		return 0;
	pthread_mutex_unlock(&g_cupti.mx);
	return 1;
}

void simcupti_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *data)
{
	if (!simcupti_callback_enabled(domain, cbid))
		return;
	pthread_mutex_lock(&g_cupti.mx);
	CUpti_CallbackFunc f = g_cupti.sub_cb;
	void *user = g_cupti.sub_user;
	pthread_mutex_unlock(&g_cupti.mx);
	if (f)
		f(user, domain, cbid, data);
}

CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback,
			   void *userdata)
{
	if (!subscriber)
		return sim_cupti_err(CUPTI_ERROR_INVALID_PARAMETER);
	pthread_mutex_lock(&g_cupti.mx);
	if (g_foreign_subscriber < 0) {
		const char *v = getenv("SIMCUDA_FOREIGN_SUBSCRIBER");
		g_foreign_subscriber = v && *v && strcmp(v, "0") != 0;
	}
	if (g_cupti.subscribed || g_foreign_subscriber) {
		pthread_mutex_unlock(&g_cupti.mx);
		return sim_cupti_err(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
	}
	g_cupti.subscribed = 1;
	g_cupti.sub_cb = callback;
	g_cupti.sub_user = userdata;
	memset(g_cupti.cb_on, 0, sizeof g_cupti.cb_on);
	pthread_mutex_unlock(&g_cupti.mx);
	*subscriber = (CUpti_SubscriberHandle)(void *)&g_cupti;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiSubscribe_v2(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback,
			      void *userdata, CUpti_SubscriberParams *params)
{
	if (!params || params->structSize == 0)
		return sim_cupti_err(CUPTI_ERROR_INVALID_PARAMETER);
	CUptiResult r = cuptiSubscribe(subscriber, callback, userdata);
	if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED && params->oldSubscriberName &&
	    params->oldSubscriberSize > 0)
		snprintf(params->oldSubscriberName, params->oldSubscriberSize, "simcuda subscriber");
	return r;
}

static int sim_is_sub(CUpti_SubscriberHandle s)
{
	return s == (CUpti_SubscriberHandle)(void *)&g_cupti && g_cupti.subscribed;
}

CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle subscriber)
{
	pthread_mutex_lock(&g_cupti.mx);
	if (!sim_is_sub(subscriber)) {
		pthread_mutex_unlock(&g_cupti.mx);
		return sim_cupti_err(CUPTI_ERROR_INVALID_PARAMETER);
	}
	sim_cupti_unsubscribe_locked();
	pthread_mutex_unlock(&g_cupti.mx);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
				CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	if ((unsigned)domain >= SIM_MAX_DOMAIN || domain == CUPTI_CB_DOMAIN_INVALID ||
	    cbid >= SIM_MAX_CBID)
		return sim_cupti_err(CUPTI_ERROR_INVALID_PARAMETER);
	pthread_mutex_lock(&g_cupti.mx);
	if (!sim_is_sub(subscriber)) {
		pthread_mutex_unlock(&g_cupti.mx);
		return sim_cupti_err(CUPTI_ERROR_INVALID_PARAMETER);
	}
	if (enable)
		g_cupti.cb_on[domain][cbid / 8] |= (uint8_t)(1u << (cbid % 8));
	else
		g_cupti.cb_on[domain][cbid / 8] &= (uint8_t) ~(1u << (cbid % 8));
	pthread_mutex_unlock(&g_cupti.mx);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle subscriber,
			      CUpti_CallbackDomain domain)
{
	if ((unsigned)domain >= SIM_MAX_DOMAIN || domain == CUPTI_CB_DOMAIN_INVALID)
		return sim_cupti_err(CUPTI_ERROR_INVALID_PARAMETER);
	pthread_mutex_lock(&g_cupti.mx);
	if (!sim_is_sub(subscriber)) {
		pthread_mutex_unlock(&g_cupti.mx);
		return sim_cupti_err(CUPTI_ERROR_INVALID_PARAMETER);
	}
	memset(g_cupti.cb_on[domain], enable ? 0xff : 0, sizeof g_cupti.cb_on[domain]);
	pthread_mutex_unlock(&g_cupti.mx);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiEnableAllDomains(uint32_t enable, CUpti_SubscriberHandle subscriber)
{
	for (int d = CUPTI_CB_DOMAIN_DRIVER_API; d < SIM_MAX_DOMAIN; d++) {
		CUptiResult r = cuptiEnableDomain(enable, subscriber, (CUpti_CallbackDomain)d);
		if (r != CUPTI_SUCCESS)
			return r;
	}
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetCallbackState(uint32_t *enable, CUpti_SubscriberHandle subscriber,
				  CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	if (!enable || (unsigned)domain >= SIM_MAX_DOMAIN || cbid >= SIM_MAX_CBID)
		return sim_cupti_err(CUPTI_ERROR_INVALID_PARAMETER);
	pthread_mutex_lock(&g_cupti.mx);
	int ok = sim_is_sub(subscriber);
	*enable = ok && ((g_cupti.cb_on[domain][cbid / 8] >> (cbid % 8)) & 1);
	pthread_mutex_unlock(&g_cupti.mx);
	return ok ? CUPTI_SUCCESS : sim_cupti_err(CUPTI_ERROR_INVALID_PARAMETER);
}

/* Callback names come from the real cbid headers (generated table). */
struct sim_cbname {
	uint32_t cbid;
	const char *name;
};
#include "sim_cbid_names.h"

CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid, const char **name)
{
	if (!name)
		return sim_cupti_err(CUPTI_ERROR_INVALID_PARAMETER);
	const struct sim_cbname *t = NULL;
	size_t n = 0;
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
		t = sim_runtime_cbnames;
		n = sizeof sim_runtime_cbnames / sizeof *t;
	} else if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
		t = sim_driver_cbnames;
		n = sizeof sim_driver_cbnames / sizeof *t;
	} else {
		return sim_cupti_err(CUPTI_ERROR_INVALID_PARAMETER);
	}
	for (size_t i = 0; i < n; i++) {
		if (t[i].cbid == cbid) {
			*name = t[i].name;
			return CUPTI_SUCCESS;
		}
	}
	return sim_cupti_err(CUPTI_ERROR_INVALID_PARAMETER);
}

CUptiResult cuptiSupportedDomains(size_t *domainCount, CUpti_DomainTable *domainTable)
{
	static CUpti_CallbackDomain doms[] = {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_CB_DOMAIN_RUNTIME_API,
					      CUPTI_CB_DOMAIN_RESOURCE};
	if (!domainCount || !domainTable)
		return sim_cupti_err(CUPTI_ERROR_INVALID_PARAMETER);
	*domainCount = sizeof doms / sizeof *doms;
	*domainTable = doms;
	return CUPTI_SUCCESS;
}

void sim_cupti_unsubscribe_locked(void)
{
	g_cupti.subscribed = 0;
	g_cupti.sub_cb = NULL;
	memset(g_cupti.cb_on, 0, sizeof g_cupti.cb_on);
}
