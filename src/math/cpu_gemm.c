/* A single-thread sgemm for AVX-512F, blocked the BLIS way.
 *
 * C (m x n) += alpha op(A) (m x k) op(B) (k x n), column-major:
 *   for each block of NC columns of C, each block of KC steps of k:
 *     pack op(B)'s KC x NC block into panels of NR columns (row by row: NR floats per k),
 *       unless B is not transposed (k runs down its columns): then whole NR-column tiles
 *       are read in place by the micro_kernel_sb_* kernels and only a last partial tile
 *       is packed (the pack would transpose them; this saves it: the forward products and
 *       W^T dY);
 *     for each block of MC rows: pack op(A)'s MC x KC block into panels of MR rows
 *       (column by column: MR floats per k), unless the product is a weight gradient
 *       dL/dz x^T with whole row tiles and one k block, SGD-fused or stored
 *       (micro_kernel_ai_sgd and _store read dL/dz in place); then every MR x NR tile of C
 *       gets one micro-kernel call over KC steps.
 *   (Where B is read in place, the two inner loops are swapped: each block of MC rows of
 *   C takes all its k blocks in turn, while it is in L2. Where k is short, a block of A
 *   has more than MC rows, as many as fill MC x KC floats.)
 * The micro-kernel holds the tile in 24 of the 32 zmm registers (MR = 32 rows = two
 * vectors, NR = 12 columns) and per step does two loads of A, twelve broadcasts of B and
 * 24 FMAs. Packing zero-pads partial panels, so the kernel runs whole tiles (a last tile
 * of at most 4 or 8 columns only that wide) and only the stores are masked. Transposes are
 * handled by the packing (16 x 16 in registers). The last k block of a tile can do more
 * than store it (its epilogue, enum epi_kind): take the momentum SGD step with it as a
 * gradient, apply ReLU's derivative, or add a bias and apply ReLU; the backend's
 * gemm_sgd, gemm_act_grad and gemm_bias_act, each the same bits as its two passes.
 * Sizes: a B micro-panel (KC x NR, 12 KiB) stays in L1, the A block (MC x KC, 256 KiB) in
 * L2; k is cut into equal blocks of at most KC. A product with fewer than MR rows (the
 * output layer's 10) is computed transposed, so its rows fill tiles.
 *
 * The packing, and the fetching ahead of the next block of A, are in cpu_gemm_pack.c; the
 * blocking constants in cpu_gemm_internal.h.
 *
 * Measured (bench/sgemm_peak, Intel Xeon with AVX-512, one thread, at the MLP's shapes):
 * 152-156 GFLOP/s, 1.01-1.05x OpenBLAS 0.3.21's SkylakeX and Cooperlake kernels (B in
 * place added 2.5-3 % to the forward products and W^T dY, the narrow last tile 3-4 %) and
 * 4.7x the Prescott kernel OpenBLAS picks on that CPU. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "math/backend.h"
#include "math/cpu_gemm.h"
#include "math/cpu_gemm_internal.h"
#include "math/cpu_kernels.h"

#define PF_EVERY 4 /* k steps between two prefetches of a tile's epilogue operands */
#define PF_HINT  _MM_HINT_T0

/* What the last k block of a product does with its tiles besides storing them. */
enum epi_kind {
    EPI_STORE,     /* nothing */
    EPI_SGD,       /* the SGD step of u on them, as a gradient (and no store) */
    EPI_RELU_GRAD, /* ReLU's derivative from y (laid out as C) applied before the store */
    EPI_BIAS_RELU, /* C = max(C + bias, 0) per row, as bias_act (bias has a row each) */
};
struct epi {
    const struct bk_sgd *u;
    const float *y; /* EPI_RELU_GRAD's y, EPI_BIAS_RELU's bias */
    float *asum;    /* EPI_SGD: NULL, or the sums over k of op(A)'s rows (the bias gradient) */
};

