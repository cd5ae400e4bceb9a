/* Deterministic random numbers: xoshiro256** seeded through splitmix64. Every stream is a
 * pure function of its seed, so every rank can compute the same shuffles on its own. */
#ifndef PT_CORE_RNG_H
#define PT_CORE_RNG_H

#include <stddef.h>
#include <stdint.h>

struct pt_rng {
    uint64_t s[4];
};

/* Seed from any number of 64-bit words (e.g. seed, sweep, window). */
void pt_rng_seed(struct pt_rng *r, uint64_t a, uint64_t b, uint64_t c);
uint64_t pt_rng_next(struct pt_rng *r);
/* Uniform integer in [0, n) without modulo bias; n > 0. */
uint64_t pt_rng_below(struct pt_rng *r, uint64_t n);
/* Uniform double in [0, 1). */
double pt_rng_uniform(struct pt_rng *r);
/* Shuffle a[0..n) in place (Fisher-Yates). */
void pt_rng_shuffle_u32(struct pt_rng *r, uint32_t *a, size_t n);

#endif
