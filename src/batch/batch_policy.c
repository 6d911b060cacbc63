#include "batch/batch_policy.h"

#include <string.h>

#include "rundir/exit_codes.h"

static const char *const status_names[] = {
	"PENDING", "RUNNING", "PASS", "FAIL", "SKIP", "TIMEOUT", "CANCELLED",
};

const char *op_status_name(enum op_status s)
{
	return status_names[s];
}

int op_status_parse(const char *name)
{
	for (size_t i = 0; i < sizeof(status_names) / sizeof(*status_names); i++)
		if (!strcmp(status_names[i], name))
			return (int)i;
	return -1;
}

void op_progress_init(struct op_progress *p, int max_retries, int dtypes, int shapes)
{
	memset(p, 0, sizeof(*p));
	p->max_retries = max_retries;
	p->dtypes_active = dtypes;
	p->shapes_active = shapes;
	p->retries_left = max_retries;
	p->prev_exit = -1;
}

/* A new configuration (dtypes or shapes dropped) gets a fresh retry budget. */
static void new_configuration(struct op_progress *p)
{
	p->retries_left = p->max_retries;
	p->prev_exit = -1;
}

static int shape_file_refused(const struct op_progress *p, const struct attempt_result *r)
{
	return p->shapes_active && r->exit_code == ZLB_EXIT_PREFLIGHT &&
	       !strcmp(r->preflight, "shape_file");
}

int policy_configuration_refused(const struct op_progress *p, const struct attempt_result *r)
{
	if (r->timed_out || r->exit_code == ZLB_EXIT_OK)
		return 0;
	return (p->dtypes_active && r->cant_support) || shape_file_refused(p, r);
}

static int retryable(int code)
{
	return code == ZLB_EXIT_TESTS_FAILED || code >= 128;
}

/* Environment problems: another try cannot change them. */
static int environmental(int code)
{
	return code == ZLB_EXIT_USAGE || code == ZLB_EXIT_PREFLIGHT || code == ZLB_EXIT_IO;
}

enum policy_action policy_next(struct op_progress *p, const struct attempt_result *r,
			       enum op_status *status)
{
	int prev = p->prev_exit;

	p->attempts++;
	p->prev_exit = r->exit_code;
	if (r->timed_out) {
		*status = OP_TIMEOUT;
		return POLICY_DONE;
	}
	if (r->exit_code == ZLB_EXIT_OK) {
		*status = !r->passed && r->skipped ? OP_SKIP : OP_PASS;
		return POLICY_DONE;
	}
	if (p->dtypes_active && r->cant_support) {
		p->dtypes_active = 0;
		p->dtype_fallback = 1;
		new_configuration(p);
		return POLICY_DROP_DTYPES;
	}
	if (shape_file_refused(p, r)) {
		p->shapes_active = 0;
		p->shapes_default = 1;
		new_configuration(p);
		return POLICY_DROP_SHAPES;
	}
	if (retryable(r->exit_code) && p->retries_left > 0 && r->exit_code != prev) {
		p->retries_left--;
		p->retries++;
		return POLICY_RETRY;
	}
	if (p->dtypes_active && !p->dtype_rescue && !r->rows_ok &&
	    !environmental(r->exit_code)) {
		p->dtypes_active = 0;
		p->dtype_rescue = 1;
		new_configuration(p);
		return POLICY_DROP_DTYPES;
	}
	*status = OP_FAIL;
	return POLICY_DONE;
}

static void add(struct strbuf *out, const char *key)
{
	if (out->len)
		strbuf_addch(out, ';');
	strbuf_addstr(out, key);
}

static void add_count(struct strbuf *out, const char *key, long n)
{
	if (n <= 0)
		return;
	if (out->len)
		strbuf_addch(out, ';');
	strbuf_addf(out, "%s=%ld", key, n);
}

void policy_remarks(const struct op_progress *p, const struct attempt_result *r,
		    enum op_status status, struct strbuf *out)
{
	if (p->dtype_fallback)
		add(out, "dtype_fallback");
	if (p->dtype_rescue)
		add(out, "dtype_rescue");
	if (p->shapes_default)
		add(out, "shapes_default");
	add_count(out, "retries", p->retries);
	if (status == OP_TIMEOUT)
		add(out, "timeout");
	else if (r->exit_code >= 128)
		add_count(out, "signal", r->exit_code - 128);
	if (r->preflight[0]) {
		if (out->len)
			strbuf_addch(out, ';');
		strbuf_addf(out, "preflight=%s", r->preflight);
	}
	if (r->exit_code == ZLB_EXIT_NO_TESTS)
		add(out, "no_tests");
	if (status == OP_SKIP) {
		add_count(out, "xfail", r->xfailed);
		add_count(out, "skipped", r->skipped - r->xfailed);
	}
	/*
	 * A pass that measured nothing: on the H200, FlagGems' own run() of
	 * test_blas_perf_parallel.py passed with its rows lost, and only the
	 * summary showed it. Said here, it is seen as the operator ends.
	 */
	if (status == OP_PASS && r->rows == 0)
		add(out, "no_rows");
	add_count(out, "no_cudagraph_rows", r->rows_direct);
	add_count(out, "replay_fallback", r->replay_fallbacks);
}

int policy_environment_failure(const struct attempt_result *r)
{
	static const char *const shared_checks[] = {
		"backend", "timer", "python", "flaggems_dir", "device", "runs_dir", NULL,
	};

	if (r->timed_out)
		return 0;
	if (r->exit_code == ZLB_EXIT_IO)
		return ZLB_EXIT_IO;
	if (r->exit_code != ZLB_EXIT_PREFLIGHT)
		return 0;
	for (const char *const *c = shared_checks; *c; c++)
		if (!strcmp(r->preflight, *c))
			return ZLB_EXIT_PREFLIGHT;
	return 0;
}
