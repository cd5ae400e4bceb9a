/* Random numbers and parameter initialization.
 *
 * xoshiro256** (Blackman & Vigna) seeded through splitmix64: fast, 256 bits of state, and
 * the same sequence on every platform, so a seed gives the same network everywhere. */
#include <math.h>
#include <stdio.h>

#include "nn/nn_internal.h"

uint64_t nn_mix64(uint64_t a, uint64_t b)
{
    uint64_t z = a + 0x9E3779B97F4A7C15ull * (b + 1);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void nn_rng_seed(struct nn_rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = nn_mix64(seed, (uint64_t)i);
    if ((r->s[0] | r->s[1] | r->s[2] | r->s[3]) == 0) /* the one forbidden state */
        r->s[0] = 1;
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t nn_rng_next(struct nn_rng *r)
{
    uint64_t *s = r->s;
    uint64_t out = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return out;
}

double nn_rng_uniform(struct nn_rng *r)
{
    return (double)(nn_rng_next(r) >> 11) * (1.0 / 9007199254740992.0); /* 53 bits */
}

/* Box-Muller; the second value of each pair is dropped to keep the stream simple. */
double nn_rng_normal(struct nn_rng *r)
{
    double u1 = 1.0 - nn_rng_uniform(r); /* (0, 1]: log is finite */
    double u2 = nn_rng_uniform(r);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* uniformInit=true: U(-0.05 s, 0.05 s); false: N(0, 0.2 / sqrt(fanIn) s) (CNTK). */
void nn_init_weights(float *w, size_t count, size_t fan_in, const struct nn_config *cfg,
                     struct nn_rng *rng)
{
    double s = cfg->init_scale;
    if (cfg->uniform_init) {
        for (size_t i = 0; i < count; i++)
            w[i] = (float)((nn_rng_uniform(rng) * 2.0 - 1.0) * 0.05 * s);
        return;
    }
    double sd = 0.2 / sqrt((double)(fan_in ? fan_in : 1)) * s;
    for (size_t i = 0; i < count; i++)
        w[i] = (float)(nn_rng_normal(rng) * sd);
}

void nn_table_add(struct nn_tensor *table, size_t *count, const char *name, size_t offset, int rows,
                  int cols)
{
    struct nn_tensor *t = &table[(*count)++];
    snprintf(t->name, sizeof t->name, "%s", name);
    t->offset = offset;
    t->rows = rows;
    t->cols = cols;
}
