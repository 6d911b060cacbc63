/*
 * The parallel autotune sweep (run/sweep_shards.h): decide whether it may
 * run, resolve the shapes along the benchmark's class chain, deal them to
 * the shards, run the shards side by side, and publish their merged records
 * only when every shard swept every shape it was dealt.
 */
#include "run/sweep_shards.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/error.h"
#include "lib/jsonfile.h"
#include "lib/paths.h"
#include "lib/proc.h"
#include "lib/proc_tree.h"
#include "lib/strbuf.h"
#include "lib/term.h"

/* A shard that failed: the others are ended this long after SIGTERM. */
#define FAILED_GRACE_MS 2000

struct shard {
	char *dir;            /* its ZLB_RUN_DIR (removed afterwards) */
	char *log;            /* its output (kept when the sweep is discarded) */
	char *shapes;         /* its shape file */
	char *device;         /* what its visibility variables say */
	size_t nshapes;
	struct strvec argv, env;
	struct child c;
};

static void set_why(struct sweep_result *out, enum sweep_state st, const char *fmt, ...)
	ZLB_PRINTF(3, 4);
static void set_why(struct sweep_result *out, enum sweep_state st, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	free(out->why);
	out->why = strbuf_detach(&sb, NULL);
	out->state = st;
}

/* --- the shapes ---------------------------------------------------------- */

/* A scalar as flow YAML that PyYAML reads as the source did: plain text kept, else quoted. */
static void emit_scalar(struct strbuf *sb, const yaml_node_t *n)
{
	const char *v = (const char *)n->data.scalar.value;
	size_t len = n->data.scalar.length;
	int plain = n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && len > 0;
	json_t *s;
	char *q;

	for (size_t i = 0; plain && i < len; i++)
		plain = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			       "0123456789_.+-", v[i]) != NULL;
	if (plain) {
		strbuf_add(sb, v, len);
		return;
	}
	s = json_stringn(v, len);
	q = s ? json_dumps(s, JSON_ENCODE_ANY) : NULL;
	strbuf_addstr(sb, q ? q : "\"\"");
	free(q);
	json_decref(s);
}

static void emit_node(struct strbuf *sb, const struct shape_file *sf, const yaml_node_t *n)
{
	yaml_document_t *doc = (yaml_document_t *)&sf->doc;

	switch (n->type) {
	case YAML_SCALAR_NODE:
		emit_scalar(sb, n);
		break;
	case YAML_SEQUENCE_NODE:
		strbuf_addch(sb, '[');
		for (yaml_node_item_t *i = n->data.sequence.items.start;
		     i < n->data.sequence.items.top; i++) {
			if (i != n->data.sequence.items.start)
				strbuf_addstr(sb, ", ");
			emit_node(sb, sf, yaml_document_get_node(doc, *i));
		}
		strbuf_addch(sb, ']');
		break;
	case YAML_MAPPING_NODE:
		strbuf_addch(sb, '{');
		for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
		     p < n->data.mapping.pairs.top; p++) {
			if (p != n->data.mapping.pairs.start)
				strbuf_addstr(sb, ", ");
			emit_node(sb, sf, yaml_document_get_node(doc, p->key));
			strbuf_addstr(sb, ": ");
			emit_node(sb, sf, yaml_document_get_node(doc, p->value));
		}
		strbuf_addch(sb, '}');
		break;
	default:
		strbuf_addstr(sb, "null");
	}
}

/* The shapes the sweep deals out: the entry FlagGems will use, along the class chain. */
struct sweep_shapes {
	struct shape_file own;            /* core_shapes.yaml in upstream mode */
	const struct shape_file *sf;
	const char *key;
	yaml_node_t *list, *desc;
};

/*
 * Resolve the entry the measured run will use. 0, or 1 with out->why when
 * the sweep cannot know the shapes (the run then sweeps serially).
 */
static int resolve_shapes(const struct sweep_input *in, struct sweep_shapes *sh,
			  struct sweep_result *out)
{
	const struct flaggems_target *t = in->target;
	const char *name = t->op_name ? t->op_name : t->op;
	struct shape_lookup lk = { 0 };
	struct strbuf tried = STRBUF_INIT;
	yaml_node_t *entry;

