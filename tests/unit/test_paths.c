/*
 * paths.c: which names may become path components, path arithmetic,
 * program lookup without a shell, mkdir -p, atomic writes, tree removal.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/error.h"
#include "lib/paths.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"

#include "error_capture.h"

struct fixture {
	char dir[PATH_MAX];
	char cwd[PATH_MAX];
	char *saved_path;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	char tmpl[] = "/tmp/zlb-paths-XXXXXX";

	/* Resolved, so that it compares equal to getcwd() after a chdir. */
	if (!mkdtemp(tmpl) || !realpath(tmpl, f->dir) || !getcwd(f->cwd, sizeof(f->cwd)))
		return -1;
	f->saved_path = getenv("PATH") ? xstrdup(getenv("PATH")) : NULL;
	strbuf_reset(&errors);
	set_error_routine(capture_error);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	int r;

	set_error_routine(NULL);
	r = chdir(f->cwd);
	if (f->saved_path)
		setenv("PATH", f->saved_path, 1);
	else
		unsetenv("PATH");
	free(f->saved_path);
	r |= remove_tree(f->dir);
	free(f);
	strbuf_release(&errors);
	return r ? -1 : 0;
}

static void write_text(const char *path, const char *text, mode_t mode)
{
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	fputs(text, fp);
	assert_int_equal(fclose(fp), 0);
	assert_int_equal(chmod(path, mode), 0);
}

static char *read_text(const char *path)
{
	struct strbuf sb = STRBUF_INIT;

	assert_int_equal(strbuf_read_file(&sb, path, 1 << 20), 0);
	return strbuf_detach(&sb, NULL);
}

static size_t count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static void safe_names(void **state)
{
	char long_ok[201], long_bad[202];

	assert_true(name_is_safe("softmax"));
	assert_true(name_is_safe("fused_marlin_moe_mxfp4"));
	assert_true(name_is_safe("a-b.c"));
	assert_true(name_is_safe("v1+cu124@host"));
	assert_true(name_is_safe("A9"));

	assert_false(name_is_safe(""));
	assert_false(name_is_safe("a/b"));
	assert_false(name_is_safe("/abs"));
	assert_false(name_is_safe(".."));
	assert_false(name_is_safe("."));
	assert_false(name_is_safe("a..b"));
	assert_false(name_is_safe(".hidden"));
	assert_false(name_is_safe("soft max"));
	assert_false(name_is_safe("tab\there"));
	assert_false(name_is_safe("new\nline"));
	assert_false(name_is_safe("back\\slash"));
	assert_false(name_is_safe("star*"));
	assert_false(name_is_safe("caf\xc3\xa9"));

	memset(long_ok, 'a', 200);
	long_ok[200] = '\0';
	assert_true(name_is_safe(long_ok));
	memset(long_bad, 'a', 201);
	long_bad[201] = '\0';
	assert_false(name_is_safe(long_bad));
}

static void absolute_paths(void **state)
{
	struct fixture *f = *state;
	char *p, *want;

	assert_int_equal(chdir(f->dir), 0);

	p = path_absolute(".");
	assert_string_equal(p, f->dir);
	free(p);

	p = path_absolute("..");
	want = path_dirname(f->dir);
	assert_string_equal(p, want);
	free(want);
	free(p);

	p = path_absolute("sub/./x/../y");
	want = xstrfmt("%s/sub/y", f->dir);
	assert_string_equal(p, want);
	free(want);
	free(p);

	p = path_absolute("/a//b/./c/../d/");
	assert_string_equal(p, "/a/b/d");
	free(p);

	/* Nothing climbs above the root. */
	p = path_absolute("/../../x");
	assert_string_equal(p, "/x");
	free(p);

	p = path_absolute("/");
	assert_string_equal(p, "/");
	free(p);

	p = path_absolute("/a/..");
	assert_string_equal(p, "/");
	free(p);
}

