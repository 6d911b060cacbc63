/*
 * Child processes (after git's run-command.h), with the rules zlb lives by:
 * no shell ever (argv[0] is an absolute path, execve directly), each child
 * in its own process group so a whole tree can be signalled, and a child
 * that outlives zlb is told to stop (PR_SET_PDEATHSIG).
 */
#ifndef ZLB_PROC_H
#define ZLB_PROC_H

#include <signal.h>
#include <sys/types.h>

#include "lib/strbuf.h"

struct child {
	char *const *argv;     /* argv[0]: absolute path of the program */
	char *const *envp;     /* full environment of the child */
	const char *dir;       /* working directory, or NULL */
	unsigned new_pgroup : 1;  /* child leads its own process group */
	unsigned capture : 1;     /* stdout+stderr into one pipe: out_fd */
	unsigned redirect : 1;    /* stdout+stderr onto redirect_fd (not with capture) */
	/*
	 * The caller is a subreaper (lib/proc_tree.h) and every other process
	 * below it is this child's: child_pump() may kill them all when they
	 * hold the child's pipe after it exited.
	 */
	unsigned owns_descendants : 1;
	int redirect_fd;          /* an open file the child writes to (e.g. a log) */
	pid_t pid;
	int out_fd;            /* read end when capture, else -1 */
	int exited;            /* set once reaped */
	int wait_status;       /* raw status from waitpid */
};

/*
 * Start the child. Returns 0, or -1 with error() saying why; an exec that
 * fails in the child (missing program, no permission) is reported here, in
 * the parent, with its errno, and no process is left behind.
 */
int child_start(struct child *c);

/* Reap the child (blocking unless nohang). 1 reaped, 0 still running, -1 error. */
int child_reap(struct child *c, int nohang);

/* Signal the child's whole process group (or just it without one). */
int child_kill(struct child *c, int sig);

/*
 * A descriptor that polls readable when pid exits (Linux 5.3+), so a
 * waiting loop wakes on the exit itself instead of on its next timeout.
 * -1 where the kernel has none: callers then poll every PROC_REAP_POLL_MS.
 */
int proc_exit_fd(pid_t pid);
#define PROC_REAP_POLL_MS 100

/*
 * The exit of a reaped child as one number: its exit code, or 128+signal.
 */
int child_exit_code(const struct child *c);

/* Describe the reaped child's end: "exit 1", "killed by SIGSEGV". */
void child_describe_end(const struct child *c, struct strbuf *out);

/*
 * Run a short command and capture its output (stdout+stderr), killing it
 * after timeout_ms. Returns the child's exit code (>=0), or -1 with error()
 * on failure to start or on timeout.
 */
int run_capture(char *const *argv, char *const *envp, const char *dir,
		int timeout_ms, struct strbuf *out);

/*
 * Interrupts: install handlers for SIGINT, SIGTERM and SIGHUP that only
 * note the signal (self-pipe), so the caller can stop its children in
 * order and keep what was written. interrupt_pending() returns the first
 * signal received, or 0.
 */
int interrupts_install(void);
void interrupts_restore(void);
int interrupt_pending(void);
int interrupt_fd(void);

/* Receives the child's output, line by line. */
struct pump_ops {
	/* A complete line (no '\n'). `shown` bytes of it already went to on_partial. */
	void (*on_line)(void *ctx, const char *line, size_t len, size_t shown);
	/*
	 * Part of a line that has waited a while without its newline (a progress
	 * dot, a prompt). Returns how many bytes it showed: 0 to wait for the
	 * whole line instead.
	 */
	size_t (*on_partial)(void *ctx, const char *data, size_t len);
	/* An interrupt arrived; called once with the signal number. */
	void (*on_interrupt)(void *ctx, int sig);
};

/*
 * Feed the captured output of a started child to ops until it exits and
 * its pipe is closed, then reap it. On an interrupt the child's group gets
 * SIGINT, then SIGTERM after grace_ms, then SIGKILL after another
 * grace_ms. Once the child has exited, processes it left holding the pipe
 * get a moment (2 s) to close it, then SIGKILL (its group, and with
 * owns_descendants every process below the caller, which reaches those
 * that left the group), and after another moment the pipe is closed
 * whoever still holds it: the pump always ends a few seconds after the
 * child. Returns 0 (child reaped), or -1 on an internal error.
 */
int child_pump(struct child *c, const struct pump_ops *ops, void *ctx, int grace_ms);

#endif
