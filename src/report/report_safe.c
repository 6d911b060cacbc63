/*
 * Containment checks and relative links (report_safe.h).
 */
#include "report/report_safe.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/error.h"
#include "lib/paths.h"
#include "lib/strbuf.h"

int report_path_inside(const char *root_real, const char *path)
{
	char *real = realpath(path, NULL);
	size_t n = strlen(root_real);
	int inside;

	if (!real)
		return 0;
	inside = !strncmp(real, root_real, n) &&
		 (real[n] == '\0' || real[n] == '/' || (n == 1 && root_real[0] == '/'));
	free(real);
	return inside;
}

/* Directories a report never reads through (IR trees are checked file by file). */
static int skipped_dir(const char *name)
{
	return name[0] == '.' || !strcmp(name, "ttgir") || !strcmp(name, "ir") ||
	       !strcmp(name, "autotune_records") || !strcmp(name, "triton_cache");
}

static int walk(const char *root, const char *root_real, const char *dir, int depth)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int ret = 0;

	if (!d)
		return 0;	/* what cannot be listed cannot be read through either */
	while (!ret && (e = readdir(d))) {
		struct stat st;
		char *p;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		p = path_join(dir, e->d_name);
		if (lstat(p, &st)) {
			free(p);
			continue;
		}
		if (S_ISLNK(st.st_mode)) {
			char *to = realpath(p, NULL);

			if (to && !report_path_inside(root_real, to))
				ret = error("%s is a symbolic link to %s, outside %s; zlb report "
					    "reads nothing outside the directory it reports: copy "
					    "what it points to into place, or report that directory "
					    "itself", p, to, root);
			free(to);
		} else if (S_ISDIR(st.st_mode) && depth > 0 && !skipped_dir(e->d_name)) {
			ret = walk(root, root_real, p, depth - 1);
		}
		free(p);
	}
	closedir(d);
	return ret;
}

int report_check_tree(const char *root, int depth)
{
	char *real = realpath(root, NULL);
	int ret;

	if (!real)
		return error_errno("cannot resolve '%s'", root);
	ret = walk(root, real, root, depth);
	free(real);
	return ret;
}

char *report_relative_path(const char *base, const char *target)
{
	struct strbuf sb = STRBUF_INIT;
	size_t common = 0, i;

	/* the longest common prefix that ends at a component boundary */
	for (i = 0; base[i] && base[i] == target[i]; i++)
		if (base[i] == '/')
			common = i + 1;
	if (!base[i] && (target[i] == '/' || !target[i]))
		common = i + (target[i] == '/');
	if (!strcmp(base, "/"))
		common = 1;
	/* one ".." per component of base left after the common part */
	for (const char *p = common < strlen(base) ? base + common : ""; *p; ) {
		const char *slash = strchr(p, '/');

		strbuf_addstr(&sb, "../");
		if (!slash)
			break;
		p = slash + 1;
	}
	strbuf_addstr(&sb, target + common);
	if (!sb.len)
		strbuf_addch(&sb, '.');
	return strbuf_detach(&sb, NULL);
}
