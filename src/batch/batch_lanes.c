#include "batch/batch_lanes.h"

#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"

static const char *nonempty(const char *s)
{
	return s && *s ? s : NULL;
}

/*
 * The card a row names: its uuid, else its name (a run that recorded no
 * uuid); NULL: none. A running row's card is an earlier attempt's, maybe
 * in another lane: not its own.
 */
static const char *card_key(const struct op_row *r)
{
	if (r->status == OP_RUNNING)
		return NULL;
	return nonempty(r->gpu_uuid) ? r->gpu_uuid : nonempty(r->gpu);
}

static const char *group_key(const struct lane_group *g)
{
	return g->gpu_uuid ? g->gpu_uuid : g->gpu;
}

struct groups {
	struct lane_group *v;
	size_t nr;
};

static struct lane_group *find(struct groups *g, int device, const char *key)
{
	for (size_t i = 0; i < g->nr; i++) {
		const char *k = group_key(&g->v[i]);

		if (g->v[i].device == device && (key && k ? !strcmp(k, key) : key == k))
			return &g->v[i];
	}
	return NULL;
}

static struct lane_group *add(struct groups *g, int device, const struct op_row *r)
{
	struct lane_group *x = &g->v[g->nr];

	memset(x, 0, sizeof(*x));
	x->device = device;
	if (r) {
		x->gpu = nonempty(r->gpu);
		x->gpu_uuid = nonempty(r->gpu_uuid);
	}
	g->nr++;
	return x;
}

static void count(struct lane_group *x, const struct op_row *r)
{
	x->ops++;
	x->counts[r->status]++;
}

size_t batch_lane_groups(const struct op_row *rows, size_t n, struct lane_group **out)
{
	struct groups g = { xcalloc(n + 1, sizeof(*g.v)), 0 };

	/* first the rows that name their card, so a lane knows how many it has */
	for (size_t i = 0; i < n; i++) {
		const struct op_row *r = &rows[i];
		struct lane_group *x;

		if (r->device < 0 || !card_key(r))
			continue;
		x = find(&g, r->device, card_key(r));
		count(x ? x : add(&g, r->device, r), r);
	}
	for (size_t i = 0; i < n; i++) {
		const struct op_row *r = &rows[i];
		struct lane_group *only = NULL, *x;
		size_t cards = 0;

		if (r->device < 0 || card_key(r))
			continue;
		for (size_t k = 0; k < g.nr; k++)
			if (g.v[k].device == r->device && group_key(&g.v[k])) {
				only = &g.v[k];
				cards++;
			}
		/* one card in the lane: a local lane, where an unrecorded run can only be it */
		x = cards == 1 ? only : find(&g, r->device, NULL);
		count(x ? x : add(&g, r->device, NULL), r);
	}
	/*
	 * by device, each lane's groups in the order they first appeared: an
	 * insertion sort is stable (qsort would not be)
	 */
	for (size_t i = 1; i < g.nr; i++) {
		struct lane_group x = g.v[i];
		size_t j = i;

		for (; j > 0 && g.v[j - 1].device > x.device; j--)
			g.v[j] = g.v[j - 1];
		g.v[j] = x;
	}
	*out = g.v;
	return g.nr;
}

size_t batch_lane_devices(const struct lane_group *g, size_t n)
{
	size_t d = 0;

	/* the groups are by device: each change of device is another one */
	for (size_t i = 0; i < n; i++)
		d += !i || g[i].device != g[i - 1].device;
	return d;
}
