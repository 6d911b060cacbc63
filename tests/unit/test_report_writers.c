/*
 * src/report's writers: HTML escaping and URLs, the SVG writer, axes, and
 * the plots' structure (what a browser will find in the DOM).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"
#include "report/html.h"
#include "report/plot.h"
#include "report/scale.h"
#include "report/svg.h"

#include "error_capture.h"

/* How many times needle occurs in hay. */
static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static void escapes_every_special_character(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	html_escape(&sb, "<script>alert('x')</script> & \"q\"");
	assert_string_equal(sb.buf, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; "
			    "&quot;q&quot;");
	strbuf_reset(&sb);
	/* a control byte is no HTML character: replaced, never passed through */
	html_escape(&sb, "a\x01" "b\tc");
	assert_string_equal(sb.buf, "a\xef\xbf\xbd" "b\tc");
	strbuf_reset(&sb);
	html_escape(&sb, NULL);
	assert_int_equal(sb.len, 0);
	strbuf_release(&sb);
}

static void urls_are_percent_encoded(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	html_url_path(&sb, "../runs/a b/x\"y/javascript:1.ttgir");
	assert_string_equal(sb.buf, "../runs/a%20b/x%22y/javascript%3A1.ttgir");
	strbuf_release(&sb);
}

static void page_is_self_contained(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	html_begin(&sb, "A <b> title");
	html_end(&sb, "2026-12-02T00:00:00Z");
	assert_contains(sb.buf, "<!DOCTYPE html>");
	assert_contains(sb.buf, "Content-Security-Policy\" content=\"default-src 'none'; "
			"style-src 'unsafe-inline'\"");
	assert_contains(sb.buf, "<title>A &lt;b&gt; title</title>");
	assert_contains(sb.buf, "@media print");
	assert_null(strstr(sb.buf, "<script"));
	assert_null(strstr(sb.buf, "http://"));
	assert_null(strstr(sb.buf, "https://"));
	assert_null(strstr(sb.buf, "@import"));
	assert_null(strstr(sb.buf, "url("));
	strbuf_release(&sb);
}

static void table_cells(void **state)
{
	static const char *const heads[] = { "name", "#ms", NULL };
	struct strbuf sb = STRBUF_INIT;

	html_table_begin(&sb, "t", "cap<", heads);
	html_tr_begin(&sb, NULL);
	html_td(&sb, "<op>");
	html_td_num(&sb, "%.2f", 1.5);
	html_td_label(&sb, "x\"y");
	html_tr_end(&sb);
	html_table_end(&sb);
	assert_contains(sb.buf, "<caption>cap&lt;</caption>");
	assert_contains(sb.buf, "<th>name</th><th class=\"num\">ms</th>");
	assert_contains(sb.buf, "<td>&lt;op&gt;</td><td class=\"num\">1.50</td>");
	assert_contains(sb.buf, "<td class=\"label\" title=\"x&quot;y\">x&quot;y</td>");
	strbuf_release(&sb);
}

static void svg_text_is_escaped_and_cut(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	svg_text(&sb, 1, 2, SVG_END, "c", "<a>&", 0);
	assert_string_equal(sb.buf, "<text x=\"1.0\" y=\"2.0\" text-anchor=\"end\" class=\"c\">"
			    "&lt;a&gt;&amp;</text>\n");
	strbuf_reset(&sb);
	/* cut to 5 characters: 4 and an ellipsis; the whole text in a title */
	svg_text(&sb, 0, 0, SVG_START, NULL, "abcdefgh", 5);
	assert_contains(sb.buf, "<title>abcdefgh</title>abcd\xe2\x80\xa6</text>");
	strbuf_reset(&sb);
	/* never inside a UTF-8 character */
	svg_text(&sb, 0, 0, SVG_START, NULL, "\xc3\xa9\xc3\xa9\xc3\xa9", 2);
	assert_contains(sb.buf, "</title>\xc3\xa9\xe2\x80\xa6</text>");
	assert_int_equal(svg_utf8_chars("\xc3\xa9x", 3), 2);
	strbuf_release(&sb);
}

