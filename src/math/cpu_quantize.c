/* The CPU backend's column quantizers of 1-bit SGD (SPEC 7.1): backend_ops.quantize and
 * unquantize; the packed format is described in quantize.h.
 *
 * Blocks. A column is processed in blocks of 32 values: 32 codes of k bits fill exactly k
 * 32-bit words for every k in 1..16, so no word is shared by two blocks, the packers keep no
 * state across blocks, and only the last, partial block needs care (it is copied into a
 * zero-padded local block, and codes past the column are forced to 0). Fixed 32-iteration
 * loops are also what gcc -O2 (cost model "very-cheap") is willing to vectorize.
 *
 *   step  encode                                          decode
 *   1     v = g + r, stored in r (r is then v)            header (lo, hi) or (lower, upper)
 *   2     column statistics -> header (1 bit: the last    per block: words -> codes
 *         statistics pass also packs the codes)
 *   3     per block: codes, packed words, r -= level      codes -> values, stored or added
 *         (1 bit: r -= level only)
 *
 * Determinism. Column statistics (the two side means, the mean, the mean absolute
 * deviation, the mean square) are summed in double, over QUANT_LANES interleaved lanes
 * (lane = row mod 8) added in a fixed tree at the end (lanes_total). That order is part of
 * the definition: any build, vector width or rank gives the same bits, and the 8
 * independent chains vectorize where one chain could not be reordered. Each mean is one
 * double division, rounded once to float. Everything after the statistics is float
 * arithmetic with one rounding per operation as written: contraction into fma is off for
 * this file, and the AVX2 clones below do not enable FMA either, so every build and clone
 * produces the same bytes.
 *
 * Levels (bits >= 2). With L = 2^k - 1 steps of size step = (upper - lower) / L and
 * half = 2^(k-1) - 1, the spec's (q + 0.5) * step + lower equals (q - half) * step
 * (lower = -L/2 * step). The second form is the one computed: it is exactly 0 for
 * q == half and exactly symmetric, where the first would leave rounding noise around 0.
 * The encoder computes the code as half + floor(v * scale + 0.5), limited to 0..2 half,
 * with scale = L / (upper - lower) (one division per column): mathematically the spec's
 * floor((v - lower) * scale) for lower = -upper, but relative to 0, so the float keeps its
 * precision for small values (adding L / 2 first would round v * scale to 2^-8 steps at
 * k = 16), 0 has exactly the code half, and sigma = 0 (scale 0, header (0, 0)) gives every
 * value the code of 0, as the spec asks.
 *
 * Hostile inputs. sigma is limited to FLT_MAX / 8 so lower, upper and upper - lower stay
 * finite (huge finite values reconstruct to finite values); the code's float is limited
 * to [0, L - 1] by compares that send NaN to 0 before it is converted to an integer, so no
 * conversion is ever out of range. NaN or inf inputs give meaningless (but defined) codes,
 * headers and residuals. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "math/cpu_kernels.h"
#include "math/quantize.h"

/* No a*b+c fused into one fma, whatever -march says (see Determinism): a fused
 * v - (q - half) * step would differ from v minus the decoded value, and a build with FMA
 * would send other bytes than one without. */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#define QUANT_BLOCK 32 /* values per block: k words of codes */
#define QUANT_LANES 8  /* interleaved partial sums of the column statistics */

#if defined(__GNUC__)
#define QUANT_INLINE static inline __attribute__((always_inline))
#else
#define QUANT_INLINE static inline
#endif

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__ELF__)
/* The block loops are also compiled for AVX2 (per-lane shifts for the unpackers, 8-wide
 * floats) and picked at load time. "avx2" does not imply FMA: see Determinism above. */
#define QUANT_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define QUANT_CLONES
#endif

/* Float threshold and levels of a k-bit column, derived from its header. */
struct levels {
    float scale;  /* L / (upper - lower): value -> steps from 0 */
    float step;   /* (upper - lower) / L: code -> value */
    int32_t half; /* 2^(k-1) - 1, the code of 0; codes are 0..2 half */
};

