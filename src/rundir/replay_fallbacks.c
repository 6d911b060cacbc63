/* AUTOTUNE_REPLAY_FALLBACK events and the rows they touch (replay_fallbacks.h). */
#include "rundir/replay_fallbacks.h"

#include <stdlib.h>
#include <string.h>

#include "lib/jsonfile.h"
#include "lib/strbuf.h"

char *replay_fallback_point(const char *reason, const char *kernel)
{
	return xstrfmt("%s:%s", reason ? reason : "?", kernel ? kernel : "?");
}

void replay_fallbacks_add(struct replay_fallbacks *fb, const json_t *ev)
{
	const char *node = json_str(ev, "nodeid");
	struct replay_fallback *f;

	if (fb->nr == fb->alloc) {
		fb->alloc = fb->alloc ? 2 * fb->alloc : 8;
		fb->v = xrealloc(fb->v, fb->alloc * sizeof(*fb->v));
	}
	f = &fb->v[fb->nr++];
	f->node = node && *node ? xstrdup(node) : NULL;
	f->point = replay_fallback_point(json_str(ev, "reason"), json_str(ev, "kernel"));
	f->measured = json_is_true(json_object_get(ev, "measured"));
	if (!f->node)
		fb->without_node = 1;
}

void replay_fallbacks_clear(struct replay_fallbacks *fb)
{
	for (size_t i = 0; i < fb->nr; i++) {
		free(fb->v[i].node);
		free(fb->v[i].point);
	}
	free(fb->v);
	memset(fb, 0, sizeof(*fb));
}

enum replay_fallback_scope replay_fallback_scope(const struct replay_fallback *f,
						 replay_fallback_carried_fn carried, void *ctx)
{
	if (!f->node)
		return REPLAY_FALLBACK_RUN;
	if (f->measured && carried(ctx, f->node, f->point))
		return REPLAY_FALLBACK_OWN;
	return REPLAY_FALLBACK_TEST;
}