struct cpu_gemm {
    float *ap; /* MC x KC */
    float *bp; /* KC x NC, rounded up to whole panels */
    float *t;  /* C transposed, for products with fewer than MR rows */
    size_t t_cap;
    /* cpu_gemm_hold's matrices (nheld of them): each one's whole packed form (k block pc's
     * row block ic at pc * (m rounded up to MR) + ic * kc) once `packed` says which
     * product packed it; slots beyond nheld keep their buffers for the next holds */
    struct held {
        const float *a;
        float *hp;
        size_t hp_cap;
        struct {
            int ta;
            size_t lda, m, k;
        } packed;
        int hp_valid;
    } held[CPU_GEMM_HOLDS];
    int nheld;
};

int cpu_gemm_supported(void)
{
#if HAVE_KERNEL
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f");
#else
    return 0;
#endif
}

int cpu_gemm_auto_own(int has_avx512, int threads)
{
    return has_avx512 && threads <= 1;
}

struct cpu_gemm *cpu_gemm_new(void)
{
    struct cpu_gemm *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->ap = aligned_alloc(64, (size_t)MC * KC * sizeof(float));
    g->bp = aligned_alloc(64, (size_t)KC * ((NC + NR - 1) / NR * NR) * sizeof(float));
    if (!g->ap || !g->bp) {
        cpu_gemm_free(g);
        return NULL;
    }
    return g;
}

void cpu_gemm_hold(struct cpu_gemm *g, const float *a)
{
    if (!a) {
        g->nheld = 0;
        return;
    }
    for (int i = 0; i < g->nheld; i++)
        if (g->held[i].a == a)
            return;
    if (g->nheld == CPU_GEMM_HOLDS) /* more than the slots: packed at every product */
        return;
    g->held[g->nheld].a = a;
    g->held[g->nheld++].hp_valid = 0;
}

void cpu_gemm_free(struct cpu_gemm *g)
{
    if (!g)
        return;
    for (int i = 0; i < CPU_GEMM_HOLDS; i++)
        free(g->held[i].hp);
    free(g->ap);
    free(g->bp);
    free(g->t);
    free(g);
}

#if HAVE_KERNEL
/* The momentum SGD step on 16 rows of a tile's column, g the gradient just stored: w and s
 * (masked by k) updated with sgd_update's roundings, one per operation as written (the
 * explicit rounding intrinsics are never contracted into fused multiply-adds, which would
 * round differently from cpu_update.c's loop). */
#define RNE (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
AVX512 static inline __attribute__((always_inline)) void
sgd16(float *w, float *s, __mmask16 k, __m512 g, __m512 vm, __m512 va, int nag)
{
    __m512 sv = _mm512_maskz_loadu_ps(k, s), wv = _mm512_maskz_loadu_ps(k, w);
    __m512 ag = _mm512_mul_round_ps(va, g, RNE);
    sv = _mm512_add_round_ps(_mm512_mul_round_ps(vm, sv, RNE), ag, RNE);
    __m512 step = nag ? _mm512_add_round_ps(_mm512_mul_round_ps(vm, sv, RNE), ag, RNE) : sv;
    _mm512_mask_storeu_ps(s, k, sv);
    _mm512_mask_storeu_ps(w, k, _mm512_sub_round_ps(wv, step, RNE));
}

/* The MR x NR tile at c (rows < m, columns < n are stored) = alpha A-panel . B-panel +
 * beta c (beta == 0: c is not read), computed for its first nr columns only (nr, a constant
 * in each caller, is NR, or 8 or 4 for a last tile that narrow: N = 256 leaves 4 columns,
 * which a whole tile's 12 would compute at the cost of 12).
 *
 * B's element (p, j) is the packed panel's b[p NR + j], or with in_place (a constant in
 * each caller: specialised kernels) b[p + j ldb] of a column-major B whose k runs down its
 * columns: packing that B would transpose it (16 x 16 in registers); read in place, a
 * whole tile's NR columns are NR sequential streams, in L1 after the first of the MC / MR
 * tiles that share them. The same FMAs in the same order either way: the same bits.
 *
 * kind (a constant in each kernel) is the epilogue; with EPI_SGD the tile is a gradient:
 * ep->u's tensor and momentum at the tile's offset `off` from their start take the SGD
 * step, and c is not written. Measured on the MLP's dW1 (512 x 784 x 256, operands in L3): the
 * product alone 1.36 ms, followed by the update pass 1.57, fused 1.46-1.48 (storing the gradient
 * too: 0.04 more). */
