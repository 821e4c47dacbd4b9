/*
 * gp_fd.h — opening files inside someone else's process without harming it.
 * Used by the capture side only (the library's log file and control
 * sockets, the collector's trace and window files; the report opens traces
 * through trace/'s reader, which checks for itself): any thread, no state.
 *
 * Two rules, both for descriptors gpuphase opens in a profiled program:
 *  - never 0, 1 or 2: a program started with stdout or stderr closed (2>&-,
 *    daemons, cron) would otherwise write its own output into our file, and
 *    lose both. gp_fd_lift moves a descriptor to 3 or above.
 *  - never block on, or write into, anything but a regular file: opening a
 *    FIFO for reading or writing blocks until its other end appears (before
 *    main, in a constructor, that hangs the program), and a device is not a
 *    log. gp_fd_open_regular opens non-blocking, checks, then clears
 *    O_NONBLOCK.
 * Both save nothing and print nothing: errors are returned as -errno, with
 * -GP_FD_NOT_REGULAR for "exists but is not a regular file".
 */
#ifndef GP_FD_H
#define GP_FD_H

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Returned by gp_fd_open_regular for a path that is a FIFO, socket, device or
 * directory; callers print gp_fd_strerror. */
#define GP_FD_NOT_REGULAR 10000

static inline const char *gp_fd_strerror(int neg_errno)
{
	return neg_errno == -GP_FD_NOT_REGULAR ? "not a regular file" : strerror(-neg_errno);
}

/* fd itself when fd > 2, else a close-on-exec duplicate at 3 or above (and
 * fd closed). -errno if no descriptor is free (fd closed too). */
static inline int gp_fd_lift(int fd)
{
	if (fd < 0 || fd > 2)
		return fd;
	int n = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	int e = errno;
	close(fd);
	return n >= 0 ? n : -e;
}

/* open(path, flags | O_NONBLOCK | O_CLOEXEC, mode), refused unless it is a
 * regular file, then made blocking again and lifted off 0-2. With O_NOFOLLOW
 * in flags a symbolic link is refused (-ELOOP), else followed. A write-only
 * open of a FIFO with no reader fails with ENXIO instead of blocking: an
 * existing non-regular path is refused before the open so the message is the
 * same for every kind, and checked again on the descriptor (no race). */
static inline int gp_fd_open_regular(const char *path, int flags, mode_t mode)
{
	struct stat st;
	int rc = (flags & O_NOFOLLOW) ? lstat(path, &st) : stat(path, &st);
	if (rc == 0 && !S_ISREG(st.st_mode))
		return S_ISLNK(st.st_mode) ? -ELOOP : -GP_FD_NOT_REGULAR;
	int fd = open(path, flags | O_NONBLOCK | O_CLOEXEC, mode);
	if (fd < 0)
		return errno == ENXIO ? -GP_FD_NOT_REGULAR : -errno;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -GP_FD_NOT_REGULAR;
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return gp_fd_lift(fd);
}

#endif
