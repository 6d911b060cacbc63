#include "lib/safefile.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/error.h"

#define REL_PATH_MAX 4096

int rel_path_is_safe(const char *rel)
{
	const char *p = rel;
	size_t n = strlen(rel);

	if (!n || n > REL_PATH_MAX || rel[0] == '/')
		return 0;
	for (const char *c = rel; *c; c++)
		if ((unsigned char)*c < 0x20)
			return 0;
	while (*p) {
		size_t len = strcspn(p, "/");

		if (!len || (len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.'))
			return 0;
		p += len;
		if (*p == '/' && !*++p)
			return 0;	/* a trailing slash is an empty last component */
	}
	return 1;
}

/*
 * Component by component, each opened with O_NOFOLLOW relative to the
 * one before: a link anywhere stops the walk (ELOOP, or ENOTDIR for a link
 * where a directory is expected), and ".." was refused above, so the walk
 * cannot leave dirfd. (openat2's RESOLVE_NO_SYMLINKS does the same in one
 * call on Linux 5.6 and later; this works on every kernel zlb runs on.)
 */
int open_beneath(int dirfd, const char *rel, int flags)
{
	char comp[REL_PATH_MAX + 1];
	const char *p = rel;
	int cur = dirfd;

	if (!rel_path_is_safe(rel)) {
		errno = EINVAL;
		return -1;
	}
	for (;;) {
		size_t len = strcspn(p, "/");
		int last = !p[len], next, saved;

		memcpy(comp, p, len);
		comp[len] = '\0';
		next = openat(cur, comp, last ? flags | O_CLOEXEC | O_NOFOLLOW
					      : O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW,
			      0644);
		saved = errno;
		if (cur != dirfd)
			close(cur);
		errno = saved;
		if (next < 0 || last)
			return next;
		cur = next;
		p += len + 1;
	}
}

/* What is at a path instead of a regular file, for the sentence. */
static const char *kind_of(mode_t mode)
{
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISSOCK(mode))
		return "a socket";
	if (S_ISCHR(mode) || S_ISBLK(mode))
		return "a device";
	if (S_ISLNK(mode))
		return "a symbolic link";
	return "not a regular file";
}

/* fd (opened O_NONBLOCK) as a blocking descriptor of a regular file, or an error. */
static int settle(int fd, const char *shown, int *out)
{
	struct stat st;
	int fl;

	if (fstat(fd, &st)) {
		int r = error_errno("cannot read '%s'", shown);
		close(fd);
		return r;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return error("'%s' is %s, where zlb expects a regular file; remove it or put "
			     "the file itself there", shown, kind_of(st.st_mode));
	}
	fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	*out = fd;
	return 0;
}

/* The open failed: absent (1), or a sentence (-1) naming the component in the way. */
static int open_failed(int dirfd, const char *rel, const char *shown)
{
	struct strbuf prefix = STRBUF_INIT;
	const char *p = rel;
	int saved = errno, r = 0;

	if (saved == ENOENT)
		return 1;
	if (saved == EINVAL)
		return error("'%s' is not a path inside the directory (absolute, or through "
			     "'..'): refused", shown);
	if (saved != ELOOP && saved != ENOTDIR) {
		errno = saved;
		return error_errno("cannot read '%s'", shown);
	}
	/* Find the component in the way: a link, or a file where a directory belongs. */
	while (*p && !r) {
		size_t len = strcspn(p, "/");
		struct stat st;

		strbuf_add(&prefix, p, len);
		p += len;
		if (fstatat(dirfd, prefix.buf, &st, AT_SYMLINK_NOFOLLOW))
			break;
		if (S_ISLNK(st.st_mode))
			r = error("'%s'%s%s is a symbolic link: zlb follows no link inside a run "
				  "or batch directory; replace it with what it points to",
				  shown, *p ? ": its part " : "", *p ? prefix.buf : "");
		else if (*p && !S_ISDIR(st.st_mode))
			r = error("'%s': its part %s is not a directory", shown, prefix.buf);
		if (*p)
			strbuf_addch(&prefix, *p++);
	}
	strbuf_release(&prefix);
	if (!r) {
		errno = saved;
		r = error_errno("cannot read '%s'", shown);
	}
	return r;
}

int open_regular(const char *path, int *fd)
{
	int f = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	struct stat st;

	*fd = -1;
	if (f >= 0)
		return settle(f, path, fd);
	if (errno == ENOENT)
		return 1;
	/* O_NOFOLLOW concerns the last component only: the link is there. */
	if (errno == ELOOP && !lstat(path, &st) && S_ISLNK(st.st_mode))
		return error("'%s' is a symbolic link: zlb follows no link inside a run or "
			     "batch directory; replace it with the file it points to", path);
	return error_errno("cannot read '%s'", path);
}

int open_regular_at(int dirfd, const char *rel, const char *shown, int *fd)
{
	int f = open_beneath(dirfd, rel, O_RDONLY | O_NONBLOCK);

	*fd = -1;
	if (f < 0)
		return open_failed(dirfd, rel, shown);
	return settle(f, shown, fd);
}

int read_fd(int fd, size_t limit, struct strbuf *out)
{
	char chunk[65536];
	size_t total = 0;

	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (!n)
			return 0;
		total += (size_t)n;
		if (limit && total > limit) {
			errno = EFBIG;
			return -1;
		}
		strbuf_add(out, chunk, (size_t)n);
	}
}

int read_regular(const char *path, size_t limit, struct strbuf *out)
{
	int fd, r = open_regular(path, &fd);

	if (r)
		return r;
	if (read_fd(fd, limit, out)) {
		r = error_errno("cannot read '%s'", path);
		close(fd);
		return r;
	}
	close(fd);
	return 0;
}

int read_user_file(const char *path, const char *what, size_t limit, struct strbuf *out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), r;
	struct stat st;

	if (fd < 0)
		return errno == ENOENT ? 1 : error_errno("cannot read %s '%s'", what, path);
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return error("%s '%s' is %s, not a file; give the path of the file itself", what,
			     path, kind_of(st.st_mode));
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	r = read_fd(fd, limit, out);
	close(fd);
	if (r)
		return errno == EFBIG ? error("%s '%s' is larger than %zu MB: it cannot be what zlb "
					      "expects there", what, path, limit >> 20)
				      : error_errno("cannot read %s '%s'", what, path);
	return 0;
}