AVX512 static inline __attribute__((always_inline)) void
tile_a(size_t kc, const float *restrict a, size_t lda, int a_in_place, const float *b, size_t ldb,
       int in_place, int nr, int two, float *c, size_t ldc, size_t m, size_t n, float alpha,
       float beta, enum epi_kind kind, const struct epi *ep, size_t off, int with_sum, float *sum)
{
    __m512 lo[NR], hi[NR];
    const float *bj[NR];
#pragma GCC unroll 12
    for (int j = 0; j < nr; j++) {
        lo[j] = hi[j] = _mm512_setzero_ps();
        bj[j] = b + (size_t)j * ldb;
    }
    /* The epilogue's operands (parameters and momentum, or y) are fetched during the
     * tile's last steps, one line every PF_EVERY steps (a burst of 48 prefetches would
     * stall on the line fill buffers; spread, they arrive while the FMAs run); not in a
     * tile of a few steps (the output layer's k = 10), whose FMAs would not hide them */
    const char *pf[4 * NR];
    size_t npf = 0;
    if ((kind == EPI_SGD || kind == EPI_RELU_GRAD) && kc >= 32)
        for (size_t j = 0; j < n && j < NR; j++)
            for (size_t i = 0; i < m && i < MR; i += 16) {
                size_t at = off + j * ldc + i;
                if (kind == EPI_SGD) {
                    pf[npf++] = (const char *)(ep->u->w + at);
                    pf[npf++] = (const char *)(ep->u->s + at);
                } else {
                    pf[npf++] = (const char *)(ep->y + at);
                }
            }
    size_t first = kc > npf * PF_EVERY ? kc - npf * PF_EVERY : 0;
    __mmask16 mlo = m >= 16 ? 0xffff : (__mmask16)((1u << m) - 1);
    __mmask16 mhi = m >= 32 ? 0xffff : m <= 16 ? 0 : (__mmask16)((1u << (m - 16)) - 1);
    __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps(); /* with_sum: A's row sums */
    for (size_t p = 0; p < kc; p++, a += a_in_place ? lda : MR) {
        __m512 a0 = a_in_place ? _mm512_loadu_ps(a) : _mm512_load_ps(a);
        __m512 a1 = !two         ? _mm512_setzero_ps()
                    : a_in_place ? _mm512_loadu_ps(a + 16)
                                 : _mm512_load_ps(a + 16);
        if (with_sum) {
            s0 = _mm512_add_ps(s0, a0);
            s1 = _mm512_add_ps(s1, a1);
        }
        if (npf && p >= first && (p - first) % PF_EVERY == 0 && (p - first) / PF_EVERY < npf)
            _mm_prefetch(pf[(p - first) / PF_EVERY], PF_HINT);
#pragma GCC unroll 12
        for (int j = 0; j < nr; j++) {
            __m512 bv = _mm512_set1_ps(in_place ? bj[j][p] : b[p * NR + (size_t)j]);
            lo[j] = _mm512_fmadd_ps(a0, bv, lo[j]);
            if (two)
                hi[j] = _mm512_fmadd_ps(a1, bv, hi[j]);
        }
    }
    if (with_sum) {
        _mm512_mask_storeu_ps(sum, mlo, s0);
        _mm512_mask_storeu_ps(sum + 16, mhi, s1);
    }
    __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
#pragma GCC unroll 12
    for (int j = 0; j < nr; j++) {
        if ((size_t)j >= n)
            break;
        float *cj = c + (size_t)j * ldc;
        /* alpha 1 (most products): the product by 1 is exact, so left out */
        __m512 x0 = alpha == 1.0f ? lo[j] : _mm512_mul_ps(va, lo[j]);
        __m512 x1 = alpha == 1.0f ? hi[j] : _mm512_mul_ps(va, hi[j]);
        if (beta != 0.0f) {
            x0 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(mlo, cj), x0);
            x1 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(mhi, cj + 16), x1);
        }
        if (kind == EPI_RELU_GRAD) { /* y > 0 ? dx : 0, as cpu_act_grad (NaN y: 0) */
            const float *yj = ep->y + off + (size_t)j * ldc;
            __m512 zero = _mm512_setzero_ps();
            __m512 y0 = _mm512_maskz_loadu_ps(mlo, yj), y1 = _mm512_maskz_loadu_ps(mhi, yj + 16);
            x0 = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(y0, zero, _CMP_GT_OQ), x0);
            x1 = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(y1, zero, _CMP_GT_OQ), x1);
        }
        if (kind == EPI_BIAS_RELU) { /* (z + b) > 0 ? z + b : 0, as cpu_bias_act */
            const float *bias = ep->y + off % ldc;
            __m512 zero = _mm512_setzero_ps();
            x0 = _mm512_add_round_ps(x0, _mm512_maskz_loadu_ps(mlo, bias), RNE); /* no FMA */
            x1 = _mm512_add_round_ps(x1, _mm512_maskz_loadu_ps(mhi, bias + 16), RNE);
            x0 = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x0, zero, _CMP_GT_OQ), x0);
            x1 = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x1, zero, _CMP_GT_OQ), x1);
        }
        if (kind != EPI_SGD) { /* a gradient that takes its SGD step is not stored */
            _mm512_mask_storeu_ps(cj, mlo, x0);
            if (two)
                _mm512_mask_storeu_ps(cj + 16, mhi, x1);
            continue;
        }
        const struct bk_sgd *u = ep->u;
        __m512 vm = _mm512_set1_ps(u->m), vu = _mm512_set1_ps(u->a);
        float *wj = u->w + off + (size_t)j * ldc, *sj = u->s + off + (size_t)j * ldc;
        sgd16(wj, sj, mlo, x0, vm, vu, u->nag);
        sgd16(wj + 16, sj + 16, mhi, x1, vm, vu, u->nag);
    }
}

