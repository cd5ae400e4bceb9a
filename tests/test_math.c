/* The CPU backend (src/math): every op of struct backend_ops against plain double-precision
 * references, including the branch-free exp behind sigmoid and tanh. */
#include <math.h>

#include "config.h"

#include "math/backend.h"
#include "math/cpu_gemm.h"
#include "test_math.h"
#include "testutil.h"

struct backend *bk;
static struct pt_err err;

void math_setup(void)
{
    pt_err_clear(&err);
    ck_assert_int_eq(backend_cpu_new(&bk, &err), 0);
    ck_assert(bk->host_memory);
}

void math_teardown(void)
{
    backend_free(bk);
}

double uni(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*s >> 11) * (1.0 / 9007199254740992.0) * 2.0 - 1.0;
}

START_TEST(memory_ops)
{
    float *d = NULL, host[37], back[37];
    ck_assert_int_eq(bk->ops->alloc(bk, 37, &d, &err), 0);
    ck_assert_uint_eq((uintptr_t)d % 64, 0);
    for (int i = 0; i < 37; i++)
        host[i] = (float)i;
    ck_assert_int_eq(bk->ops->upload(bk, d, host, 37, &err), 0);
    bk->ops->scale(bk, d, 37, 2.0f);
    bk->ops->axpy(bk, d, host, 37, -1.0f); /* 2i - i */
    bk->ops->mul(bk, d, host, 37);         /* i * i */
    ck_assert_int_eq(bk->ops->download(bk, back, d, 37, &err), 0);
    for (int i = 0; i < 37; i++)
        ck_assert(back[i] == (float)(i * i));
    bk->ops->copy(bk, d + 1, d, 36); /* overlapping */
    ck_assert(d[36] == 35.0f * 35.0f && d[1] == 0.0f);
    bk->ops->fill(bk, d, 37, 0.5f);
    ck_assert(d[0] == 0.5f && d[36] == 0.5f);
    ck_assert_int_eq(bk->ops->sync(bk, &err), 0);
    bk->ops->release(bk, d);
    bk->ops->release(bk, NULL);
    float *z = NULL;
    ck_assert_int_eq(bk->ops->alloc(bk, 0, &z, &err), 0);
    ck_assert_ptr_nonnull(z);
    bk->ops->release(bk, z);
    ck_assert_int_eq(bk->ops->alloc(bk, (size_t)-1 / 2, &z, &err), PT_ENOMEM);
}
END_TEST

static double ref_act(enum bk_act a, double v)
{
    switch (a) {
    case BK_ACT_SIGMOID: return 1.0 / (1.0 + exp(-v));
    case BK_ACT_TANH: return tanh(v);
    case BK_ACT_RELU: return v > 0 ? v : 0;
    default: return v;
    }
}

/* Every activation over [-30, 30] and 1003 columns-worth of values (blocks and tails). */
START_TEST(activations_match_libm)
{
    enum { R = 17, C = 59 };
    static float z[R * C], bias[R];
    for (enum bk_act a = 0; a < BK_ACT_COUNT; a++) {
        for (int i = 0; i < R; i++)
            bias[i] = (float)(i - 8) * 0.01f;
        for (int k = 0; k < R * C; k++)
            z[k] = (float)(-30.0 + 60.0 * k / (R * C - 1));
        bk->ops->bias_act(bk, a, z, bias, R, C);
        double worst = 0;
        for (int k = 0; k < R * C; k++) {
            double v = (double)(float)(-30.0 + 60.0 * k / (R * C - 1)) + bias[k % R];
            double want = ref_act(a, (float)v);
            worst = fmax(worst, fabs(z[k] - want) / (fabs(want) + 1e-6));
        }
        ck_assert_msg(worst < 3e-6, "activation %d: relative error %g", (int)a, worst);
    }
}
END_TEST

START_TEST(activation_extremes)
{
    float z[8] = {-1e30f, -200.0f, -88.5f, -1e-7f, 1e-7f, 88.5f, 200.0f, 1e30f};
    float s[8], t[8];
    memcpy(s, z, sizeof z);
    memcpy(t, z, sizeof z);
    bk->ops->bias_act(bk, BK_ACT_SIGMOID, s, NULL, 8, 1);
    bk->ops->bias_act(bk, BK_ACT_TANH, t, NULL, 8, 1);
    for (int i = 0; i < 8; i++) {
        ck_assert(isfinite(s[i]) && isfinite(t[i]));
        ck_assert(s[i] >= 0.0f && s[i] <= 1.0f && fabsf(t[i]) <= 1.0f);
        ck_assert(fabs(s[i] - ref_act(BK_ACT_SIGMOID, z[i])) < 1e-6);
        ck_assert(fabs(t[i] - ref_act(BK_ACT_TANH, z[i])) < 1e-6);
    }
    float n[2] = {NAN, INFINITY};
    bk->ops->bias_act(bk, BK_ACT_SIGMOID, n, NULL, 2, 1);
    ck_assert(isnan(n[0]) && isnan(n[1])); /* divergence stays visible */
}
END_TEST

