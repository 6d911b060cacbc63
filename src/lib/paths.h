/*
 * Path helpers. zlb never trusts a name as a path: operator names become
 * directory names only after name_is_safe() says they cannot escape.
 */
#ifndef ZLB_PATHS_H
#define ZLB_PATHS_H

#include <sys/types.h>

#include "lib/strbuf.h"

int is_dir(const char *path);
int is_file(const char *path);
int is_executable(const char *path);

/* "a" + "b" -> "a/b" (no doubled slash). Fresh allocation. */
char *path_join(const char *a, const char *b);
/* Absolute, '.'/'..'-free form of path (which need not exist). Fresh allocation. */
char *path_absolute(const char *path);
/* Directory part of path ("." when there is none). Fresh allocation. */
char *path_dirname(const char *path);
/* Last component. Points into path. */
const char *path_basename(const char *path);

/* The longest name name_is_safe() accepts, in bytes. */
#define NAME_MAX_BYTES 200

/*
 * Is name usable as one path component chosen from user input?
 * Letters, digits, '_', '-', '.', '+' and '@' only; no leading '.', not empty,
 * at most NAME_MAX_BYTES. So '/', '..', spaces and control bytes are all refused.
 */
int name_is_safe(const char *name);

/* Directory holding the running executable (from /proc/self/exe). */
char *self_exe_dir(void);

/*
 * Resolve a program name the way execvp would, without a shell:
 * a name containing '/' is taken as a path; otherwise each $PATH entry.
 * Returns a fresh absolute path, or NULL.
 */
char *find_program(const char *name);

/* mkdir -p. Returns 0 or error(). */
int mkdir_p(const char *path, int mode);

/*
 * Write data to path atomically: a temporary file beside it (an
 * unpredictable name, created exclusively, mode 0644 less umask), fsync,
 * rename. A reader sees the old or the new content, never a torn file; a
 * link planted at path or at a temporary name is replaced, never written
 * through.
 */
int write_file_atomic(const char *path, const char *data, size_t len);

/*
 * The process's umask, read without changing it (/proc/self/status; 022
 * where that cannot be read): the mode bits a file made with mkdtemp or
 * mkstemp (0700, 0600) is given back to match what open/mkdir would make.
 */
mode_t process_umask(void);

/* Remove a directory tree (no symlink following). Returns 0 or -1. */
int remove_tree(const char *path);

struct strvec;

/*
 * Push dir/<name> for every directory directly below dir whose name does
 * not start with '.', sorted. An unreadable dir adds nothing: callers that
 * walk run trees treat it as holding no runs.
 */
void list_subdirs(const char *dir, struct strvec *out);

#endif
