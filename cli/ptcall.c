/*
 * ptcall.c — make a thread of another process, stopped under ptrace, call a
 * function of its own and come back: the registers of a call, its frame,
 * the system call restart and the FP/vector state, for x86-64 and aarch64
 * (ptcall.h is the interface). `gpuphase attach` (attach.c) uses it to call
 * dlopen() and gpuphase_attach_begin() in the target.
 *
 * Called on the command's only thread, with the target thread seized and in
 * a ptrace stop. Invariants: the thread's registers and FP/vector state are
 * saved (gp_ptcall_save) before the first call and put back
 * (gp_ptcall_restore) before the detach, so the thread resumes where it was;
 * nothing is written into the process but the stack below its red zone.
 * Other architectures compile this file to nothing (attach.c says the verb
 * is not available there).
 */
#include "ptcall.h"

#if defined(__x86_64__) || defined(__aarch64__)

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__aarch64__)
#include <asm/ptrace.h> /* struct user_sve_header, SVE_PT_* */
#endif

/* ---- the architecture: registers, the call frame, extra state -------------
 *
 * A call in the stopped thread (gp_ptcall_run) sets the program counter to
 * the function, its two arguments, a stack pointer below the thread's own
 * data, and a return address of 0: the function returns to address 0, an
 * instruction fetch fault that stops the thread with SIGSEGV at pc 0. That
 * fault plays the part int3 / BRK play for debuggers, and needs no code
 * written into the process. Per architecture:
 *
 *               x86-64                      aarch64
 *   registers   user_regs_struct            user_regs_struct (= user_pt_regs)
 *               (NT_PRSTATUS)               (NT_PRSTATUS)
 *   pc, sp      rip, rsp                    pc, sp
 *   arguments   rdi, rsi (up to 6)          x0, x1 (up to 8: x0-x7)
 *   result      rax                         x0
 *   return to 0 0 pushed at [rsp]           x30 (the link register) = 0
 *   no restart  orig_rax = -1 in the call   syscallno = -1 (NT_ARM_SYSTEM_CALL)
 *               regs                        during the calls
 *   restart of  the saved rax/orig_rax:     prepared by the kernel before the
 *   the call    the kernel restarts it at   stop (pc back on the svc, x0 =
 *   it was in   the detach                  orig_x0): the saved registers
 *                                           re-issue it; a restart block (a
 *                                           relative nanosleep, poll with a
 *                                           timeout) starts over in full
 *   FP/vector   NT_X86_XSTATE, else         NT_PRFPREG, and NT_ARM_SVE when
 *               NT_PRFPREG                  the thread has live SVE state
 *   also        -                           PSTATE.BTYPE cleared for the call
 *
 * x86-64 is run by the tests; aarch64 is compiled (make cross-aarch64),
 * not run: docs/attach.md says what is verified where.
 */


/* Read (set 0) or write one register set of *len bytes; a read sets *len
 * to what the kernel gave. */
static int gp_ptcall_regset(pid_t tid, int set, unsigned type, void *buf, size_t *len)
{
	struct iovec io = {buf, *len};
	if (ptrace(set ? PTRACE_SETREGSET : PTRACE_GETREGSET, tid, (void *)(uintptr_t)type, &io))
		return -errno;
	*len = io.iov_len;
	return 0;
}

/* Read a register set whose size varies by machine into buf (cap bytes):
 * one that fills buf to the brim may have been cut short and would be
 * restored half, so it is refused (-E2BIG). */
static int gp_ptcall_regset_var(pid_t tid, unsigned type, void *buf, size_t cap, size_t *len)
{
	*len = cap;
	int rc = gp_ptcall_regset(tid, 0, type, buf, len);
	return rc ? rc : *len >= cap ? -E2BIG : 0;
}

static int gp_ptcall_getregs(pid_t tid, struct user_regs_struct *r)
{
	struct iovec io = {r, sizeof *r};
	return ptrace(PTRACE_GETREGSET, tid, (void *)(uintptr_t)NT_PRSTATUS, &io) ? -errno : 0;
}

static int gp_ptcall_setregs(pid_t tid, struct user_regs_struct *r)
{
	struct iovec io = {r, sizeof *r};
	return ptrace(PTRACE_SETREGSET, tid, (void *)(uintptr_t)NT_PRSTATUS, &io) ? -errno : 0;
}

#if defined(__x86_64__)

