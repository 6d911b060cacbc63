#include "lib/lockfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "lib/error.h"

/* The process holding a flock on the file open as fd, from /proc/locks; 0 if unknown. */
static pid_t flock_holder(int fd)
{
	struct stat st;
	char line[256];
	pid_t found = 0;
	FILE *f;

	if (fstat(fd, &st) || !(f = fopen("/proc/locks", "re")))
		return 0;
	/* "2: FLOCK  ADVISORY  WRITE 31641 fe:00:10954638 0 EOF"; waiters have "->". */
	while (!found && fgets(line, sizeof(line), f)) {
		char kind[16], mode[16], rw[16];
		unsigned maj, min;
		unsigned long long ino;
		int pid;

		if (strstr(line, "->") ||
		    sscanf(line, "%*d: %15s %15s %15s %d %x:%x:%llu", kind, mode, rw, &pid,
			   &maj, &min, &ino) != 7)
			continue;
		if (!strcmp(kind, "FLOCK") && maj == major(st.st_dev) && min == minor(st.st_dev) &&
		    ino == (unsigned long long)st.st_ino && pid > 0)
			found = pid;
	}
	fclose(f);
	return found;
}

enum lock_result lock_file_take(const char *path, int *fd, pid_t *holder)
{
	struct stat st;
	char pid[32];
	int n;

	*holder = 0;
	/* A link planted as the lock file would have its target truncated. */
	*fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
	if (*fd < 0) {
		if (errno == ELOOP)
			return error("%s is a symbolic link: zlb follows no link in a batch "
				     "directory; remove it (the lock is made afresh)", path);
		return error_errno("cannot open the lock file %s", path);
	}
	if (fstat(*fd, &st) || !S_ISREG(st.st_mode)) {
		close(*fd);
		*fd = -1;
		return error("%s is not a regular file; remove it (the lock is made afresh)", path);
	}
	if (flock(*fd, LOCK_EX | LOCK_NB)) {
		int e = errno;

		if (e == EWOULDBLOCK)
			*holder = flock_holder(*fd);
		close(*fd);
		*fd = -1;
		if (e != EWOULDBLOCK) {
			errno = e;
			return error_errno("cannot lock %s", path);
		}
		return LOCK_HELD;
	}
	n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (ftruncate(*fd, 0) == 0)
		(void)!pwrite(*fd, pid, (size_t)n, 0);
	return LOCK_TAKEN;
}
