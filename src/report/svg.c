/*
 * The SVG writer (svg.h).
 */
#include "report/svg.h"

#include <string.h>

#include "report/html.h"

/* "%.1f" without "-0.0": a coordinate that rounds to zero prints as 0.0. */
static void num(struct strbuf *sb, double v)
{
	if (v > -0.05 && v < 0.05)
		v = 0;
	strbuf_addf(sb, "%.1f", v);
}

static void cls_attr(struct strbuf *sb, const char *cls)
{
	if (cls && *cls)
		strbuf_addf(sb, " class=\"%s\"", cls);
}

void svg_begin(struct strbuf *sb, double w, double h, const char *cls, const char *label)
{
	strbuf_addstr(sb, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"plot");
	if (cls && *cls)
		strbuf_addf(sb, " %s", cls);
	strbuf_addstr(sb, "\" viewBox=\"0 0 ");
	num(sb, w);
	strbuf_addch(sb, ' ');
	num(sb, h);
	strbuf_addstr(sb, "\" width=\"");
	num(sb, w);
	strbuf_addstr(sb, "\" height=\"");
	num(sb, h);
	strbuf_addstr(sb, "\" role=\"img\" aria-label=\"");
	html_escape(sb, label);
	strbuf_addstr(sb, "\"><title>");
	html_escape(sb, label);
	strbuf_addstr(sb, "</title>\n");
}

void svg_end(struct strbuf *sb)
{
	strbuf_addstr(sb, "</svg>\n");
}

void svg_group_begin(struct strbuf *sb, const char *cls, const char *tooltip)
{
	strbuf_addstr(sb, "<g");
	cls_attr(sb, cls);
	strbuf_addch(sb, '>');
	if (tooltip) {
		strbuf_addstr(sb, "<title>");
		html_escape(sb, tooltip);
		strbuf_addstr(sb, "</title>");
	}
}

void svg_group_end(struct strbuf *sb)
{
	strbuf_addstr(sb, "</g>\n");
}

void svg_rect(struct strbuf *sb, double x, double y, double w, double h, const char *cls)
{
	if (w < 0) {
		x += w;
		w = -w;
	}
	if (h < 0) {
		y += h;
		h = -h;
	}
	strbuf_addstr(sb, "<rect x=\"");
	num(sb, x);
	strbuf_addstr(sb, "\" y=\"");
	num(sb, y);
	strbuf_addstr(sb, "\" width=\"");
	num(sb, w);
	strbuf_addstr(sb, "\" height=\"");
	num(sb, h);
	strbuf_addch(sb, '"');
	cls_attr(sb, cls);
	strbuf_addstr(sb, "/>\n");
}

void svg_line(struct strbuf *sb, double x1, double y1, double x2, double y2, const char *cls)
{
	strbuf_addstr(sb, "<line x1=\"");
	num(sb, x1);
	strbuf_addstr(sb, "\" y1=\"");
	num(sb, y1);
	strbuf_addstr(sb, "\" x2=\"");
	num(sb, x2);
	strbuf_addstr(sb, "\" y2=\"");
	num(sb, y2);
	strbuf_addch(sb, '"');
	cls_attr(sb, cls);
	strbuf_addstr(sb, "/>\n");
}

void svg_circle(struct strbuf *sb, double cx, double cy, double r, const char *cls)
{
	strbuf_addstr(sb, "<circle cx=\"");
	num(sb, cx);
	strbuf_addstr(sb, "\" cy=\"");
	num(sb, cy);
	strbuf_addstr(sb, "\" r=\"");
	num(sb, r);
	strbuf_addch(sb, '"');
	cls_attr(sb, cls);
	strbuf_addstr(sb, "/>\n");
}

void svg_diamond(struct strbuf *sb, double cx, double cy, double r, const char *cls)
{
	strbuf_addstr(sb, "<polygon points=\"");
	num(sb, cx);
	strbuf_addch(sb, ',');
	num(sb, cy - r);
	strbuf_addch(sb, ' ');
	num(sb, cx + r);
	strbuf_addch(sb, ',');
	num(sb, cy);
	strbuf_addch(sb, ' ');
	num(sb, cx);
	strbuf_addch(sb, ',');
	num(sb, cy + r);
	strbuf_addch(sb, ' ');
	num(sb, cx - r);
	strbuf_addch(sb, ',');
	num(sb, cy);
	strbuf_addch(sb, '"');
	cls_attr(sb, cls);
	strbuf_addstr(sb, "/>\n");
}

void svg_polyline(struct strbuf *sb, const double *x, const double *y, size_t n,
		  const char *cls)
{
	strbuf_addstr(sb, "<polyline points=\"");
	for (size_t i = 0; i < n; i++) {
		if (i)
			strbuf_addch(sb, ' ');
		num(sb, x[i]);
		strbuf_addch(sb, ',');
		num(sb, y[i]);
	}
	strbuf_addch(sb, '"');
	cls_attr(sb, cls);
	strbuf_addstr(sb, "/>\n");
}

size_t svg_utf8_chars(const char *text, size_t len)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++)
		if (((unsigned char)text[i] & 0xc0) != 0x80)
			n++;
	return n;
}

/* The byte length of the first max characters of text (never inside a character). */
static size_t utf8_prefix(const char *text, size_t max)
{
	size_t n = 0, i = 0;

	for (; text[i]; i++) {
		if (((unsigned char)text[i] & 0xc0) != 0x80) {
			if (n == max)
				break;
			n++;
		}
	}
	return i;
}

static const char *const anchors[] = { "start", "middle", "end" };

void svg_text(struct strbuf *sb, double x, double y, enum svg_anchor anchor, const char *cls,
	      const char *text, size_t max_chars)
{
	size_t len = strlen(text);
	int cut = max_chars && svg_utf8_chars(text, len) > max_chars;

	strbuf_addstr(sb, "<text x=\"");
	num(sb, x);
	strbuf_addstr(sb, "\" y=\"");
	num(sb, y);
	strbuf_addch(sb, '"');
	if (anchor != SVG_START)
		strbuf_addf(sb, " text-anchor=\"%s\"", anchors[anchor]);
	cls_attr(sb, cls);
	strbuf_addch(sb, '>');
	if (cut) {
		strbuf_addstr(sb, "<title>");
		html_escape(sb, text);
		strbuf_addstr(sb, "</title>");
		html_escape_len(sb, text, utf8_prefix(text, max_chars - 1));
		strbuf_addstr(sb, "\xe2\x80\xa6");	/* U+2026 */
	} else {
		html_escape(sb, text);
	}
	strbuf_addstr(sb, "</text>\n");
}

void svg_text_rotated(struct strbuf *sb, double x, double y, double rotate,
		      enum svg_anchor anchor, const char *cls, const char *text)
{
	strbuf_addstr(sb, "<text x=\"");
	num(sb, x);
	strbuf_addstr(sb, "\" y=\"");
	num(sb, y);
	strbuf_addstr(sb, "\" transform=\"rotate(");
	num(sb, rotate);
	strbuf_addch(sb, ' ');
	num(sb, x);
	strbuf_addch(sb, ' ');
	num(sb, y);
	strbuf_addstr(sb, ")\"");
	if (anchor != SVG_START)
		strbuf_addf(sb, " text-anchor=\"%s\"", anchors[anchor]);
	cls_attr(sb, cls);
	strbuf_addch(sb, '>');
	html_escape(sb, text);
	strbuf_addstr(sb, "</text>\n");
}
