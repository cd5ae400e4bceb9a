/* Column quantizers (src/parallel/quantize.c) against a one-value-at-a-time reference.
 *
 * The reference (ref_quantize) computes the header, every code and every reconstructed
 * value directly from the formulas in quantize.h and the arithmetic documented at the top
 * of quantize.c (statistics summed in double over 8 lanes, lane = row mod 8, added as
 * ((0+1)+(2+3))+((4+5)+(6+7)); code floor(v * scale + L/2); value (q - half) * step). It
 * never packs: codes are read back from the packed bytes by a bit-by-bit reader, so the
 * layout (LSB first, little-endian words) is checked independently of the packers.
 * Comparisons are exact. spec_formula_agrees checks the reference itself against the
 * spec's (q + 0.5) * step + lower form, in double. */
#include <float.h>
#include <math.h>
#include <stdint.h>

#include "math/backend.h"
#include "math/quantize.h"
#include "testutil.h"

/* The reference's float arithmetic as written, like quantize.c's (no fused a*b+c). */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#define MAXROWS 1000

static const size_t row_counts[] = {0, 1, 7, 31, 32, 33, 100, 512, 1000};
#define NROWS (sizeof row_counts / sizeof row_counts[0])

/* ---- data ---- */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t rnd(void) /* splitmix64 */
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double uniform(void) /* (0, 1) */
{
    return ((double)(rnd() >> 11) + 0.5) / 9007199254740992.0;
}

static float normal(void)
{
    return (float)(sqrt(-2.0 * log(uniform())) * cos(6.283185307179586 * uniform()));
}

/* Column `kind` of n values: normal, normal with an offset (mean threshold matters),
 * uniform with exact zeros and ties, tiny, or a heavy tail. */
static void fill(float *v, size_t n, int kind)
{
    for (size_t i = 0; i < n; i++) {
        float x = normal();
        switch (kind % 5) {
        case 0: v[i] = x * 0.01f; break;
        case 1: v[i] = x + 3.0f; break;
        case 2: v[i] = (float)((int)(uniform() * 9) - 4) * 0.25f; break;
        case 3: v[i] = x * 1e-30f; break;
        default: v[i] = x * x * x * 100.0f; break;
        }
    }
}

/* ---- reference ---- */

static double ref_tree(const double *a)
{
    return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
}

/* Header, codes and reconstructed values of column v, one value at a time. */
static void ref_quantize(const float *v, size_t n, int bits, int zt, float hdr[2], uint32_t *code,
                         float *rec)
{
    double s[8] = {0}, t[8] = {0};
    if (bits == 1 && zt) {
        size_t npos = 0;
        for (size_t i = 0; i < n; i++) {
            if (v[i] >= 0.0f) {
                s[i % 8] += v[i];
                npos++;
            } else {
                t[i % 8] += v[i];
            }
        }
        hdr[0] = n - npos ? (float)(ref_tree(t) / (double)(n - npos)) : 0.0f;
        hdr[1] = npos ? (float)(ref_tree(s) / (double)npos) : 0.0f;
        for (size_t i = 0; i < n; i++) {
            code[i] = v[i] >= 0.0f;
            rec[i] = code[i] ? hdr[1] : hdr[0];
        }
        return;
    }
    if (bits == 1) {
        for (size_t i = 0; i < n; i++)
            s[i % 8] += v[i];
        float mu = n ? (float)(ref_tree(s) / (double)n) : 0.0f;
        for (size_t i = 0; i < n; i++)
            t[i % 8] += fabs((double)v[i] - (double)mu);
        double dd = n ? ref_tree(t) / (double)n : 0.0;
        float d = (float)(dd > FLT_MAX ? FLT_MAX : dd);
        hdr[0] = mu - d < -FLT_MAX ? -FLT_MAX : mu - d;
        hdr[1] = mu + d > FLT_MAX ? FLT_MAX : mu + d;
        for (size_t i = 0; i < n; i++) {
            code[i] = v[i] >= mu;
            rec[i] = code[i] ? hdr[1] : hdr[0];
        }
        return;
    }
    for (size_t i = 0; i < n; i++)
        s[i % 8] += (double)v[i] * (double)v[i];
    float sigma = n ? (float)sqrt(ref_tree(s) / (double)n) : 0.0f;
    if (!(sigma <= FLT_MAX / 8))
        sigma = FLT_MAX / 8;
    float upper = 4.0f * sigma, lower = sigma > 0 ? -upper : 0.0f;
    int steps = (1 << bits) - 1, half = (1 << (bits - 1)) - 1;
    float scale = sigma > 0 ? (float)steps / (upper - lower) : 0.0f;
    float step = (upper - lower) / (float)steps;
    hdr[0] = lower;
    hdr[1] = upper;
    for (size_t i = 0; i < n; i++) {
        float y = v[i] * scale + 0.5f;           /* steps from 0, rounded */
        y = y > (float)-half ? y : (float)-half; /* NaN: the lowest code */
        y = y < (float)half ? y : (float)half;
        int q = (int)floorf(y) + half;
        code[i] = (uint32_t)q;
        rec[i] = (float)(q - half) * step;
    }
}