	sh->sf = in->shapes;
	if (!sh->sf) {
		char *core = path_join(t->dir, "benchmark/core_shapes.yaml");
		if (t->hardcoding_class) {
			set_why(out, SWEEP_FALLBACK, "%s hard-codes its shapes and FlagGems reads "
				"them itself (upstream mode): zlb cannot deal them to shards",
				t->hardcoding_class);
			free(core);
			return 1;
		}
		if (shape_file_load(&sh->own, core, NULL)) {
			set_why(out, SWEEP_FALLBACK, "FlagGems' shapes could not be read: %s",
				last_error());
			free(core);
			return 1;
		}
		free(core);
		sh->sf = &sh->own;
	}
	shape_file_lookup(sh->sf, name, (const char *const *)(t->chain.nr ? t->chain.v : NULL),
			  &lk);
	strbuf_addf(&tried, "'%s'", name);
	for (size_t i = 0; i < t->chain.nr; i++)
		strbuf_addf(&tried, ", '%s'", t->chain.v[i]);
	if (lk.problem || !lk.key) {
		set_why(out, SWEEP_FALLBACK, "no usable shape entry in %s: looked for %s%s%s",
			sh->sf->path, tried.buf, lk.problem ? "; " : "",
			lk.problem ? lk.problem : "");
		free(lk.problem);
		strbuf_release(&tried);
		return 1;
	}
	sh->key = lk.key;
	entry = shape_file_map_get(sh->sf, yaml_document_get_root_node(
					   (yaml_document_t *)&sh->sf->doc), lk.key);
	sh->list = entry ? shape_file_map_get(sh->sf, entry, "shapes") : NULL;
	sh->desc = entry ? shape_file_map_get(sh->sf, entry, "shape_desc") : NULL;
	if (!sh->list || sh->list->type != YAML_SEQUENCE_NODE) {
		set_why(out, SWEEP_FALLBACK, "the entry '%s' of %s has no list of shapes",
			lk.key, sh->sf->path);
		strbuf_release(&tried);
		return 1;
	}
	/* The key FlagGems will use, said: a class key is easy to miss. */
	tee_say(in->tee, TEE_PLAIN, "zlb: sweep: shapes resolved to '%s' (%zu) of %s, looked up "
		"along %s", lk.key, lk.count, sh->sf->path, tried.buf);
	strbuf_release(&tried);
	return 0;
}

static size_t shape_count(const struct sweep_shapes *sh)
{
	return (size_t)(sh->list->data.sequence.items.top - sh->list->data.sequence.items.start);
}

/* Shard k of n: the key with shapes k, k+n, k+2n, ... (round-robin: big and small mix). */
static int write_shard_shapes(const struct sweep_shapes *sh, size_t k, size_t n,
			      const char *path, size_t *count)
{
	yaml_document_t *doc = (yaml_document_t *)&sh->sf->doc;
	struct strbuf sb = STRBUF_INIT;
	json_t *key = json_string(sh->key);
	char *qkey = json_dumps(key, JSON_ENCODE_ANY);
	size_t i = 0;
	int r;

	strbuf_addf(&sb, "# zlbench: shard %zu of %zu of the parallel sweep\n%s:\n  shapes:\n",
		    k, n, qkey);
	*count = 0;
	for (yaml_node_item_t *it = sh->list->data.sequence.items.start;
	     it < sh->list->data.sequence.items.top; it++, i++) {
		if (i % n != k)
			continue;
		strbuf_addstr(&sb, "    - ");
		emit_node(&sb, sh->sf, yaml_document_get_node(doc, *it));
		strbuf_addch(&sb, '\n');
		(*count)++;
	}
	if (sh->desc) {
		strbuf_addstr(&sb, "  shape_desc: ");
		emit_node(&sb, sh->sf, sh->desc);
		strbuf_addch(&sb, '\n');
	}
	r = write_file_atomic(path, sb.buf, sb.len);
	strbuf_release(&sb);
	free(qkey);
	json_decref(key);
	return r;
}

/* --- the shards ---------------------------------------------------------- */

static void shard_release(struct shard *s)
{
	free(s->dir);
	free(s->log);
	free(s->shapes);
	free(s->device);
	strvec_clear(&s->argv);
	strvec_clear(&s->env);
}

static int prepare_shard(const struct sweep_input *in, const struct sweep_shapes *sh,
			 struct shard *s, size_t k, size_t n)
{
	char *base = path_join(in->run_dir, SWEEP_DIR);
	char *name = xstrfmt("shard%zu", k);
	int r;