/* A tile from packed A (the kernels below but one). */
AVX512 static inline __attribute__((always_inline)) void
tile(size_t kc, const float *restrict a, const float *b, size_t ldb, int in_place, int nr, float *c,
     size_t ldc, size_t m, size_t n, float alpha, float beta, enum epi_kind kind,
     const struct epi *ep, size_t off)
{
    tile_a(kc, a, MR, 0, b, ldb, in_place, nr, 1, c, ldc, m, n, alpha, beta, kind, ep, off, 0,
           NULL);
}

/* The kernels: a tile from the packed B panel (any n <= NR, computed as narrow as n
 * allows), or a whole tile (n = NR) of an untransposed B read in place (column j at
 * b + j ldb); each epilogue kind specialised. */
typedef void kernel_fn(size_t kc, const float *restrict a, const float *b, size_t ldb, float *c,
                       size_t ldc, size_t m, size_t n, float alpha, float beta,
                       const struct epi *ep, size_t off);

AVX512 static inline __attribute__((always_inline)) void
packed(size_t kc, const float *restrict a, const float *restrict b, float *c, size_t ldc, size_t m,
       size_t n, float alpha, float beta, enum epi_kind kind, const struct epi *ep, size_t off)
{
    if (n <= 4)
        tile(kc, a, b, 0, 0, 4, c, ldc, m, n, alpha, beta, kind, ep, off);
    else if (n <= 8)
        tile(kc, a, b, 0, 0, 8, c, ldc, m, n, alpha, beta, kind, ep, off);
    else
        tile(kc, a, b, 0, 0, NR, c, ldc, m, n, alpha, beta, kind, ep, off);
}

/* One kind's pair of kernels: micro_kernel_<name> (packed B) and micro_kernel_sb_<name>
 * (B in place), the epilogue a constant in each. */
#define PT_GEMM_KERNELS(name, kind)                                                                \
    AVX512 static void micro_kernel_##name(                                                        \
        size_t kc, const float *restrict a, const float *b, size_t ldb, float *c, size_t ldc,      \
        size_t m, size_t n, float alpha, float beta, const struct epi *ep, size_t off)             \
    {                                                                                              \
        (void)ldb;                                                                                 \
        packed(kc, a, b, c, ldc, m, n, alpha, beta, kind, ep, off);                                \
    }                                                                                              \
    AVX512 static void micro_kernel_sb_##name(                                                     \
        size_t kc, const float *restrict a, const float *b, size_t ldb, float *c, size_t ldc,      \
        size_t m, size_t n, float alpha, float beta, const struct epi *ep, size_t off)             \
    {                                                                                              \
        (void)n;                                                                                   \
        tile(kc, a, b, ldb, 1, NR, c, ldc, m, NR, alpha, beta, kind, ep, off);                     \
    }