static void join_dirname_basename(void **state)
{
	char *p;

	p = path_join("a", "b");
	assert_string_equal(p, "a/b");
	free(p);
	p = path_join("a/", "b");
	assert_string_equal(p, "a/b");
	free(p);
	p = path_join("/", "etc");
	assert_string_equal(p, "/etc");
	free(p);
	p = path_join("", "b");
	assert_string_equal(p, "b");
	free(p);
	p = path_join("runs", "softmax_20260101-000000");
	assert_string_equal(p, "runs/softmax_20260101-000000");
	free(p);

	p = path_dirname("a/b/c.py");
	assert_string_equal(p, "a/b");
	free(p);
	p = path_dirname("c.py");
	assert_string_equal(p, ".");
	free(p);
	p = path_dirname("/c.py");
	assert_string_equal(p, "/");
	free(p);
	p = path_dirname("/x/y");
	assert_string_equal(p, "/x");
	free(p);

	assert_string_equal(path_basename("a/b/c.py"), "c.py");
	assert_string_equal(path_basename("c.py"), "c.py");
	assert_string_equal(path_basename("/x/"), "");
	{
		const char *s = "/x/y";
		assert_ptr_equal(path_basename(s), s + 3);
	}
}

static void programs(void **state)
{
	struct fixture *f = *state;
	char *bin = path_join(f->dir, "bin");
	char *tool = path_join(bin, "zlb-test-tool");
	char *plain = path_join(bin, "zlb-not-exec");
	char *p;

	assert_int_equal(mkdir(bin, 0755), 0);
	write_text(tool, "#!/bin/true\n", 0755);
	write_text(plain, "data\n", 0644);

	/* An absolute path is taken as it is. */
	p = find_program("/bin/sh");
	assert_non_null(p);
	assert_string_equal(p, "/bin/sh");
	free(p);
	assert_null(find_program("/nonexistent/zlb-nothing"));
	assert_null(find_program(plain));
	/* A directory is not a program. */
	assert_null(find_program(bin));

	/* Through $PATH, skipping entries that do not have it. */
	p = xstrfmt("/nonexistent-zlb:%s:/usr/bin:/bin", bin);
	setenv("PATH", p, 1);
	free(p);
	p = find_program("zlb-test-tool");
	assert_non_null(p);
	assert_string_equal(p, tool);
	free(p);
	/* Not executable: not found, even though the file is there. */
	assert_null(find_program("zlb-not-exec"));
	assert_null(find_program("zlb-missing-program"));
	assert_null(find_program(""));

	/* A relative name with a slash is relative to the cwd, made absolute. */
	assert_int_equal(chdir(f->dir), 0);
	p = find_program("bin/zlb-test-tool");
	assert_non_null(p);
	assert_string_equal(p, tool);
	free(p);
	p = find_program("./bin/../bin/zlb-test-tool");
	assert_non_null(p);
	assert_string_equal(p, tool);
	free(p);

	/* A relative $PATH entry gives an absolute answer too. */
	setenv("PATH", "bin", 1);
	p = find_program("zlb-test-tool");
	assert_non_null(p);
	assert_string_equal(p, tool);
	free(p);

	free(bin);
	free(tool);
	free(plain);
}

static void make_directories(void **state)
{
	struct fixture *f = *state;
	char *deep = xstrfmt("%s/a/b/c", f->dir);
	char *file = xstrfmt("%s/afile", f->dir);
	char *under_file = xstrfmt("%s/afile/sub", f->dir);
	struct stat st;

	assert_int_equal(mkdir_p(deep, 0755), 0);
	assert_true(is_dir(deep));
	/* Again: already there is fine. */
	assert_int_equal(mkdir_p(deep, 0755), 0);

	/* A trailing slash is fine as well. */
	{
		char *slash = xstrfmt("%s/t/", f->dir);
		assert_int_equal(mkdir_p(slash, 0700), 0);
		assert_int_equal(stat(slash, &st), 0);
		assert_true(S_ISDIR(st.st_mode));
		free(slash);
	}

	/* Below a regular file nothing can be made: an error naming the path. */
	write_text(file, "x", 0644);
	assert_int_equal(mkdir_p(under_file, 0755), -1);
	assert_non_null(strstr(errors.buf, "cannot create directory"));
	assert_non_null(strstr(errors.buf, under_file));
	assert_false(is_dir(under_file));

	/* A regular file where the directory belongs: refused, not taken for it. */
	strbuf_reset(&errors);
	assert_int_equal(mkdir_p(file, 0755), -1);
	assert_non_null(strstr(errors.buf, "a file of that name is in the way"));

	free(deep);
	free(file);
	free(under_file);
}