/* Code i of a packed column, read bit by bit: bit n of the stream is bit n % 8 of byte
 * n / 8 (little-endian words, least significant bit first). */
static uint32_t bit_code(const unsigned char *packed, size_t i, int bits)
{
    const unsigned char *c = packed + 8;
    uint32_t q = 0;
    for (int b = 0; b < bits; b++) {
        size_t n = i * (size_t)bits + (size_t)b;
        q |= (uint32_t)((c[n / 8] >> (n % 8)) & 1u) << b;
    }
    return q;
}

/* The bits values under test: 1 with zero threshold, 1 with mean threshold, 2..16. */
#define NMODES 17
static void mode_of(int m, int *bits, int *zt)
{
    *bits = m == 0 ? 1 : m;
    *zt = m == 0;
}

/* Half a step, plus the float rounding of v * scale + 0.5 and of scale * step != 1. */
static double half_step_tol(float v, double step)
{
    return 0.5 * step + 4 * FLT_EPSILON * (fabs((double)v) + step);
}

/* ---- one column through the CPU backend's ops ---- */

static struct backend *cpu(void)
{
    static struct backend *b;
    if (!b)
        ck_assert_int_eq(backend_cpu_new(&b, NULL), 0);
    return b;
}

static struct bk_columns one_column(const size_t *rows, int bits, int zt)
{
    static const size_t zero = 0;
    return (struct bk_columns){.off = &zero,
                               .rows = rows,
                               .boff = &zero,
                               .c0 = 0,
                               .c1 = 1,
                               .bits = bits,
                               .zero_threshold = zt};
}

static void encode_column(const float *col, float *res, size_t rows, int bits, int zt,
                          unsigned char *out)
{
    struct bk_columns c = one_column(&rows, bits, zt);
    cpu()->ops->quantize(cpu(), &c, col, res, out);
}

static void decode_column(const unsigned char *in, size_t rows, int bits, int accumulate,
                          float *out)
{
    struct bk_columns c = one_column(&rows, bits, 0);
    cpu()->ops->unquantize(cpu(), &c, in, accumulate, out);
}

/* ---- tests ---- */

static float g[MAXROWS], r0[MAXROWS], r[MAXROWS], v[MAXROWS], dec[MAXROWS], rec[MAXROWS];
static uint32_t code[MAXROWS];
static unsigned char packed[8 + 4 * MAXROWS + 64];

/* Encode g (+ r0 when with_r) at `bits`, decode, and compare everything with the
 * reference. Leaves v = g + r0 (float), r = the new residual, dec = the decoded values. */
