/* Lossless byte packing of a chunk's dense rows (see dense_store.h). */
#include <stdlib.h>
#include <string.h>

#include "core/timer.h"
#include "reader/dense_store.h"

#define HASH_SLOTS 1024 /* at most 256 keys: probes stay short */

struct dense_hash {
    uint32_t key[HASH_SLOTS];
    int16_t code[HASH_SLOTS]; /* -1: empty */
};

void dense_store_reset(struct dense_store *s, size_t dim)
{
    if (dim != s->dim) /* the kept buffer holds cap rows of the old width */
        s->cap = dim ? s->cap * s->dim / dim : 0;
    s->dim = dim;
    s->rows = 0;
    s->ntable = 0;
    if (s->val && !s->code) { /* the last chunk ended unpacked: start packed again */
        free(s->val);
        s->val = NULL;
        s->cap = 0;
    }
    if (s->hash)
        memset(s->hash->code, 0xff, sizeof s->hash->code);
}

static int grow(struct dense_store *s, size_t rows, struct pt_err *e)
{
    if (rows <= s->cap)
        return 0;
    size_t cap = s->cap ? s->cap : 256;
    while (cap < rows)
        cap *= 2;
    size_t elem = s->val ? sizeof *s->val : sizeof *s->code;
    void **p = s->val ? (void **)&s->val : (void **)&s->code;
    void *q = realloc(*p, cap * s->dim * elem);
    if (!q)
        return pt_err_set(e, PT_ENOMEM, "error: out of memory (%zu rows of %zu values)", cap,
                          s->dim);
    *p = q;
    s->cap = cap;
    return 0;
}

/* The code of bit pattern b, added if new; -1 when the table is full. */
static int code_of(struct dense_store *s, uint32_t b, float v)
{
    struct dense_hash *h = s->hash;
    for (uint32_t i = (b * 2654435761u) >> 22;; i = (i + 1) & (HASH_SLOTS - 1)) {
        if (h->code[i] < 0) {
            if (s->ntable == 256)
                return -1;
            h->key[i] = b;
            h->code[i] = (int16_t)s->ntable;
            s->table[s->ntable] = v;
            return s->ntable++;
        }
        if (h->key[i] == b)
            return h->code[i];
    }
}

/* A 257th distinct value: decode the first `done` values to floats and stay unpacked. */
static int unpack(struct dense_store *s, size_t done, struct pt_err *e)
{
    float *val = malloc((s->cap ? s->cap : 1) * s->dim * sizeof *val);
    if (!val)
        return pt_err_set(e, PT_ENOMEM, "error: out of memory (%zu rows of %zu values)", s->cap,
                          s->dim);
    for (size_t k = 0; k < done; k++)
        val[k] = s->table[s->code[k]];
    free(s->code);
    s->code = NULL;
    s->val = val;
    return 0;
}

int dense_store_append(struct dense_store *s, const float *v, size_t rows, struct pt_err *e)
{
    int rc = grow(s, s->rows + rows, e);
    if (rc)
        return rc;
    size_t base = s->rows * s->dim, n = rows * s->dim, k = 0;
    if (!s->val) {
        if (!s->hash) {
            if (!(s->hash = malloc(sizeof *s->hash)))
                return pt_err_set(e, PT_ENOMEM, "error: out of memory");
            memset(s->hash->code, 0xff, sizeof s->hash->code);
        }
        uint8_t *out = s->code + base;
        uint32_t last = 0;
        int code = -1; /* of `last`; -1: none yet */
        for (; k < n; k++) {
            uint32_t b;
            memcpy(&b, &v[k], sizeof b);
            if (code < 0 || b != last) {
                if ((code = code_of(s, b, v[k])) < 0)
                    break;
                last = b;
            }
            out[k] = (uint8_t)code;
        }
        if (k < n && (rc = unpack(s, base + k, e)))
            return rc;
    }
    if (k < n)
        memcpy(s->val + base + k, v + k, (n - k) * sizeof *v);
    s->rows += rows;
    return 0;
}

void dense_store_seal(struct dense_store *s)
{
    free(s->hash);
    s->hash = NULL;
    size_t rows = s->rows ? s->rows : 1;
    if (rows >= s->cap)
        return;
    size_t elem = s->val ? sizeof *s->val : sizeof *s->code;
    void **p = s->val ? (void **)&s->val : (void **)&s->code;
    if (!*p)
        return;
    void *q = realloc(*p, rows * s->dim * elem);
    if (q) {
        *p = q;
        s->cap = rows;
    }
}

