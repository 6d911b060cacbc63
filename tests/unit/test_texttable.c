/*
 * texttable.c and markdown.c: a table laid out for a terminal of a given
 * width (which columns give way, how, and never below their floor), the
 * same table as Markdown, and data that cannot break either.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "lib/markdown.h"
#include "lib/texttable.h"

static const struct tt_column cols[] = {
	{ "op", 0, TT_CUT, 6, 1 },
	{ "ms", 1, TT_KEEP, 0, 0 },
	{ "shape", 0, TT_CUT, 8, 1 },
	{ "notes", 0, TT_WRAP, 10, 0 },
};

static void fill(struct texttable *t)
{
	struct tt_cell *c;

	tt_init(t, cols, 4);
	c = tt_add_row(t);
	tt_set(&c[0], xstrdup("softmax"));
	tt_set(&c[1], xstrdup("0.0123"));
	tt_set(&c[2], xstrdup("[torch.Size([1024, 1024]), 1]"));
	tt_set(&c[3], xstrdup("!A:direct rounds 2/3"));
	c = tt_add_row(t);
	tt_set(&c[0], xstrdup("fused_add_rms_norm"));
	tt_set(&c[1], xstrdup("1.5"));
	tt_set(&c[2], xstrdup("[torch.Size([64, 4096])]"));
	/* c[3] left empty */
}

/* The longest line of text, in columns. */
static size_t longest(const char *text)
{
	size_t best = 0;

	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);

		if (term_text_width(p, n) > best)
			best = term_text_width(p, n);
		p += n + (nl != NULL);
	}
	return best;
}

static void natural_widths_without_limit(void **state)
{
	struct texttable t;
	size_t w[4];
	struct strbuf sb = STRBUF_INIT;

	fill(&t);
	tt_fit(&t, 0, w);
	assert_int_equal(w[0], strlen("fused_add_rms_norm"));
	assert_int_equal(w[1], strlen("0.0123"));
	assert_int_equal(w[2], strlen("[torch.Size([1024, 1024]), 1]"));
	assert_int_equal(w[3], strlen("!A:direct rounds 2/3"));
	/* A wide enough terminal changes nothing. */
	tt_fit(&t, 300, w);
	assert_int_equal(w[2], strlen("[torch.Size([1024, 1024]), 1]"));
	tt_render(&t, 0, 0, &sb);
	assert_non_null(strstr(sb.buf, "[torch.Size([1024, 1024]), 1]"));
	assert_non_null(strstr(sb.buf, "fused_add_rms_norm"));
	/* numbers right-aligned, the last cell unpadded, no trailing space */
	assert_non_null(strstr(sb.buf, "   1.5  "));
	assert_null(strstr(sb.buf, " \n"));
	assert_null(strchr(sb.buf, '\033'));
	strbuf_release(&sb);
	tt_release(&t);
}

static void narrow_terminal_cuts_and_wraps(void **state)
{
	struct texttable t;
	size_t w[4], total;
	struct strbuf sb = STRBUF_INIT;

	fill(&t);
	tt_fit(&t, 50, w);
	total = w[0] + w[1] + w[2] + w[3] + 3 * TT_GAP;
	assert_true(total <= 50);
	/* the number column never gives way; the widest flexible one gave first */
	assert_int_equal(w[1], strlen("0.0123"));
	assert_true(w[0] >= 6 && w[2] >= 8 && w[3] >= 10);
	assert_true(w[2] < strlen("[torch.Size([1024, 1024]), 1]"));

	tt_render(&t, 50, 0, &sb);
	assert_true(longest(sb.buf) <= 50);
	/* cut text says it was cut */
	assert_non_null(strstr(sb.buf, "..."));
	/* wrapped notes: each word whole, on more lines */
	assert_non_null(strstr(sb.buf, "!A:direct"));
	assert_non_null(strstr(sb.buf, "rounds 2/3"));
	strbuf_release(&sb);
	tt_release(&t);
}

