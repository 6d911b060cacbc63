/*
 * junit.c: the JUnit XML report, its counts, and names from data that
 * cannot break it (markup, quotes, control bytes, bytes that are not UTF-8).
 * Whether the file parses as XML is checked by the CLI tests with Python's
 * xml.etree; here, what it says.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "lib/junit.h"

static void escaping(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	xml_add_escaped(&sb, "a<b>&\"c'\td\ne");
	assert_string_equal(sb.buf, "a&lt;b&gt;&amp;&quot;c&apos;&#9;d&#10;e");
	strbuf_reset(&sb);
	/* a control byte and a lone continuation byte are not XML: U+FFFD */
	xml_add_escaped(&sb, "x\001y\x80z");
	assert_string_equal(sb.buf, "x\xEF\xBF\xBDy\xEF\xBF\xBDz");
	strbuf_reset(&sb);
	/* valid UTF-8 stays as it is */
	xml_add_escaped(&sb, "\xc3\xa9\xe2\x82\xac");
	assert_string_equal(sb.buf, "\xc3\xa9\xe2\x82\xac");
	strbuf_reset(&sb);
	/* an overlong encoding and a surrogate are not */
	xml_add_escaped(&sb, "\xc0\xaf\xed\xa0\x80");
	assert_null(strstr(sb.buf, "\xc0"));
	assert_null(strstr(sb.buf, "\xed"));
	strbuf_release(&sb);
}

static void document(void **state)
{
	struct junit_suite s;
	struct strbuf sb = STRBUF_INIT;
	struct junit_case *c;

	junit_init(&s, "zlb batch b<1>");
	c = junit_add(&s, "zlb.batch.main", "softmax", JUNIT_PASSED, NULL, NULL);
	c->seconds = 1.25;
	junit_add(&s, "zlb.batch.main", "mm@mm_\"x\"", JUNIT_FAILED, "FAIL: rc=1 & more",
		  "status FAIL\nremarks rc=1\n");
	junit_add(&s, "zlb.batch.vllm", "upsample", JUNIT_SKIPPED, "needs sm90", NULL);
	junit_render(&s, &sb);
	assert_true(starts_with(sb.buf, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"));
	assert_non_null(strstr(sb.buf, "<testsuite name=\"zlb batch b&lt;1&gt;\" tests=\"3\" "
				       "failures=\"1\" errors=\"0\" skipped=\"1\" time=\"1.250\">"));
	assert_non_null(strstr(sb.buf, "<testcase classname=\"zlb.batch.main\" name=\"softmax\" "
				       "time=\"1.250\"/>"));
	assert_non_null(strstr(sb.buf, "name=\"mm@mm_&quot;x&quot;\">\n      <failure "
				       "message=\"FAIL: rc=1 &amp; more\">status FAIL\nremarks rc=1\n</failure>"));
	assert_non_null(strstr(sb.buf, "<skipped message=\"needs sm90\"/>"));
	assert_true(ends_with(sb.buf, "</testsuite>\n</testsuites>\n"));
	strbuf_release(&sb);
	junit_release(&s);
}

/* <properties>: where a case ran, first in the case, escaped like every name */
static void properties(void **state)
{
	struct junit_suite s;
	struct strbuf sb = STRBUF_INIT;
	struct junit_case *c;

	(void)state;
	junit_init(&s, "zlb batch");
	c = junit_add(&s, "zlb.batch.main", "softmax", JUNIT_PASSED, NULL, NULL);
	junit_property(c, "device", "1");
	junit_property(c, "gpu", "Fake <H200> & \"co\"");
	c = junit_add(&s, "zlb.batch.main", "mm", JUNIT_FAILED, "FAIL", "status FAIL\n");
	junit_property(c, "gpu_uuid", "GPU-1");
	junit_add(&s, "zlb.batch.main", "add", JUNIT_PASSED, NULL, NULL);
	junit_render(&s, &sb);
	/* a passed case with properties is no longer empty */
	assert_non_null(strstr(sb.buf, "name=\"softmax\">\n      <properties>\n"
				       "        <property name=\"device\" value=\"1\"/>\n"
				       "        <property name=\"gpu\" value=\"Fake &lt;H200&gt; "
				       "&amp; &quot;co&quot;\"/>\n      </properties>\n    </testcase>\n"));
	/* before the failure, as the schema orders them */
	assert_non_null(strstr(sb.buf, "name=\"mm\">\n      <properties>\n"
				       "        <property name=\"gpu_uuid\" value=\"GPU-1\"/>\n"
				       "      </properties>\n      <failure message=\"FAIL\">"));
	/* one without stays self-closed */
	assert_non_null(strstr(sb.buf, "name=\"add\"/>\n"));
	strbuf_release(&sb);
	junit_release(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(escaping),
		cmocka_unit_test(document),
		cmocka_unit_test(properties),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