static void atomic_writes(void **state)
{
	struct fixture *f = *state;
	char *path = path_join(f->dir, "out.json");
	char *text;
	static const char bytes[] = "a\0b\nc";

	assert_int_equal(write_file_atomic(path, "first\n", 6), 0);
	text = read_text(path);
	assert_string_equal(text, "first\n");
	free(text);

	/* Replacing a longer file leaves only the new content. */
	assert_int_equal(write_file_atomic(path, "2", 1), 0);
	text = read_text(path);
	assert_string_equal(text, "2");
	free(text);

	/* Binary content, NUL included, byte for byte. */
	{
		struct strbuf sb = STRBUF_INIT;
		assert_int_equal(write_file_atomic(path, bytes, sizeof(bytes) - 1), 0);
		assert_int_equal(strbuf_read_file(&sb, path, 1024), 0);
		assert_int_equal(sb.len, sizeof(bytes) - 1);
		assert_memory_equal(sb.buf, bytes, sb.len);
		strbuf_release(&sb);
	}

	/* Empty content gives an empty file. */
	assert_int_equal(write_file_atomic(path, "", 0), 0);
	assert_true(is_file(path));
	text = read_text(path);
	assert_string_equal(text, "");
	free(text);

	/* No temporary file is left beside it. */
	assert_int_equal(count_entries(f->dir), 1);

	/* Into a missing directory: an error, nothing created. */
	{
		char *bad = xstrfmt("%s/missing/out.json", f->dir);
		assert_int_equal(write_file_atomic(bad, "x", 1), -1);
		assert_non_null(strstr(errors.buf, "cannot write"));
		assert_int_equal(count_entries(f->dir), 1);
		free(bad);
	}
	/* Onto a directory: rename fails, and the temporary file is removed. */
	{
		char *d = path_join(f->dir, "adir");
		char *inner = path_join(d, "keep");
		assert_int_equal(mkdir(d, 0755), 0);
		write_text(inner, "k", 0644);
		assert_int_equal(write_file_atomic(d, "x", 1), -1);
		assert_true(is_dir(d));
		assert_int_equal(count_entries(f->dir), 2);
		free(inner);
		free(d);
	}
	free(path);
}

/*
 * A link planted where the temporary file used to be created
 * (<path>.tmp.<pid>) or at the path itself is never written through
 * (issue 16 row 8): the victim keeps its content. The mode is 0644 less
 * umask, not mkstemp's 0600.
 */
static void atomic_writes_follow_no_link(void **state)
{
	struct fixture *f = *state;
	char *path = path_join(f->dir, "status.csv");
	char *victim = path_join(f->dir, "victim");
	char *planted = xstrfmt("%s.tmp.%ld", path, (long)getpid());
	char *text;
	struct stat st;
	mode_t old;

	write_text(victim, "precious\n", 0644);
	assert_int_equal(symlink(victim, planted), 0);
	assert_int_equal(write_file_atomic(path, "new\n", 4), 0);
	text = read_text(victim);
	assert_string_equal(text, "precious\n");
	free(text);
	text = read_text(path);
	assert_string_equal(text, "new\n");
	free(text);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));

	/* A link at the path itself is replaced by the file. */
	assert_int_equal(unlink(path), 0);
	assert_int_equal(symlink(victim, path), 0);
	assert_int_equal(write_file_atomic(path, "again\n", 6), 0);
	text = read_text(victim);
	assert_string_equal(text, "precious\n");
	free(text);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));

	old = umask(0);
	assert_int_equal(write_file_atomic(path, "m", 1), 0);
	umask(old);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);
	/* Only the planted link, the victim and the file: no temporary left. */
	assert_int_equal(count_entries(f->dir), 3);
	free(planted);
	free(victim);
	free(path);
}