	s->dir = path_join(base, name);
	s->log = xstrfmt("%s.log", s->dir);
	s->shapes = path_join(s->dir, "shapes.yaml");
	free(name);
	free(base);
	/* Shard k on the k-th visible card: an inherited list (6,7) is kept. */
	s->device = backend_physical_device(in->backend, in->inherited, (int)k);
	if (!s->device || mkdir_p(s->dir, 0755) ||
	    write_shard_shapes(sh, k, n, s->shapes, &s->nshapes))
		return -1;
	for (size_t i = 0; i < in->env->nr; i++)
		strvec_push(&s->env, in->env->v[i]);
	backend_apply_visibility(in->backend, &s->env, s->device);
	env_set(&s->env, "ZLB_RUN_DIR", s->dir);
	env_set(&s->env, "ZLB_SWEEP_ONLY", "1");
	env_set(&s->env, "ZLB_IR", "0");
	env_set(&s->env, "ZLB_AUTOTUNE_MODE", "record");
	env_unset(&s->env, "ZLB_REPLAY_FROM");
	env_unset(&s->env, "ZLB_GRAPH_PLAN");
	if (env_get(&s->env, "ZLB_SHAPE_FILE"))
		env_set(&s->env, "ZLB_SHAPE_FILE", s->shapes);
	/* Compiles of concurrent shards must not race in one cache. */
	{
		char *cache = path_join(s->dir, "triton_cache");
		r = mkdir_p(cache, 0755);
		env_set(&s->env, "TRITON_CACHE_DIR", cache);
		free(cache);
	}
	in->shard_argv(in->ctx, s->shapes, &s->argv);
	return r;
}