static void never_below_the_floor(void **state)
{
	struct texttable t;
	size_t w[4];
	struct strbuf sb = STRBUF_INIT;

	fill(&t);
	tt_fit(&t, 10, w);
	assert_int_equal(w[0], 6);
	assert_int_equal(w[2], 8);
	assert_int_equal(w[3], 10);
	tt_render(&t, 10, 0, &sb);
	/* "softmax" is 7: cut to 6 columns with its dots */
	assert_non_null(strstr(sb.buf, "sof..."));
	strbuf_release(&sb);
	tt_release(&t);
}

static void colour_takes_no_width(void **state)
{
	struct texttable t;
	struct tt_cell *c;
	struct strbuf plain = STRBUF_INIT, coloured = STRBUF_INIT;
	static const struct tt_column two[] = {
		{ "verdict", 0, TT_KEEP, 0, 0 }, { "x", 1, TT_KEEP, 0, 0 },
	};

	tt_init(&t, two, 2);
	c = tt_add_row(&t);
	tt_set_colored(&c[0], xstrdup("SLOWER"), TERM_RED);
	tt_set(&c[1], xstrdup("12"));
	tt_render(&t, 0, 0, &plain);
	tt_render(&t, 0, 1, &coloured);
	assert_null(strchr(plain.buf, '\033'));
	assert_non_null(strstr(coloured.buf, "\033[31mSLOWER\033[0m   12"));
	assert_non_null(strstr(plain.buf, "SLOWER   12"));
	strbuf_release(&plain);
	strbuf_release(&coloured);
	tt_release(&t);
}

static void utf8_counts_columns_not_bytes(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	assert_int_equal(term_text_width("\xc3\xa9t\xc3\xa9", 5), 3);
	term_add_cut(&sb, "\xc3\xa9t\xc3\xa9s longs", 6);
	/* three columns kept whole (no half character), then the dots */
	assert_string_equal(sb.buf, "\xc3\xa9t\xc3\xa9...");
	strbuf_release(&sb);
}

static void markdown_table(void **state)
{
	struct texttable t;
	struct strbuf sb = STRBUF_INIT;
	struct tt_cell *c;

	fill(&t);
	c = tt_add_row(&t);
	tt_set(&c[0], xstrdup("a|b"));
	tt_set(&c[1], xstrdup("2"));
	tt_set(&c[2], xstrdup("x`y"));
	tt_set(&c[3], xstrdup("*bold* <b>[link](x)\nnext"));
	tt_render_md(&t, &sb);
	assert_non_null(strstr(sb.buf, "| op | ms | shape | notes |\n| --- | ---: | --- | --- |\n"));
	assert_non_null(strstr(sb.buf, "| `softmax` | 0.0123 | `[torch.Size([1024, 1024]), 1]` |"));
	/* a pipe stays in its cell, a backtick in its span, markup stays text */
	assert_non_null(strstr(sb.buf, "| `a\\|b` | 2 | ``x`y`` | \\*bold\\* \\<b\\>\\[link\\](x) next |"));
	/* an empty cell stays empty */
	assert_non_null(strstr(sb.buf, "| 1.5 | `[torch.Size([64, 4096])]` |  |\n"));
	strbuf_release(&sb);
	tt_release(&t);
}

static void markdown_code_spans(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	md_add_code(&sb, "`edge`");
	assert_string_equal(sb.buf, "`` `edge` ``");
	strbuf_reset(&sb);
	md_add_code(&sb, "");
	assert_string_equal(sb.buf, "");
	md_add_text(&sb, "# not a heading");
	assert_string_equal(sb.buf, "\\# not a heading");
	strbuf_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(natural_widths_without_limit),
		cmocka_unit_test(narrow_terminal_cuts_and_wraps),
		cmocka_unit_test(never_below_the_floor),
		cmocka_unit_test(colour_takes_no_width),
		cmocka_unit_test(utf8_counts_columns_not_bytes),
		cmocka_unit_test(markdown_table),
		cmocka_unit_test(markdown_code_spans),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