START_TEST(activation_gradients)
{
    enum { N = 45 };
    float y[N], dz[N];
    uint64_t s = 3;
    for (enum bk_act a = 0; a < BK_ACT_COUNT; a++) {
        for (int k = 0; k < N; k++) {
            y[k] = (float)uni(&s);
            if (a == BK_ACT_SIGMOID)
                y[k] = 0.5f + 0.5f * y[k];
            dz[k] = (float)uni(&s);
        }
        float before[N];
        memcpy(before, dz, sizeof dz);
        float dx[N], fx[N], fz[N];
        bk->ops->act_grad_to(bk, a, dx, dz, y, N); /* out of place: dz is left as it was */
        ck_assert(memcmp(dz, before, sizeof dz) == 0);
        memcpy(fz, y, sizeof fz); /* y as an input: act_to against copy + bias_act */
        bk->ops->act_to(bk, a, fx, y, N);
        bk->ops->bias_act(bk, a, fz, NULL, N, 1);
        ck_assert(memcmp(fx, fz, sizeof fx) == 0);
        bk->ops->act_grad(bk, a, dz, y, N);
        ck_assert(memcmp(dx, dz, sizeof dx) == 0); /* the same bits as in place */
        for (int k = 0; k < N; k++) {
            double d = a == BK_ACT_SIGMOID ? y[k] * (1.0 - y[k])
                       : a == BK_ACT_TANH  ? 1.0 - (double)y[k] * y[k]
                       : a == BK_ACT_RELU  ? (y[k] > 0)
                                           : 1.0;
            ck_assert(fabs(dz[k] - before[k] * d) < 1e-6);
        }
    }
}
END_TEST

/* gemm with every transpose, leading dimensions larger than the rows, beta 0 and 1. */
START_TEST(gemm_all_transposes)
{
    enum { M = 7, N = 5, K = 9, LD = 11 };
    static float a[LD * LD], x[LD * LD], c[LD * N];
    uint64_t s = 1;
    for (int i = 0; i < LD * LD; i++) {
        a[i] = (float)uni(&s);
        x[i] = (float)uni(&s);
    }
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++)
            for (int beta = 0; beta < 2; beta++) {
                for (int i = 0; i < LD * N; i++)
                    c[i] = beta ? 1.0f : NAN;
                bk->ops->gemm(bk, (enum bk_trans)ta, (enum bk_trans)tb, M, N, K, 0.5f, a, LD, x, LD,
                              (float)beta, c, LD);
                for (int i = 0; i < M; i++)
                    for (int j = 0; j < N; j++) {
                        double want = beta;
                        for (int k = 0; k < K; k++)
                            want += 0.5 * (ta ? a[k + i * LD] : a[i + k * LD]) *
                                    (tb ? x[j + k * LD] : x[k + j * LD]);
                        ck_assert_msg(fabs(c[i + j * LD] - want) < 1e-5, "%d%d%d", ta, tb, beta);
                    }
            }
    for (int i = 0; i < LD * N; i++)
        c[i] = NAN;
    bk->ops->gemm(bk, BK_NOTRANS, BK_NOTRANS, M, N, 0, 1.0f, a, LD, x, LD, 0.0f, c, LD);
    ck_assert(c[0] == 0.0f && c[M - 1 + (N - 1) * LD] == 0.0f);
}
END_TEST

/* cpuGemm=auto's rule (cpu_gemm.h), on every machine: the own kernel on an AVX-512 CPU with
 * one BLAS thread, OpenBLAS otherwise, whatever kernel OpenBLAS runs; the same choice every
 * time (no measurement that could flip between runs). */