PT_GEMM_KERNELS(store, EPI_STORE)
/* A whole tile of B in place, stored, for C of at most 16 rows (the output layer's
 * forward, 10 rows): one vector of A a step, half the FMAs of a 32-row tile. */
AVX512 static void micro_kernel_sb16_store(size_t kc, const float *restrict a, const float *b,
                                           size_t ldb, float *c, size_t ldc, size_t m, size_t n,
                                           float alpha, float beta, const struct epi *ep,
                                           size_t off)
{
    (void)n;
    tile_a(kc, a, MR, 0, b, ldb, 1, NR, 0, c, ldc, m, NR, alpha, beta, EPI_STORE, ep, off, 0, NULL);
}
PT_GEMM_KERNELS(sgd, EPI_SGD)
PT_GEMM_KERNELS(relu_grad, EPI_RELU_GRAD)
PT_GEMM_KERNELS(bias_relu, EPI_BIAS_RELU)

/* The weight-gradient product dL/dz x^T with A = dL/dz read in place (column p of the
 * tile's 32 rows at a + p lda; every row exists: m is a whole number of tiles) and B
 * packed, its epilogue the SGD step (micro_kernel_ai_sgd) or a plain store
 * (micro_kernel_ai_store: the gradient kept for an aggregation, and the output layer's
 * dW^T through its transpose); with sum, the tile's rows of A are also added up over its
 * kc steps into sum (the bias gradient, from zero: one k block). The same FMAs in the same
 * order as from packed A, so the same bits; it saves packing dL/dz, which on a team of
 * ranks sharing a model every member would pack whole for its share of W's columns.
 * Measured on the MLP's dW1 and dW2 (operands in L3): 1.364 and 0.893 ms against 1.369
 * and 0.909 packed. */
AVX512 static inline __attribute__((always_inline)) void
a_in_place(size_t kc, const float *restrict a, size_t lda, const float *restrict b, float *c,
           size_t ldc, size_t m, size_t n, float alpha, float beta, enum epi_kind kind,
           const struct epi *ep, size_t off, int with_sum, float *sum)
{
    if (n <= 4)
        tile_a(kc, a, lda, 1, b, 0, 0, 4, 1, c, ldc, m, n, alpha, beta, kind, ep, off, with_sum,
               sum);
    else if (n <= 8)
        tile_a(kc, a, lda, 1, b, 0, 0, 8, 1, c, ldc, m, n, alpha, beta, kind, ep, off, with_sum,
               sum);
    else
        tile_a(kc, a, lda, 1, b, 0, 0, NR, 1, c, ldc, m, n, alpha, beta, kind, ep, off, with_sum,
               sum);
}
AVX512 static void micro_kernel_ai_sgd(size_t kc, const float *restrict a, size_t lda,
                                       const float *restrict b, float *c, size_t ldc, size_t m,
                                       size_t n, float alpha, float beta, const struct epi *ep,
                                       size_t off, float *sum)
{
    if (sum)
        a_in_place(kc, a, lda, b, c, ldc, m, n, alpha, beta, EPI_SGD, ep, off, 1, sum);
    else
        a_in_place(kc, a, lda, b, c, ldc, m, n, alpha, beta, EPI_SGD, ep, off, 0, NULL);
}
AVX512 static void micro_kernel_ai_store(size_t kc, const float *restrict a, size_t lda,
                                         const float *restrict b, float *c, size_t ldc, size_t m,
                                         size_t n, float alpha, float beta, const struct epi *ep,
                                         size_t off, float *sum)
{
    (void)sum;
    a_in_place(kc, a, lda, b, c, ldc, m, n, alpha, beta, EPI_STORE, ep, off, 0, NULL);
}

