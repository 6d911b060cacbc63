#include "lib/stats_rng.h"

#include <math.h>

uint64_t stats_mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

void stats_rng_seed(struct stats_rng *r, uint64_t seed)
{
	/* The splitmix64 sequence from seed: mix(seed + (i + 1) * golden). */
	for (int i = 0; i < 4; i++)
		r->s[i] = stats_mix64(seed + (uint64_t)i * 0x9e3779b97f4a7c15ULL);
	if (!(r->s[0] | r->s[1] | r->s[2] | r->s[3]))
		r->s[0] = 1;	/* the one state xoshiro cannot leave */
	r->has_spare = 0;
	r->spare = 0;
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t stats_rng_next(struct stats_rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

double stats_rng_uniform(struct stats_rng *r)
{
	return (double)(stats_rng_next(r) >> 11) * 0x1.0p-53;
}

size_t stats_rng_below(struct stats_rng *r, size_t n)
{
	uint64_t limit, x;

	if (n <= 1)
		return 0;
	/* Reject the top partial block so every value is equally likely. */
	limit = UINT64_MAX - (UINT64_MAX % n);
	do
		x = stats_rng_next(r);
	while (x >= limit);
	return (size_t)(x % n);
}

double stats_rng_normal(struct stats_rng *r)
{
	double u, v, s, f;

	if (r->has_spare) {
		r->has_spare = 0;
		return r->spare;
	}
	do {
		u = 2.0 * stats_rng_uniform(r) - 1.0;
		v = 2.0 * stats_rng_uniform(r) - 1.0;
		s = u * u + v * v;
	} while (s >= 1.0 || s == 0.0);
	f = sqrt(-2.0 * log(s) / s);
	r->spare = v * f;
	r->has_spare = 1;
	return u * f;
}
