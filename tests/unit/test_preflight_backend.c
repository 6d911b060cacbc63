/*
 * src/run/preflight_backend.c: the FlagGems vendor a run gets (a user's own
 * kept, said), the capture deny list read against the target (a key that
 * names the benchmark file is said), the CUDA-only mm cluster fix.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "lib/error.h"
#include "run/preflight_int.h"
#include "run/run_config.h"

#include "error_capture.h"

static void prepare(struct preflight *pf, const struct backend_ops *b, const char *op,
		    const char *op_file)
{
	memset(pf, 0, sizeof(*pf));
	run_plan_init(&pf->plan);
	strbuf_init(&pf->why, 0);
	strbuf_init(&pf->fix, 0);
	pf->plan.backend = b;
	pf->plan.target.op = xstrdup(op);
	pf->plan.target.op_file = xstrdup(op_file);
}

static int has_note(const struct preflight *pf, const char *needle)
{
	for (size_t i = 0; i < pf->plan.notes.nr; i++)
		if (strstr(pf->plan.notes.v[i], needle))
			return 1;
	return 0;
}

static void deny_key_naming_the_file_is_said(void **state)
{
	static const char *const deny[] = { "unique", NULL };
	struct backend_ops fake = *backend_find("musa");
	struct run_config cfg = { 0 };
	struct preflight pf;
	char *envp[] = { "PATH=/bin", NULL };

	fake.capture_deny = deny;
	prepare(&pf, &fake, "unique2", "unique");
	assert_int_equal(preflight_check_backend(&pf, &cfg, envp), 0);
	assert_true(has_note(&pf, "warning: the musa backend's capture deny key 'unique' "
			     "names the benchmark file test_unique.py, not a test function: "
			     "it denies nothing for test_unique2"));
	preflight_release(&pf);

	/* The real table's key, on its test: a plain note. */
	prepare(&pf, backend_find("musa"), "unique2", "unique");
	assert_int_equal(preflight_check_backend(&pf, &cfg, envp), 0);
	assert_true(has_note(&pf, "never captures unique2"));
	assert_false(has_note(&pf, "warning"));
	preflight_release(&pf);

	/* Another test: nothing said. */
	prepare(&pf, backend_find("musa"), "softmax", "softmax");
	assert_int_equal(preflight_check_backend(&pf, &cfg, envp), 0);
	assert_int_equal(pf.plan.notes.nr, 0);
	assert_string_equal(pf.plan.flaggems_vendor, "mthreads");
	assert_null(pf.plan.flaggems_vendor_var);
	preflight_release(&pf);
}

static void users_vendor_is_kept(void **state)
{
	struct run_config cfg = { 0 };
	struct preflight pf;
	char *other[] = { "FLAGGEMS_VENDOR=", "GEMS_BACKEND=metax", NULL };
	char *same[] = { "GEMS_VENDOR=NVIDIA", NULL };

	/* An empty variable is unset; the next one in flag_gems' order counts. */
	prepare(&pf, backend_find("cuda"), "softmax", "softmax");
	assert_int_equal(preflight_check_backend(&pf, &cfg, other), 0);
	assert_string_equal(pf.plan.flaggems_vendor, "metax");
	assert_string_equal(pf.plan.flaggems_vendor_var, "GEMS_BACKEND");
	assert_true(has_note(&pf, "warning: GEMS_BACKEND=metax is yours and kept"));
	preflight_release(&pf);

	prepare(&pf, backend_find("cuda"), "softmax", "softmax");
	assert_int_equal(preflight_check_backend(&pf, &cfg, same), 0);
	assert_true(has_note(&pf, "note: FlagGems vendor NVIDIA from your GEMS_VENDOR"));
	preflight_release(&pf);
}

static void mm_cluster_fix_is_cuda_only(void **state)
{
	struct run_config cfg = { .mm_cluster_fix = 1 };
	struct preflight pf;
	char *envp[] = { NULL };

	prepare(&pf, backend_find("cuda"), "mm", "mm");
	assert_int_equal(preflight_check_backend(&pf, &cfg, envp), 0);
	preflight_release(&pf);
	for (const struct backend_ops *const *b = backend_all(); *b; b++) {
		if (!strcmp((*b)->name, "cuda"))
			continue;
		prepare(&pf, *b, "mm", "mm");
		assert_int_equal(preflight_check_backend(&pf, &cfg, envp), -1);
		assert_string_equal(pf.failed_check, "backend");
		assert_non_null(strstr(pf.why.buf, "exists only on CUDA"));
		preflight_release(&pf);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(deny_key_naming_the_file_is_said),
		cmocka_unit_test(users_vendor_is_kept),
		cmocka_unit_test(mm_cluster_fix_is_cuda_only),
	};

	set_error_routine(capture_error);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
