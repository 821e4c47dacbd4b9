/*
 * log.c — the library's diagnostic channel. Every line starts "gpuphase: " and
 * goes to stderr, or to the file named by GPUPHASE_LOG=level:FILE; never to
 * stdout. Any thread may log; lines are written with one write(2) each so they
 * do not interleave. Logging is off the hot path (start, stop, errors).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gp_fd.h"
#include "gp_lib.h"

static int gp_log_fd = 2;
static enum gp_log_level gp_log_level = GP_LOG_ERROR;

void gp_log_init(const struct gp_config *cfg)
{
	gp_log_level = cfg->log_level;
	/* A program started with stderr closed gets no lines from us: whatever it
	 * opens next as descriptor 2 is its own file, not our log. */
	if (fcntl(2, F_GETFD) < 0)
		gp_log_fd = -1;
	if (cfg->log_file[0] && gp_log_level != GP_LOG_OFF) {
		/* never blocks (a FIFO is refused, not opened), never descriptor 0-2 */
		int fd = gp_fd_open_regular(cfg->log_file, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW, 0600);
		if (fd >= 0)
			gp_log_fd = fd;
		else
			gp_log(GP_LOG_ERROR, "cannot open log file %s: %s; logging to stderr", cfg->log_file,
			       gp_fd_strerror(fd));
	}
}

static void gp_log_write(const char *s, size_t n)
{
	int saved = errno;
	while (n > 0) {
		ssize_t w = write(gp_log_fd, s, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		s += w;
		n -= (size_t)w;
	}
	errno = saved;
}

void gp_log(enum gp_log_level lvl, const char *fmt, ...)
{
	if (lvl > gp_log_level || lvl == GP_LOG_OFF)
		return;
	char buf[1024];
	int saved = errno;
	int n = snprintf(buf, sizeof buf, "gpuphase: ");
	va_list ap;
	va_start(ap, fmt);
	int m = vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
	va_end(ap);
	errno = saved;
	if (m < 0)
		return;
	size_t len = (size_t)n + (size_t)m;
	if (len > sizeof buf - 2)
		len = sizeof buf - 2;
	buf[len++] = '\n';
	gp_log_write(buf, len);
}

void gp_log_line(const char *line)
{
	char buf[1024];
	int n = snprintf(buf, sizeof buf, "%s\n", line);
	if (n > 0)
		gp_log_write(buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}
