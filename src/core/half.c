/* IEEE 754 binary16 conversions for the fp16 allreduce (useFp16AllReduce); see half.h.
 * x86-64 with F16C converts 8 values per instruction (round to nearest even, like the scalar
 * code); the scalar code finishes the tail and serves other machines. */
#include "core/half.h"

#include <string.h>

uint16_t bk_half_from_float(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t ex = (x >> 23) & 0xffu, man = x & 0x7fffffu;
    if (ex == 0xff) /* inf, or NaN kept quiet and non-zero */
        return (uint16_t)(sign | 0x7c00u | (man ? 0x200u | (man >> 13) : 0));
    int he = (int)ex - 127 + 15;
    if (he >= 31)
        return (uint16_t)(sign | 0x7c00u);
    uint32_t m, shift;
    if (he > 0) { /* normal half: drop 13 mantissa bits */
        m = ((uint32_t)he << 10) | (man >> 13);
        shift = 13;
        man &= 0x1fffu;
    } else { /* subnormal half or zero: units of 2^-24 */
        shift = (uint32_t)(14 - he);
        if (shift > 24)
            return sign;
        uint32_t full = man | 0x800000u;
        m = full >> shift;
        man = full & ((1u << shift) - 1);
    }
    uint32_t halfway = 1u << (shift - 1);
    if (man > halfway || (man == halfway && (m & 1)))
        m++; /* a carry moves into the exponent, up to inf: still right */
    return (uint16_t)(sign | m);
}

float bk_float_from_half(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t ex = (h >> 10) & 0x1fu, man = h & 0x3ffu, x;
    if (ex == 0x1f) {
        x = sign | 0x7f800000u | (man << 13);
    } else if (ex != 0) {
        x = sign | ((ex + 112) << 23) | (man << 13);
    } else if (man == 0) {
        x = sign;
    } else { /* subnormal: normalise man * 2^-24 */
        uint32_t e = 113;
        while (!(man & 0x400u)) {
            man <<= 1;
            e--;
        }
        x = sign | (e << 23) | ((man & 0x3ffu) << 13);
    }
    float f;
    memcpy(&f, &x, sizeof f);
    return f;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

static int has_f16c(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c");
}

__attribute__((target("avx,f16c"))) static size_t pack_f16c(uint16_t *dst, const float *src,
                                                            size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(void *)(dst + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
    return i;
}

__attribute__((target("avx,f16c"))) static size_t unpack_f16c(float *dst, const uint16_t *src,
                                                              size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(
            dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(src + i))));
    return i;
}

/* b[i] = half(float(a[i]) + float(b[i])) */
__attribute__((target("avx,f16c"))) static size_t sum_f16c(const unsigned char *a, unsigned char *b,
                                                           size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 x = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(a + 2 * i)));
        __m256 y = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(void *)(b + 2 * i)));
        _mm_storeu_si128((__m128i *)(void *)(b + 2 * i),
                         _mm256_cvtps_ph(_mm256_add_ps(x, y), _MM_FROUND_TO_NEAREST_INT));
    }
    return i;
}
#else
static int has_f16c(void)
{
    return 0;
}
#define pack_f16c(d, s, n)   ((size_t)0)
#define unpack_f16c(d, s, n) ((size_t)0)
#define sum_f16c(a, b, n)    ((size_t)0)
#endif

void bk_half_pack(uint16_t *dst, const float *src, size_t n)
{
    size_t i = has_f16c() ? pack_f16c(dst, src, n) : 0;
    for (; i < n; i++)
        dst[i] = bk_half_from_float(src[i]);
}

void bk_half_unpack(float *dst, const uint16_t *src, size_t n)
{
    size_t i = has_f16c() ? unpack_f16c(dst, src, n) : 0;
    for (; i < n; i++)
        dst[i] = bk_float_from_half(src[i]);
}

void bk_half_sum(const void *in, void *inout, size_t n)
{
    const unsigned char *a = in;
    unsigned char *b = inout;
    for (size_t i = has_f16c() ? sum_f16c(a, b, n) : 0; i < n; i++) {
        uint16_t x, y;
        memcpy(&x, a + 2 * i, 2);
        memcpy(&y, b + 2 * i, 2);
        y = bk_half_from_float(bk_float_from_half(x) + bk_float_from_half(y));
        memcpy(b + 2 * i, &y, 2);
    }
}
