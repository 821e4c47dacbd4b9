/*
 * ptcall.h — calling a function inside a thread of another process that is
 * stopped under ptrace (ptcall.c), for `gpuphase attach` (attach.c). x86-64
 * and aarch64 only: elsewhere this header declares nothing.
 *
 * Single-threaded use: the caller seizes the thread (PTRACE_SEIZE), stops it
 * (PTRACE_INTERRUPT, gp_ptcall_wait), then gp_ptcall_save, any number of
 * gp_ptcall_run, and gp_ptcall_restore before it detaches (delivering
 * pending_sig). Errors are -errno; -ESRCH means the thread exited (gone).
 */
#ifndef GP_PTCALL_H
#define GP_PTCALL_H

#if defined(__x86_64__) || defined(__aarch64__)

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#define GP_PTCALL_FP_MAX 16384 /* x86 XSTATE with AMX tiles is ~11 KiB */

/* One stopped thread and what was saved of it (large: allocate it). */
struct gp_ptcall_thread {
	pid_t tid;
	struct user_regs_struct regs;    /* saved at the stop */
	uint8_t fp[GP_PTCALL_FP_MAX];    /* saved FP/vector state */
	size_t fplen;
	int fpset;                       /* x86: NT_X86_XSTATE (else NT_PRFPREG) */
#if defined(__aarch64__)
	uint8_t sve[GP_PTCALL_FP_MAX];   /* NT_ARM_SVE, when sve_live */
	size_t svelen;
	int sve_live;
	int syscallno, have_syscallno;   /* NT_ARM_SYSTEM_CALL at the stop */
#endif
	int pending_sig;                 /* a signal that arrived meanwhile */
	int gone;                        /* the thread (process) exited     */
};

/* Save the thread's registers and FP/vector state (at the stop, before any
 * call). 0, or -errno (-E2BIG: a state too large to restore whole). */
int gp_ptcall_save(struct gp_ptcall_thread *t);
/* The stack pointer saved by gp_ptcall_save. */
uintptr_t gp_ptcall_stack(const struct gp_ptcall_thread *t);
/* Write len bytes at addr in the process of thread tid. 0 or -errno. */
int gp_ptcall_poke(pid_t tid, uintptr_t addr, const void *buf, size_t len);
/* Wait for the thread's next stop: the stop signal, 0 for a ptrace event
 * stop, -1 when the thread exited (t->gone set). */
int gp_ptcall_wait(struct gp_ptcall_thread *t);
/* Run fn(a0, a1) in the thread, its frame below sp (data the caller wrote
 * lies at [sp, ...)); *ret gets fn's return value. 0, -ESRCH (exited),
 * -EFAULT (the call crashed: restore), or -errno from ptrace. A signal for
 * the thread meanwhile is kept in pending_sig. */
int gp_ptcall_run(struct gp_ptcall_thread *t, uintptr_t fn, uintptr_t a0, uintptr_t a1, uintptr_t sp, uintptr_t *ret);
/* Put back what gp_ptcall_save saved. */
void gp_ptcall_restore(struct gp_ptcall_thread *t);

#endif /* x86-64 or aarch64 */

#endif /* GP_PTCALL_H */
