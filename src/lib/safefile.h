/*
 * Opening the files of a directory zlb does not trust. A run or batch
 * directory can be copied from anywhere, and what it holds is data: a
 * name read from one of its files is never taken as a path without
 * rel_path_is_safe(), and nothing below it is followed through a symbolic
 * link (a planted `results.jsonl -> /etc/shadow` would otherwise be read,
 * and its lines quoted in warnings). A FIFO, a device or a directory
 * where a file belongs is refused without blocking.
 *
 * The directory named by the user (a run given on the command line, a
 * --runs-dir) may itself be reached through links: that is the user's
 * choice. Only what lies below it is checked.
 */
#ifndef ZLB_SAFEFILE_H
#define ZLB_SAFEFILE_H

#include <stddef.h>

#include "lib/strbuf.h"

/*
 * Does rel stay inside the directory it is taken from? Not empty, not
 * absolute, no empty, "." or ".." component, no byte below 0x20, at most
 * 4096 bytes.
 */
int rel_path_is_safe(const char *rel);

/*
 * openat(dirfd, rel, flags) following no symbolic link on the way, the
 * last component included: -1 with errno ELOOP or ENOTDIR when one is met,
 * EINVAL when rel is not rel_path_is_safe(). flags as for openat(2)
 * (O_CLOEXEC and O_NOFOLLOW are added). dirfd may be AT_FDCWD.
 */
int open_beneath(int dirfd, const char *rel, int flags);

/*
 * Open the regular file at path for reading (O_RDONLY | O_CLOEXEC), its
 * last component not a symbolic link; a FIFO is not waited on. 0 with *fd
 * set, 1 when it does not exist (nothing said), -1 with error() saying
 * what is there instead (a link, a FIFO, a directory, ...) and the fix.
 */
int open_regular(const char *path, int *fd);

/* As open_regular(), for rel below dirfd through open_beneath(); shown names path. */
int open_regular_at(int dirfd, const char *rel, const char *shown, int *fd);

/*
 * Read the regular file at path (as open_regular()) into out, at most
 * limit bytes (0: no limit). 0, 1 when absent, -1 with error().
 */
int read_regular(const char *path, size_t limit, struct strbuf *out);

/*
 * Read a file the user named (a link is followed: the name is the user's
 * choice) into out, at most limit bytes (0: none), refusing without
 * blocking what is not a regular file. what names it ("the ops file").
 * 0, 1 when absent (nothing said), -1 with error().
 */
int read_user_file(const char *path, const char *what, size_t limit, struct strbuf *out);

/* Read an open file to its end into out (at most limit bytes, 0: none). 0 or -1 (errno). */
int read_fd(int fd, size_t limit, struct strbuf *out);

#endif
