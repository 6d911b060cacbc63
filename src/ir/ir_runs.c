/* Runs as inputs of `zlb ir`: which directories are runs, their operator, views of their IR. */
#include "ir/ir_layout.h"

#include <dirent.h>
#include <stdarg.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ir/ir_index.h"
#include "ir/ir_layout_int.h"
#include "ir/ir_naming.h"
#include "lib/jsonfile.h"
#include "lib/paths.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"
#include "rundir/identity.h"
#include "rundir/results_file.h"
#include "rundir/rundir.h"

/* ---- Runs ---------------------------------------------------------------- */

/* A run, or a directory that holds only IR (staged or laid out): ir reads those too. */
int ir_is_run_dir(const char *dir)
{
	static const char *const dirs[] = { "ir", IR_TREE_DIR, NULL };
	int yes = rundir_is_run(dir);

	for (int i = 0; !yes && dirs[i]; i++) {
		char *p = path_join(dir, dirs[i]);
		yes = is_dir(p);
		free(p);
	}
	return yes;
}

static int first_op(void *ctx, const struct results_row *row, size_t lineno)
{
	char **op = ctx;

	if (!*row->op)
		return 0;
	*op = xstrdup(row->op);
	return 1;
}

char *ir_run_op(const char *run_dir)
{
	json_t *id = NULL;
	char *op = NULL;
	char *p;

	/* An identity this zlb cannot read (error() said why) falls back to the rows. */
	if (!identity_load(run_dir, &id) && json_str(id, "op") && *json_str(id, "op"))
		op = xstrdup(json_str(id, "op"));
	json_decref(id);
	if (!op) {
		p = path_join(run_dir, RESULTS_FILE);
		results_each(p, RESULTS_SKIP_SAMPLES | RESULTS_QUIET_BAD_LINES, first_op, &op, NULL);
		free(p);
	}
	if (!op) {
		char *abs = path_absolute(run_dir);
		op = xstrdup(path_basename(abs));
		free(abs);
	}
	return op;
}

int ir_find_runs(const char *path, struct strvec *runs)
{
	return rundir_find(path, ir_is_run_dir, runs);
}

int ir_view_open(const char *run_dir, struct ir_view *v)
{
	char *tree = path_join(run_dir, IR_TREE_DIR);
	char *index = path_join(tree, IR_INDEX_FILE);
	struct ir_layout_report rep;
	const char *tmpdir = getenv("TMPDIR");
	int r;

	memset(v, 0, sizeof(*v));
	if (is_file(index)) {
		v->tree = tree;
		v->has_ir = 1;
		free(index);
		return 0;
	}
	free(index);
	if (!ir_has_staging(run_dir)) {
		if (is_dir(tree))
			snprintf(v->why, sizeof(v->why),
				 "no IR: %s/%s/ has no %s and there is no ir/ staging to build it from",
				 run_dir, IR_TREE_DIR, IR_INDEX_FILE);
		else
			snprintf(v->why, sizeof(v->why),
				 "no IR captured: %s has no ir/ staging and no %s/ (IR capture was "
				 "off, or the run stopped before any kernel was compiled)",
				 run_dir, IR_TREE_DIR);
		free(tree);
		return 0;
	}
	free(tree);
	/* Staging that was never laid out (an old run): lay it out aside, leave the run as it is. */
	v->tmp = xstrfmt("%s/zlb-ir-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
	if (!mkdtemp(v->tmp)) {
		r = error_errno("cannot create a temporary directory '%s'", v->tmp);
		free(v->tmp);
		v->tmp = NULL;
		return r;
	}
	v->tree = path_join(v->tmp, IR_TREE_DIR);
	r = ir_layout_build_to(run_dir, v->tree, &rep);
	if (r < 0) {
		ir_view_close(v);
		return -1;
	}
	if (r == 1) {
		snprintf(v->why, sizeof(v->why), "%s", rep.why);
		free(v->tree);
		v->tree = NULL;
		return 0;
	}
	v->has_ir = 1;
	return 0;
}

void ir_view_close(struct ir_view *v)
{
	if (v->tmp) {
		remove_tree(v->tmp);
		free(v->tmp);
	}
	free(v->tree);
	memset(v, 0, sizeof(*v));
}
