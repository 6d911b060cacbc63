/*
 * JUnit XML, the test report CI systems (GitLab, Jenkins, GitHub actions)
 * show as tests: one <testsuites> holding one <testsuite> of <testcase>s,
 * each passed, failed or skipped.
 *
 * Every name and message comes from data (operator specs, shapes, remarks):
 * all of it is escaped, and what XML 1.0 cannot hold at all (control
 * characters, bytes that are not UTF-8) is replaced, so the file always
 * parses.
 */
#ifndef ZLB_JUNIT_H
#define ZLB_JUNIT_H

#include <stddef.h>

#include "lib/strbuf.h"

enum junit_outcome { JUNIT_PASSED, JUNIT_FAILED, JUNIT_SKIPPED };

/* A name=value fact about a test case (<properties>: where it ran, ...). */
struct junit_property {
	char *name, *value;
};

struct junit_case {
	char *classname, *name;
	double seconds;			/* < 0: not known (no time attribute) */
	enum junit_outcome outcome;
	char *message;			/* failed, skipped: the one-line reason, or NULL */
	char *details;			/* failed: a longer text for the body, or NULL */
	struct junit_property *props;	/* rendered as the case's <properties>, in order */
	size_t nr_props;
};

struct junit_suite {
	char *name;
	struct junit_case *cases;
	size_t nr, alloc;
};

void junit_init(struct junit_suite *s, const char *name);
void junit_release(struct junit_suite *s);

/*
 * A new test case (passed, no time) at the end; its strings are copies.
 * message and details may be NULL.
 */
struct junit_case *junit_add(struct junit_suite *s, const char *classname, const char *name,
			     enum junit_outcome outcome, const char *message, const char *details);

/*
 * Add name=value to c's <properties> (copies). The element pytest and the
 * CI systems that read its reports (GitLab, Jenkins' JUnit plugin) know,
 * the first child of a <testcase>.
 */
void junit_property(struct junit_case *c, const char *name, const char *value);

/* The document: the XML declaration, then the suite with its counts. */
void junit_render(const struct junit_suite *s, struct strbuf *out);

/* junit_render into path, atomically (write_file_atomic). Returns 0 or error(). */
int junit_write(const struct junit_suite *s, const char *path);

/*
 * text as an XML attribute value (or character data): & < > " ' as
 * entities, tab, newline and carriage return as character references
 * (so a reader keeps them), any other control character and every byte
 * that is not part of a valid UTF-8 sequence as U+FFFD. (A failure's
 * body keeps its tabs and newlines as they are.)
 */
void xml_add_escaped(struct strbuf *sb, const char *text);

#endif