START_TEST(auto_gemm_rule)
{
    static const int cases[][3] = {{1, 1, 1},  {1, 0, 1}, {1, 2, 0},
                                   {1, 16, 0}, {0, 1, 0}, {0, 2, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        ck_assert_msg(cpu_gemm_auto_own(cases[i][0], cases[i][1]) == cases[i][2],
                      "case %zu: avx512 %d threads %d", i, cases[i][0], cases[i][1]);
    ck_assert_int_eq(backend_cpu_set_gemm(CPU_GEMM_AUTO, &err), 0);
    int first = backend_cpu_own_gemm();
    for (int i = 0; i < 5; i++)
        ck_assert_int_eq(backend_cpu_own_gemm(), first);
    if (!cpu_gemm_supported()) /* without AVX-512F auto is OpenBLAS */
        ck_assert(!first);
}
END_TEST

/* partrain's AVX-512 kernel against a double-precision product: every transpose, beta 0
 * (C full of NaN, never read) and not, leading dimensions above the rows, and shapes that
 * cross each blocking size (MR 32, NR 12, KC 256, MC 256, NC 3072) with partial tiles. */
START_TEST(own_gemm_matches_double_reference)
{
    if (!cpu_gemm_supported()) { /* nothing runs it here; cpuGemm=avx512 is refused */
        printf("no AVX-512F on this CPU: partrain's kernel is not used\n");
        ck_assert_int_eq(backend_cpu_set_gemm(CPU_GEMM_AVX512, &err), PT_EUSER);
        return;
    }
    static const int shapes[][3] = {{32, 12, 1},    {1, 1, 1},     {33, 13, 257}, {300, 30, 300},
                                    {8, 3080, 260}, {512, 25, 10}, {77, 45, 600}, {50, 7, 40},
                                    {10, 256, 512}, {31, 40, 3}};
    struct cpu_gemm *g = cpu_gemm_new();
    ck_assert_ptr_nonnull(g);
    uint64_t s = 7;
    for (size_t t = 0; t < sizeof shapes / sizeof shapes[0]; t++) {
        int m = shapes[t][0], n = shapes[t][1], k = shapes[t][2];
        int big = m > k ? m : k, ldb = (n > k ? n : k) + 3, lda = big + 5, ldc = m + 2;
        float *a = malloc(sizeof(float) * (size_t)lda * (size_t)big);
        float *b = malloc(sizeof(float) * (size_t)ldb * (size_t)(n > k ? n : k));
        float *c = malloc(sizeof(float) * (size_t)ldc * (size_t)n);
        for (int i = 0; i < lda * big; i++)
            a[i] = (float)uni(&s);
        for (int i = 0; i < ldb * (n > k ? n : k); i++)
            b[i] = (float)uni(&s);
        for (int ta = 0; ta < 2; ta++)
            for (int tb = 0; tb < 2; tb++)
                for (int beta = 0; beta < 2; beta++) {
                    for (int i = 0; i < ldc * n; i++)
                        c[i] = beta ? (float)(i % 7) : NAN;
                    cpu_gemm_run(g, ta, tb, m, n, k, 0.75f, a, lda, b, ldb, beta ? 0.5f : 0.0f, c,
                                 ldc);
                    for (int j = 0; j < n; j++)
                        for (int i = 0; i < ldc; i++) {
                            float got = c[i + j * ldc];
                            if (i >= m) { /* rows between m and ldc are left alone */
                                ck_assert(beta ? got == (float)((i + j * ldc) % 7) : isnan(got));
                                continue;
                            }
                            double want = beta ? 0.5 * ((i + j * ldc) % 7) : 0.0;
                            for (int p = 0; p < k; p++)
                                want += 0.75 * (ta ? a[p + i * lda] : a[i + p * lda]) *
                                        (tb ? b[j + p * ldb] : b[p + j * ldb]);
                            ck_assert_msg(fabs(got - want) < 2e-6 * k + 1e-6,
                                          "%dx%dx%d ta %d tb %d beta %d: C(%d,%d) %g, want %g", m,
                                          n, k, ta, tb, beta, i, j, got, want);
                        }
                }
        free(a);
        free(b);
        free(c);
    }
    /* B without transpose is read in place (ldb 303), or packed where its columns lie a
     * multiple of 4 KiB apart (ldb 1024): the same FMAs in the same order, the same bits;
     * 300 rows: two row blocks, each summed over both k blocks in turn in place, against
     * k block by k block; 10 rows: read in place by the 16-row tiles against computed
     * through C's transpose */
    static const int rows[] = {40, 300, 10};
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        int M = rows[r];
        enum { N = 37, K = 300, L1 = 303, L2 = 1024 };
        float *a = malloc(sizeof(float) * (size_t)M * K), *b1 = malloc(sizeof(float) * L1 * N);
        float *b2 = malloc(sizeof(float) * L2 * N), *c1 = malloc(sizeof(float) * (size_t)M * N);
        float *c2 = malloc(sizeof(float) * (size_t)M * N);
        for (int i = 0; i < M * K; i++)
            a[i] = (float)uni(&s);
        for (int j = 0; j < N; j++)
            for (int p = 0; p < K; p++)
                b1[p + j * L1] = b2[p + j * L2] = (float)uni(&s);
        cpu_gemm_run(g, 0, 0, M, N, K, 0.75f, a, M, b1, L1, 0.0f, c1, M);
        cpu_gemm_run(g, 0, 0, M, N, K, 0.75f, a, M, b2, L2, 0.0f, c2, M);
        ck_assert_msg(memcmp(c1, c2, sizeof(float) * (size_t)M * N) == 0, "%d rows", M);
        free(a), free(b1), free(b2), free(c1), free(c2);
    }
    /* A x^T with whole 32-row tiles and one k block reads A in place; 50 rows are packed:
     * their first 32 rows, the same tiles, come out the same */
    {
        enum { M = 64, N = 45, K = 200 };
        float *a = malloc(sizeof(float) * M * K), *x = malloc(sizeof(float) * N * K);
        float *c1 = malloc(sizeof(float) * M * N), *c2 = malloc(sizeof(float) * M * N);
        for (int i = 0; i < M * K; i++)
            a[i] = (float)uni(&s);
        for (int i = 0; i < N * K; i++)
            x[i] = (float)uni(&s);
        cpu_gemm_run(g, 0, 1, M, N, K, 1.0f, a, M, x, N, 0.0f, c1, M);
        cpu_gemm_run(g, 0, 1, 50, N, K, 1.0f, a, M, x, N, 0.0f, c2, M);
        for (int j = 0; j < N; j++)
            ck_assert(memcmp(c1 + j * M, c2 + j * M, sizeof(float) * 32) == 0);
        free(a), free(x), free(c1), free(c2);
    }
    cpu_gemm_free(g);
    /* the backend uses it with cpuGemm=avx512, and not with openblas */
    ck_assert_int_eq(backend_cpu_set_gemm(CPU_GEMM_AVX512, &err), 0);
    struct backend *own;
    ck_assert_int_eq(backend_cpu_new(&own, &err), 0);
    ck_assert_ptr_nonnull(own->impl);
    ck_assert(backend_cpu_own_gemm());
    backend_free(own);
    ck_assert_int_eq(backend_cpu_set_gemm(CPU_GEMM_OPENBLAS, &err), 0);
    ck_assert(!backend_cpu_own_gemm());
    ck_assert_int_eq(backend_cpu_new(&own, &err), 0);
    ck_assert_ptr_null(own->impl);
    backend_free(own);
    ck_assert_int_eq(backend_cpu_set_gemm(CPU_GEMM_AUTO, &err), 0);
}
END_TEST

/* Products whose A is held (cpu_gemm_hold: packed once, then read from the packs) give the
 * bits of the same products without: across row, k and column blocks (300 x 600, n 3080 >
 * NC), a second B, the other transpose of the same A (packed anew), and A changed after
 * the hold ends. */
START_TEST(own_gemm_held_a_same_bits)
{
    if (!cpu_gemm_supported()) {
        printf("no AVX-512F on this CPU: partrain's kernel is not used\n");
        return;
    }
    enum { M = 300, K = 600, N = 3080 };
    uint64_t s = 11;
    float *a = malloc(sizeof(float) * M * K), *a2 = malloc(sizeof(float) * M * K);
    float *b1 = malloc(sizeof(float) * K * N), *b2 = malloc(sizeof(float) * K * N);
    float *want = malloc(sizeof(float) * M * N), *got = malloc(sizeof(float) * M * N);
    for (int i = 0; i < M * K; i++) {
        a[i] = (float)uni(&s);
        a2[i] = (float)uni(&s);
    }
    for (int i = 0; i < K * N; i++) {
        b1[i] = (float)uni(&s);
        b2[i] = (float)uni(&s);
    }
    struct cpu_gemm *g = cpu_gemm_new(), *ref = cpu_gemm_new();
    ck_assert(g && ref);
    /* (ta, B, A): ta 1 reads A as a K x M matrix, transposed (another shape: packed anew);
     * two matrices held together (a recurrent loop's weights), their products interleaved */
    const int order[][3] = {{0, 1, 1}, {0, 2, 2}, {0, 2, 1}, {1, 1, 1}, {0, 1, 2},
                            {0, 2, 1}, {1, 2, 2}, {0, 1, 1}, {0, 1, 2}};
    cpu_gemm_hold(g, a);
    cpu_gemm_hold(g, a2);
    cpu_gemm_hold(g, a); /* held already: nothing changes */
    for (int r = 0; r < 9; r++) {
        int ta = order[r][0];
        const float *b = order[r][1] == 1 ? b1 : b2, *m = order[r][2] == 1 ? a : a2;
        cpu_gemm_run(ref, ta, 0, M, N, K, 0.5f, m, ta ? K : M, b, K, 0.0f, want, M);
        cpu_gemm_run(g, ta, 0, M, N, K, 0.5f, m, ta ? K : M, b, K, 0.0f, got, M);
        ck_assert_msg(memcmp(want, got, sizeof(float) * M * N) == 0, "product %d differs", r);
    }
    cpu_gemm_hold(g, NULL); /* both let go: new values are packed anew */
    for (int i = 0; i < M * K; i++) {
        a[i] = -a[i];
        a2[i] = -a2[i];
    }
    for (int k = 0; k < 2; k++) {
        const float *m = k ? a2 : a;
        cpu_gemm_run(ref, 0, 0, M, N, K, 0.5f, m, M, b1, K, 0.0f, want, M);
        cpu_gemm_run(g, 0, 0, M, N, K, 0.5f, m, M, b1, K, 0.0f, got, M);
        ck_assert(memcmp(want, got, sizeof(float) * M * N) == 0);
    }
    cpu_gemm_free(g);
    cpu_gemm_free(ref);
    free(a), free(a2), free(b1), free(b2), free(want), free(got);
}
END_TEST

/* n uniform floats in [-1, 1) (malloc'd; the caller frees them). */
static float *uni_floats(size_t n, uint64_t *s)
{
    float *p = malloc(sizeof(float) * n);
    ck_assert_ptr_nonnull(p);
    for (size_t i = 0; i < n; i++)
        p[i] = (float)uni(s);
    return p;
}

/* gemm_sgd (the optimizer inside the weight-gradient product) gives w and the momentum the
 * same bits as gemm followed by sgd_update, column by column: on partrain's kernel (whole
 * and partial tiles, k in two blocks, the transposed path of a short C, more columns than
 * one column block, A read in place (tb: whole row tiles, one k block), both momentum
 * kinds) and on OpenBLAS; rows between m and ldc stay untouched. The row sums of op(A) it
 * returns on the way (from the kernel that reads A in place, or from cpu_row_sums) are
 * sum_cols's bits. */
static void check_gemm_sgd(struct backend *b)
{
    static const int shapes[][3] = {{64, 36, 256},  {37, 29, 300},   {10, 100, 50},  {5, 7, 9},
                                    {40, 3100, 20}, {96, 3100, 200}, {512, 784, 256}};
    uint64_t seed = 11;
    for (size_t t = 0; t < sizeof shapes / sizeof shapes[0]; t++) {
        int m = shapes[t][0], n = shapes[t][1], k = shapes[t][2], ldc = m + 3;
        size_t nc = (size_t)ldc * (size_t)n, na = (size_t)m * (size_t)k, nb = (size_t)k * n;
        float *a = uni_floats(na, &seed), *x = uni_floats(nb, &seed);
        float *c = malloc(sizeof(float) * nc), *c2 = malloc(sizeof(float) * nc);
        float *w = malloc(sizeof(float) * nc), *w2 = malloc(sizeof(float) * nc);
        float *sm = malloc(sizeof(float) * nc), *sm2 = malloc(sizeof(float) * nc);
        float *sums = malloc(sizeof(float) * (size_t)m), *sums2 = malloc(sizeof(float) * (size_t)m);
        for (int nag = 0; nag < 2; nag++)
            for (int tr = 0; tr < 4; tr++) {
                enum bk_trans ta = tr & 1 ? BK_TRANS : BK_NOTRANS;
                enum bk_trans tb = tr & 2 ? BK_TRANS : BK_NOTRANS;
                int lda = ta == BK_TRANS ? k : m, ldx = tb == BK_TRANS ? n : k;
                float beta = tr == 3 ? 0.5f : 0.0f;
                for (size_t i = 0; i < nc; i++) {
                    w[i] = w2[i] = (float)uni(&seed);
                    sm[i] = sm2[i] = (float)uni(&seed) * 0.01f;
                    c[i] = c2[i] = (float)(i % 5);
                }
                b->ops->gemm(b, ta, tb, m, n, k, 1.0f, a, lda, x, ldx, beta, c, ldc);
                for (int j = 0; j < n; j++)
                    b->ops->sgd_update(b, w + (size_t)j * ldc, c + (size_t)j * ldc,
                                       sm + (size_t)j * ldc, (size_t)m, 0.9f, 0.0037f, nag);
                struct bk_sgd u = {.w = w2, .s = sm2, .m = 0.9f, .a = 0.0037f, .nag = nag};
                for (int i = 0; i < m; i++)
                    sums[i] = sums2[i] = NAN; /* every row must be written */
                if (ta == BK_NOTRANS)
                    b->ops->sum_cols(b, sums, a, m, (size_t)k, lda);
                else /* op(A)'s rows are a's columns: sum_cols over a's transpose */
                    for (int i = 0; i < m; i++) {
                        float *col = malloc(sizeof(float) * (size_t)k);
                        for (int p = 0; p < k; p++)
                            col[p] = a[(size_t)p + (size_t)i * (size_t)lda];
                        b->ops->sum_cols(b, sums + i, col, 1, (size_t)k, 1);
                        free(col);
                    }
                b->ops->gemm_sgd(b, ta, tb, m, n, k, 1.0f, a, lda, x, ldx, beta, c2, ldc, &u,
                                 tr == 1 ? NULL : sums2);
                ck_assert_msg(memcmp(w, w2, sizeof(float) * nc) == 0 &&
                                  memcmp(sm, sm2, sizeof(float) * nc) == 0,
                              "%dx%dx%d ta %d tb %d nag %d: the fused step differs", m, n, k,
                              ta == BK_TRANS, tb == BK_TRANS, nag);
                ck_assert_msg(tr == 1 ? isnan(sums2[0])
                                      : memcmp(sums, sums2, sizeof(float) * m) == 0,
                              "%dx%dx%d ta %d tb %d: the row sums differ from sum_cols's", m, n, k,
                              ta == BK_TRANS, tb == BK_TRANS);
            }
        free(a), free(x), free(c), free(c2), free(w), free(w2), free(sm), free(sm2);
        free(sums), free(sums2);
    }
}

/* gemm_act_grad (an activation's derivative applied inside the product that makes dL/dy)
 * gives the same bits as gemm followed by act_grad, for ReLU (in the kernel's tiles, NaN
 * and signed zeros in y included) and sigmoid (the fallback). */
static void check_gemm_act_grad(struct backend *b)
{
    static const int shapes[][3] = {{512, 256, 512}, {37, 29, 300}, {10, 100, 50}, {5, 7, 9}};
    uint64_t seed = 5;
    for (size_t t = 0; t < sizeof shapes / sizeof shapes[0]; t++) {
        int m = shapes[t][0], n = shapes[t][1], k = shapes[t][2], ldc = m + 3;
        size_t nc = (size_t)ldc * (size_t)n, na = (size_t)m * (size_t)k, nb = (size_t)k * n;
        float *a = uni_floats(na, &seed), *x = uni_floats(nb, &seed);
        float *c = malloc(sizeof(float) * nc), *c2 = malloc(sizeof(float) * nc);
        float *y = malloc(sizeof(float) * nc);
        for (size_t i = 0; i < nc; i++)
            y[i] = i % 7 == 0 ? 0.0f : i % 11 == 0 ? -0.0f : i % 13 == 0 ? NAN : (float)uni(&seed);
        for (int act = 0; act < 2; act++)
            for (int tr = 0; tr < 4; tr++) {
                enum bk_act f = act ? BK_ACT_SIGMOID : BK_ACT_RELU;
                enum bk_trans ta = tr & 1 ? BK_TRANS : BK_NOTRANS;
                enum bk_trans tb = tr & 2 ? BK_TRANS : BK_NOTRANS;
                int lda = ta == BK_TRANS ? k : m, ldx = tb == BK_TRANS ? n : k;
                float beta = tr == 3 ? 0.5f : 0.0f;
                for (size_t i = 0; i < nc; i++)
                    c[i] = c2[i] = (float)(i % 5);
                b->ops->gemm(b, ta, tb, m, n, k, 1.0f, a, lda, x, ldx, beta, c, ldc);
                for (int j = 0; j < n; j++)
                    b->ops->act_grad(b, f, c + (size_t)j * ldc, y + (size_t)j * ldc, (size_t)m);
                b->ops->gemm_act_grad(b, ta, tb, m, n, k, 1.0f, a, lda, x, ldx, beta, c2, ldc, f,
                                      y);
                ck_assert_msg(memcmp(c, c2, sizeof(float) * nc) == 0,
                              "%dx%dx%d ta %d tb %d act %d: the fused derivative differs", m, n, k,
                              ta == BK_TRANS, tb == BK_TRANS, act);
            }
        /* gemm_bias_act against gemm + bias_act: ReLU with a bias (y's first m values), ReLU
         * without, sigmoid */
        for (int v = 0; v < 3; v++) {
            enum bk_act f = v == 2 ? BK_ACT_SIGMOID : BK_ACT_RELU;
            const float *bias = v == 1 ? NULL : y;
            for (size_t i = 0; i < nc; i++)
                c[i] = c2[i] = (float)(i % 5);
            b->ops->gemm(b, BK_NOTRANS, BK_NOTRANS, m, n, k, 1.0f, a, m, x, k, 0.0f, c, ldc);
            for (int j = 0; j < n; j++)
                b->ops->bias_act(b, f, c + (size_t)j * ldc, bias, m, 1);
            b->ops->gemm_bias_act(b, BK_NOTRANS, BK_NOTRANS, m, n, k, 1.0f, a, m, x, k, 0.0f, c2,
                                  ldc, bias, f);
            ck_assert_msg(memcmp(c, c2, sizeof(float) * nc) == 0,
                          "%dx%dx%d variant %d: the fused bias and activation differ", m, n, k, v);
        }
        free(a), free(x), free(c), free(c2), free(y);
    }
}

START_TEST(gemm_sgd_matches_gemm_then_update)
{
    int modes[2] = {CPU_GEMM_OPENBLAS, CPU_GEMM_AVX512};
    for (int i = 0; i < (cpu_gemm_supported() ? 2 : 1); i++) {
        struct backend *b;
        ck_assert_int_eq(backend_cpu_set_gemm(modes[i], &err), 0);
        ck_assert_int_eq(backend_cpu_new(&b, &err), 0);
        ck_assert_ptr_nonnull(b->ops->gemm_sgd);
        check_gemm_sgd(b);
        check_gemm_act_grad(b);
        backend_free(b);
    }
    ck_assert_int_eq(backend_cpu_set_gemm(CPU_GEMM_AUTO, &err), 0);
}
END_TEST

START_TEST(column_sums_and_norm)
{
    enum { R = 13, C = 6, LD = 16 };
    float x[LD * C], y[LD * C], out[R], mean[R], inv[R];
    uint64_t s = 2;
    for (int i = 0; i < LD * C; i++) {
        x[i] = (float)uni(&s);
        y[i] = (float)uni(&s);
    }
    bk->ops->sum_cols(bk, out, x, R, C, LD);
    for (int i = 0; i < R; i++) {
        double want = 0;
        for (int j = 0; j < C; j++)
            want += x[i + j * LD];
        ck_assert(fabs(out[i] - want) < 1e-5);
    }
    for (int i = 0; i < R; i++) {
        mean[i] = (float)i;
        inv[i] = 0.5f;
    }
    memcpy(y, x, sizeof x);
    bk->ops->norm(bk, x, mean, inv, R, 7);
    for (int k = 0; k < R * 7; k++)
        ck_assert(x[k] == (y[k] - (float)(k % R)) * 0.5f);
    /* upload_norm: the same values, bit for bit, from host columns (and in place) */
    float z[LD * C], w[LD * C];
    for (int i = 0; i < R; i++)
        inv[i] = 1.0f / (float)(i + 3);
    memcpy(x, y, sizeof x);
    memcpy(w, y, sizeof w);
    bk->ops->norm(bk, x, mean, inv, R, 7);
    ck_assert_int_eq(bk->ops->upload_norm(bk, z, y, mean, inv, R, 7, &err), 0);
    ck_assert(memcmp(x, z, sizeof(float) * R * 7) == 0);
    ck_assert_int_eq(bk->ops->upload_norm(bk, w, w, mean, inv, R, 7, &err), 0);
    ck_assert(memcmp(x, w, sizeof(float) * R * 7) == 0);
}
END_TEST

START_TEST(dropout_masks)
{
    enum { N = 100000 };
    static float x[N], y[N], m[N], m2[N], y2[N];
    for (int i = 0; i < N; i++)
        x[i] = 1.0f + (float)(i % 3);
    bk->ops->dropout(bk, y, m, x, N, 0.3f, 42);
    int dropped = 0;
    for (int i = 0; i < N; i++) {
        ck_assert(m[i] == 0.0f || fabsf(m[i] - 1.0f / 0.7f) < 1e-6f);
        ck_assert(y[i] == x[i] * m[i]);
        dropped += m[i] == 0.0f;
    }
    ck_assert_msg(abs(dropped - 30000) < 600, "dropped %d", dropped);
    bk->ops->dropout(bk, y2, m2, x, N, 0.3f, 42);
    ck_assert(memcmp(m, m2, sizeof m) == 0);
    bk->ops->dropout(bk, y2, m2, x, N, 0.3f, 43);
    ck_assert(memcmp(m, m2, sizeof m) != 0);
    double mean = 0;
    for (int i = 0; i < N; i++)
        mean += bk_hash_uniform(7, (uint64_t)i);
    ck_assert(fabs(mean / N - 0.5) < 0.005);
}
END_TEST

/* Softmax cross entropy, square error and classification error on 3 columns; the middle
 * column is padding. */
START_TEST(criteria_values_and_gradients)
{
    float z[9] = {1, 2, 3, 5, 5, 5, 0.5f, 0.5f, -1}, y[9] = {0, 0, 1, 1, 0, 0, 0.25f, 0.75f, 0};
    float mask[3] = {1, 0, 1}, g[9], sum2[2] = {0};
    double sum;
    struct bk_crit c = {.rows = 3, .cols = 3, .z = z, .y = y, .mask = mask, .grad = g, .sum = sum2};
    bk->ops->criterion(bk, BK_CRIT_CE_SOFTMAX, &c);
    sum = sum2[0] + sum2[1];
    double lse0 = log(exp(1) + exp(2) + exp(3)), lse2 = log(2 * exp(0.5) + exp(-1));
    double want = (lse0 - 3) + (lse2 - 0.5);
    ck_assert_msg(fabs(sum - want) < 1e-6, "%g vs %g", sum, want);
    for (int i = 0; i < 3; i++) {
        ck_assert(fabs(g[i] - (exp(z[i] - lse0) - y[i])) < 1e-6);
        ck_assert(g[3 + i] == 0.0f);
        ck_assert(fabs(g[6 + i] - (exp(z[6 + i] - lse2) - y[6 + i])) < 1e-6);
    }
    bk->ops->criterion(bk, BK_CRIT_SQUARE_ERR, &c);
    sum = sum2[0] + sum2[1];
    ck_assert(fabs(sum - (1 + 4 + 4 + 0.0625 + 0.0625 + 1)) < 1e-5);
    ck_assert(g[0] == 2.0f && g[2] == 4.0f && g[3] == 0.0f && g[8] == -2.0f);
    g[0] = 123.0f;
    bk->ops->criterion(bk, BK_CRIT_CLASS_ERR, &c);
    sum = sum2[0] + sum2[1];
    ck_assert(sum == 1.0f); /* column 0 right (3 is largest), column 2: argmax 0 vs 1 */
    ck_assert(g[0] == 123.0f);
    c.mask = NULL;
    bk->ops->criterion(bk, BK_CRIT_CLASS_ERR, &c);
    sum = sum2[0] + sum2[1];
    ck_assert(sum == 1.0f); /* column 1: the tie 5,5,5 picks row 0, the label's row */
    z[3] = 4;
    static float big[2 * 4096], lab[2 * 4096]; /* 1 + 4095 * 2^-30: a float sum rounds */
    for (int k = 0; k < 2 * 4096; k++)
        big[k] = k == 0 ? 1.0f : k % 2 ? 0.0f : 0x1p-15f;
    struct bk_crit w = {.rows = 2, .cols = 4096, .z = big, .y = lab, .sum = sum2};
    bk->ops->criterion(bk, BK_CRIT_SQUARE_ERR, &w);
    ck_assert(sum2[1] != 0.0f); /* what the float part rounded away */
    ck_assert(fabs(sum2[0] + (double)sum2[1] - (1.0 + 4095 * 0x1p-30)) < 1e-13);
    bk->ops->criterion(bk, BK_CRIT_CLASS_ERR, &c);
    sum = sum2[0] + sum2[1];
    ck_assert(sum == 2.0f);
}
END_TEST

/* ClassificationError's topN: the label's entry ranks after the larger entries and the
 * equal ones before it; an error when topN or more rank before it. */
START_TEST(criteria_top_n_error)
{
    /* column 0: label row 3 (z 2), larger: rows 0 (5) and 4 (3); equal before it: row 1 */
    float z[12] = {5, 2, 1, 2, 3, 0, 0, 0, 0, 0, 0, 0}, y[12] = {0, 0, 0, 1, 0, 0, 0, 1};
    /* column 1: all equal, label row 1: one entry (row 0) ranks before it */
    float sum2[2];
    struct bk_crit c = {.rows = 6, .cols = 2, .z = z, .y = y, .sum = sum2};
    static const int want[][2] = {{0, 2}, {1, 2}, {2, 1}, {3, 1}, {4, 0}, {5, 0}, {7, 0}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        c.top_n = want[i][0];
        bk->ops->criterion(bk, BK_CRIT_CLASS_ERR, &c);
        ck_assert_msg(sum2[0] + sum2[1] == (float)want[i][1], "top_n %d: %g errors, want %d",
                      want[i][0], (double)(sum2[0] + sum2[1]), want[i][1]);
    }
    float mask[2] = {1, 0};
    c.mask = mask;
    c.top_n = 3;
    bk->ops->criterion(bk, BK_CRIT_CLASS_ERR, &c);
    ck_assert(sum2[0] + sum2[1] == 1.0f); /* column 0 only */
}
END_TEST

TCase *math_update_tcase(void); /* test_math_update.c */
TCase *math_conv_tcase(void);   /* test_math_conv.c */
TCase *math_bn_tcase(void);     /* test_math_bn.c */
TCase *math_lstm_tcase(void);   /* test_math_lstm.c */
TCase *math_sparse_tcase(void); /* test_math_sparse.c */
TCase *math_probe_tcase(void);  /* test_math_probe.c */

int main(void)
{
    Suite *s = suite_create("math");
    TCase *tc = tcase_create("cpu");
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, math_setup, math_teardown);
    tcase_add_test(tc, memory_ops);
    tcase_add_test(tc, activations_match_libm);
    tcase_add_test(tc, activation_extremes);
    tcase_add_test(tc, activation_gradients);
    tcase_add_test(tc, gemm_all_transposes);
    tcase_add_test(tc, own_gemm_matches_double_reference);
    tcase_add_test(tc, own_gemm_held_a_same_bits);
    tcase_add_test(tc, auto_gemm_rule);
    tcase_add_test(tc, gemm_sgd_matches_gemm_then_update);
    tcase_add_test(tc, column_sums_and_norm);
    tcase_add_test(tc, dropout_masks);
    tcase_add_test(tc, criteria_values_and_gradients);
    tcase_add_test(tc, criteria_top_n_error);
    suite_add_tcase(s, tc);
    suite_add_tcase(s, math_update_tcase());
    suite_add_tcase(s, math_conv_tcase());
    suite_add_tcase(s, math_bn_tcase());
    suite_add_tcase(s, math_lstm_tcase());
    suite_add_tcase(s, math_sparse_tcase());
    suite_add_tcase(s, math_probe_tcase());
    return run_suite(s);
}
