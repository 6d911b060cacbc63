/*
 * A process and everything it started. zlb's runs and batches end every
 * process they started, also those that left the process group or the
 * session (setsid, a double-forked daemon) and so escape a signal to the
 * group: found through /proc by their parent links.
 *
 * An escapee whose parent dies is reparented to the nearest "subreaper"
 * among its ancestors (PR_SET_CHILD_SUBREAPER), else to init, where it
 * would no longer be anyone's descendant. zlb run and zlb batch become
 * subreapers before they start anything, so what a test leaves behind
 * stays below them until they end it.
 */
#ifndef ZLB_PROC_TREE_H
#define ZLB_PROC_TREE_H

#include <stddef.h>
#include <sys/types.h>

/* Become a subreaper (see above). Returns 0, or -1 with error(). */
int proc_become_subreaper(void);

/* A set of process ids. */
struct pid_set {
	pid_t *v;
	size_t nr, alloc;
};
#define PID_SET_INIT { NULL, 0, 0 }

void pid_set_add(struct pid_set *s, pid_t pid);
int pid_set_has(const struct pid_set *s, pid_t pid);
void pid_set_clear(struct pid_set *s);

/*
 * Kill every descendant of root (root itself is left alone) with SIGKILL,
 * and every process group one of them is in (other than the caller's and
 * root's own): a group member reparented to init is no descendant any
 * more but still pytest's. The tree is read again until no descendant is
 * alive, so a process that forked meanwhile is caught too; after about two
 * seconds of processes that do not die (stuck in the kernel) it gives up.
 * Descendants that are the caller's own children (it is root, or they were
 * reparented to it) are reaped. Each process signalled is added to killed
 * (may be NULL): the caller reaps those that become its children later
 * (proc_reap). Returns the number of processes signalled (each counted once).
 */
size_t proc_kill_tree(pid_t root, struct pid_set *killed);

/*
 * Reap, without waiting, every process of s that is a zombie child of the
 * caller, and drop from s those that are gone. A process killed below a
 * child that was then killed too is reparented to a subreaper caller as a
 * zombie: it is reaped here instead of staying in the process table.
 */
void proc_reap(struct pid_set *s);

#endif
