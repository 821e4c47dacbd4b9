/*
 * cli.h — internal interface between the parts of the `gpuphase` command
 * (cli/): the verb entry points called by main() in gpuphase.c (record.c,
 * trigger.c, attach.c, report.c), the help texts (help.c), the ELF
 * inspection used by `record` to warn before running and by `attach` to find
 * functions (elfscan.c), and finding programs and files (locate.c). Calls go
 * one way: gpuphase.c -> verbs -> help.c, locate.c, elfscan.c (leaves;
 * help.c calls locate.c only); record.c and attach.c also run the report
 * through report.c (gp_report_run). attach.c reads its target through
 * target.h and makes the target's thread call functions through ptcall.h;
 * report.c and attach.c read gpuphase-report's option table
 * (report/options.h).
 *
 * The command is an ordinary single-threaded program: verbs return the exit
 * status main() returns; every message goes to stderr prefixed "gpuphase: ",
 * except the output a verb exists to print (help, version, trigger reply).
 */
#ifndef GP_CLI_H
#define GP_CLI_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define GP_CLI_VERSION "0.1.0"

/* Verbs: argv[0] is the verb name; return the process exit status. */
int gp_record_main(int argc, char **argv);
int gp_trigger_main(int argc, char **argv);
int gp_trigger_stop_main(int argc, char **argv); /* `gpuphase stop PID` */
/* `stop` for record: ask pid's library to finish its trace (control
 * directory ctl, or pid's own, as `stop` finds it), waiting at most
 * timeout_ms for the reply. 0 with the library's reply in reply, or -errno
 * with the reason there; prints nothing. */
/* record_wait.c: the signals `record` takes while CMD runs (blocked before
 * the fork), the terminal fd when record is its foreground job (then CMD
 * gets a process group of its own) or -1, and the wait itself: 0 with
 * CMD's wait status, or -errno. */
void gp_record_wait_signals(sigset_t *set);
int gp_record_wait_terminal(void);
int gp_record_wait(pid_t pid, int tty, const char *ctl, const char *prog, int *status);
/* The control socket (control.c). May we talk to sock in dir, the socket of
 * process pid? 0, or -errno (-EPERM: why says why). */
int gp_control_check_place(const char *dir, const char *sock, long pid, char *why, size_t n);
/* Send req, read the reply (one line; whole: until the peer closes) within
 * timeout_ms. 0, or -errno with *stage naming the step that failed (compared
 * by address with the two below). */
int gp_control_talk(const char *sock, long pid, const char *req, int timeout_ms, int whole, char *reply, size_t len,
		    const char **stage);
extern const char gp_control_stage_connect[], gp_control_stage_peer_check[];
int gp_trigger_stop_quietly(long pid, const char *ctl, int timeout_ms, char *reply, size_t len);
int gp_attach_main(int argc, char **argv);
/* report, diff, export: hand over to gpuphase-report (report.c; never
 * returns on success). */
int gp_report_exec(const char *verb, int argc, char **argv);
/* Run gpuphase-report OPTS... TRACES... as a child, its output on our
 * stdout (record --report, attach). Returns its exit status (0 ok, 3 a
 * truncated trace, ...), or -1 when it could not be run (one
 * "gpuphase: WHO: ..." line said why). */
int gp_report_run(const char *who, char *const *opts, size_t nopts, char *const *traces, size_t ntraces);

/* Help texts (help.c). verb NULL = the top-level help. Returns 0 if the verb
 * is known, -1 otherwise. */
int gp_help_print(const char *verb);
/* One-line usage for error messages, e.g. "usage: gpuphase record [options] -- CMD [ARGS...]". */
const char *gp_help_usage(const char *verb);

/* Finding programs and files (locate.c). */
/* Directory holding this executable (from /proc/self/exe), no trailing '/'.
 * Returns 0 or -errno. */
int gp_locate_self_dir(char *buf, size_t len);
/* Find an executable: if name contains '/', use it; else search PATH.
 * Writes the path into buf; returns 0, -ENOENT, -EACCES or -ENAMETOOLONG. */
int gp_locate_which(const char *name, char *buf, size_t len);
/* Find a gpuphase component shipped next to this binary: first
 * <selfdir>/<rel>, then (if path_name != NULL) in PATH. */
int gp_locate_component(const char *rel, const char *path_name, char *buf, size_t len);
/* Run the component name (next to this binary, else in PATH) with argv[1..]
 * (argv[0] is replaced by its path). Returns only on failure: 127 (not
 * found; one line said so) or 126 (exec failed). */
int gp_locate_exec(const char *name, int argc, char **argv);

/* ELF inspection (elfscan.c). */
enum gp_elf_cudart {
	GP_ELF_NOT_ELF = 0,      /* a script or other non-ELF file            */
	GP_ELF_NO_CUDART = 1,    /* ELF, no sign of the CUDA runtime           */
	GP_ELF_CUDART_SHARED = 2,/* DT_NEEDED libcudart.so.N: hooks can work  */
	GP_ELF_CUDART_STATIC = 3 /* cudart linked in: injection only          */
};
struct gp_elf_info {
	enum gp_elf_cudart cudart;
	int is_static_exe;        /* no PT_INTERP/PT_DYNAMIC: LD_PRELOAD ignored */
	char needed_cudart[64];   /* the DT_NEEDED name when CUDART_SHARED    */
};
/* Inspect the ELF file at path. Returns 0 and fills *out (GP_ELF_NOT_ELF for
 * files that are not 64-bit ELF), or -errno if the file cannot be read, or
 * -EINVAL with a message in err for a malformed ELF. Reads every offset with
 * bounds checks; never crashes on a hostile file. */
int gp_elfscan_inspect(const char *path, struct gp_elf_info *out, char *err, size_t errlen);
/* The value (address relative to the load base) of the defined function
 * name in the dynamic symbol table of the 64-bit ELF file at path. Returns
 * 0, -ENOENT when it has no such function, -EINVAL for a file that is not
 * 64-bit ELF or is malformed, or -errno if it cannot be read. */
int gp_elfscan_dynsym(const char *path, const char *name, uint64_t *value);

#endif /* GP_CLI_H */