static void svg_shapes(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	double x[] = { 0, 10.04 }, y[] = { -0.01, 5 };

	svg_begin(&sb, 100, 50, "k", "T&");
	svg_rect(&sb, 10, 10, -5, 4, "r");	/* a negative width is drawn from the other side */
	svg_polyline(&sb, x, y, 2, NULL);
	svg_end(&sb);
	assert_contains(sb.buf, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"plot k\" "
			"viewBox=\"0 0 100.0 50.0\"");
	assert_contains(sb.buf, "aria-label=\"T&amp;\"><title>T&amp;</title>");
	assert_contains(sb.buf, "<rect x=\"5.0\" y=\"10.0\" width=\"5.0\" height=\"4.0\" "
			"class=\"r\"/>");
	assert_contains(sb.buf, "points=\"0.0,0.0 10.0,5.0\"");	/* no "-0.0" */
	assert_true(ends_with(sb.buf, "</svg>\n"));
	strbuf_release(&sb);
}

static void scales_and_ticks(void **state)
{
	struct scale s;
	double t[16];
	size_t n;

	scale_init(&s, 0, 10, 100, 200, 0);
	assert_true(fabs(scale_map(&s, 5) - 150) < 1e-9);
	assert_true(fabs(scale_map(&s, 20) - 200) < 1e-9);	/* clamped */
	assert_true(fabs(scale_map(&s, NAN) - 100) < 1e-9);
	n = scale_ticks(&s, t, 16);
	assert_int_equal(n, 6);
	assert_true(t[0] == 0 && fabs(t[5] - 10) < 1e-9);

	/* a y axis runs upwards */
	scale_init(&s, 1, 100, 300, 0, 1);
	assert_true(fabs(scale_map(&s, 10) - 150) < 1e-9);

	/* around 1 on a log axis: 1-2-5 ticks or finer, 1 among them */
	scale_init(&s, 0.5, 2, 0, 100, 1);
	n = scale_ticks(&s, t, 16);
	assert_true(n >= 3);
	{
		int has_one = 0;
		for (size_t i = 0; i < n; i++)
			has_one |= fabs(t[i] - 1) < 1e-12;
		assert_true(has_one);
	}
	/* a narrow band still gets ticks */
	scale_init(&s, 0.99, 1.01, 0, 100, 1);
	assert_true(scale_ticks(&s, t, 16) >= 2);
	/* many decades: powers of ten, at most 8 or so */
	scale_init(&s, 1e-6, 1e6, 0, 100, 1);
	n = scale_ticks(&s, t, 16);
	assert_true(n >= 2 && n <= 9);
	/* a point still gets an axis; a log axis never takes 0 */
	scale_init(&s, 3, 3, 0, 100, 0);
	assert_true(s.d0 < 3 && s.d1 > 3);
	scale_init(&s, 0, 5, 0, 100, 1);
	assert_true(s.d0 > 0);
}

static void labels(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	plot_percent_label(&sb, 1.015);
	strbuf_addch(&sb, ' ');
	plot_percent_label(&sb, 1);
	strbuf_addch(&sb, ' ');
	plot_times_label(&sb, 0.25);
	strbuf_addch(&sb, ' ');
	plot_count_label(&sb, 16777216);
	strbuf_addch(&sb, ' ');
	plot_count_label(&sb, 512);
	assert_string_equal(sb.buf, "+1.5% 0% 0.25x 16.8M 512");
	strbuf_release(&sb);
}

static void forest_plot_draws_every_row_by_verdict(void **state)
{
	struct forest_row rows[] = {
		{ "op <b> slow", 1.05, 1.03, 1.07, "SLOWER", "K differs", NULL },
		{ "same", 1.001, 0.995, 1.006, "SAME", NULL, NULL },
		{ "empty", 1.0, 0.99, 1.01, "EXCLUDED", "empty graph", NULL },
		{ "odd verdict", 0.97, 0.96, 0.98, "<x>", NULL, NULL },
		{ "huge", 9.0, 7.0, 11.0, "SLOWER", NULL, "tip" },
	};
	struct forest f = { "B/A", 0.01, rows, 5 };
	struct strbuf sb = STRBUF_INIT;

	plot_forest(&sb, &f);
	assert_contains(sb.buf, "class=\"plot forest\"");
	/* a dot per drawn row, a diamond for the excluded one (and the legend's) */
	assert_int_equal(count(sb.buf, "class=\"pt v-SLOWER\""), 2);
	assert_int_equal(count(sb.buf, "class=\"pt v-SAME\""), 1);
	assert_int_equal(count(sb.buf, "<polygon") , 2);
	assert_int_equal(count(sb.buf, "class=\"pt v-EXCLUDED\""), 1);
	/* a verdict from the data never becomes a class */
	assert_null(strstr(sb.buf, "v-<x>"));
	assert_int_equal(count(sb.buf, "class=\"pt v-UNSURE\""), 1);
	/* one interval line per row, the band, the line at no change */
	assert_int_equal(count(sb.buf, "class=\"ci v-"), 5);
	assert_int_equal(count(sb.buf, "class=\"band\""), 2);	/* legend + plot */
	assert_int_equal(count(sb.buf, "class=\"one\""), 1);
	assert_contains(sb.buf, "SAME band \xc2\xb1" "1%");
	assert_contains(sb.buf, ">op &lt;b&gt; slow</text>");
	assert_contains(sb.buf, "class=\"flag\">K differs</text>");
	/* 9x is beyond the axis: cut at the edge with an arrow */
	assert_contains(sb.buf, "\xe2\x96\xb6");
	assert_contains(sb.buf, "<title>tip</title>");
	strbuf_release(&sb);
}

