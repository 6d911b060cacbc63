#include "lib/parallel.h"

#include <pthread.h>
#include <unistd.h>

struct parallel_work {
	void (*fn)(void *ctx, size_t i);
	void *ctx;
	size_t n;
	size_t next;            /* taken with __atomic_fetch_add */
};

static void *worker(void *arg)
{
	struct parallel_work *w = arg;
	size_t i;

	while ((i = __atomic_fetch_add(&w->next, 1, __ATOMIC_RELAXED)) < w->n)
		w->fn(w->ctx, i);
	return NULL;
}

void parallel_for(size_t n, size_t min_per_thread, void (*fn)(void *ctx, size_t i), void *ctx)
{
	struct parallel_work w = { fn, ctx, n, 0 };
	pthread_t tid[PARALLEL_THREADS_MAX];
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t nthreads = cpus > 1 ? (size_t)cpus : 1, started = 0;
	size_t by_items = n / (min_per_thread ? min_per_thread : 1);

	if (nthreads > PARALLEL_THREADS_MAX)
		nthreads = PARALLEL_THREADS_MAX;
	if (nthreads > by_items)
		nthreads = by_items ? by_items : 1;
	/* A thread that cannot be made leaves its share to the others. */
	for (size_t t = 1; t < nthreads; t++)
		if (!pthread_create(&tid[started], NULL, worker, &w))
			started++;
	worker(&w);
	for (size_t t = 0; t < started; t++)
		pthread_join(tid[t], NULL);
}
