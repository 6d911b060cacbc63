/*
 * ansi_strip() on every kind of sequence it knows, and (for want of a file
 * of their own) term.c's colour decision and wrapping.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/ansi.h"
#include "lib/strbuf.h"
#include "lib/term.h"

/* Strip a copy of in (len bytes) and compare with want (want_len bytes). */
static void check_strip_n(const char *in, size_t len, const char *want, size_t want_len)
{
	char *buf = xmalloc(len + 1);
	size_t n;

	memcpy(buf, in, len);
	n = ansi_strip(buf, len);
	buf[n] = '\0';
	assert_int_equal(n, want_len);
	assert_memory_equal(buf, want, n);
	free(buf);
}

static void check_strip(const char *in, const char *want)
{
	check_strip_n(in, strlen(in), want, strlen(want));
}

static void test_plain_text_unchanged(void **state)
{
	check_strip("", "");
	check_strip("SUCCESS               0.004690", "SUCCESS               0.004690");
	/* 0x9b is an 8-bit CSI only outside UTF-8; here it is part of U+26C4. */
	check_strip("snow \xe2\x9b\x84 man", "snow \xe2\x9b\x84 man");
	/* A NUL in the text is data, not an end. */
	check_strip_n("a\0b", 3, "a\0b", 3);
	check_strip_n("a\0\033[1mb", 7, "a\0b", 3);
}

static void test_csi(void **state)
{
	check_strip("\033[31mFAILED\033[0m: Operator=mm", "FAILED: Operator=mm");
	check_strip("\033[1;32;40mok\033[m", "ok");
	check_strip("x\033[2Ky\033[10;20Hz", "xyz");
	/* Private parameters and an intermediate byte (DECSCUSR: CSI 2 SP q). */
	check_strip("a\033[?25lb\033[2 qc", "abc");
	/* Cut short by the end of the line: the fragment goes. */
	check_strip("abc\033[31", "abc");
	check_strip("abc\033[", "abc");
	/* Interrupted by a control byte: drop up to it, keep it. */
	check_strip("a\033[12\nb", "a\nb");
	/* A new ESC inside a CSI starts the next sequence. */
	check_strip("a\033[1\033[32mb", "ab");
}

static void test_osc_and_strings(void **state)
{
	/* Window title ended by BEL. */
	check_strip("\033]0;pytest\007run", "run");
	/* A hyperlink ended by ST (ESC \) on both sides of its text. */
	check_strip("see \033]8;;https://example.org\033\\docs\033]8;;\033\\ now",
		    "see docs now");
	/* DCS, SOS, PM and APC strings are removed the same way. */
	check_strip("a\033P1$r0m\033\\b\033Xsos\033\\c\033^pm\007d\033_apc\033\\e", "abcde");
	/* An unterminated OSC runs to the end of the line. */
	check_strip("keep\033]0;title never ends", "keep");
	/* An OSC cut by an ESC that is not ST: that ESC starts the next one. */
	check_strip("a\033]0;t\033[1mb", "ab");
}

static void test_two_byte_and_nf(void **state)
{
	check_strip("a\033=b\0337c\033cd\033Me", "abcde");
	/* Character set selection: ESC ( B is three bytes. */
	check_strip("\033(Bplain\033)0", "plain");
	/* A lone ESC, at the end or before a control byte, goes alone. */
	check_strip("end\033", "end");
	check_strip("a\033\tb", "a\tb");
	check_strip("\033\033[0mx", "x");
}

static void test_strbuf_variant(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addstr(&sb, "\033[32mSUCCESS\033[0m   0.1");
	assert_true(ansi_has_escape(sb.buf, sb.len));
	strbuf_ansi_strip(&sb);
	assert_string_equal(sb.buf, "SUCCESS   0.1");
	assert_int_equal(sb.len, 13);
	assert_false(ansi_has_escape(sb.buf, sb.len));
	strbuf_release(&sb);

	/* An empty strbuf stays usable. */
	strbuf_ansi_strip(&sb);
	assert_int_equal(sb.len, 0);
	assert_string_equal(sb.buf, "");
}

/* term.c */

