#include "lib/paths.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/strvec.h"

int is_dir(const char *path)
{
	struct stat st;
	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

int is_file(const char *path)
{
	struct stat st;
	return !stat(path, &st) && S_ISREG(st.st_mode);
}

int is_executable(const char *path)
{
	return is_file(path) && !access(path, X_OK);
}

char *path_join(const char *a, const char *b)
{
	size_t la = strlen(a);

	if (!la)
		return xstrdup(b);
	if (a[la - 1] == '/')
		return xstrfmt("%s%s", a, b);
	return xstrfmt("%s/%s", a, b);
}

char *path_absolute(const char *path)
{
	struct strvec parts = STRVEC_INIT, kept = STRVEC_INIT;
	struct strbuf out = STRBUF_INIT;

	if (path[0] != '/') {
		char cwd[PATH_MAX];
		if (!getcwd(cwd, sizeof(cwd)))
			strcpy(cwd, "/");
		strvec_split(&parts, cwd, "/");
	}
	strvec_split(&parts, path, "/");
	for (size_t i = 0; i < parts.nr; i++) {
		if (!strcmp(parts.v[i], "."))
			continue;
		if (!strcmp(parts.v[i], "..")) {
			strvec_pop(&kept);
			continue;
		}
		strvec_push(&kept, parts.v[i]);
	}
	for (size_t i = 0; i < kept.nr; i++)
		strbuf_addf(&out, "/%s", kept.v[i]);
	if (!out.len)
		strbuf_addch(&out, '/');
	strvec_clear(&parts);
	strvec_clear(&kept);
	return strbuf_detach(&out, NULL);
}

char *path_dirname(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return xstrdup(".");
	if (slash == path)
		return xstrdup("/");
	return xstrndup(path, (size_t)(slash - path));
}

const char *path_basename(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

int name_is_safe(const char *name)
{
	size_t n = strlen(name);

	if (!n || n > NAME_MAX_BYTES || name[0] == '.')
		return 0;
	for (const char *p = name; *p; p++) {
		unsigned char c = (unsigned char)*p;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || strchr("_-.+@", c))
			continue;
		return 0;
	}
	return !strstr(name, "..");
}

char *self_exe_dir(void)
{
	char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);

	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	return path_dirname(buf);
}

char *find_program(const char *name)
{
	const char *path = getenv("PATH");
	struct strvec dirs = STRVEC_INIT;
	char *found = NULL;

	if (!*name)
		return NULL;
	if (strchr(name, '/'))
		return is_executable(name) ? path_absolute(name) : NULL;
	strvec_split(&dirs, path ? path : "/usr/local/bin:/usr/bin:/bin", ":");
	for (size_t i = 0; i < dirs.nr && !found; i++) {
		char *cand = path_join(dirs.v[i], name);
		if (is_executable(cand))
			found = path_absolute(cand);
		free(cand);
	}
	strvec_clear(&dirs);
	return found;
}

int mkdir_p(const char *path, int mode)
{
	char *copy = xstrdup(path);

	for (char *p = copy + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(copy, (mode_t)mode) && errno != EEXIST) {
			int r = error_errno("cannot create directory '%s'", copy);
			free(copy);
			return r;
		}
		*p = '/';
	}
	if (mkdir(copy, (mode_t)mode) && errno != EEXIST) {
		int r = error_errno("cannot create directory '%s'", copy);
		free(copy);
		return r;
	}
	/* EEXIST says a name is taken, not that a directory took it. */
	if (!is_dir(copy)) {
		int r = error("cannot create directory '%s': a file of that name is in the way",
			      copy);
		free(copy);
		return r;
	}
	free(copy);
	return 0;
}

/*
 * Create a temporary file beside path: an unpredictable name, created
 * exclusively (O_EXCL also refuses a link planted under that name). A
 * fixed "<path>.tmp.<pid>" opened with O_TRUNC followed a planted link and
 * overwrote its target. Not mkstemp() itself: its mode 0600 would make
 * every file zlb writes unreadable to the group; this is 0644 less umask,
 * as any other file zlb creates.
 */
static int create_temp_beside(const char *path, char **tmp)
{
	for (int attempt = 0; attempt < 64; attempt++) {
		uint64_t r = 0;
		int fd;

		if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
			r ^= (uint64_t)getpid() << 32 ^ (uint64_t)attempt * 0x9e3779b97f4a7c15ULL ^
			     (uint64_t)time(NULL);
		*tmp = xstrfmt("%s.tmp.%012llx", path, (unsigned long long)(r & 0xffffffffffffULL));
		fd = open(*tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd >= 0)
			return fd;
		if (errno != EEXIST)
			return error_errno("cannot write '%s'", path);
		free(*tmp);
		*tmp = NULL;
	}
	return error("cannot create a temporary file beside '%s': every name tried exists", path);
}

int write_file_atomic(const char *path, const char *data, size_t len)
{
	char *tmp = NULL;
	int fd = create_temp_beside(path, &tmp);
	size_t done = 0;

	if (fd < 0) {
		free(tmp);
		return -1;
	}
	while (done < len) {
		ssize_t n = write(fd, data + done, len - done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			int r = error_errno("cannot write '%s'", path);
			close(fd);
			unlink(tmp);
			free(tmp);
			return r;
		}
		done += (size_t)n;
	}
	if (fsync(fd) || close(fd)) {
		int r = error_errno("cannot write '%s'", path);
		unlink(tmp);
		free(tmp);
		return r;
	}
	/* rename() replaces a link at path itself; it never writes through it. */
	if (rename(tmp, path)) {
		int r = error_errno("cannot rename '%s' to '%s'", tmp, path);
		unlink(tmp);
		free(tmp);
		return r;
	}
	free(tmp);
	return 0;
}

mode_t process_umask(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	unsigned mask;
	mode_t found = 022;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Umask: %o", &mask) == 1) {
			found = (mode_t)mask;
			break;
		}
	if (f)
		fclose(f);
	return found;
}

int remove_tree(const char *path)
{
	struct stat st;
	DIR *d;
	struct dirent *e;
	int ret = 0;

	if (lstat(path, &st))
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return unlink(path);
	d = opendir(path);
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char *child = path_join(path, e->d_name);
		if (remove_tree(child))
			ret = -1;
		free(child);
	}
	closedir(d);
	if (rmdir(path))
		ret = -1;
	return ret;
}

void list_subdirs(const char *dir, struct strvec *out)
{
	struct strvec found = STRVEC_INIT;
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char *p;

		if (e->d_name[0] == '.')
			continue;
		p = path_join(dir, e->d_name);
		if (is_dir(p))
			strvec_push(&found, p);
		free(p);
	}
	closedir(d);
	strvec_sort(&found);
	for (size_t i = 0; i < found.nr; i++)
		strvec_push(out, found.v[i]);
	strvec_clear(&found);
}
