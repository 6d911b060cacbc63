/* rundir/preflight_report.c: the one shape of a failed check, and reading it back. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "lib/strbuf.h"
#include "lib/term.h"
#include "rundir/preflight_report.h"

static void shapes(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	preflight_report(&sb, "python", NULL, "python3 has no torch", "pass --python", 0);
	assert_string_equal(sb.buf, "PREFLIGHT_FAILED check=python\n  python3 has no torch\n"
				    "  fix: pass --python\n");
	strbuf_reset(&sb);
	preflight_report(&sb, "flaggems_dir", "B", "no checkout", "", 0);
	assert_string_equal(sb.buf, "PREFLIGHT_FAILED check=flaggems_dir side=B\n  no checkout\n");
	strbuf_reset(&sb);
	preflight_report(&sb, "device", NULL, "none", NULL, 1);
	assert_non_null(strstr(sb.buf, "PREFLIGHT_FAILED check=device" TERM_RESET "\n"));
	assert_int_equal(strncmp(sb.buf, term_color_code(TERM_RED), strlen(term_color_code(TERM_RED))), 0);
	strbuf_release(&sb);
}

static void found_again(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	char name[8];

	strbuf_addstr(&sb, "pytest says hello\n");
	preflight_report(&sb, "flaggems_dir", "A", "why", "fix", 1);
	assert_int_equal(preflight_report_find(sb.buf, name, sizeof(name)), 1);
	assert_string_equal(name, "flaggem");		/* cut to fit */
	{
		char big[64];
		assert_int_equal(preflight_report_find(sb.buf, big, sizeof(big)), 1);
		assert_string_equal(big, "flaggems_dir");	/* not the colour, not side= */
	}
	assert_int_equal(preflight_report_find("all fine\n", name, sizeof(name)), 0);
	strbuf_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(shapes),
		cmocka_unit_test(found_again),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