/* [B read in place][epilogue kind] */
static kernel_fn *const kernels[2][4] = {
    {micro_kernel_store, micro_kernel_sgd, micro_kernel_relu_grad, micro_kernel_bias_relu},
    {micro_kernel_sb_store, micro_kernel_sb_sgd, micro_kernel_sb_relu_grad,
     micro_kernel_sb_bias_relu},
};
#endif

#if HAVE_KERNEL
/* C (m x n, m < MR) through its transpose T = op(B)^T op(A)^T (n x m): T's n rows fill
 * whole MR tiles where C's m rows would fill a fraction of one (the output layer's 10 rows:
 * 10 of 32 lanes; transposed, 10 of NR = 12 columns). Returns 0 (nothing done) when T's
 * buffer cannot grow; the direct path then computes C. */
static int transposed(struct cpu_gemm *g, int ta, int tb, size_t m, size_t n, size_t k, float alpha,
                      const float *a, int lda, const float *b, int ldb, float beta, float *c,
                      size_t ldc)
{
    if (m * n > g->t_cap) {
        float *t = aligned_alloc(64, (m * n * sizeof(float) + 63) / 64 * 64);
        if (!t)
            return 0;
        free(g->t);
        g->t = t;
        g->t_cap = m * n;
    }
    float *t = g->t;
    cpu_gemm_run(g, !tb, !ta, (int)n, (int)m, (int)k, alpha, b, ldb, a, lda, 0.0f, t, (int)n);
    for (size_t j = 0; j < n; j++)
        for (size_t i = 0; i < m; i++)
            c[i + j * ldc] = beta == 0.0f ? t[j + i * n] : t[j + i * n] + beta * c[i + j * ldc];
    return 1;
}

/* The epilogue on a finished C (m x n, ldc) column by column, through the backend's own
 * loops (so the same bits as those passes). */
static void epi_after(enum epi_kind kind, const struct epi *ep, float *c, size_t m, size_t n,
                      size_t ldc)
{
    if (ldc == m && kind != EPI_BIAS_RELU) { /* elementwise over contiguous columns: one pass
                                              * (the output layer's 10-row dW: 512 calls) */
        m *= n;
        n = 1;
    }
    for (size_t j = 0; j < n && kind != EPI_STORE; j++) {
        size_t o = j * ldc;
        if (kind == EPI_SGD)
            cpu_sgd_update(NULL, ep->u->w + o, c + o, ep->u->s + o, m, ep->u->m, ep->u->a,
                           ep->u->nag);
        else if (kind == EPI_RELU_GRAD)
            cpu_act_grad(NULL, BK_ACT_RELU, c + o, ep->y + o, m);
        else
            cpu_bias_act(NULL, BK_ACT_RELU, c + o, ep->y, (int)m, 1);
    }
}

/* The held matrix a's slot, or NULL. */
static struct held *held_of(struct cpu_gemm *g, const float *a)
{
    for (int i = 0; i < g->nheld; i++)
        if (g->held[i].a == a)
            return &g->held[i];
    return NULL;
}

/* The buffer for a held A's packs, for a product with this A (NULL: out of memory, or the
 * held A was packed for another product's shape and cannot be reused: packed anew). */
static float *held_packs(struct held *g, int ta, size_t lda, size_t m, size_t k, size_t mpad)
{
    if (g->hp_valid &&
        (g->packed.ta != ta || g->packed.lda != lda || g->packed.m != m || g->packed.k != k))
        g->hp_valid = 0;
    if (mpad * k > g->hp_cap) {
        float *p = aligned_alloc(64, (mpad * k * sizeof(float) + 63) / 64 * 64);
        if (!p)
            return NULL;
        free(g->hp);
        g->hp = p;
        g->hp_cap = mpad * k;
        g->hp_valid = 0;
    }
    g->packed.ta = ta;
    g->packed.lda = lda;
    g->packed.m = m;
    g->packed.k = k;
    return g->hp;
}

