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
 * Exit status: 0 after a signal (or --once), 1 a failure (cannot listen,
 * unreadable state file), 2 usage.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <microhttpd.h>
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
"  --listen ADDR:PORT  IPv4 address and port to serve on (default " GP_AGENT_DEFAULT_LISTEN ")\n"
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

static int gp_agent_parse_listen(const char *s, struct sockaddr_in *sa)
{
	char host[64];
	const char *colon = strrchr(s, ':');
	char *end;
	if (!colon || (size_t)(colon - s) >= sizeof host)
		return -EINVAL;
	memcpy(host, s, (size_t)(colon - s));
	host[colon - s] = 0;
	long port = strtol(colon + 1, &end, 10);
	if (end == colon + 1 || *end || port < 1 || port > 65535)
		return -EINVAL;
	memset(sa, 0, sizeof *sa);
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)port);
	return inet_pton(AF_INET, host, &sa->sin_addr) == 1 ? 0 : -EINVAL;
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
	if (rc >= 0)
		return rc;
	struct sockaddr_in sa;
	if (gp_agent_parse_listen(listen, &sa) != 0) {
		fprintf(stderr, "gpuphase agent: --listen %s: expected IPV4:PORT, e.g. %s\n", listen,
			GP_AGENT_DEFAULT_LISTEN);
		return 2;
	}
	if (mkdir(a.ctl, 0700) != 0 && errno != EEXIST) {
		fprintf(stderr, "gpuphase agent: %s: %s\n", a.ctl, strerror(errno));
		return 1;
	}
	char err[2 * PATH_MAX];
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
	struct MHD_Daemon *d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG, 0, NULL, NULL,
						 gp_agent_answer, NULL, MHD_OPTION_SOCK_ADDR, &sa,
						 MHD_OPTION_CONNECTION_TIMEOUT, 10u, MHD_OPTION_END);
	if (!d) {
		fprintf(stderr, "gpuphase agent: cannot listen on %s\n", listen);
		return 1;
	}
	fprintf(stderr, "gpuphase agent: serving http://%s/metrics, control directory %s\n", listen, a.ctl);
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
