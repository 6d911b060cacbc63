/*
 * What the library said, kept for the test to read: the error and warning
 * routines (git's set_error_routine) pointed at two buffers, and a
 * substring assertion for them.
 *
 * Like timer_fake.h this header defines rather than declares (every
 * tests/unit/test_*.c is a binary of its own): include it after <cmocka.h>
 * and "lib/strbuf.h", then in setup
 *
 *     set_error_routine(capture_error);
 *     set_warning_routine(capture_warning);   (where warnings matter)
 *
 * and strbuf_reset() the buffers between tests as the file needs.
 * Each message is kept as prefix + message + newline.
 */
#ifndef ZLB_TESTS_ERROR_CAPTURE_H
#define ZLB_TESTS_ERROR_CAPTURE_H

#include <string.h>

#define ERROR_CAPTURE_UNUSED __attribute__((unused))

static struct strbuf errors ERROR_CAPTURE_UNUSED = STRBUF_INIT;
static struct strbuf warnings ERROR_CAPTURE_UNUSED = STRBUF_INIT;

static ERROR_CAPTURE_UNUSED void capture_error(const char *prefix, const char *msg)
{
	strbuf_addf(&errors, "%s%s\n", prefix, msg);
}

static ERROR_CAPTURE_UNUSED void capture_warning(const char *prefix, const char *msg)
{
	strbuf_addf(&warnings, "%s%s\n", prefix, msg);
}

/* hay (a string, may be NULL) contains needle. */
#define assert_contains(hay, needle) do {                                     \
	const char *h_ = (hay);                                                 \
	if (!h_ || !strstr(h_, (needle)))                                       \
		fail_msg("\"%s\" does not contain \"%s\"", h_ ? h_ : "(null)", (needle)); \
} while (0)

#endif
