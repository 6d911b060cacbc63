/*
 * lib/safefile.c: names from data that may become paths, and opening the
 * files of an untrusted directory without following links or blocking on
 * a FIFO (issue 16 rows 6, 8, 13).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/error.h"
#include "lib/paths.h"
#include "lib/safefile.h"
#include "lib/strbuf.h"

#include "error_capture.h"

struct fixture {
	char dir[PATH_MAX];
	int dirfd;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	snprintf(f->dir, sizeof(f->dir), "/tmp/zlb-safefile-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	f->dirfd = open(f->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	set_error_routine(capture_error);
	strbuf_reset(&errors);
	/* A FIFO that blocked would hang: end the test instead. */
	alarm(30);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	alarm(0);
	close(f->dirfd);
	remove_tree(f->dir);
	set_error_routine(NULL);
	free(f);
	return 0;
}

static void put(struct fixture *f, const char *rel, const char *text)
{
	char *p = path_join(f->dir, rel);
	char *d = path_dirname(p);
	FILE *fp;

	assert_int_equal(mkdir_p(d, 0755), 0);
	fp = fopen(p, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
	free(d);
	free(p);
}

static void relative_paths(void **state)
{
	static const char *const good[] = { "a", "a/b.ttgir", "1024x1024/k/w4s3.ptx",
					    "a..b", ".hidden", NULL };
	static const char *const bad[] = { "", "/etc/passwd", "../x", "a/../../x", "a/..",
					   "./a", "a//b", "a/", "a/./b", "a\nb", "a\tb", NULL };

	for (const char *const *g = good; *g; g++)
		if (!rel_path_is_safe(*g))
			fail_msg("'%s' refused", *g);
	for (const char *const *b = bad; *b; b++)
		if (rel_path_is_safe(*b))
			fail_msg("'%s' accepted", *b);
}

static void beneath_follows_no_link(void **state)
{
	struct fixture *f = *state;
	struct strbuf sb = STRBUF_INIT;
	char *outside = path_join(f->dir, "outside");
	char *link_dir = path_join(f->dir, "run/ir/files/h1");
	char *link_file = path_join(f->dir, "run/ir/files/h0/k.ttgir");
	int runfd, fd;

	put(f, "outside/secret.ttgir", "secret\n");
	put(f, "run/ir/files/h0/ok.ttgir", "ok\n");
	assert_int_equal(symlink(outside, link_dir), 0);
	assert_int_equal(symlink("../../../../outside/secret.ttgir", link_file), 0);
	runfd = openat(f->dirfd, "run", O_RDONLY | O_DIRECTORY);
	assert_true(runfd >= 0);

	fd = open_beneath(runfd, "ir/files/h0/ok.ttgir", O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(read_fd(fd, 0, &sb), 0);
	assert_string_equal(sb.buf, "ok\n");
	close(fd);

	/* A linked directory, a linked file, a way up: none is opened. */
	errno = 0;
	assert_int_equal(open_beneath(runfd, "ir/files/h1/secret.ttgir", O_RDONLY), -1);
	assert_true(errno == ELOOP || errno == ENOTDIR);
	assert_int_equal(open_beneath(runfd, "ir/files/h0/k.ttgir", O_RDONLY), -1);
	assert_int_equal(errno, ELOOP);
	assert_int_equal(open_beneath(runfd, "../outside/secret.ttgir", O_RDONLY), -1);
	assert_int_equal(errno, EINVAL);

	/* The sentences name the link. */
	assert_int_equal(open_regular_at(runfd, "ir/files/h1/secret.ttgir", "h1/secret.ttgir",
					 &fd), -1);
	assert_contains(errors.buf, "its part ir/files/h1 is a symbolic link");
	assert_int_equal(open_regular_at(runfd, "ir/files/h0/k.ttgir", "k.ttgir", &fd), -1);
	assert_contains(errors.buf, "'k.ttgir' is a symbolic link");
	assert_int_equal(open_regular_at(runfd, "ir/files/h0/none", "none", &fd), 1);
	close(runfd);
	strbuf_release(&sb);
	free(outside);
	free(link_dir);
	free(link_file);
}

/* A link, a FIFO, a directory where a file belongs: refused at once, said what it is. */
static void regular_files_only(void **state)
{
	struct fixture *f = *state;
	char *fifo = path_join(f->dir, "results.jsonl");
	char *dir = path_join(f->dir, "events.jsonl");
	char *link = path_join(f->dir, "run_identity.json");
	char *file = path_join(f->dir, "real");
	struct strbuf sb = STRBUF_INIT;
	int fd;

	put(f, "real", "data\n");
	assert_int_equal(mkfifo(fifo, 0644), 0);
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(symlink(file, link), 0);

	assert_int_equal(open_regular(fifo, &fd), -1);
	assert_contains(errors.buf, "is a FIFO, where zlb expects a regular file");
	assert_int_equal(open_regular(dir, &fd), -1);
	assert_contains(errors.buf, "is a directory, where zlb expects a regular file");
	assert_int_equal(read_regular(link, 0, &sb), -1);
	assert_contains(errors.buf, "is a symbolic link");
	assert_int_equal(sb.len, 0);
	assert_int_equal(read_regular(file, 0, &sb), 0);
	assert_string_equal(sb.buf, "data\n");
	strbuf_reset(&sb);
	assert_int_equal(read_regular(file, 3, &sb), -1);
	{
		char *absent = path_join(f->dir, "absent");
		assert_int_equal(read_regular(absent, 0, &sb), 1);
		free(absent);
	}
	strbuf_release(&sb);
	free(fifo);
	free(dir);
	free(link);
	free(file);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(relative_paths),
		cmocka_unit_test_setup_teardown(beneath_follows_no_link, setup, teardown),
		cmocka_unit_test_setup_teardown(regular_files_only, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