static void plots_without_data_say_so(void **state)
{
	struct forest_row row = { "x", NAN, NAN, NAN, "SAME", NULL, NULL };
	struct forest f = { "empty forest", 0.01, &row, 1 };
	struct xy_plot p = { "empty xy", "x", "y", NULL, 0, NULL };
	double edges[] = { 1, 2 };
	size_t counts[] = { 0 };
	struct histogram h = { "empty histogram", NULL, NULL, edges, counts, 1, 1, NULL };
	struct strbuf sb = STRBUF_INIT;

	plot_forest(&sb, &f);
	plot_xy(&sb, &p);
	plot_histogram(&sb, &h);
	assert_int_equal(count(sb.buf, "class=\"plot empty\""), 3);
	assert_contains(sb.buf, "no row has a ratio B/A to draw");
	assert_contains(sb.buf, "no measured latency to draw");
	assert_contains(sb.buf, "no value to count");
	strbuf_release(&sb);
}

static void bars_histogram_and_lines(void **state)
{
	struct hbar bars[] = {
		{ "PASS", 5, "bar hi", "5", NULL },
		{ "FAIL", 1, "bar lo", "1", NULL },
	};
	struct hbars hb = { "status", "operators", bars, 2, 0 };
	double edges[] = { 0.5, 1, 2, 4 };
	size_t counts[] = { 3, 0, 2 };
	struct histogram h = { "speedups", "x", "rows", edges, counts, 3, 1, "1x" };
	double x[] = { 1e3, 1e6 }, y1[] = { 0.01, 1 }, y2[] = { 0.02, -1 };
	struct xy_series s[] = { { "fp16 gems", "s0", x, y1, 2 }, { "fp16 torch", "s0 torch", x, y2, 2 } };
	struct xy_plot p = { "lat", "size", "ms", s, 2, plot_count_label };
	struct strbuf sb = STRBUF_INIT;

	plot_hbars(&sb, &hb);
	assert_int_equal(count(sb.buf, "class=\"bar hi\""), 1);
	assert_int_equal(count(sb.buf, "class=\"bar lo\""), 1);
	strbuf_reset(&sb);
	plot_histogram(&sb, &h);
	/* empty bins draw nothing; below the mark red, above green */
	assert_int_equal(count(sb.buf, "<rect"), 2);
	assert_contains(sb.buf, "<title>3 in [0.5, 1)</title><rect");
	assert_contains(sb.buf, "class=\"bar lo\"");
	assert_contains(sb.buf, "class=\"bar hi\"");
	strbuf_reset(&sb);
	plot_xy(&sb, &p);
	/* two legend lines, one series line (the torch one has a single usable point) */
	assert_int_equal(count(sb.buf, "<polyline"), 3);
	assert_int_equal(count(sb.buf, "<circle"), 3);
	assert_contains(sb.buf, ">1M</text>");
	strbuf_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(escapes_every_special_character),
		cmocka_unit_test(urls_are_percent_encoded),
		cmocka_unit_test(page_is_self_contained),
		cmocka_unit_test(table_cells),
		cmocka_unit_test(svg_text_is_escaped_and_cut),
		cmocka_unit_test(svg_shapes),
		cmocka_unit_test(scales_and_ticks),
		cmocka_unit_test(labels),
		cmocka_unit_test(forest_plot_draws_every_row_by_verdict),
		cmocka_unit_test(plots_without_data_say_so),
		cmocka_unit_test(bars_histogram_and_lines),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