static void run(struct cpu_gemm *g, int ta, int tb, int m, int n, int k, float alpha,
                const float *a, int lda, const float *b, int ldb, float beta, float *c, int ldc,
                enum epi_kind kind, const struct epi *ep)
{
    size_t M = (size_t)m, N = (size_t)n, K = (size_t)k, LDC = (size_t)ldc;
    float *asum = kind == EPI_SGD && ep->asum ? ep->asum : NULL;
    /* B without transpose is read in place unless its columns lie a multiple of 4 KiB
     * apart: the NR streams would then share one set of the L1 cache (square 2048: 2 %
     * slower in place; the MLP's 784 and 512: 2.5-3 % faster) */
    int in_place = !tb && (size_t)ldb % 1024 != 0;
    /* at most 16 rows, B in place, stored: tiles of one vector of rows (the output layer's
     * forward: 10 x 256 x 512 in 44-46 us against 58-66 through the transpose, which packs the
     * 512 x 256 activations transposed); the same sums in the same order either way */
    int rows16 = M <= 16 && in_place && kind == EPI_STORE && N >= NR;
    if (M < MR && N > M && !rows16 &&
        transposed(g, ta, tb, M, N, K, alpha, a, lda, b, ldb, beta, c, LDC)) {
        if (asum)
            cpu_row_sums(asum, ta, a, (size_t)lda, M, K);
        epi_after(kind, ep, c, M, N, LDC);
        return;
    }
    /* the weight-gradient product dW = dL/dz x^T (one k block, whole row tiles), SGD-fused
     * or stored, reads dL/dz in place and adds up its rows in its first column of tiles */
    int a_in = (kind == EPI_SGD || kind == EPI_STORE) && !ta && tb && M % MR == 0 && K <= KC;
    if (asum && !a_in) { /* else the in-place kernel adds them up */
        cpu_row_sums(asum, ta, a, (size_t)lda, M, K);
        asum = NULL;
    }
    /* the held A: packed once (the first product with it), then read from there */
    size_t mpad = (M + MR - 1) / MR * MR;
    struct held *h = a_in ? NULL : held_of(g, a);
    float *hp = h ? held_packs(h, ta, (size_t)lda, M, K, mpad) : NULL;
    int have = hp && h->hp_valid;
    /* k in equal blocks of at most KC (784 = 4 x 196, not 3 x 256 + 16: a short last block
     * pays a whole pass over C for little work) */
    size_t kblock = (K + (K + KC - 1) / KC - 1) / ((K + KC - 1) / KC);
    /* rows of A packed at a time: MC, or where k is short as many more as fill the same
     * MC x KC floats (the output layer's dL/dx, k = 10: all 512 rows in one block, so each
     * column tile of C, and of the ReLU's y, is one run of memory instead of two halves
     * visited a pass apart; the tiles' sums are the same) */
    size_t mcb = kblock * 4 <= KC ? MC * KC / kblock / MR * MR : MC;
    for (size_t jc = 0; jc < N; jc += NC) {
        size_t nc = N - jc < NC ? N - jc : NC;
        /* B without transpose: whole NR-column tiles read in place, only a last partial
         * tile packed (at bp's start) */
        size_t whole = in_place ? nc / NR * NR : 0;
        /* the blocks of A k block by k block (each block of B packed once), or, where B is
         * read in place, row block by row block: a row block of C (256 KiB) is then summed
         * over k while it is in L2, not visited again after the other row blocks (the
         * MLP's products, best of six runs each: W2^T dY 1 340 -> 1 314 us, W1 x 1 968
         * -> 1 953, W2 h 1 311 -> 1 306; the sums are the same) */
        size_t nkb = (K + kblock - 1) / kblock, nib = (M + mcb - 1) / mcb;
        int by_rows = whole > 0 && nkb > 1 && nib > 1;
        for (size_t q = 0; q < nkb * nib; q++) {
            size_t pc = (by_rows ? q % nkb : q / nib) * kblock;
            size_t ic = (by_rows ? q / nkb : q % nib) * mcb;
            size_t kc = K - pc < kblock ? K - pc : kblock;
            float bet = pc == 0 ? beta : 1.0f; /* later k blocks add to the first's result */
            /* the epilogue once the sum is whole */
            enum epi_kind now = pc + kc == K ? kind : EPI_STORE;
            if (whole < nc && (by_rows || ic == 0))
                cpu_gemm_pack_b(g->bp, tb, b, (size_t)ldb, pc, jc + whole, kc, nc - whole);
            size_t mc = M - ic < mcb ? M - ic : mcb;
            float *ablk = hp ? hp + pc * mpad + ic * kc : g->ap;
            struct ahead next = {0};
            if (!a_in && !have && q + 1 < nkb * nib) {
                /* the next block's A, fetched while this block's tiles run */
                size_t np = (by_rows ? (q + 1) % nkb : (q + 1) / nib) * kblock;
                size_t ni = (by_rows ? (q + 1) / nkb : (q + 1) % nib) * mcb;
                cpu_gemm_ahead_set(&next, ta, a, (size_t)lda, ni, np, M - ni < mcb ? M - ni : mcb,
                                   K - np < kblock ? K - np : kblock,
                                   (nc + NR - 1) / NR * ((mc + MR - 1) / MR));
            }
            if (!a_in && !have)
                cpu_gemm_pack_a(ablk, ta, a, (size_t)lda, ic, pc, mc, kc);
            for (size_t jr = 0; jr < nc; jr += NR)
                for (size_t ir = 0; ir < mc; ir += MR) {
                    size_t off = (jc + jr) * LDC + ic + ir;
                    cpu_gemm_ahead_some(&next);
                    if (a_in) {
                        float *rs = asum && jc + jr == 0 ? asum + ic + ir : NULL;
                        (kind == EPI_SGD ? micro_kernel_ai_sgd : micro_kernel_ai_store)(
                            kc, a + ic + ir + pc * (size_t)lda, (size_t)lda, g->bp + jr * kc,
                            c + off, LDC, mc - ir, nc - jr, alpha, bet, ep, off, rs);
                        continue;
                    }
                    const float *bt = b + (jc + jr) * (size_t)ldb + pc;
                    const float *ap = ablk + ir * kc, *bpt = g->bp + (jr - whole) * kc;
                    if (jr < whole && rows16)
                        micro_kernel_sb16_store(kc, ap, bt, (size_t)ldb, c + off, LDC, mc - ir, NR,
                                                alpha, bet, ep, off);
                    else if (jr < whole)
                        kernels[1][now](kc, ap, bt, (size_t)ldb, c + off, LDC, mc - ir, NR, alpha,
                                        bet, ep, off);
                    else
                        kernels[0][now](kc, ap, bpt, NR, c + off, LDC, mc - ir, nc - jr, alpha, bet,
                                        ep, off);
                }
        }
        have = hp != NULL; /* the next column block reads the packs this one made */
    }
    if (hp)
        h->hp_valid = 1;
}
#endif