static void check_column(size_t n, int bits, int zt, int with_r)
{
    for (size_t i = 0; i < n; i++) {
        v[i] = with_r ? g[i] + r0[i] : g[i];
        r[i] = r0[i];
    }
    float hdr[2], got[2];
    ref_quantize(v, n, bits, zt, hdr, code, rec);
    encode_column(g, with_r ? r : NULL, n, bits, zt, packed);
    memcpy(got, packed, sizeof got);
    ck_assert_msg(got[0] == hdr[0] && got[1] == hdr[1],
                  "bits %d zt %d rows %zu: header (%a, %a), reference (%a, %a)", bits, zt, n,
                  (double)got[0], (double)got[1], (double)hdr[0], (double)hdr[1]);
    decode_column(packed, n, bits, 0, dec);
    for (size_t i = 0; i < n; i++) {
        ck_assert_msg(bit_code(packed, i, bits) == code[i],
                      "bits %d zt %d rows %zu: code %zu is %u, reference %u (v %a)", bits, zt, n, i,
                      bit_code(packed, i, bits), code[i], (double)v[i]);
        ck_assert_msg(dec[i] == rec[i] && signbit(dec[i]) == signbit(rec[i]),
                      "bits %d zt %d rows %zu: value %zu is %a, reference %a", bits, zt, n, i,
                      (double)dec[i], (double)rec[i]);
        if (with_r)
            ck_assert_msg(r[i] == v[i] - dec[i], "bits %d rows %zu: residual %zu", bits, n, i);
    }
    /* padding bits of the last word are zero */
    size_t used = n * (size_t)bits, total = 8 * (quant_column_bytes(n, bits) - 8);
    for (size_t b = used; b < total; b++)
        ck_assert_msg(((packed[8 + b / 8] >> (b % 8)) & 1) == 0, "bits %d rows %zu: pad bit", bits,
                      n);
}

START_TEST(matches_reference)
{
    for (int m = 0; m < NMODES; m++)
        for (size_t ri = 0; ri < NROWS; ri++)
            for (int rep = 0; rep < 10; rep++) {
                int bits, zt;
                mode_of(m, &bits, &zt);
                size_t n = row_counts[ri];
                fill(g, n, rep);
                fill(r0, n, rep + 1);
                for (size_t i = 0; i < n; i++) /* from rep 6 on, r = 0: v keeps exact ties */
                    r0[i] = rep < 6 ? 0.5f * r0[i] : 0.0f;
                check_column(n, bits, zt, rep & 1);
            }
}
END_TEST

/* The reference's codes and values are the spec's, computed in double: the same code
 * unless the spec's quotient lies within 1e-4 of an integer (a rounding tie), values to
 * float rounding, and within half a step of v inside [lower, upper]. */
START_TEST(spec_formula_agrees)
{
    for (int bits = 2; bits <= 16; bits++)
        for (int rep = 0; rep < 20; rep++) {
            size_t n = 512;
            fill(g, n, rep);
            float hdr[2];
            ref_quantize(g, n, bits, 0, hdr, code, rec);
            double lower = hdr[0], upper = hdr[1], steps = (double)((1 << bits) - 1);
            double step = (upper - lower) / steps;
            for (size_t i = 0; i < n; i++) {
                double x = ((double)g[i] - lower) * steps / (upper - lower);
                double q = floor(x);
                q = q < 0 ? 0 : q > steps - 1 ? steps - 1 : q;
                if (fabs(x - floor(x + 0.5)) > 1e-6 * (fabs(x - steps / 2) + 1))
                    ck_assert_msg(q == code[i], "bits %d: code %u, spec %g", bits, code[i], q);
                double val = (code[i] + 0.5) * step + lower;
                ck_assert(fabs(val - rec[i]) <= 1e-6 * (upper - lower));
                if (g[i] >= lower && g[i] <= upper)
                    ck_assert(fabs(rec[i] - (double)g[i]) <= half_step_tol(g[i], step));
            }
        }
}
END_TEST

