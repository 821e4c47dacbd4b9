/*
 * agent.c — main() of `gpuphase-agent` (`gpuphase agent` execs it): the
 * Prometheus sidecar of duty-cycled captures. A process of its own, never
 * an HTTP server inside the profiled application. Every --interval it polls
 * the control directory (agent_procs.c), reduces new closed windows into
 * counters (agent_reduce.c), saves them (agent_state.c) and renders the
 * exposition text (agent_metrics.c); /metrics serves the last rendering.
 *
 * Threads: main (the poll loop; owns every counter) and libmicrohttpd's
 * polling thread (answers requests). They share only the rendered snapshot,
 * under gp_agent_snap_lock: a request copies it, a pass swaps in a new one.
 * SIGINT/SIGTERM end the loop; the state is on disk after every window.
 *
 * --listen takes IPv4, [IPv6] or a host name (getaddrinfo), checked for
 * its form before anything is read. Call sites are named from the object
 * files as gpuphase-report names them (report/core/symbolize.c), from this
 * host's files only (DEBUGINFOD_URLS is dropped at start).
 *
 * Exit status: 0 after a signal (or --once), 1 a failure (cannot listen: a
 * name that does not resolve, an address that does not bind; unreadable
 * state file), 2 usage (a --listen value not of the form ADDR:PORT, too).
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent.h"

/* Loopback, and a port outside the well-known exporters' own (DCGM's 9400,
 * node's 9100, OpenTelemetry's Prometheus exporter's 9464), so the agent
 * runs beside them; docs/always-on.md says why. */
#define GP_AGENT_DEFAULT_LISTEN "127.0.0.1:9466"

static pthread_mutex_t gp_agent_snap_lock = PTHREAD_MUTEX_INITIALIZER;
static char *gp_agent_snap;   /* the last rendering, under the lock */
static size_t gp_agent_snap_len;
static volatile sig_atomic_t gp_agent_stop;

static const char gp_agent_usage[] =
"usage: gpuphase agent [--listen ADDR:PORT] [options]\n"
"\n"
"Serve Prometheus metrics of every process on this host that captures with a\n"
"duty cycle (GPUPHASE_WINDOW=every=...): it finds them through the control\n"
"directory's sockets, reduces each closed window file, deletes it, and\n"
"answers GET /metrics. A process of its own: nothing runs inside the\n"
"application. docs/always-on.md lists the metrics.\n"
"\n"
"Options:\n"
"  --listen ADDR:PORT  address and port to serve on (default " GP_AGENT_DEFAULT_LISTEN "):\n"
"                      IPV4:PORT, [IPV6]:PORT (e.g. [::1]:9466; [::] serves IPv4\n"
"                      too) or HOST:PORT (its first address that binds, IPv4 first)\n"
"  --control-dir DIR   the capturing processes' GPUPHASE_CONTROL_DIR (default: ours,\n"
"                      else /tmp/gpuphase-UID); the state file agent.state goes there\n"
"  --top N             operators, and sync call sites, with series of their own per\n"
"                      process (default 20 each; the others count as operator=\"other\"\n"
"                      of their category, site=\"other\")\n"
"  --keep-windows      leave reduced window files in place (default: delete them)\n"
"  --forget SECONDS    keep a dead process's series this long (default 600)\n"
"  --interval SECONDS  time between polls (default 1)\n"
"  --once              one poll, print the metrics on stdout, exit (no HTTP)\n"
"  -h, --help          this help\n";

static void gp_agent_on_signal(int sig)
{
	(void)sig;
	gp_agent_stop = 1;
}

static enum MHD_Result gp_agent_answer(void *cls, struct MHD_Connection *c, const char *url, const char *method,
				       const char *version, const char *upload, size_t *upload_size, void **req)
{
	(void)cls, (void)version, (void)upload, (void)upload_size, (void)req;
	unsigned status = MHD_HTTP_OK;
	char *body = NULL;
	size_t len = 0;
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
		status = MHD_HTTP_METHOD_NOT_ALLOWED;
	} else if (strcmp(url, "/metrics") != 0) {
		status = MHD_HTTP_NOT_FOUND;
	} else {
		pthread_mutex_lock(&gp_agent_snap_lock);
		len = gp_agent_snap_len;
		body = malloc(len + 1);
		if (body && gp_agent_snap)
			memcpy(body, gp_agent_snap, len);
		pthread_mutex_unlock(&gp_agent_snap_lock);
		if (!body)
			status = MHD_HTTP_INTERNAL_SERVER_ERROR;
	}
	if (status != MHD_HTTP_OK) {
		static const char msg[] = "only GET /metrics here\n";
		free(body);
		body = strdup(msg);
		len = body ? sizeof msg - 1 : 0;
	}
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				status == MHD_HTTP_OK ? "text/plain; version=0.0.4; charset=utf-8" : "text/plain");
	enum MHD_Result ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

/* --listen's value split into the address part and the port: ADDR:PORT,
 * [IPV6]:PORT or HOST:PORT. 0, or -EINVAL with why (a line's tail) in err. */
