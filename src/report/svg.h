/*
 * A small SVG writer: shapes and text appended to a strbuf, for plots
 * inlined in a report's HTML. Coordinates are user units of the viewBox
 * (the page scales the whole picture); numbers are written with one
 * decimal, so a plot's text does not depend on the last bits of a double.
 * Looks come from classes (report/html.c's stylesheet), not from
 * attributes, so print rules can change them. Text is escaped here; class
 * names are the caller's constants.
 */
#ifndef ZLB_REPORT_SVG_H
#define ZLB_REPORT_SVG_H

#include <stddef.h>

#include "lib/strbuf.h"

enum svg_anchor { SVG_START, SVG_MIDDLE, SVG_END };

/*
 * <svg class="plot cls" viewBox="0 0 w h" role="img" aria-label=label> and
 * a <title> (escaped) that a screen reader and a tooltip show.
 */
void svg_begin(struct strbuf *sb, double w, double h, const char *cls, const char *label);
void svg_end(struct strbuf *sb);

/* <g class="cls"> with an optional <title> tooltip (escaped). */
void svg_group_begin(struct strbuf *sb, const char *cls, const char *tooltip);
void svg_group_end(struct strbuf *sb);

void svg_rect(struct strbuf *sb, double x, double y, double w, double h, const char *cls);
void svg_line(struct strbuf *sb, double x1, double y1, double x2, double y2, const char *cls);
void svg_circle(struct strbuf *sb, double cx, double cy, double r, const char *cls);
/* A diamond of half-width r: a marker distinct from a circle without colour. */
void svg_diamond(struct strbuf *sb, double cx, double cy, double r, const char *cls);
void svg_polyline(struct strbuf *sb, const double *x, const double *y, size_t n,
		  const char *cls);

/*
 * Text at (x, y) (y is the baseline), escaped, cut to max_chars characters
 * with an ellipsis when longer (0: no limit); the whole text then goes in
 * a <title> so hovering shows it. rotate: degrees about (x, y).
 */
void svg_text(struct strbuf *sb, double x, double y, enum svg_anchor anchor, const char *cls,
	      const char *text, size_t max_chars);
void svg_text_rotated(struct strbuf *sb, double x, double y, double rotate,
		      enum svg_anchor anchor, const char *cls, const char *text);

/* How many characters of UTF-8 text[0..len) (continuation bytes not counted). */
size_t svg_utf8_chars(const char *text, size_t len);

#endif
