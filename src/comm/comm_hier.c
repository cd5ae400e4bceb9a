/* Float allreduce variants: hierarchical, fp16 transport, buckets; see comm.h.
 *
 * Hierarchical allreduce (per piece of c->piece elements):
 *   1. MPI_Reduce to local rank 0 over the node communicator (skipped when alone)
 *   2. MPI_Allreduce in place among the node leaders (skipped with one node)
 *   3. MPI_Bcast from local rank 0 over the node communicator (skipped when alone)
 * Each final value is computed by the leaders' allreduce and broadcast, so every rank
 * holds the same bits.
 *
 * fp16 transport (SUM and AVG only; MIN and MAX are exact in float already):
 *   1. pack the float piece into IEEE binary16, round to nearest even
 *   2. allreduce (flat or hierarchical) over a 2-byte datatype with a commutative user
 *      op: h = half(float(a) + float(b)); commutativity of the float add keeps results
 *      rank-independent whatever tree MPI uses
 *   3. unpack into the float buffer (the caller divides for AVG)
 *
 * Buckets (comm_allreduce_list): consecutive small buffers are copied into c->pack until
 * the next one would overflow bucket_bytes; a buffer larger than a bucket flushes the
 * bucket and is reduced alone, in place. */
#include "comm/comm_internal.h"

#include <stdlib.h>
#include <string.h>

uint16_t comm_half_from_float(float f)
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

float comm_float_from_half(uint16_t h)
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

/* x86-64 with F16C converts 8 values per instruction (round to nearest even, like the
 * scalar code); the scalar code finishes the tail and serves other machines. */
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
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(src + i))));
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
#define pack_f16c(d, s, n) ((size_t)0)
#define unpack_f16c(d, s, n) ((size_t)0)
#define sum_f16c(a, b, n) ((size_t)0)
#endif

void comm_half_pack(uint16_t *dst, const float *src, size_t n)
{
    size_t i = has_f16c() ? pack_f16c(dst, src, n) : 0;
    for (; i < n; i++)
        dst[i] = comm_half_from_float(src[i]);
}

void comm_half_unpack(float *dst, const uint16_t *src, size_t n)
{
    size_t i = has_f16c() ? unpack_f16c(dst, src, n) : 0;
    for (; i < n; i++)
        dst[i] = comm_float_from_half(src[i]);
}

/* MPI_User_function over the 2-byte type: inout[i] = half(in[i] + inout[i]). */
static void half_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    const unsigned char *a = in;
    unsigned char *b = inout;
    size_t n = (size_t)*len;
    for (size_t i = has_f16c() ? sum_f16c(a, b, n) : 0; i < n; i++) {
        uint16_t x, y;
        memcpy(&x, a + 2 * i, 2);
        memcpy(&y, b + 2 * i, 2);
        y = comm_half_from_float(comm_float_from_half(x) + comm_float_from_half(y));
        memcpy(b + 2 * i, &y, 2);
    }
}

int comm_half_setup(struct comm *c, struct pt_err *e)
{
    int rc = MPI_Type_contiguous(2, MPI_BYTE, &c->half_type);
    if (rc == MPI_SUCCESS)
        rc = MPI_Type_commit(&c->half_type);
    if (rc != MPI_SUCCESS)
        return comm_mpi_fail(e, rc, "MPI_Type_contiguous", "fp16 datatype");
    rc = MPI_Op_create(half_sum, 1, &c->half_sum);
    return rc == MPI_SUCCESS ? 0 : comm_mpi_fail(e, rc, "MPI_Op_create", "fp16 sum");
}

void comm_half_release(struct comm *c)
{
    if (c->half_type != MPI_DATATYPE_NULL)
        MPI_Type_free(&c->half_type);
    if (c->half_sum != MPI_OP_NULL)
        MPI_Op_free(&c->half_sum);
}

int comm_hier_active(const struct comm *c)
{
    if (c->opt.hierarchical >= 0)
        return c->opt.hierarchical;
    return c->node_count > 1 && c->max_local > 1;
}

