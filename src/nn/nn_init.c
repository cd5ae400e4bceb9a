/* Random numbers and parameter initialization. The generator is src/core/rng.c
 * (xoshiro256**): the same sequence on every platform, so a seed gives the same network
 * everywhere. */
#include <math.h>
#include <stdio.h>

#include "nn/layer.h"

uint64_t nn_mix64(uint64_t a, uint64_t b)
{
    uint64_t z = a + 0x9E3779B97F4A7C15ull * (b + 1);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Box-Muller; the second value of each pair is dropped to keep the stream simple. */
double nn_rng_normal(struct pt_rng *r)
{
    double u1 = 1.0 - pt_rng_uniform(r); /* (0, 1]: log is finite */
    double u2 = pt_rng_uniform(r);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* uniformInit=true: U(-0.05 s, 0.05 s); false: N(0, 0.2 / sqrt(fanIn) s) (CNTK). */
void nn_init_weights(float *w, size_t count, size_t fan_in, const struct nn_config *cfg,
                     struct pt_rng *rng)
{
    double s = cfg->init_scale;
    if (cfg->uniform_init) {
        for (size_t i = 0; i < count; i++)
            w[i] = (float)((pt_rng_uniform(rng) * 2.0 - 1.0) * 0.05 * s);
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
