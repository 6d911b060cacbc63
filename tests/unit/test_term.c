/*
 * term.c: the width output may take (the terminal's, else $COLUMNS, else
 * no limit), columns counted in characters, text cut or wrapped to them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "lib/term.h"

static void columns_from_the_environment(void **state)
{
	int fds[2];

	assert_int_equal(pipe(fds), 0);
	unsetenv("COLUMNS");
	assert_int_equal(term_columns(fds[1]), 0);	/* a pipe: no limit */
	setenv("COLUMNS", "77", 1);
	assert_int_equal(term_columns(fds[1]), 77);
	setenv("COLUMNS", "77x", 1);
	assert_int_equal(term_columns(fds[1]), 0);
	setenv("COLUMNS", "-3", 1);
	assert_int_equal(term_columns(fds[1]), 0);
	setenv("COLUMNS", "", 1);
	assert_int_equal(term_columns(fds[1]), 0);
	unsetenv("COLUMNS");
	close(fds[0]);
	close(fds[1]);
}

/* A terminal's own width wins over $COLUMNS (which a shell may not have updated). */
static void columns_from_the_terminal(void **state)
{
	int master = posix_openpt(O_RDWR | O_NOCTTY), slave;
	struct winsize ws = { .ws_row = 24, .ws_col = 40 };

	if (master < 0 || grantpt(master) || unlockpt(master))
		skip();
	slave = open(ptsname(master), O_RDWR | O_NOCTTY);
	assert_true(slave >= 0);
	assert_int_equal(ioctl(slave, TIOCSWINSZ, &ws), 0);
	setenv("COLUMNS", "200", 1);
	assert_int_equal(term_columns(slave), 40);
	/* a terminal that does not know its size: $COLUMNS */
	ws.ws_col = 0;
	assert_int_equal(ioctl(slave, TIOCSWINSZ, &ws), 0);
	assert_int_equal(term_columns(slave), 200);
	unsetenv("COLUMNS");
	close(slave);
	close(master);
}

static void cut_to_width(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	term_add_cut(&sb, "softmax", 0);
	assert_string_equal(sb.buf, "softmax");
	strbuf_reset(&sb);
	term_add_cut(&sb, "softmax", 7);
	assert_string_equal(sb.buf, "softmax");
	strbuf_reset(&sb);
	term_add_cut(&sb, "softmax_backward", 10);
	assert_string_equal(sb.buf, "softmax...");
	strbuf_reset(&sb);
	term_add_cut(&sb, "softmax", 2);
	assert_string_equal(sb.buf, "..");
	strbuf_release(&sb);
	assert_int_equal(term_prefix_fitting("abc", 3, 2), 2);
	assert_int_equal(term_prefix_fitting("\xc3\xa9\xc3\xa9", 4, 1), 2);
}

static void wrapped_help(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	term_add_wrapped(&sb, "one two three four five six", 4, 16);
	assert_string_equal(sb.buf, "    one two\n    three four\n    five six\n");
	strbuf_reset(&sb);
	/* a word longer than the line stands alone; a newline starts a line */
	term_add_wrapped(&sb, "a verylongwordthatdoesnotfit b\nc", 2, 12);
	assert_string_equal(sb.buf, "  a\n  verylongwordthatdoesnotfit\n  b\n  c\n");
	strbuf_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(columns_from_the_environment),
		cmocka_unit_test(columns_from_the_terminal),
		cmocka_unit_test(cut_to_width),
		cmocka_unit_test(wrapped_help),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