START_TEST(packed_size_and_canary)
{
    ck_assert_uint_eq(quant_column_bytes(0, 1), 8);
    ck_assert_uint_eq(quant_column_bytes(1, 1), 12);
    ck_assert_uint_eq(quant_column_bytes(32, 1), 12);
    ck_assert_uint_eq(quant_column_bytes(33, 1), 16);
    ck_assert_uint_eq(quant_column_bytes(512, 2), 8 + 128);
    ck_assert_uint_eq(quant_column_bytes(10, 3), 8 + 4);
    ck_assert_uint_eq(quant_column_bytes(11, 3), 8 + 8);
    ck_assert_uint_eq(quant_column_bytes(1000, 16), 8 + 2000);
    ck_assert_uint_eq(quant_column_bytes(7, 0), 0);
    ck_assert_uint_eq(quant_column_bytes(7, 17), 0);
    for (int m = 0; m < NMODES; m++)
        for (size_t ri = 0; ri < NROWS; ri++) {
            int bits, zt;
            mode_of(m, &bits, &zt);
            size_t n = row_counts[ri], size = quant_column_bytes(n, bits);
            ck_assert_uint_eq(size, 8 + 4 * ((n * (size_t)bits + 31) / 32));
            fill(g, n, (int)ri);
            /* every byte up to size is written (the same whatever was there), none after */
            unsigned char first[sizeof packed];
            for (int pass = 0; pass < 2; pass++) {
                unsigned char fillc = pass ? 0x5A : 0xA5;
                memset(packed, fillc, sizeof packed);
                encode_column(g, NULL, n, bits, zt, packed);
                for (size_t b = size; b < size + 64; b++)
                    ck_assert_msg(packed[b] == fillc, "bits %d rows %zu: byte %zu written", bits, n,
                                  b);
                if (pass)
                    ck_assert(memcmp(first, packed, size) == 0);
                memcpy(first, packed, size);
            }
            /* decode writes rows floats, not more */
            float out[MAXROWS + 8];
            for (size_t i = 0; i < MAXROWS + 8; i++)
                out[i] = -7.0f;
            decode_column(packed, n, bits, 0, out);
            for (size_t i = n; i < MAXROWS + 8; i++)
                ck_assert(out[i] == -7.0f);
        }
}
END_TEST

START_TEST(decode_accumulates)
{
    for (int m = 0; m < NMODES; m++) {
        int bits, zt;
        mode_of(m, &bits, &zt);
        for (size_t ri = 0; ri < NROWS; ri++) {
            size_t n = row_counts[ri];
            fill(g, n, m);
            fill(v, n, m + 2);
            encode_column(g, NULL, n, bits, zt, packed);
            decode_column(packed, n, bits, 0, dec);
            memcpy(r, v, n * sizeof *r);
            decode_column(packed, n, bits, 1, r);
            for (size_t i = 0; i < n; i++)
                ck_assert(r[i] == v[i] + dec[i]);
        }
    }
}
END_TEST

/* A hand-made layout: what the other side of the wire must read. */
START_TEST(known_bytes)
{
    const float col[5] = {1.0f, -1.0f, 2.0f, -3.0f, 0.0f};
    unsigned char out[16];
    float h[2];
    encode_column(col, NULL, 5, 1, 1, out);
    memcpy(h, out, sizeof h);
    ck_assert(h[0] == -2.0f && h[1] == 1.0f);
    ck_assert(out[8] == 0x15 && out[9] == 0 && out[10] == 0 && out[11] == 0); /* 1 0 1 0 1 */
    /* 4 bits: sigma = sqrt(15/5), codes from 0..14, 0 has code 7 */
    encode_column(col, NULL, 5, 4, 1, out);
    uint32_t q[5];
    float hdr[2];
    ref_quantize(col, 5, 4, 1, hdr, q, rec);
    ck_assert_uint_eq(q[4], 7);
    ck_assert_uint_eq(out[8], q[0] | q[1] << 4);
    ck_assert_uint_eq(out[9], q[2] | q[3] << 4);
    ck_assert_uint_eq(out[10], q[4]);
    ck_assert_uint_eq(out[11], 0);
}
END_TEST