void dense_store_prefetch(const struct dense_store *s, size_t row, size_t n)
{
    const char *p =
        s->val ? (const char *)(s->val + row * s->dim) : (const char *)(s->code + row * s->dim);
    size_t bytes = n * s->dim * (s->val ? sizeof *s->val : sizeof *s->code);
    for (size_t off = 0; off < bytes; off += 64)
        __builtin_prefetch(p + off);
}

/* A row's codes looked up in the table, 8 from one 64-bit load (plain C, any CPU). */
static void lookup_rows(float *restrict out, const uint8_t *restrict c, const float *restrict table,
                        size_t dim)
{
    size_t j = 0;
    for (; j + 8 <= dim; j += 8) {
        uint64_t w;
        memcpy(&w, c + j, sizeof w);
#pragma GCC unroll 8
        for (int k = 0; k < 8; k++, w >>= 8) /* the bytes in memory order (little-endian) */
            out[j + (size_t)k] = table[w & 255];
    }
    for (; j < dim; j++)
        out[j] = table[c[j]];
}

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
/* The first dim / 16 * 16 codes of a row decoded 16 at a time: widened to 32-bit indices
 * and looked up by AVX-512's gather (the 1 KiB table stays in L1). Returns how many it
 * decoded. */
__attribute__((target("avx512f"))) static size_t gather_rows(float *out, const uint8_t *c,
                                                             const float *table, size_t dim)
{
    size_t j = 0;
    for (; j + 16 <= dim; j += 16) {
        __m512i ix = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(const void *)(c + j)));
        _mm512_storeu_ps(out + j, _mm512_i32gather_ps(ix, table, 4));
    }
    return j;
}

static int can_gather(void)
{
    return __builtin_cpu_supports("avx512f");
}
#else
static size_t gather_rows(float *out, const uint8_t *c, const float *table, size_t dim)
{
    (void)out, (void)c, (void)table, (void)dim;
    return 0;
}

static int can_gather(void)
{
    return 0;
}
#endif

static void decode(int gather, float *out, const uint8_t *c, const float *table, size_t dim)
{
    size_t j = gather ? gather_rows(out, c, table, dim) : 0;
    lookup_rows(out + j, c + j, table, dim - j);
}

/* Which decodes rows: the lookups (0) or the gather (1). Which is faster depends on the
 * CPU: on an AMD EPYC (Zen 4) 256 of the MLP's 784-code rows take 60-64 us by lookups
 * against 73-95 by gathers (the MLP's minibatch read 193-202 -> 180-190 us, the 10th
 * percentile of a step), while an Intel Xeon's gathers beat a plain loop (the MLP's
 * reading 34-39 ms an epoch against 42-46). So the first row of at least 64 values
 * decoded times both on its store's rows and the faster stays (both give the same floats;
 * threads that race to it store the same kind of answer). */
static int gather_chosen = -1;

static int choose(const struct dense_store *s)
{
    enum { ROWS = 64, ROUNDS = 5 };
    int gather = can_gather();
    float *out = gather ? malloc(ROWS * s->dim * sizeof *out) : NULL;
    if (out) {
        double best[2] = {1e30, 1e30};
        for (int round = 0; round < ROUNDS; round++)
            for (int k = 0; k < 2; k++) {
                double t0 = pt_now();
                for (size_t r = 0; r < ROWS; r++)
                    decode(k, out + r * s->dim, s->code + r % s->rows * s->dim, s->table, s->dim);
                double t = pt_now() - t0;
                best[k] = t < best[k] ? t : best[k];
            }
        gather = best[1] < best[0];
        free(out);
    }
    __atomic_store_n(&gather_chosen, gather, __ATOMIC_RELAXED);
    return gather;
}

int dense_store_decoder(int gather)
{
    if (gather >= 0)
        __atomic_store_n(&gather_chosen, gather && can_gather(), __ATOMIC_RELAXED);
    return __atomic_load_n(&gather_chosen, __ATOMIC_RELAXED);
}

void dense_store_row(const struct dense_store *s, size_t row, float *out)
{
    size_t dim = s->dim;
    if (s->val) {
        memcpy(out, s->val + row * dim, dim * sizeof *out);
        return;
    }
    int gather = __atomic_load_n(&gather_chosen, __ATOMIC_RELAXED);
    if (gather < 0) /* timed on rows of some width (labels' 10 codes are all lookups) */
        gather = dim >= 64 ? choose(s) : 0;
    decode(gather, out, s->code + row * dim, s->table, dim);
}

size_t dense_store_bytes(const struct dense_store *s)
{
    return s->rows * s->dim * (s->val ? sizeof *s->val : sizeof *s->code);
}

void dense_store_free(struct dense_store *s)
{
    free(s->code);
    free(s->val);
    free(s->hash);
    memset(s, 0, sizeof *s);
}