void cpu_gemm_run(struct cpu_gemm *g, int ta, int tb, int m, int n, int k, float alpha,
                  const float *a, int lda, const float *b, int ldb, float beta, float *c, int ldc)
{
#if HAVE_KERNEL
    run(g, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, EPI_STORE, NULL);
#else
    (void)g, (void)ta, (void)tb, (void)m, (void)n, (void)k, (void)alpha, (void)a, (void)lda;
    (void)b, (void)ldb, (void)beta, (void)c, (void)ldc;
#endif
}

void cpu_gemm_run_epi(struct cpu_gemm *g, int ta, int tb, int m, int n, int k, float alpha,
                      const float *a, int lda, const float *b, int ldb, float beta, float *c,
                      int ldc, enum cpu_gemm_epi kind, const struct bk_sgd *u, const float *v,
                      float *asum)
{
#if HAVE_KERNEL
    static const enum epi_kind kinds[] = {[CPU_EPI_SGD] = EPI_SGD,
                                          [CPU_EPI_RELU_GRAD] = EPI_RELU_GRAD,
                                          [CPU_EPI_BIAS_RELU] = EPI_BIAS_RELU};
    struct epi ep = {.u = u, .y = v, .asum = asum};
    run(g, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, kinds[kind], &ep);
#else
    (void)g, (void)ta, (void)tb, (void)m, (void)n, (void)k, (void)alpha, (void)a, (void)lda;
    (void)b, (void)ldb, (void)beta, (void)c, (void)ldc, (void)kind, (void)u, (void)v, (void)asum;
#endif
}