START_TEST(edge_columns)
{
    size_t n = 100;
    for (int m = 0; m < NMODES; m++) {
        int bits, zt;
        mode_of(m, &bits, &zt);
        float h[2];
        /* all zeros: header (0, 0), every value +0, residual 0 */
        memset(g, 0, sizeof g);
        memset(r, 0, sizeof r);
        encode_column(g, r, n, bits, zt, packed);
        memcpy(h, packed, sizeof h);
        ck_assert(h[0] == 0.0f && h[1] == 0.0f && !signbit(h[0]) && !signbit(h[1]));
        decode_column(packed, n, bits, 0, dec);
        for (size_t i = 0; i < n; i++)
            ck_assert(dec[i] == 0.0f && !signbit(dec[i]) && r[i] == 0.0f);
        /* constant column */
        for (size_t i = 0; i < n; i++)
            g[i] = 0.375f;
        encode_column(g, NULL, n, bits, zt, packed);
        decode_column(packed, n, bits, 0, dec);
        for (size_t i = 0; i < n; i++) {
            if (bits == 1)
                ck_assert(dec[i] == 0.375f); /* mean = the constant, d = 0 */
            else
                ck_assert(fabsf(dec[i] - 0.375f) <= 0.5f * 8 * 0.375f / (float)((1 << bits) - 1));
        }
        /* rows == 0: the header only */
        memset(packed, 0xEE, 16);
        encode_column(g, r, 0, bits, zt, packed);
        memcpy(h, packed, sizeof h);
        ck_assert(h[0] == 0.0f && h[1] == 0.0f && packed[8] == 0xEE);
        decode_column(packed, 0, bits, 1, dec);
    }
    /* all positive, zero threshold: the empty negative side reconstructs to 0 */
    for (size_t i = 0; i < n; i++)
        g[i] = (float)(i + 1);
    encode_column(g, NULL, n, 1, 1, packed);
    float h[2];
    memcpy(h, packed, sizeof h);
    ck_assert(h[0] == 0.0f && h[1] == 50.5f);
    /* all negative: the empty non-negative side is 0 */
    for (size_t i = 0; i < n; i++)
        g[i] = -(float)(i + 1);
    encode_column(g, NULL, n, 1, 1, packed);
    memcpy(h, packed, sizeof h);
    ck_assert(h[0] == -50.5f && h[1] == 0.0f);
    /* sigma = 0 in float though the column is not all zeros (its squares underflow) */
    for (size_t i = 0; i < n; i++)
        g[i] = i == 3 ? FLT_TRUE_MIN : 0.0f;
    for (int bits = 2; bits <= 16; bits++) {
        memset(r, 0, n * sizeof *r);
        encode_column(g, r, n, bits, 0, packed);
        decode_column(packed, n, bits, 0, dec);
        for (size_t i = 0; i < n; i++)
            ck_assert(dec[i] == 0.0f && !signbit(dec[i]) && r[i] == g[i]);
    }
}
END_TEST

/* Huge finite values give finite headers and values; NaN and inf give anything but must
 * not crash or trip UBSan (float -> int conversions out of range). */
START_TEST(hostile_values)
{
    const float huge[] = {FLT_MAX, -FLT_MAX, 1e38f, -3e38f, 0.0f, 1.0f};
    size_t n = 40;
    for (int m = 0; m < NMODES; m++) {
        int bits, zt;
        mode_of(m, &bits, &zt);
        for (size_t i = 0; i < n; i++)
            g[i] = huge[i % 6];
        encode_column(g, NULL, n, bits, zt, packed);
        decode_column(packed, n, bits, 0, dec);
        for (size_t i = 0; i < n; i++)
            ck_assert_msg(isfinite(dec[i]), "bits %d zt %d: %g", bits, zt, (double)dec[i]);
        const float bad[] = {NAN, INFINITY, -INFINITY, 1.0f, -1.0f, 0.0f};
        for (int k = 0; k < 7; k++) {
            for (size_t i = 0; i < n; i++) {
                g[i] = bad[(i + (size_t)k) % 6];
                r[i] = k == 6 ? NAN : 0.0f;
            }
            encode_column(g, r, n, bits, zt, packed);
            decode_column(packed, n, bits, 1, dec);
        }
    }
}
END_TEST

/* 0 is a level and is hit exactly; values inside [lower, upper] land within half a step. */
START_TEST(levels_hit_zero)
{
    for (int bits = 2; bits <= 16; bits++)
        for (int rep = 0; rep < 10; rep++) {
            size_t n = 333;
            fill(g, n, rep);
            for (size_t i = 0; i < n; i += 5)
                g[i] = 0.0f;
            encode_column(g, NULL, n, bits, 0, packed);
            decode_column(packed, n, bits, 0, dec);
            float h[2];
            memcpy(h, packed, sizeof h);
            float step = (h[1] - h[0]) / (float)((1 << bits) - 1);
            for (size_t i = 0; i < n; i++) {
                if (g[i] == 0.0f)
                    ck_assert_msg(dec[i] == 0.0f, "bits %d: 0 -> %a", bits, (double)dec[i]);
                if (g[i] >= h[0] && g[i] <= h[1])
                    ck_assert_msg(fabs(dec[i] - (double)g[i]) <= half_step_tol(g[i], step),
                                  "bits %d: %a -> %a (step %a)", bits, (double)g[i], (double)dec[i],
                                  (double)step);
            }
        }
}
END_TEST