static void gp_ptcall_set_call(struct user_regs_struct *r, uintptr_t fn, uintptr_t a0, uintptr_t a1, uintptr_t sp)
{
	r->rip = fn;
	r->rdi = a0;
	r->rsi = a1;
	r->rax = 0;
	r->rsp = sp;      /* holds the return address 0 (gp_ptcall_frame) */
	r->orig_rax = -1; /* not in a system call: no restart logic on resume */
}

static uintptr_t gp_ptcall_ret(const struct user_regs_struct *r)
{
	return r->rax;
}

static uintptr_t gp_ptcall_pc(const struct user_regs_struct *r)
{
	return r->rip;
}

static uintptr_t gp_ptcall_sp(const struct user_regs_struct *r)
{
	return r->rsp;
}

/* The frame at function entry: the return address 0 at *sp, sp + 8
 * 16-aligned (the psABI's rule at a call). */
static int gp_ptcall_frame(pid_t tid, uintptr_t *sp)
{
	uint64_t zero = 0;
	*sp = (*sp & ~(uintptr_t)15) - 8;
	return gp_ptcall_poke(tid, *sp, &zero, sizeof zero);
}

/* Nothing beyond orig_rax, which gp_ptcall_set_call sets. */
static int gp_ptcall_no_restart(struct gp_ptcall_thread *t)
{
	(void)t;
	return 0;
}

static int gp_ptcall_save_extra(struct gp_ptcall_thread *t)
{
	t->fpset = 1;
	int rc = gp_ptcall_regset_var(t->tid, NT_X86_XSTATE, t->fp, sizeof t->fp, &t->fplen);
	if (rc == -E2BIG)
		return rc;
	if (rc) {
		t->fpset = 0;
		return gp_ptcall_regset_var(t->tid, NT_PRFPREG, t->fp, sizeof t->fp, &t->fplen);
	}
	return 0;
}

static void gp_ptcall_restore_extra(struct gp_ptcall_thread *t)
{
	(void)gp_ptcall_regset(t->tid, 1, t->fpset ? NT_X86_XSTATE : NT_PRFPREG, t->fp, &t->fplen);
}

#elif defined(__aarch64__)

static void gp_ptcall_set_call(struct user_regs_struct *r, uintptr_t fn, uintptr_t a0, uintptr_t a1, uintptr_t sp)
{
	r->pc = fn;
	r->regs[0] = a0;
	r->regs[1] = a1;
	r->regs[30] = 0;             /* the link register: return to address 0 */
	r->sp = sp;
	r->pstate &= ~0xc00ull;      /* PSTATE.BTYPE: no branch-target check pending at fn */
}

static uintptr_t gp_ptcall_ret(const struct user_regs_struct *r)
{
	return r->regs[0];
}

static uintptr_t gp_ptcall_pc(const struct user_regs_struct *r)
{
	return r->pc;
}

static uintptr_t gp_ptcall_sp(const struct user_regs_struct *r)
{
	return r->sp;
}

/* The return address is in x30: the stack only needs its 16-byte
 * alignment (AAPCS64; no red zone on Linux). */
static int gp_ptcall_frame(pid_t tid, uintptr_t *sp)
{
	(void)tid;
	*sp &= ~(uintptr_t)15;
	return 0;
}

/* syscallno = -1: resuming at the call is not a return from a system call
 * (the kernel forgot it at the stop already; kept for older kernels). A
 * kernel without NT_ARM_SYSTEM_CALL (before 3.19) has nothing to forget. */
static int gp_ptcall_no_restart(struct gp_ptcall_thread *t)
{
	int none = -1;
	size_t len = sizeof none;
	if (t->have_syscallno)
		(void)gp_ptcall_regset(t->tid, 1, NT_ARM_SYSTEM_CALL, &none, &len);
	return 0;
}

static int gp_ptcall_save_extra(struct gp_ptcall_thread *t)
{
	int rc = gp_ptcall_regset_var(t->tid, NT_PRFPREG, t->fp, sizeof t->fp, &t->fplen);
	if (rc)
		return rc;
	/* no SVE (EINVAL, ENODEV): the FPSIMD set is all there is */
	rc = gp_ptcall_regset_var(t->tid, NT_ARM_SVE, t->sve, sizeof t->sve, &t->svelen);
	if (rc == -E2BIG)
		return rc; /* a vector length we cannot hold: do not touch the thread */
	const struct user_sve_header *h = (const void *)t->sve;
	t->sve_live = rc == 0 && t->svelen >= sizeof *h && (h->flags & SVE_PT_REGS_MASK) == SVE_PT_REGS_SVE;
	size_t len = sizeof t->syscallno;
	t->have_syscallno = gp_ptcall_regset(t->tid, 0, NT_ARM_SYSTEM_CALL, &t->syscallno, &len) == 0 &&
			    len == sizeof t->syscallno;
	return 0;
}