static int gp_agent_split_listen(const char *s, char *host, size_t hn, char *port, size_t pn, char *err,
				 size_t en)
{
	const char *h = s, *colon;
	size_t hl;
	if (s[0] == '[') {
		const char *close = strchr(s, ']');
		if (!close || close[1] != ':') {
			snprintf(err, en, "an IPv6 address is [ADDR]:PORT, e.g. [::1]:9466");
			return -EINVAL;
		}
		h = s + 1;
		hl = (size_t)(close - h);
		colon = close + 1;
		if (!memchr(h, ':', hl)) {
			snprintf(err, en, "brackets hold an IPv6 address, e.g. [::1]:9466; a name or IPv4 goes without");
			return -EINVAL;
		}
	} else {
		colon = strrchr(s, ':');
		if (!colon) {
			snprintf(err, en, "no port: expected ADDR:PORT, e.g. 127.0.0.1:9466");
			return -EINVAL;
		}
		hl = (size_t)(colon - s);
		if (memchr(s, ':', hl)) {
			snprintf(err, en, "an IPv6 address goes in brackets, e.g. [::1]:9466");
			return -EINVAL;
		}
	}
	if (hl == 0) {
		snprintf(err, en, "no address: 127.0.0.1 for loopback, 0.0.0.0 or [::] for every interface");
		return -EINVAL;
	}
	char *end;
	errno = 0;
	long p = strtol(colon + 1, &end, 10);
	if (errno || end == colon + 1 || *end || p < 1 || p > 65535 || !isdigit((unsigned char)colon[1])) {
		snprintf(err, en, "the port must be a number from 1 to 65535");
		return -EINVAL;
	}
	if (hl >= hn) {
		snprintf(err, en, "the address is too long");
		return -EINVAL;
	}
	memcpy(host, h, hl);
	host[hl] = 0;
	snprintf(port, pn, "%ld", p);
	return 0;
}

/* The HTTP server on host:port (--listen's parts). The address may be a host
 * name: its addresses from getaddrinfo, IPv4 first (as Go's net.Listen, and
 * so node_exporter, picks), the first that binds serves. An IPv6 address is
 * dual stack ([::] serves IPv4 too), as Linux's and Go's default.
 * Returns the daemon, or NULL with the reason printed; shown receives the
 * bound address. */
static struct MHD_Daemon *gp_agent_listen(const char *listen, const char *host, const char *port, char *shown,
					  size_t sn)
{
	struct addrinfo hints = { .ai_flags = AI_PASSIVE | AI_NUMERICSERV, .ai_family = AF_UNSPEC,
				  .ai_socktype = SOCK_STREAM };
	struct addrinfo *res = NULL;
	int g = getaddrinfo(host, port, &hints, &res);
	if (g != 0) {
		fprintf(stderr, "gpuphase agent: --listen %s: %s: %s\n", listen, host,
			g == EAI_SYSTEM ? strerror(errno) : gai_strerror(g));
		return NULL;
	}
	struct MHD_Daemon *d = NULL;
	for (int pass = 0; pass < 2 && !d; pass++) {
		for (struct addrinfo *ai = res; ai && !d; ai = ai->ai_next) {
			if ((ai->ai_family == AF_INET) != (pass == 0) ||
			    (ai->ai_family != AF_INET && ai->ai_family != AF_INET6))
				continue;
			unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
			if (ai->ai_family == AF_INET6)
				flags |= MHD_USE_DUAL_STACK;
			/* the port argument only names the port in MHD's own log lines */
			d = MHD_start_daemon(flags, (uint16_t)atoi(port), NULL, NULL, gp_agent_answer, NULL,
					     MHD_OPTION_SOCK_ADDR, ai->ai_addr, MHD_OPTION_CONNECTION_TIMEOUT, 10u,
					     MHD_OPTION_END);
			if (d) {
				char num[NI_MAXHOST];
				if (getnameinfo(ai->ai_addr, ai->ai_addrlen, num, sizeof num, NULL, 0, NI_NUMERICHOST))
					snprintf(num, sizeof num, "%s", host);
				snprintf(shown, sn, ai->ai_family == AF_INET6 ? "[%s]:%s" : "%s:%s", num, port);
			}
		}
	}
	freeaddrinfo(res);
	if (!d)
		fprintf(stderr, "gpuphase agent: cannot listen on %s\n", listen);
	return d;
}

/* One pass, and its rendering swapped in for the HTTP thread. */
static void gp_agent_pass(struct gp_agent *a)
{
	gp_agent_procs_poll(a);
	size_t len = 0;
	char *text = gp_agent_metrics_render(a, &len);
	if (!text)
		return; /* out of memory: the last rendering stays */
	pthread_mutex_lock(&gp_agent_snap_lock);
	char *old = gp_agent_snap;
	gp_agent_snap = text;
	gp_agent_snap_len = len;
	pthread_mutex_unlock(&gp_agent_snap_lock);
	free(old);
}