/* Error feedback: over T steps the decoded sum trails the true sum by exactly the residual
 * (r_T = sum g - sum decoded, to float rounding), and the residual stops growing. With a
 * fixed g, 1 bit, the residuals grow for ~500 steps to ~75 max |g| (300 rows) and then
 * stay there: the side means include the residuals, so they rise with them. */
static void feedback(int bits, int zt, int fixed)
{
    enum { T = 1000, N = 300 };
    static double sum_g[N], sum_d[N];
    memset(sum_g, 0, sizeof sum_g);
    memset(sum_d, 0, sizeof sum_d);
    memset(r, 0, sizeof r);
    fill(v, N, 0);
    float vmax = 0, gmax = 0, rmax[2] = {0, 0};
    for (int t = 0; t < T; t++) {
        if (fixed)
            memcpy(g, v, N * sizeof *g);
        else
            fill(g, N, 0);
        for (size_t i = 0; i < N; i++) {
            sum_g[i] += g[i];
            vmax = fmaxf(vmax, fabsf(g[i] + r[i]));
            gmax = fmaxf(gmax, fabsf(g[i]));
        }
        encode_column(g, r, N, bits, zt, packed);
        decode_column(packed, N, bits, 0, dec);
        for (size_t i = 0; i < N; i++) {
            sum_d[i] += dec[i];
            rmax[t >= T / 2] = fmaxf(rmax[t >= T / 2], fabsf(r[i]));
        }
    }
    ck_assert_msg(rmax[1] <= 1.5f * rmax[0] && rmax[1] <= 100 * gmax,
                  "bits %d zt %d fixed %d: residuals grow: max %g then %g (max |g| %g)", bits, zt,
                  fixed, (double)rmax[0], (double)rmax[1], (double)gmax);
    /* each step rounds v = g + r and r = v - d once each: at most ulp(vmax) per step */
    double tol = 2.0 * T * FLT_EPSILON * vmax;
    for (size_t i = 0; i < N; i++) {
        ck_assert_msg(fabs(sum_g[i] - sum_d[i] - r[i]) <= tol,
                      "bits %d zt %d: element %zu: sum g - sum d = %g, residual %g", bits, zt, i,
                      sum_g[i] - sum_d[i], (double)r[i]);
    }
}

START_TEST(error_feedback)
{
    for (int fixed = 0; fixed < 2; fixed++) {
        feedback(1, 1, fixed);
        feedback(1, 0, fixed);
        feedback(2, 0, fixed);
        feedback(3, 0, fixed);
    }
}
END_TEST

/* The packed bytes and the decoded values do not depend on the buffer's alignment. */
START_TEST(any_alignment)
{
    static unsigned char buf[8 + 4 * MAXROWS + 64];
    for (int m = 0; m < NMODES; m++) {
        int bits, zt;
        mode_of(m, &bits, &zt);
        size_t n = 1000, size = quant_column_bytes(n, bits);
        fill(g, n, m);
        encode_column(g, NULL, n, bits, zt, packed);
        for (size_t off = 1; off < 8; off += 2) {
            encode_column(g, NULL, n, bits, zt, buf + off);
            ck_assert(memcmp(buf + off, packed, size) == 0);
            decode_column(packed, n, bits, 0, dec);
            decode_column(buf + off, n, bits, 0, rec);
            ck_assert(memcmp(dec, rec, n * sizeof *dec) == 0);
        }
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("quantize");
    TCase *t = tcase_create("quantize");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, matches_reference);
    tcase_add_test(t, spec_formula_agrees);
    tcase_add_test(t, packed_size_and_canary);
    tcase_add_test(t, decode_accumulates);
    tcase_add_test(t, known_bytes);
    tcase_add_test(t, edge_columns);
    tcase_add_test(t, hostile_values);
    tcase_add_test(t, levels_hit_zero);
    tcase_add_test(t, error_feedback);
    tcase_add_test(t, any_alignment);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return run_suite(suite());
}
