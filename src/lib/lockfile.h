/*
 * A lock file held with flock(2) for as long as a process works on a
 * directory (a batch's .lock): it goes away with the process, however it
 * ends, so a lock is never stale. The file holds the holder's pid for
 * people to read; who holds the lock is asked of the kernel
 * (/proc/locks), since the pid in the file can be a previous holder's
 * (a session that ended, or one still writing its own).
 */
#ifndef ZLB_LOCKFILE_H
#define ZLB_LOCKFILE_H

#include <sys/types.h>

enum lock_result {
	LOCK_TAKEN = 0,
	LOCK_HELD = 1,     /* another process holds it: *holder says which (0: unknown) */
	LOCK_ERROR = -1,   /* cannot open it (error() said why: a link, not a file, ...) */
};

/*
 * Open (create) path without following a link, and take its lock without
 * waiting. LOCK_TAKEN with *fd open (close it to release), and this
 * process's pid written in the file; LOCK_HELD with *fd -1 and *holder;
 * LOCK_ERROR with error().
 */
enum lock_result lock_file_take(const char *path, int *fd, pid_t *holder);

#endif
