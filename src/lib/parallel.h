/*
 * A loop over independent items on every core: fn(ctx, i) for each i in
 * [0, n), items handed out one at a time to up to one thread per online
 * CPU (the caller's thread among them), at least min_per_thread items a
 * thread so that small loops stay on one. fn must touch only item i's
 * state (and what it only reads); the result must not depend on which
 * thread ran an item. Returns when every item is done.
 */
#ifndef ZLB_LIB_PARALLEL_H
#define ZLB_LIB_PARALLEL_H

#include <stddef.h>

#define PARALLEL_THREADS_MAX 16

void parallel_for(size_t n, size_t min_per_thread, void (*fn)(void *ctx, size_t i), void *ctx);

#endif