static void gp_ptcall_restore_extra(struct gp_ptcall_thread *t)
{
	(void)gp_ptcall_regset(t->tid, 1, NT_PRFPREG, t->fp, &t->fplen);
	if (t->sve_live) /* after the FPSIMD view: the SVE registers extend it */
		(void)gp_ptcall_regset(t->tid, 1, NT_ARM_SVE, t->sve, &t->svelen);
	if (t->have_syscallno) {
		size_t len = sizeof t->syscallno;
		(void)gp_ptcall_regset(t->tid, 1, NT_ARM_SYSTEM_CALL, &t->syscallno, &len);
	}
}

#endif /* the architecture */

/* ---- ptrace: one call in the stopped thread ------------------------------- */

int gp_ptcall_save(struct gp_ptcall_thread *t)
{
	int rc = gp_ptcall_getregs(t->tid, &t->regs);
	return rc ? rc : gp_ptcall_save_extra(t);
}

uintptr_t gp_ptcall_stack(const struct gp_ptcall_thread *t)
{
	return gp_ptcall_sp(&t->regs);
}

int gp_ptcall_poke(pid_t tid, uintptr_t addr, const void *buf, size_t len)
{
	struct iovec l = {(void *)buf, len}, rm = {(void *)addr, len};
	if (process_vm_writev(tid, &l, 1, &rm, 1, 0) == (ssize_t)len)
		return 0;
	/* /proc/PID/mem writes through read-only mappings and works where
	 * process_vm_writev is blocked (the stack is writable anyway) */
	char p[64];
	snprintf(p, sizeof p, "/proc/%ld/mem", (long)tid);
	int fd = open(p, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = pwrite(fd, buf, len, (off_t)addr);
	close(fd);
	return n == (ssize_t)len ? 0 : -EIO;
}

/* Wait for the thread's next stop. Returns the stop signal, 0 for a
 * ptrace event stop, or -1 when the thread exited (t->gone). */
int gp_ptcall_wait(struct gp_ptcall_thread *t)
{
	int st;
	for (;;) {
		pid_t r = waitpid(t->tid, &st, __WALL);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 || WIFEXITED(st) || WIFSIGNALED(st)) {
			t->gone = 1;
			return -1;
		}
		if (WIFSTOPPED(st))
			return (st >> 16) ? 0 : WSTOPSIG(st);
	}
}

/* Run fn(a0, a1) in the stopped thread; *ret gets its return value. The
 * stack below the red zone holds data (already written by the caller at
 * [sp, ...)); the frame (gp_ptcall_frame) goes below it. */
int gp_ptcall_run(struct gp_ptcall_thread *t, uintptr_t fn, uintptr_t a0, uintptr_t a1, uintptr_t sp, uintptr_t *ret)
{
	int rc = gp_ptcall_frame(t->tid, &sp);
	if (rc)
		return rc;
	struct user_regs_struct r = t->regs;
	gp_ptcall_set_call(&r, fn, a0, a1, sp);
	if ((rc = gp_ptcall_setregs(t->tid, &r)) || (rc = gp_ptcall_no_restart(t)))
		return rc;
	for (;;) {
		if (ptrace(PTRACE_CONT, t->tid, NULL, NULL))
			return -errno;
		int sig = gp_ptcall_wait(t);
		if (sig < 0)
			return -ESRCH;
		if (sig == 0)
			continue; /* a late interrupt stop */
		if ((sig == SIGSEGV || sig == SIGBUS) && gp_ptcall_getregs(t->tid, &r) == 0 && gp_ptcall_pc(&r) == 0) {
			*ret = gp_ptcall_ret(&r);
			return 0;
		}
		if (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE || sig == SIGABRT)
			return -EFAULT; /* the call itself crashed: leave it to the restore */
		t->pending_sig = sig; /* someone else's signal: delivered at detach */
	}
}

void gp_ptcall_restore(struct gp_ptcall_thread *t)
{
	gp_ptcall_restore_extra(t);
	gp_ptcall_setregs(t->tid, &t->regs);
}

#endif /* x86-64 or aarch64 */