static int gp_agent_number(const char *s, double lo, double hi, double *v)
{
	char *end;
	errno = 0;
	*v = strtod(s, &end);
	return !errno && end != s && !*end && *v >= lo && *v <= hi ? 0 : -EINVAL;
}

static void gp_agent_free(struct gp_agent *a)
{
	for (size_t i = 0; i < a->np; i++)
		gp_agent_proc_free(&a->p[i]);
	free(a->p);
	free(gp_agent_snap);
	gp_agent_snap = NULL;
}

enum { O_LISTEN = 256, O_CTL, O_TOP, O_KEEP, O_FORGET, O_INTERVAL, O_ONCE };

static int gp_agent_options(int argc, char **argv, struct gp_agent *a, const char **listen, double *interval,
			    int *once)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, O_LISTEN },   { "control-dir", required_argument, NULL, O_CTL },
		{ "top", required_argument, NULL, O_TOP },         { "keep-windows", no_argument, NULL, O_KEEP },
		{ "forget", required_argument, NULL, O_FORGET },   { "interval", required_argument, NULL, O_INTERVAL },
		{ "once", no_argument, NULL, O_ONCE },             { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *ctl = getenv("GPUPHASE_CONTROL_DIR");
	double v;
	int c;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case O_LISTEN: *listen = optarg; break;
		case O_CTL: ctl = optarg; break;
		case O_KEEP: a->keep_windows = 1; break;
		case O_ONCE: *once = 1; break;
		case O_TOP:
		case O_FORGET:
		case O_INTERVAL:
			if (gp_agent_number(optarg, c == O_INTERVAL ? 0.01 : 0, c == O_TOP ? 10000 : 1e7, &v) != 0) {
				fprintf(stderr, "gpuphase agent: --%s %s: not a number in range\n", opts[c - O_LISTEN].name,
					optarg);
				return 2;
			}
			if (c == O_TOP)
				a->top_n = (size_t)v;
			else if (c == O_FORGET)
				a->forget_s = (unsigned)v;
			else
				*interval = v;
			break;
		case 'h': fputs(gp_agent_usage, stdout); return 0;
		default: fputs(gp_agent_usage, stderr); return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "gpuphase agent: unexpected argument '%s'\n%s", argv[optind], gp_agent_usage);
		return 2;
	}
	if (ctl && *ctl)
		snprintf(a->ctl, sizeof a->ctl, "%s", ctl);
	else
		snprintf(a->ctl, sizeof a->ctl, "/tmp/gpuphase-%u", (unsigned)getuid());
	snprintf(a->state_path, sizeof a->state_path, "%s/agent.state", a->ctl);
	return -1;
}

int main(int argc, char **argv)
{
	static struct gp_agent a = { .top_n = 20, .forget_s = 600 };
	const char *listen = GP_AGENT_DEFAULT_LISTEN;
	double interval = 1;
	int once = 0, rc = gp_agent_options(argc, argv, &a, &listen, &interval, &once);
	char err[2 * PATH_MAX];
	if (rc >= 0)
		return rc;
	/* call sites are named from the object files on this host only: a
	 * sidecar's poll loop never waits on a debuginfod server's answer */
	unsetenv("DEBUGINFOD_URLS");
	char host[256], port[8];
	if (gp_agent_split_listen(listen, host, sizeof host, port, sizeof port, err, sizeof err) != 0) {
		fprintf(stderr, "gpuphase agent: --listen %s: %s\n", listen, err);
		return 2;
	}
	if (mkdir(a.ctl, 0700) != 0 && errno != EEXIST) {
		fprintf(stderr, "gpuphase agent: %s: %s\n", a.ctl, strerror(errno));
		return 1;
	}
	if (gp_agent_state_load(&a, err, sizeof err) != 0) {
		fprintf(stderr, "gpuphase agent: %s\n", err);
		return 1;
	}
	if (once) {
		gp_agent_pass(&a);
		if (gp_agent_snap)
			fwrite(gp_agent_snap, 1, gp_agent_snap_len, stdout);
		rc = gp_agent_snap && fflush(stdout) == 0 ? 0 : 1;
		gp_agent_free(&a);
		return rc;
	}
	struct sigaction act = { .sa_handler = gp_agent_on_signal }; /* no SA_RESTART: the sleep ends */
	sigaction(SIGINT, &act, NULL);
	sigaction(SIGTERM, &act, NULL);
	gp_agent_pass(&a);
	char shown[NI_MAXHOST + 16];
	struct MHD_Daemon *d = gp_agent_listen(listen, host, port, shown, sizeof shown);
	if (!d) {
		gp_agent_free(&a);
		return 1;
	}
	fprintf(stderr, "gpuphase agent: serving http://%s/metrics, control directory %s\n", shown, a.ctl);
	while (!gp_agent_stop) {
		struct timespec ts = { (time_t)interval, (long)((interval - (double)(time_t)interval) * 1e9) };
		nanosleep(&ts, NULL);
		if (!gp_agent_stop)
			gp_agent_pass(&a);
	}
	MHD_stop_daemon(d);
	gp_agent_free(&a);
	return 0;
}