/* ---- words: little-endian on every host, no alignment assumed ---- */

static uint32_t swap_le32(uint32_t w)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return (w >> 24) | ((w >> 8) & 0xff00u) | ((w << 8) & 0xff0000u) | (w << 24);
#else
    return w;
#endif
}

QUANT_INLINE void store_words(unsigned char *p, uint32_t *w, size_t n)
{
    for (size_t i = 0; i < n; i++)
        w[i] = swap_le32(w[i]);
    memcpy(p, w, 4 * n);
}

/* n words from p into w[0..n), the rest of w[0..16) zero. */
QUANT_INLINE void load_words(const unsigned char *p, uint32_t *w, size_t n)
{
    memset(w + n, 0, 4 * (16 - n));
    memcpy(w, p, 4 * n);
    for (size_t i = 0; i < n; i++)
        w[i] = swap_le32(w[i]);
}

/* ---- column statistics (fixed summation order, see Determinism) ---- */

static double lanes_total(const double *acc)
{
    return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

/* r += g. Like every element loop here it runs over fixed-size blocks plus a tail: gcc -O2
 * vectorizes only loops whose vector code needs no scalar epilogue. */
QUANT_CLONES static void add_residual(float *restrict r, const float *restrict g, size_t rows)
{
    size_t i = 0;
    for (; i + QUANT_BLOCK <= rows; i += QUANT_BLOCK)
        for (int j = 0; j < QUANT_BLOCK; j++)
            r[i + j] += g[i + j];
    for (; i < rows; i++)
        r[i] += g[i];
}

/* Lane sums of v[0..n) (n a multiple of 8 except at the end of a column), as lane
 * (row mod 8) of the column: the block starts at a multiple of 8. */
QUANT_INLINE void sum_lanes(const float *v, size_t n, double *restrict s)
{
    size_t i = 0;
    for (; i + QUANT_LANES <= n; i += QUANT_LANES)
        for (int l = 0; l < QUANT_LANES; l++)
            s[l] += v[i + l];
    for (int l = 0; i < n; i++, l++)
        s[l] += v[i];
}

/* The same with f(x) = x^2 and f(x) = |x - m| (in double: exact squares of floats, and a
 * difference rounded once). */
QUANT_INLINE void sumsq_lanes(const float *v, size_t n, double *restrict s)
{
    size_t i = 0;
    for (; i + QUANT_LANES <= n; i += QUANT_LANES)
        for (int l = 0; l < QUANT_LANES; l++)
            s[l] += (double)v[i + l] * v[i + l];
    for (int l = 0; i < n; i++, l++)
        s[l] += (double)v[i] * v[i];
}

QUANT_INLINE void absdev_lanes(const float *v, size_t n, double m, double *restrict s)
{
    size_t i = 0;
    for (; i + QUANT_LANES <= n; i += QUANT_LANES)
        for (int l = 0; l < QUANT_LANES; l++)
            s[l] += fabs((double)v[i + l] - m);
    for (int l = 0; i < n; i++, l++)
        s[l] += fabs((double)v[i] - m);
}

/* Side sums of one block of 32 (row mod 8 lanes). (x + |x|) / 2 is x for x >= 0 and 0 for
 * x < 0, (x - |x|) / 2 the other way round, both exact in double: the sums of
 * "v >= 0 ? pos : neg" with neither a branch (it would mispredict every other value) nor a
 * select (gcc leaves those unvectorized). NaN makes both sums NaN. */
QUANT_INLINE void sides_lanes(const float *v, double *restrict pos, double *restrict neg)
{
    for (int i = 0; i < QUANT_BLOCK; i += QUANT_LANES)
        for (int l = 0; l < QUANT_LANES; l++) {
            double x = v[i + l], a = fabs(x);
            pos[l] += (x + a) * 0.5;
            neg[l] += (x - a) * 0.5;
        }
}

QUANT_CLONES static float stats_sigma(const float *v, size_t rows)
{
    double s[QUANT_LANES] = {0};
    sumsq_lanes(v, rows, s);
    if (!rows)
        return 0.0f;
    float sigma = (float)sqrt(lanes_total(s) / (double)rows);
    return sigma <= FLT_MAX / 8 ? sigma : FLT_MAX / 8; /* NaN too: 8 sigma stays finite */
}

static struct levels levels_of(float lower, float upper, int bits)
{
    int32_t steps = (1 << bits) - 1;
    struct levels lv = {.step = (upper - lower) / (float)steps, .half = (1 << (bits - 1)) - 1};
    lv.scale = upper > lower ? (float)steps / (upper - lower) : 0.0f;
    return lv;
}

/* ---- 1 bit ---- */

/* The codes do not depend on the header, so they are written by the last statistics pass
 * (the sides, or the absolute deviation) and a last pass computes the residuals. */

static uint32_t popcount32(uint32_t w)
{
    w = w - ((w >> 1) & 0x55555555u);
    w = (w & 0x33333333u) + ((w >> 2) & 0x33333333u);
    return (((w + (w >> 4)) & 0x0F0F0F0Fu) * 0x01010101u) >> 24;
}

/* Bit j = v[j] >= thr, j < 32; NaN gives 0. */
QUANT_INLINE uint32_t code1_word(const float *v, float thr)
{
    uint32_t w = 0;
    for (uint32_t j = 0; j < QUANT_BLOCK; j++)
        w |= (uint32_t)(v[j] >= thr) << j;
    return w;
}

/* Zero threshold: codes into out, header (mean of v < 0, mean of v >= 0) into *lo, *hi; the
 * count of v >= 0 is the count of 1 bits. */
QUANT_CLONES static void sides_codes(const float *v, size_t rows, unsigned char *out, float *lo,
                                     float *hi)
{
    double pos[QUANT_LANES] = {0}, neg[QUANT_LANES] = {0};
    size_t full = rows / QUANT_BLOCK, n = rows % QUANT_BLOCK, npos = 0;
    uint32_t w[16];
    for (size_t b = 0; b < full; b++) {
        const float *x = v + b * QUANT_BLOCK;
        w[0] = code1_word(x, 0.0f);
        sides_lanes(x, pos, neg);
        npos += popcount32(w[0]);
        store_words(out + 4 * b, w, 1);
    }
    if (n) {
        float t[QUANT_BLOCK] = {0}; /* the padding zeros add nothing to either sum */
        memcpy(t, v + full * QUANT_BLOCK, n * sizeof *t);
        w[0] = code1_word(t, 0.0f) & ((1u << n) - 1);
        sides_lanes(t, pos, neg);
        npos += popcount32(w[0]);
        store_words(out + 4 * full, w, 1);
    }
    *lo = rows > npos ? (float)(lanes_total(neg) / (double)(rows - npos)) : 0.0f;
    *hi = npos ? (float)(lanes_total(pos) / (double)npos) : 0.0f;
}

/* Mean threshold: the mean, then codes (v >= mu) into out with the absolute deviation d, as
 * floats; d is limited to FLT_MAX before its conversion. */
QUANT_CLONES static void mean_codes(const float *v, size_t rows, unsigned char *out, float *mu,
                                    float *d)
{
    double s[QUANT_LANES] = {0}, a[QUANT_LANES] = {0};
    sum_lanes(v, rows, s);
    float m = rows ? (float)(lanes_total(s) / (double)rows) : 0.0f;
    size_t full = rows / QUANT_BLOCK, n = rows % QUANT_BLOCK;
    uint32_t w[16];
    for (size_t b = 0; b < full; b++) {
        const float *x = v + b * QUANT_BLOCK;
        w[0] = code1_word(x, m);
        absdev_lanes(x, QUANT_BLOCK, m, a);
        store_words(out + 4 * b, w, 1);
    }
    if (n) {
        float t[QUANT_BLOCK] = {0};
        memcpy(t, v + full * QUANT_BLOCK, n * sizeof *t);
        w[0] = code1_word(t, m) & ((1u << n) - 1);
        absdev_lanes(t, n, m, a); /* the n values only: padding would add |0 - mu| */
        store_words(out + 4 * full, w, 1);
    }
    double dev = rows ? lanes_total(a) / (double)rows : 0.0;
    *mu = m;
    *d = (float)(dev > FLT_MAX ? FLT_MAX : dev);
}

/* r = v - level, in place (r holds v): the code is recomputed from v, as it was encoded. */
QUANT_CLONES static void residual1(float *r, size_t rows, float thr, float lo, float hi)
{
    size_t i = 0;
    for (; i + QUANT_BLOCK <= rows; i += QUANT_BLOCK)
        for (int j = 0; j < QUANT_BLOCK; j++)
            r[i + j] -= r[i + j] >= thr ? hi : lo;
    for (; i < rows; i++)
        r[i] -= r[i] >= thr ? hi : lo;
}

QUANT_INLINE void decode1_block(uint32_t w, float lo, float hi, int accumulate, float *out)
{
    if (accumulate)
        for (uint32_t j = 0; j < QUANT_BLOCK; j++)
            out[j] += (w >> j) & 1u ? hi : lo;
    else
        for (uint32_t j = 0; j < QUANT_BLOCK; j++)
            out[j] = (w >> j) & 1u ? hi : lo;
}

QUANT_CLONES static void decode1(const unsigned char *in, size_t rows, float lo, float hi,
                                 int accumulate, float *out)
{
    size_t full = rows / QUANT_BLOCK, n = rows % QUANT_BLOCK;
    uint32_t w[16];
    for (size_t b = 0; b < full; b++) {
        load_words(in + 4 * b, w, 1);
        decode1_block(w[0], lo, hi, accumulate, out + b * QUANT_BLOCK);
    }
    if (n) {
        float t[QUANT_BLOCK];
        load_words(in + 4 * full, w, 1);
        decode1_block(w[0], lo, hi, 0, t);
        float *o = out + full * QUANT_BLOCK;
        for (size_t j = 0; j < n; j++)
            o[j] = accumulate ? o[j] + t[j] : t[j];
    }
}

/* ---- 2..16 bits ---- */

QUANT_INLINE float level_value(uint32_t q, int32_t half, float step)
{
    return (float)((int32_t)q - half) * step;
}

/* Codes q[0..32) of one block; r (NULL, or r == v) becomes v - level. The compares send
 * NaN to code 0 and keep the float inside [-half, half] before the conversion; floor is
 * truncation, minus 1 where truncation rounded a negative value up. */
QUANT_INLINE void codes_block(const float *v, float *r, const struct levels *lv,
                              uint32_t *restrict q)
{
    const float scale = lv->scale, step = lv->step;
    const int32_t half = lv->half;
    const float fhalf = (float)half;
    for (int j = 0; j < QUANT_BLOCK; j++) {
        float y = v[j] * scale + 0.5f;
        y = y > -fhalf ? y : -fhalf;
        y = y < fhalf ? y : fhalf;
        int32_t s = (int32_t)y;
        s -= (float)s > y;
        q[j] = (uint32_t)(s + half);
    }
    if (r)
        for (int j = 0; j < QUANT_BLOCK; j++)
            r[j] -= level_value(q[j], half, step);
}

/* 32 codes of k bits into k words. With k a power of two (a constant once inlined) no
 * code straddles a word; other k go through a 64-bit bit accumulator. */
QUANT_INLINE void pack_block(const uint32_t *restrict q, int k, uint32_t *restrict w)
{
    if (k == 2 || k == 4 || k == 8 || k == 16) {
        const int per = 32 / k;
        for (int i = 0; i < k; i++) {
            uint32_t x = 0;
            for (int j = 0; j < per; j++)
                x |= q[i * per + j] << (j * k);
            w[i] = x;
        }
        return;
    }
    uint64_t acc = 0;
    int nb = 0, o = 0;
    for (int j = 0; j < QUANT_BLOCK; j++) {
        acc |= (uint64_t)q[j] << nb;
        nb += k;
        if (nb >= 32) {
            w[o++] = (uint32_t)acc;
            acc >>= 32;
            nb -= 32;
        }
    }
}

QUANT_INLINE void unpack_block(const uint32_t *restrict w, int k, uint32_t *restrict q)
{
    const uint32_t mask = (1u << k) - 1;
    if (k == 2 || k == 4 || k == 8 || k == 16) {
        const int per = 32 / k;
        for (int i = 0; i < k; i++)
            for (int j = 0; j < per; j++)
                q[i * per + j] = (w[i] >> (j * k)) & mask;
        return;
    }
    uint64_t acc = 0;
    int nb = 0, o = 0;
    for (int j = 0; j < QUANT_BLOCK; j++) {
        if (nb < k) {
            acc |= (uint64_t)w[o++] << nb;
            nb += 32;
        }
        q[j] = (uint32_t)acc & mask;
        acc >>= k;
        nb -= k;
    }
}

QUANT_INLINE void encode_levels(const float *v, float *r, size_t rows, int k,
                                const struct levels *lv, unsigned char *out)
{
    size_t full = rows / QUANT_BLOCK, n = rows % QUANT_BLOCK;
    uint32_t q[QUANT_BLOCK], w[16];
    for (size_t b = 0; b < full; b++) {
        size_t at = b * QUANT_BLOCK;
        codes_block(v + at, r ? r + at : NULL, lv, q);
        pack_block(q, k, w);
        store_words(out + 4 * (size_t)k * b, w, (size_t)k);
    }
    if (n) {
        float t[QUANT_BLOCK] = {0};
        memcpy(t, v + full * QUANT_BLOCK, n * sizeof *t);
        codes_block(t, r ? t : NULL, lv, q);
        memset(q + n, 0, (QUANT_BLOCK - n) * sizeof *q);
        pack_block(q, k, w);
        store_words(out + 4 * (size_t)k * full, w, (n * (size_t)k + 31) / 32);
        if (r)
            memcpy(r + full * QUANT_BLOCK, t, n * sizeof *t);
    }
}

QUANT_INLINE void decode_levels(const unsigned char *in, size_t rows, int k,
                                const struct levels *lv, int accumulate, float *out)
{
    size_t full = rows / QUANT_BLOCK, n = rows % QUANT_BLOCK;
    const float step = lv->step;
    const int32_t half = lv->half;
    uint32_t q[QUANT_BLOCK], w[16];
    for (size_t b = 0; b < full; b++) {
        float *o = out + b * QUANT_BLOCK;
        load_words(in + 4 * (size_t)k * b, w, (size_t)k);
        unpack_block(w, k, q);
        if (accumulate)
            for (int j = 0; j < QUANT_BLOCK; j++)
                o[j] += level_value(q[j], half, step);
        else
            for (int j = 0; j < QUANT_BLOCK; j++)
                o[j] = level_value(q[j], half, step);
    }
    if (n) {
        float *o = out + full * QUANT_BLOCK;
        load_words(in + 4 * (size_t)k * full, w, (n * (size_t)k + 31) / 32);
        unpack_block(w, k, q);
        for (size_t j = 0; j < n; j++)
            o[j] =
                accumulate ? o[j] + level_value(q[j], half, step) : level_value(q[j], half, step);
    }
}

/* One specialised copy per power of two (k is a constant in it), one generic. */
QUANT_CLONES static void encode_k(const float *v, float *r, size_t rows, int k,
                                  const struct levels *lv, unsigned char *out)
{
    switch (k) {
    case 2: encode_levels(v, r, rows, 2, lv, out); break;
    case 4: encode_levels(v, r, rows, 4, lv, out); break;
    case 8: encode_levels(v, r, rows, 8, lv, out); break;
    case 16: encode_levels(v, r, rows, 16, lv, out); break;
    default: encode_levels(v, r, rows, k, lv, out); break;
    }
}

QUANT_CLONES static void decode_k(const unsigned char *in, size_t rows, int k,
                                  const struct levels *lv, int accumulate, float *out)
{
    switch (k) {
    case 2: decode_levels(in, rows, 2, lv, accumulate, out); break;
    case 4: decode_levels(in, rows, 4, lv, accumulate, out); break;
    case 8: decode_levels(in, rows, 8, lv, accumulate, out); break;
    case 16: decode_levels(in, rows, 16, lv, accumulate, out); break;
    default: decode_levels(in, rows, k, lv, accumulate, out); break;
    }
}

/* ---- the contract ---- */

static void store_header(unsigned char *out, float a, float b)
{
    float h[2] = {a, b};
    memcpy(out, h, sizeof h);
}

void cpu_quant_encode_column(const float *g, float *r, size_t rows, int bits, int zero_threshold,
                             unsigned char *out)
{
    if (bits < 1 || bits > 16)
        return;
    const float *v = g;
    if (r) {
        add_residual(r, g, rows);
        v = r; /* from here on r is v, and is overwritten by v - level in place */
    }
    unsigned char *codes = out + 2 * sizeof(float);
    if (bits == 1) {
        float lo, hi, thr = 0.0f;
        if (zero_threshold) {
            sides_codes(v, rows, codes, &lo, &hi);
        } else {
            float d;
            mean_codes(v, rows, codes, &thr, &d);
            lo = thr - d < -FLT_MAX ? -FLT_MAX : thr - d; /* huge columns stay finite */
            hi = thr + d > FLT_MAX ? FLT_MAX : thr + d;
        }
        store_header(out, lo, hi);
        if (r)
            residual1(r, rows, thr, lo, hi);
        return;
    }
    float upper = 4.0f * stats_sigma(v, rows), lower = upper > 0.0f ? -upper : 0.0f;
    struct levels lv = levels_of(lower, upper, bits);
    store_header(out, lower, upper);
    encode_k(v, r, rows, bits, &lv, codes);
}

void cpu_quant_decode_column(const unsigned char *in, size_t rows, int bits, int accumulate,
                             float *out)
{
    if (bits < 1 || bits > 16)
        return;
    float h[2];
    memcpy(h, in, sizeof h);
    const unsigned char *codes = in + sizeof h;
    if (bits == 1) {
        decode1(codes, rows, h[0], h[1], accumulate, out);
        return;
    }
    struct levels lv = levels_of(h[0], h[1], bits);
    decode_k(codes, rows, bits, &lv, accumulate, out);
}

/* ---- the backend ops: a run of columns ---- */

void cpu_quantize(struct backend *b, const struct bk_columns *c, const float *g, float *r,
                  unsigned char *out)
{
    (void)b;
    for (size_t k = c->c0; k < c->c1; k++) {
        size_t at = c->off[k] - c->fbase;
        cpu_quant_encode_column(g + at, r ? r + at : NULL, c->rows[k], c->bits, c->zero_threshold,
                                out + (c->boff[k] - c->bbase));
    }
}

void cpu_unquantize(struct backend *b, const struct bk_columns *c, const unsigned char *in,
                    int accumulate, float *out)
{
    (void)b;
    for (size_t k = c->c0; k < c->c1; k++)
        cpu_quant_decode_column(in + (c->boff[k] - c->bbase), c->rows[k], c->bits, accumulate,
                                out + (c->off[k] - c->fbase));
}
