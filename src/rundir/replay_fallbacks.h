/*
 * A run's AUTOTUNE_REPLAY_FALLBACK events (events.jsonl, docs/protocol.md
 * section 3) and which of its rows each one touches. zlb compare and zlb
 * summary both decide it here, so that a row flagged in one is flagged in
 * the other:
 *   an event of no test (a recorded tuner that never appeared) touches
 *     every row of the run: REPLAY_FALLBACK_RUN;
 *   one of a test outside its measurements touches every row of that test
 *     (which of its shapes used the point cannot be told): _TEST;
 *   one that fired in a measurement ("measured": true) is the row's whose
 *     measurement carries the point in its replay_fallbacks: _OWN, already
 *     on that row; unless no row of its test carries it (a measurement
 *     paired with no row, or a file older than replay_fallbacks), when it
 *     touches the test: _TEST.
 */
#ifndef ZLB_REPLAY_FALLBACKS_H
#define ZLB_REPLAY_FALLBACKS_H

#include <jansson.h>
#include <stddef.h>

struct replay_fallback {
	char *node;		/* its test; NULL: none, the whole run's */
	char *point;		/* "<reason>:<kernel>" (replay_fallback_point) */
	int measured;		/* fired in a measurement, whose record says so */
};

struct replay_fallbacks {
	struct replay_fallback *v;
	size_t nr, alloc;
	int without_node;	/* one of them has no test: every row of the run */
};

#define REPLAY_FALLBACKS_INIT { NULL, 0, 0, 0 }

/* "<reason>:<kernel>", "?" for either when NULL; the caller frees it. */
char *replay_fallback_point(const char *reason, const char *kernel);

/* Add ev, one AUTOTUNE_REPLAY_FALLBACK event object. */
void replay_fallbacks_add(struct replay_fallbacks *fb, const json_t *ev);
void replay_fallbacks_clear(struct replay_fallbacks *fb);

enum replay_fallback_scope {
	REPLAY_FALLBACK_OWN,	/* the rows carrying it in their measurements: none more */
	REPLAY_FALLBACK_TEST,	/* every row of its test */
	REPLAY_FALLBACK_RUN,	/* every row of the run */
};

/*
 * Does a row of test node carry point in its own measurements'
 * replay_fallbacks (results_meas_replay_fallbacks)?
 */
typedef int (*replay_fallback_carried_fn)(void *ctx, const char *node, const char *point);

/* Which rows f touches besides those that carry it (above). */
enum replay_fallback_scope replay_fallback_scope(const struct replay_fallback *f,
						 replay_fallback_carried_fn carried, void *ctx);

#endif