static int start_shard(const struct sweep_input *in, struct shard *s)
{
	int fd = open(s->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int r;

	if (fd < 0)
		return error_errno("cannot create %s", s->log);
	s->c.argv = s->argv.v;
	s->c.envp = s->env.v;
	s->c.dir = in->target->dir;
	s->c.new_pgroup = 1;
	s->c.redirect = 1;
	s->c.redirect_fd = fd;
	r = child_start(&s->c);
	close(fd);
	return r;
}

/* Reap what has ended; the number still running. *failed: a shard that ended non-zero. */
static size_t reap_some(struct shard *v, size_t n, long *failed)
{
	size_t running = 0;

	for (size_t i = 0; i < n; i++) {
		if (v[i].c.pid <= 0)
			continue;
		if (!v[i].c.exited && child_reap(&v[i].c, 1) != 1) {
			running++;
			continue;
		}
		if (child_exit_code(&v[i].c) != 0 && *failed < 0)
			*failed = (long)i;
	}
	return running;
}

/* Signal every shard still running (its whole group), then wait up to ms for them. */
static void signal_and_wait(struct shard *v, size_t n, int sig, int ms)
{
	long ignored = -1;

	for (size_t i = 0; i < n; i++)
		if (v[i].c.pid > 0 && !v[i].c.exited)
			child_kill(&v[i].c, sig);
	for (int waited = 0; waited <= ms && reap_some(v, n, &ignored); waited += 20)
		poll(NULL, 0, 20);
}

/* End every shard and whatever it started: SIGINT (an interrupt), SIGTERM, SIGKILL. */
static void end_all(struct shard *v, size_t n, int interrupt, int grace_ms)
{
	if (interrupt)
		signal_and_wait(v, n, SIGINT, grace_ms);
	signal_and_wait(v, n, SIGTERM, grace_ms);
	for (size_t i = 0; i < n; i++) {
		if (v[i].c.pid > 0 && !v[i].c.exited) {
			child_kill(&v[i].c, SIGKILL);
			child_reap(&v[i].c, 0);
		}
	}
}

/*
 * Run the shards side by side until all end, one fails (the others are
 * ended: the sweep is lost anyway) or a signal comes. Returns the failed
 * shard, -1 when all succeeded, -2 on an interrupt.
 */
static long follow(const struct sweep_input *in, struct shard *v, size_t n)
{
	/* [0] the interrupt, [1 + i] shard i's exit: the loop wakes on either, not on a tick. */
	struct pollfd *p = xcalloc(n + 1, sizeof(*p));
	long failed = -1;
	int tick = -1;

	p[0] = (struct pollfd){ interrupt_fd(), POLLIN, 0 };
	for (size_t i = 0; i < n; i++) {
		p[1 + i] = (struct pollfd){ v[i].c.pid > 0 ? proc_exit_fd(v[i].c.pid) : -1,
					    POLLIN, 0 };
		if (v[i].c.pid > 0 && p[1 + i].fd < 0)
			tick = PROC_REAP_POLL_MS;	/* no exit descriptor: look again */
	}
	for (;;) {
		size_t running = reap_some(v, n, &failed);

		if (interrupt_pending()) {
			end_all(v, n, 1, in->grace_ms);
			failed = -2;
			break;
		}
		if (failed >= 0) {
			end_all(v, n, 0, FAILED_GRACE_MS);
			break;
		}
		if (!running)
			break;
		for (size_t i = 0; i < n; i++)
			if (v[i].c.exited && p[1 + i].fd >= 0) {
				close(p[1 + i].fd);
				p[1 + i].fd = -1;	/* poll skips it */
			}
		poll(p, n + 1, tick);
	}
	for (size_t i = 0; i < n; i++)
		if (p[1 + i].fd >= 0)
			close(p[1 + i].fd);
	free(p);
	for (size_t i = 0; i < n; i++)
		if (v[i].c.pid > 0)
			kill(-v[i].c.pid, SIGKILL);   /* what a shard left in its group */
	/* And what left the group: zlb run is a subreaper (runner.c). */
	proc_kill_tree(getpid(), NULL);
	return failed;
}

static json_t *shard_json(const struct shard *s, size_t k)
{
	struct strbuf end = STRBUF_INIT;
	json_t *o;

	if (s->c.exited)
		child_describe_end(&s->c, &end);
	o = json_pack("{s:I,s:s?,s:I,s:s}", "index", (json_int_t)k, "visible_as", s->device,
		      "shapes", (json_int_t)s->nshapes, "end", s->c.exited ? end.buf : "not started");
	strbuf_release(&end);
	return o;
}

/* Remove the shards' work, keeping their logs when keep_logs (a discarded sweep). */
static void clean_up(const struct sweep_input *in, struct shard *v, size_t n, int keep_logs)
{
	char *base = path_join(in->run_dir, SWEEP_DIR);

	if (!keep_logs) {
		if (remove_tree(base))
			warning("could not remove the sweep's shards in %s", base);
	} else {
		for (size_t i = 0; i < n; i++)
			if (v[i].dir && remove_tree(v[i].dir))
				warning("could not remove the shard directory %s", v[i].dir);
	}
	free(base);
}

/* Whether the sweep applies; 1 with out->state and out->why set when not. */
static int not_applicable(const struct sweep_input *in, struct sweep_result *out)
{
	if (in->gpus < 2) {
		out->state = SWEEP_OFF;
		return 1;
	}
	if (in->replay_from) {
		set_why(out, SWEEP_SKIPPED, "the run replays %s: nothing to sweep",
			in->replay_from);
		return 1;
	}
	if (in->devices->nr < 2) {
		set_why(out, SWEEP_SKIPPED, "%d device visible, at least 2 are needed",
			in->devices->nr);
		return 1;
	}
	if (in->worker) {
		set_why(out, SWEEP_SKIPPED, "a warm worker's run sweeps in its worker, serially");
		return 1;
	}
	if (!strcmp(in->bench_level, "comprehensive")) {
		set_why(out, SWEEP_FALLBACK, "--level comprehensive: FlagGems adds each class's "
			"set_more_shapes() to the file's, which zlb cannot see or deal out, so "
			"shards would leave keys unswept");
		return 1;
	}
	return 0;
}

/*
 * What the shards' end makes of the sweep (failed as follow() returns it):
 * their records merged into the run, or the reason it falls back or stops.
 */
static void conclude(const struct sweep_input *in, struct shard *v, size_t n, long failed,
		     struct sweep_result *out)
{
	if (failed == -2) {
		set_why(out, SWEEP_INTERRUPTED, "interrupted: every shard was ended");
	} else if (failed >= 0) {
		struct strbuf end = STRBUF_INIT;
		child_describe_end(&v[failed].c, &end);
		set_why(out, SWEEP_FALLBACK, "shard %ld (device %s) ended with %s: its shapes were "
			"never swept, so the whole sweep is discarded (shard logs kept in %s/%s)",
			failed, v[failed].device, end.buf, in->run_dir, SWEEP_DIR);
		strbuf_release(&end);
	} else {
		const char **dirs = calloc(n, sizeof(*dirs));
		for (size_t k = 0; k < n; k++)
			dirs[k] = v[k].dir;
		if (sweep_merge_records(dirs, n, in->run_dir, &out->entries, &out->conflicts)) {
			set_why(out, SWEEP_FALLBACK, "the shards' records could not be merged: %s; "
				"the whole sweep is discarded (shard logs kept in %s/%s)",
				last_error(), in->run_dir, SWEEP_DIR);
		} else {
			out->state = SWEEP_MERGED;
			out->shards = (int)n;
		}
		free(dirs);
	}
}

/* The sweep's outcome said on the terminal and kept as out->about (for the run's record). */
static void say_and_record(const struct sweep_input *in, struct sweep_result *out,
			   const char *shape_key, json_t *shards, double start)
{
	switch (out->state) {
	case SWEEP_MERGED:
		tee_say(in->tee, TERM_GREEN, "zlb: sweep: %ld config(s) merged from %d shards in "
			"%.1f s into autotune_records/; the measurement replays them", out->entries,
			out->shards, mono_s() - start);
		if (out->conflicts)
			tee_say(in->tee, TERM_YELLOW, "WARNING %ld config key(s) got different "
				"winners across shards \u2014 parallel interference reached the "
				"sweep", out->conflicts);
		break;
	case SWEEP_SKIPPED:
		tee_say(in->tee, TEE_PLAIN, "zlb: sweep: parallel sweep skipped (%s); the "
			"autotune sweep runs serially", out->why);
		break;
	case SWEEP_FALLBACK:
		tee_say(in->tee, TERM_YELLOW, "zlb: sweep: parallel sweep refused (%s); falling "
			"back to the serial sweep", out->why);
		break;
	default:
		break;
	}
	if (out->state != SWEEP_OFF)
		out->about = json_pack("{s:i,s:s,s:s?,s:s?,s:i,s:I,s:I,s:o,s:f}",
			"requested", in->gpus,
			"state", out->state == SWEEP_MERGED ? "merged" :
				 out->state == SWEEP_SKIPPED ? "skipped" :
				 out->state == SWEEP_FALLBACK ? "fallback" : "interrupted",
			"why", out->why, "shape_key", shape_key,
			"shards_used", out->shards, "entries", (json_int_t)out->entries,
			"conflicts", (json_int_t)out->conflicts, "shards", shards,
			"wall_s", mono_s() - start);
	else
		json_decref(shards);
}

int sweep_shards_run(const struct sweep_input *in, struct sweep_result *out)
{
	struct sweep_shapes sh = { 0 };
	struct shard *v = NULL;
	size_t n = 0, total;
	double start = mono_s();
	long failed;
	int ret = 0;
	json_t *shards = json_array();

	memset(out, 0, sizeof(*out));
	out->shards = 1;
	if (not_applicable(in, out) || resolve_shapes(in, &sh, out))
		goto say;
	total = shape_count(&sh);
	if (total < 2) {
		set_why(out, SWEEP_SKIPPED, "%zu shape: nothing to share", total);
		goto say;
	}
	n = (size_t)in->gpus;
	if (n > (size_t)in->devices->nr)
		n = (size_t)in->devices->nr;
	if (n > total)
		n = total;
	v = calloc(n, sizeof(*v));
	for (size_t k = 0; k < n; k++) {
		strvec_init(&v[k].argv);
		strvec_init(&v[k].env);
		if (prepare_shard(in, &sh, &v[k], k, n)) {
			ret = -1;
			goto finish;
		}
	}
	tee_say(in->tee, TEE_PLAIN, "zlb: sweep: %zu shapes dealt round-robin to %zu shards "
		"(asked for %d), record only; measurement follows on one device", total, n,
		in->gpus);
	for (size_t k = 0; k < n; k++) {
		tee_say(in->tee, TERM_DIM, "  shard %zu: device %s, %zu shape(s), log %s", k,
			v[k].device, v[k].nshapes, v[k].log);
		if (start_shard(in, &v[k])) {
			/* Those already started are ended; the serial sweep does the work. */
			set_why(out, SWEEP_FALLBACK, "shard %zu could not start: %s", k, last_error());
			end_all(v, n, 0, FAILED_GRACE_MS);
			proc_kill_tree(getpid(), NULL);
			goto finish;
		}
	}
	failed = follow(in, v, n);
	conclude(in, v, n, failed, out);
finish:
	for (size_t k = 0; k < n; k++)
		json_array_append_new(shards, shard_json(&v[k], k));
	if (v)
		clean_up(in, v, n, out->state != SWEEP_MERGED);
	for (size_t k = 0; v && k < n; k++)
		shard_release(&v[k]);
	free(v);
say:
	say_and_record(in, out, sh.key, shards, start);
	if (sh.sf == &sh.own)
		shape_file_release(&sh.own);
	return ret;
}

void sweep_result_release(struct sweep_result *r)
{
	free(r->why);
	json_decref(r->about);
	memset(r, 0, sizeof(*r));
}