int comm_hier_pieces(struct comm *c, void *buf, size_t n, MPI_Datatype dt, size_t es, MPI_Op op,
                     const char *name, struct pt_err *e)
{
    int in_node = c->local_size > 1, leader = c->local_rank == 0;
    int across = c->leaders != MPI_COMM_NULL && c->node_count > 1;
    for (size_t off = 0; off < n; off += c->piece) {
        int m = (int)(n - off < c->piece ? n - off : c->piece);
        char *b = (char *)buf + off * es;
        int rc = MPI_SUCCESS;
        if (in_node)
            rc = MPI_Reduce(leader ? MPI_IN_PLACE : b, leader ? b : NULL, m, dt, op, 0, c->node);
        if (rc != MPI_SUCCESS)
            return comm_mpi_fail(e, rc, "MPI_Reduce", name);
        if (across)
            rc = MPI_Allreduce(MPI_IN_PLACE, b, m, dt, op, c->leaders);
        if (rc != MPI_SUCCESS)
            return comm_mpi_fail(e, rc, "MPI_Allreduce", name);
        if (in_node)
            rc = MPI_Bcast(b, m, dt, 0, c->node);
        if (rc != MPI_SUCCESS)
            return comm_mpi_fail(e, rc, "MPI_Bcast", name);
    }
    return 0;
}

/* Make c->half hold at least n elements. */
static int half_reserve(struct comm *c, size_t n, struct pt_err *e)
{
    if (c->half_cap >= n)
        return 0;
    uint16_t *h = pt_realloc(c->half, n * sizeof *h, e);
    if (!h)
        return PT_ENOMEM;
    c->half = h;
    c->half_cap = n;
    return 0;
}

int comm_allreduce_float(struct comm *c, float *buf, size_t n, MPI_Op op, int fp16,
                         struct pt_err *e)
{
    const char *name = "comm_allreduce";
    int hier = comm_hier_active(c);
    if (!fp16)
        return hier ? comm_hier_pieces(c, buf, n, MPI_FLOAT, sizeof(float), op, name, e)
                    : comm_allreduce_pieces(c->mc, buf, n, MPI_FLOAT, sizeof(float), op, c->piece,
                                            name, e);
    size_t step = n < c->piece ? n : c->piece;
    int rc = half_reserve(c, step, e);
    for (size_t off = 0; rc == 0 && off < n; off += step) {
        size_t m = n - off < step ? n - off : step;
        comm_half_pack(c->half, buf + off, m);
        if (hier)
            rc = comm_hier_pieces(c, c->half, m, c->half_type, 2, c->half_sum, name, e);
        else
            rc = comm_allreduce_pieces(c->mc, c->half, m, c->half_type, 2, c->half_sum, c->piece,
                                       name, e);
        if (rc == 0)
            comm_half_unpack(buf + off, c->half, m);
    }
    return rc;
}

/* Reduce the bucket of bufs[from..to) (fill elements in all) through c->pack. */
static int bucket_flush(struct comm *c, float *const *bufs, const size_t *ns, size_t from,
                        size_t to, size_t fill, enum comm_op op, struct pt_err *e)
{
    if (fill == 0)
        return 0;
    if (c->pack_cap < fill) {
        float *p = pt_realloc(c->pack, fill * sizeof *p, e);
        if (!p)
            return PT_ENOMEM;
        c->pack = p;
        c->pack_cap = fill;
    }
    size_t off = 0;
    for (size_t i = from; i < to; i++) {
        if (ns[i])
            memcpy(c->pack + off, bufs[i], ns[i] * sizeof(float));
        off += ns[i];
    }
    int rc = comm_allreduce(c, c->pack, fill, COMM_FLOAT, op, e);
    if (rc != 0)
        return rc;
    off = 0;
    for (size_t i = from; i < to; i++) {
        if (ns[i])
            memcpy(bufs[i], c->pack + off, ns[i] * sizeof(float));
        off += ns[i];
    }
    return 0;
}

int comm_allreduce_list(struct comm *c, float *const *bufs, const size_t *ns, size_t count,
                        enum comm_op op, struct pt_err *e)
{
    MPI_Op mop;
    int rc = comm_op_info(COMM_FLOAT, op, &mop, e);
    size_t bytes = c->opt.bucket_bytes ? c->opt.bucket_bytes : COMM_BUCKET_BYTES;
    size_t cap = bytes / sizeof(float) > 0 ? bytes / sizeof(float) : 1;
    size_t first = 0, fill = 0;
    for (size_t i = 0; rc == 0 && i < count; i++) {
        if (ns[i] > cap) {
            rc = bucket_flush(c, bufs, ns, first, i, fill, op, e);
            if (rc == 0)
                rc = comm_allreduce(c, bufs[i], ns[i], COMM_FLOAT, op, e);
            first = i + 1;
            fill = 0;
            continue;
        }
        if (fill + ns[i] > cap) {
            rc = bucket_flush(c, bufs, ns, first, i, fill, op, e);
            first = i;
            fill = 0;
        }
        fill += ns[i];
    }
    if (rc == 0)
        rc = bucket_flush(c, bufs, ns, first, count, fill, op, e);
    return rc;
}
