/*
 * batch_progress.c: the live block (one line per device, redrawn in place,
 * with its estimate of the time left), lines that stay above it, a clean
 * screen at the end, and the plain mode that draws nothing.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch/batch_progress.h"

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static void durations(void **state)
{
	char b[32];

	progress_fmt_duration(b, sizeof(b), 12.4);
	assert_string_equal(b, "12s");
	progress_fmt_duration(b, sizeof(b), 185);
	assert_string_equal(b, "3m05s");
	progress_fmt_duration(b, sizeof(b), 3725);
	assert_string_equal(b, "1h02m");
	progress_fmt_duration(b, sizeof(b), -3);
	assert_string_equal(b, "0s");
}

static void live_block_redrawn_in_place(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	struct stream_reporter term;
	struct progress p;

	/* zlb batch's own reporter (lib/reporter.c) draws the block */
	stream_reporter_init(&term, out, stderr);
	progress_init(&p, 1, 2, &term.r, 100.0);
	p.lanes[0] = (struct progress_lane){ .device = 0, .total = 4, .done = 2, .failed = 1,
					     .current = "softmax", .op_started = 110.0,
					     .busy = 20.0 };
	p.lanes[1] = (struct progress_lane){ .device = 3, .total = 2, .done = 0 };
	progress_draw(&p, 115.0);
	fflush(out);
	/*
	 * device 0: 10 s per finished operator, 2 left, 5 s into the current
	 * one: ~15 s left; device 3 has finished none: no estimate yet.
	 */
	assert_non_null(strstr(buf, "\033[2Kdevice 0: 2/4 done, 1 failed, 15s elapsed, "
				    "~15s left | softmax\n"));
	assert_non_null(strstr(buf, "\033[2Kdevice 3: 0/2 done, 0 failed, 15s elapsed, ~? left\n"));
	assert_int_equal(term.drawn, 2);

	/* A line that stays: the block goes up and away first, then is redrawn below. */
	progress_line(&p, "[device 0 3/4] FAIL    mm 3.0s");
	fflush(out);
	assert_non_null(strstr(buf, "\033[2A\033[2K\n\033[2K\n\033[2A[device 0 3/4] FAIL    mm 3.0s\n"));
	assert_int_equal(term.drawn, 0);
	progress_draw(&p, 116.0);
	progress_finish(&p);
	fflush(out);
	assert_int_equal(count(buf, "\033[2A"), 4);     /* two erasures, two moves each */
	assert_int_equal(term.drawn, 0);
	assert_true(len >= 6 && !strcmp(buf + len - 4, "\033[2A"));  /* ends erased */
	fclose(out);
	free(buf);
	progress_release(&p);
}

static void plain_draws_nothing(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	struct stream_reporter term;
	struct progress p;

	stream_reporter_init(&term, out, stderr);
	progress_init(&p, 0, 1, &term.r, 0.0);
	p.lanes[0].total = 3;
	progress_draw(&p, 5.0);
	progress_line(&p, "[device 0 1/3] PASS    add 1.0s");
	progress_finish(&p);
	fflush(out);
	assert_string_equal(buf, "[device 0 1/3] PASS    add 1.0s\n");
	fclose(out);
	free(buf);
	progress_release(&p);
}

/* Every drawn line of buf (between ESC [2K and its newline), at most max columns. */
static void assert_lines_fit(const char *buf, size_t max)
{
	for (const char *p = buf; (p = strstr(p, "\033[2K"));) {
		const char *nl = strchr(p, '\n');
		size_t n = (size_t)(nl - p) - 4;

		if (n > max)
			fail_msg("a drawn line of %zu columns: %.*s", n, (int)n, p + 4);
		p = nl;
	}
}

/*
 * A 40-column terminal: a line that wraps would leave a copy behind at
 * each redraw (the block is moved up by its count of lines). The lines
 * say the same in short, and what is still too long is cut.
 */
static void narrow_terminal(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	struct stream_reporter term;
	struct progress p;

	setenv("COLUMNS", "40", 1);
	stream_reporter_init(&term, out, stderr);
	progress_init(&p, 1, 2, &term.r, 100.0);
	p.lanes[0] = (struct progress_lane){ .device = 0, .total = 400, .done = 12, .failed = 1,
					     .current = "vllm:fused_marlin_moe_mxfp4@marlin",
					     .op_started = 110.0, .busy = 120.0 };
	p.lanes[1] = (struct progress_lane){ .device = 1, .total = 400, .done = 0 };
	progress_draw(&p, 115.0);
	progress_draw(&p, 116.0);
	progress_finish(&p);
	fflush(out);
	assert_lines_fit(buf, 39);
	assert_non_null(strstr(buf, "\033[2Kdev 0 12/400 1F ~1h04m vllm:fused_marli\n"));
	assert_non_null(strstr(buf, "\033[2Kdev 1 0/400 0F ~?\n"));
	/* two lines drawn, two moved up and erased, twice */
	assert_int_equal(count(buf, "\033[2A"), 4);
	unsetenv("COLUMNS");

	/* a wide one: the whole sentence */
	rewind(out);
	memset(buf, 0, len);
	setenv("COLUMNS", "200", 1);
	progress_draw(&p, 115.0);
	fflush(out);
	assert_non_null(strstr(buf, "device 0: 12/400 done, 1 failed, 15s elapsed"));
	unsetenv("COLUMNS");
	fclose(out);
	free(buf);
	progress_release(&p);
}

/* Quiet (-q): no progress, no passing operator; a failure and the result still. */
static void quiet_and_verbose(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	struct stream_reporter term;
	struct progress p;

	stream_reporter_init(&term, out, stderr);
	term.verbosity = REPORT_QUIET;
	progress_init(&p, 1, 1, &term.r, 0.0);
	p.lanes[0].total = 2;
	progress_draw(&p, 1.0);
	progress_end(&p, "[device 0 1/2] PASS    add 1.0s", 0);
	progress_end(&p, "[device 0 2/2] FAIL    mm 1.0s", 1);
	progress_line(&p, "zlb batch: 2 operators on 1 device");
	progress_finish(&p);
	fflush(out);
	assert_string_equal(buf, "[device 0 2/2] FAIL    mm 1.0s\n");

	/* verbose: the passing operator too, above the live block */
	rewind(out);
	memset(buf, 0, len);
	term.verbosity = REPORT_VERBOSE;
	progress_end(&p, "[device 0 1/2] PASS    add 1.0s", 0);
	fflush(out);
	assert_string_equal(buf, "[device 0 1/2] PASS    add 1.0s\n");
	/* by default, a passing operator is the live block's to count */
	rewind(out);
	memset(buf, 0, len);
	term.verbosity = REPORT_NORMAL;
	progress_end(&p, "[device 0 1/2] PASS    add 1.0s", 0);
	fflush(out);
	assert_string_equal(buf, "");
	fclose(out);
	free(buf);
	progress_release(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(durations),
		cmocka_unit_test(live_block_redrawn_in_place),
		cmocka_unit_test(plain_draws_nothing),
		cmocka_unit_test(narrow_terminal),
		cmocka_unit_test(quiet_and_verbose),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