static void set_env(const char *key, const char *value)
{
	if (value)
		setenv(key, value, 1);
	else
		unsetenv(key);
}

static void test_color_explicit(void **state)
{
	int fds[2];

	assert_int_equal(pipe(fds), 0);
	set_env("NO_COLOR", "1");
	set_env("TERM", "dumb");
	/* An explicit setting beats the environment and the fd. */
	assert_int_equal(term_color_wanted(fds[1], "always"), 1);
	assert_int_equal(term_color_wanted(fds[1], "never"), 0);
	set_env("NO_COLOR", NULL);
	set_env("TERM", "xterm-256color");
	/* A pipe is not a terminal: auto (in any spelling) says no. */
	assert_int_equal(term_color_wanted(fds[1], NULL), 0);
	assert_int_equal(term_color_wanted(fds[1], ""), 0);
	assert_int_equal(term_color_wanted(fds[1], "auto"), 0);
	assert_int_equal(term_color_wanted(fds[1], "sometimes"), 0);
	close(fds[0]);
	close(fds[1]);

	assert_true(term_color_setting_valid(NULL));
	assert_true(term_color_setting_valid(""));
	assert_true(term_color_setting_valid("auto"));
	assert_true(term_color_setting_valid("always"));
	assert_true(term_color_setting_valid("never"));
	assert_false(term_color_setting_valid("sometimes"));
	assert_false(term_color_setting_valid("Always"));
}

static void test_color_auto_on_tty(void **state)
{
	int master, slave = -1;
	char *name;

	master = posix_openpt(O_RDWR | O_NOCTTY);
	if (master < 0 || grantpt(master) || unlockpt(master) ||
	    !(name = ptsname(master)) || (slave = open(name, O_RDWR | O_NOCTTY)) < 0) {
		if (master >= 0)
			close(master);
		skip();
	}
	assert_true(isatty(slave));

	set_env("NO_COLOR", NULL);
	set_env("TERM", "xterm-256color");
	assert_int_equal(term_color_wanted(slave, NULL), 1);
	assert_int_equal(term_color_wanted(slave, "sometimes"), 1);
	set_env("TERM", NULL);
	assert_int_equal(term_color_wanted(slave, "auto"), 1);
	set_env("TERM", "dumb");
	assert_int_equal(term_color_wanted(slave, "auto"), 0);
	assert_int_equal(term_color_wanted(slave, "always"), 1);
	set_env("TERM", "xterm");
	set_env("NO_COLOR", "1");
	assert_int_equal(term_color_wanted(slave, "auto"), 0);
	/* An empty NO_COLOR does not count. */
	set_env("NO_COLOR", "");
	assert_int_equal(term_color_wanted(slave, "auto"), 1);
	set_env("NO_COLOR", NULL);

	close(slave);
	close(master);
}

static void test_color_wrapping(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	term_addstr_colored(&sb, 1, TERM_GREEN, "SUCCESS");
	assert_string_equal(sb.buf, "\033[32mSUCCESS\033[0m");
	strbuf_reset(&sb);
	term_addstr_colored(&sb, 0, TERM_GREEN, "SUCCESS");
	assert_string_equal(sb.buf, "SUCCESS");
	strbuf_reset(&sb);
	term_add_colored(&sb, 1, TERM_RED, "FAILED and more", 6);
	term_addstr_colored(&sb, 1, TERM_YELLOW, "");
	assert_string_equal(sb.buf, "\033[31mFAILED\033[0m");
	strbuf_release(&sb);

	assert_string_equal(term_color_code(TERM_YELLOW), "\033[33m");
	assert_string_equal(term_color_code(TERM_BOLD), "\033[1m");
	assert_string_equal(term_color_code(TERM_DIM), "\033[2m");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_text_unchanged),
		cmocka_unit_test(test_csi),
		cmocka_unit_test(test_osc_and_strings),
		cmocka_unit_test(test_two_byte_and_nf),
		cmocka_unit_test(test_strbuf_variant),
		cmocka_unit_test(test_color_explicit),
		cmocka_unit_test(test_color_auto_on_tty),
		cmocka_unit_test(test_color_wrapping),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