/* list_subdirs: directories only, hidden ones skipped, byte order; duplicates dropped by strvec_sort_unique. */
static void subdirectories_sorted(void **state)
{
	struct fixture *f = *state;
	struct strvec out = STRVEC_INIT;
	const char *names[] = { "b", "a", "C", ".hidden" };
	char *p;

	for (size_t i = 0; i < 4; i++) {
		p = path_join(f->dir, names[i]);
		assert_int_equal(mkdir(p, 0755), 0);
		free(p);
	}
	p = path_join(f->dir, "zfile");
	write_text(p, "x", 0644);
	free(p);
	strvec_push(&out, "kept-first");
	list_subdirs(f->dir, &out);
	assert_int_equal(out.nr, 4);
	assert_string_equal(out.v[0], "kept-first");
	assert_string_equal(path_basename(out.v[1]), "C");
	assert_string_equal(path_basename(out.v[2]), "a");
	assert_string_equal(path_basename(out.v[3]), "b");
	list_subdirs("/nonexistent/zlb", &out);
	assert_int_equal(out.nr, 4);

	strvec_push(&out, "a-dup");
	strvec_push(&out, "a-dup");
	strvec_sort_unique(&out);            /* the absolute paths ('/') sort first */
	assert_int_equal(out.nr, 5);
	assert_string_equal(out.v[3], "a-dup");
	assert_string_equal(out.v[4], "kept-first");
	assert_null(out.v[5]);
	strvec_clear(&out);
}

static void remove_trees(void **state)
{
	struct fixture *f = *state;
	char *root = path_join(f->dir, "tree");
	char *outside = path_join(f->dir, "outside");
	char *outside_file = path_join(outside, "precious");
	char *p;

	assert_int_equal(mkdir_p(root, 0755), 0);
	p = xstrfmt("%s/a/b/c", root);
	assert_int_equal(mkdir_p(p, 0755), 0);
	free(p);
	p = xstrfmt("%s/a/b/file", root);
	write_text(p, "x", 0644);
	free(p);
	p = xstrfmt("%s/.hidden", root);
	write_text(p, "x", 0644);
	free(p);

	/* A symlink inside points out of the tree: the link goes, not its target. */
	assert_int_equal(mkdir(outside, 0755), 0);
	write_text(outside_file, "keep", 0644);
	p = xstrfmt("%s/a/link", root);
	assert_int_equal(symlink(outside, p), 0);
	free(p);

	assert_int_equal(remove_tree(root), 0);
	assert_int_equal(access(root, F_OK), -1);
	assert_true(is_file(outside_file));

	/* Missing is not an error; a single file is removed. */
	assert_int_equal(remove_tree(root), 0);
	assert_int_equal(remove_tree(outside_file), 0);
	assert_false(is_file(outside_file));

	free(root);
	free(outside);
	free(outside_file);
}

static void file_predicates(void **state)
{
	struct fixture *f = *state;
	char *file = path_join(f->dir, "f");
	char *exe = path_join(f->dir, "e");

	write_text(file, "", 0644);
	write_text(exe, "", 0755);
	assert_true(is_dir(f->dir));
	assert_false(is_file(f->dir));
	assert_true(is_file(file));
	assert_false(is_dir(file));
	assert_false(is_executable(file));
	assert_true(is_executable(exe));
	assert_false(is_executable(f->dir));
	assert_false(is_file("/nonexistent/zlb"));
	free(file);
	free(exe);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(safe_names),
		cmocka_unit_test_setup_teardown(absolute_paths, setup, teardown),
		cmocka_unit_test(join_dirname_basename),
		cmocka_unit_test_setup_teardown(programs, setup, teardown),
		cmocka_unit_test_setup_teardown(make_directories, setup, teardown),
		cmocka_unit_test_setup_teardown(atomic_writes, setup, teardown),
		cmocka_unit_test_setup_teardown(atomic_writes_follow_no_link, setup, teardown),
		cmocka_unit_test_setup_teardown(subdirectories_sorted, setup, teardown),
		cmocka_unit_test_setup_teardown(remove_trees, setup, teardown),
		cmocka_unit_test_setup_teardown(file_predicates, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
