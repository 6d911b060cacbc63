/*
 * A small seeded random number generator for the statistics (bootstrap,
 * simulations). Output must be the same on every machine and every run, so
 * the comparison's intervals are reproducible byte for byte: no rand(), no
 * time, no global state.
 *
 * The generator is xoshiro256** (Blackman & Vigna, 2018), seeded by
 * expanding a 64-bit seed with splitmix64, the seeding its authors
 * recommend. Uniforms take the top 53 bits; normals use Marsaglia's polar
 * method (one spare value kept).
 */
#ifndef ZLB_STATS_RNG_H
#define ZLB_STATS_RNG_H

#include <stddef.h>
#include <stdint.h>

struct stats_rng {
	uint64_t s[4];
	double spare;
	int has_spare;
};

void stats_rng_seed(struct stats_rng *r, uint64_t seed);
uint64_t stats_rng_next(struct stats_rng *r);
/* Uniform on [0, 1). */
double stats_rng_uniform(struct stats_rng *r);
/* Uniform integer in [0, n), n >= 1, without modulo bias. */
size_t stats_rng_below(struct stats_rng *r, size_t n);
/* Standard normal. */
double stats_rng_normal(struct stats_rng *r);

/* splitmix64 step: also a good 64-bit mixer for deriving seeds. */
uint64_t stats_mix64(uint64_t x);

#endif
