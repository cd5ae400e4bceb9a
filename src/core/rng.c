/* xoshiro256** (Blackman & Vigna) seeded by splitmix64; see rng.h. */
#include "core/rng.h"

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

void pt_rng_seed(struct pt_rng *r, uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t x = a;
    uint64_t h = splitmix64(&x) ^ b;
    h = splitmix64(&h) ^ c;
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&h);
}

uint64_t pt_rng_next(struct pt_rng *r)
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

uint64_t pt_rng_below(struct pt_rng *r, uint64_t n)
{
    /* reject the top partial range so every value is equally likely */
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do
        x = pt_rng_next(r);
    while (x >= limit);
    return x % n;
}

double pt_rng_uniform(struct pt_rng *r)
{
    return (double)(pt_rng_next(r) >> 11) * 0x1.0p-53;
}

void pt_rng_shuffle_u32(struct pt_rng *r, uint32_t *a, size_t n)
{
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)pt_rng_below(r, i);
        uint32_t t = a[i - 1];
        a[i - 1] = a[j];
        a[j] = t;
    }
}
