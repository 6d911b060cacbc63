#include "lib/gitinfo.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "lib/paths.h"
#include "lib/strbuf.h"

static int is_hex40(const char *s)
{
	for (int i = 0; i < 40; i++)
		if (!isxdigit((unsigned char)s[i]))
			return 0;
	return 1;
}

static char *read_first_line(const char *path)
{
	struct strbuf sb = STRBUF_INIT;

	if (strbuf_read_file(&sb, path, 1 << 20)) {
		strbuf_release(&sb);
		return NULL;
	}
	sb.len = strcspn(sb.buf, "\n");
	sb.buf[sb.len] = '\0';
	strbuf_trim(&sb);
	return strbuf_detach(&sb, NULL);
}

/* The .git directory of a checkout, following a "gitdir: <path>" file. */
static char *git_dir_of(const char *checkout)
{
	char *dotgit = path_join(checkout, ".git");
	char *line, *res;

	if (is_dir(dotgit))
		return dotgit;
	line = is_file(dotgit) ? read_first_line(dotgit) : NULL;
	free(dotgit);
	if (!line || !starts_with(line, "gitdir: ")) {
		free(line);
		return NULL;
	}
	res = line[8] == '/' ? xstrdup(line + 8) : path_join(checkout, line + 8);
	free(line);
	return res;
}

static char *resolve_ref(const char *gitdir, const char *ref)
{
	char *common_file = path_join(gitdir, "commondir");
	char *common = is_file(common_file) ? read_first_line(common_file) : NULL;
	const char *dirs[2] = { gitdir, NULL };
	char *commondir = NULL, *res = NULL;

	free(common_file);
	if (common) {
		commondir = common[0] == '/' ? xstrdup(common) : path_join(gitdir, common);
		dirs[1] = commondir;
		free(common);
	}
	for (int i = 0; i < 2 && dirs[i] && !res; i++) {
		char *loose = path_join(dirs[i], ref);
		char *line = is_file(loose) ? read_first_line(loose) : NULL;
		free(loose);
		if (line && strlen(line) >= 40 && is_hex40(line)) {
			line[40] = '\0';
			res = line;
			break;
		}
		free(line);
		char *packed = path_join(dirs[i], "packed-refs");
		struct strbuf sb = STRBUF_INIT;
		if (!strbuf_read_file(&sb, packed, 64 << 20)) {
			for (char *p = sb.buf; p && *p; ) {
				char *eol = strchr(p, '\n');
				if (eol)
					*eol = '\0';
				if (strlen(p) > 41 && is_hex40(p) && p[40] == ' ' && !strcmp(p + 41, ref)) {
					res = xstrndup(p, 40);
					break;
				}
				p = eol ? eol + 1 : NULL;
			}
		}
		strbuf_release(&sb);
		free(packed);
	}
	free(commondir);
	return res;
}

char *git_head_commit(const char *checkout)
{
	char *gitdir = git_dir_of(checkout);
	char *head_path, *head, *res = NULL;

	if (!gitdir) {
		char *commit_file = path_join(checkout, "COMMIT");
		char *line = is_file(commit_file) ? read_first_line(commit_file) : NULL;
		free(commit_file);
		if (line && strlen(line) == 40 && is_hex40(line))
			return line;
		free(line);
		return NULL;
	}
	head_path = path_join(gitdir, "HEAD");
	head = read_first_line(head_path);
	free(head_path);
	if (head && starts_with(head, "ref: "))
		res = resolve_ref(gitdir, head + 5);
	else if (head && strlen(head) >= 40 && is_hex40(head))
		res = xstrndup(head, 40);
	free(head);
	free(gitdir);
	return res;
}
