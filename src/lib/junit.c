#include "lib/junit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/paths.h"

void junit_init(struct junit_suite *s, const char *name)
{
	memset(s, 0, sizeof(*s));
	s->name = xstrdup(name);
}

void junit_release(struct junit_suite *s)
{
	for (size_t i = 0; i < s->nr; i++) {
		free(s->cases[i].classname);
		free(s->cases[i].name);
		free(s->cases[i].message);
		free(s->cases[i].details);
		for (size_t k = 0; k < s->cases[i].nr_props; k++) {
			free(s->cases[i].props[k].name);
			free(s->cases[i].props[k].value);
		}
		free(s->cases[i].props);
	}
	free(s->cases);
	free(s->name);
	memset(s, 0, sizeof(*s));
}

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

struct junit_case *junit_add(struct junit_suite *s, const char *classname, const char *name,
			     enum junit_outcome outcome, const char *message, const char *details)
{
	struct junit_case *c;

	if (s->nr == s->alloc) {
		s->alloc = s->alloc ? 2 * s->alloc : 16;
		s->cases = xrealloc(s->cases, s->alloc * sizeof(*s->cases));
	}
	c = &s->cases[s->nr++];
	c->classname = xstrdup(classname);
	c->name = xstrdup(name);
	c->seconds = -1;
	c->outcome = outcome;
	c->message = dup_or_null(message);
	c->details = dup_or_null(details);
	c->props = NULL;	/* junit_property() adds them */
	c->nr_props = 0;
	return c;
}

void junit_property(struct junit_case *c, const char *name, const char *value)
{
	/* a few per case: grown one at a time */
	c->props = xrealloc(c->props, (c->nr_props + 1) * sizeof(*c->props));
	c->props[c->nr_props].name = xstrdup(name);
	c->props[c->nr_props].value = xstrdup(value);
	c->nr_props++;
}

/* The length of the valid UTF-8 sequence at p (1 to 4), or 0 when it is not one. */
static size_t utf8_len(const unsigned char *p)
{
	size_t n;
	unsigned cp;

	if (*p < 0x80)
		return 1;
	if ((*p & 0xE0) == 0xC0)
		n = 2, cp = *p & 0x1F;
	else if ((*p & 0xF0) == 0xE0)
		n = 3, cp = *p & 0x0F;
	else if ((*p & 0xF8) == 0xF0)
		n = 4, cp = *p & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xC0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3F);
	}
	/* overlong forms, surrogates, beyond U+10FFFF, and U+FFFE/U+FFFF are not XML */
	if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF || cp == 0xFFFE || cp == 0xFFFF)
		return 0;
	return n;
}

/* attr: an attribute value (whitespace as references, so a reader keeps it); else character data. */
static void add_xml(struct strbuf *sb, const char *text, int attr)
{
	const unsigned char *p = (const unsigned char *)text;

	while (*p) {
		size_t n = utf8_len(p);

		if (!n) {
			strbuf_addstr(sb, "\xEF\xBF\xBD");
			p++;
			continue;
		}
		if (n > 1) {
			strbuf_add(sb, p, n);
			p += n;
			continue;
		}
		switch (*p) {
		case '&': strbuf_addstr(sb, "&amp;"); break;
		case '<': strbuf_addstr(sb, "&lt;"); break;
		case '>': strbuf_addstr(sb, "&gt;"); break;
		case '"': strbuf_addstr(sb, "&quot;"); break;
		case '\'': strbuf_addstr(sb, "&apos;"); break;
		case '\t': strbuf_addstr(sb, attr ? "&#9;" : "\t"); break;
		case '\n': strbuf_addstr(sb, attr ? "&#10;" : "\n"); break;
		case '\r': strbuf_addstr(sb, "&#13;"); break;
		default:
			if (*p < 0x20 || *p == 0x7F)
				strbuf_addstr(sb, "\xEF\xBF\xBD");
			else
				strbuf_addch(sb, *p);
		}
		p++;
	}
}

void xml_add_escaped(struct strbuf *sb, const char *text)
{
	add_xml(sb, text, 1);
}

static void attr(struct strbuf *out, const char *name, const char *value)
{
	strbuf_addf(out, " %s=\"", name);
	xml_add_escaped(out, value);
	strbuf_addch(out, '"');
}

/* A case's <properties>, when it has any. */
static void add_properties(struct strbuf *out, const struct junit_case *c)
{
	if (!c->nr_props)
		return;
	strbuf_addstr(out, "      <properties>\n");
	for (size_t k = 0; k < c->nr_props; k++) {
		strbuf_addstr(out, "        <property");
		attr(out, "name", c->props[k].name);
		attr(out, "value", c->props[k].value);
		strbuf_addstr(out, "/>\n");
	}
	strbuf_addstr(out, "      </properties>\n");
}

/* A failed or skipped case's <failure> or <skipped>. */
static void add_outcome(struct strbuf *out, const struct junit_case *c)
{
	const char *tag = c->outcome == JUNIT_FAILED ? "failure" : "skipped";

	strbuf_addf(out, "      <%s", tag);
	if (c->message)
		attr(out, "message", c->message);
	if (c->details) {
		strbuf_addch(out, '>');
		add_xml(out, c->details, 0);
		strbuf_addf(out, "</%s>\n", tag);
	} else {
		strbuf_addstr(out, "/>\n");
	}
}

void junit_render(const struct junit_suite *s, struct strbuf *out)
{
	size_t failed = 0, skipped = 0;
	double total = 0;
	char num[64];

	for (size_t i = 0; i < s->nr; i++) {
		failed += s->cases[i].outcome == JUNIT_FAILED;
		skipped += s->cases[i].outcome == JUNIT_SKIPPED;
		if (s->cases[i].seconds > 0)
			total += s->cases[i].seconds;
	}
	strbuf_addstr(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites");
	attr(out, "name", s->name);
	strbuf_addf(out, " tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\" "
		    "time=\"%.3f\">\n", s->nr, failed, skipped, total);
	strbuf_addstr(out, "  <testsuite");
	attr(out, "name", s->name);
	strbuf_addf(out, " tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\" "
		    "time=\"%.3f\">\n", s->nr, failed, skipped, total);
	for (size_t i = 0; i < s->nr; i++) {
		const struct junit_case *c = &s->cases[i];

		strbuf_addstr(out, "    <testcase");
		attr(out, "classname", c->classname);
		attr(out, "name", c->name);
		if (c->seconds >= 0) {
			snprintf(num, sizeof(num), "%.3f", c->seconds);
			attr(out, "time", num);
		}
		if (c->outcome == JUNIT_PASSED && !c->nr_props) {
			strbuf_addstr(out, "/>\n");
			continue;
		}
		strbuf_addstr(out, ">\n");
		add_properties(out, c);
		if (c->outcome != JUNIT_PASSED)
			add_outcome(out, c);
		strbuf_addstr(out, "    </testcase>\n");
	}
	strbuf_addstr(out, "  </testsuite>\n</testsuites>\n");
}

int junit_write(const struct junit_suite *s, const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	int r;

	junit_render(s, &sb);
	r = write_file_atomic(path, sb.buf, sb.len);
	strbuf_release(&sb);
	return r;
}
