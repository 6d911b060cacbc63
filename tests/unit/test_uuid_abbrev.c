/*
 * uuid_abbrev.c: GPU uuids shortened only as far as the cards stay apart.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "lib/uuid_abbrev.h"

#define U0 "GPU-facec0da-0000-4000-8000-000000000000"
#define U1 "GPU-facec0da-0000-4000-8000-000000000001"

static void abbrev(void **state)
{
	const char *random[] = { "GPU-1a2b3c4d-aaaa", "GPU-9f8e7d6c-bbbb", NULL, "" };
	const char *fake[] = { U0, U1, U0 };
	const char *one[] = { U0 };
	const char *near[] = { "GPU-1a2b3c4d-aaaa", "GPU-1a2b3c4e-aaaa" };

	(void)state;
	/* random uuids differ early: the floor */
	assert_int_equal(uuid_abbrev_len(random, 4, UUID_ABBREV_MIN), 12);
	/* the test driver's differ in their last byte: all of it, the same one counted once */
	assert_int_equal(uuid_abbrev_len(fake, 3, UUID_ABBREV_MIN), strlen(U0));
	assert_int_equal(uuid_abbrev_len(one, 1, UUID_ABBREV_MIN), 12);
	/* one byte past what they share */
	assert_int_equal(uuid_abbrev_len(near, 2, 4), 12);
	assert_int_equal(uuid_abbrev_len(near, 2, 14), 14);
	assert_int_equal(uuid_abbrev_len(NULL, 0, 12), 12);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(abbrev),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
