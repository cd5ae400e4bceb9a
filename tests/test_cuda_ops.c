/* The CUDA backend against the CPU backend: every op of struct backend_ops on the same
 * random inputs, compared bit for bit where the contract makes the results exact (memory
 * ops, fill, scale, axpy, mul, dropout masks, the model updates, the quantizers, fp16) and
 * within 1e-5 relative (absolute floor 1e-6) where transcendentals, sums or products
 * leave the order of rounding to the backend (gemm: relative to sum |a||b|).
 *
 *   tests/test_cuda_ops               device 0 (PT_TEST_DEVICE=N: device N)
 *   PT_TEST_CUDA_ALT=cpu tests/test_cuda_ops
 *                                     a second CPU backend in the device's place: checks
 *                                     the harness itself on a machine without a GPU (every
 *                                     comparison must then pass)
 *   PT_TEST_SEED=N                    another random seed (default fixed)
 *
 * Exit 77 ("skipped: no GPU: ...") when backend_cuda_new fails: no device, or a build
 * without CUDA. Check runs the cases in this process (CK_NOFORK): a CUDA context does not
 * survive fork, and both backends are created once, in main. The device's pointers are
 * reached only through upload and download (test_cuda_ops.h), so the same code checks a
 * device backend and the CPU stand-in. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_cuda_ops.h"

struct backend *ref_bk, *dev_bk;

/* ---- random numbers ---- */

static uint64_t rng_state = 0x5DEECE66Dull;

uint64_t rnd_next(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

float rnd_range(float lo, float hi)
{
    double u = (double)(rnd_next() >> 11) * (1.0 / 9007199254740992.0);
    return (float)(lo + (hi - lo) * u);
}

float rnd_normal(void)
{
    double u = ((double)(rnd_next() >> 11) + 0.5) * (1.0 / 9007199254740992.0);
    double v = (double)(rnd_next() >> 11) * (1.0 / 9007199254740992.0);
    return (float)(sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v));
}

/* ---- twins ---- */

void twin_alloc(struct twin *t, size_t n)
{
    struct pt_err e;
    pt_err_clear(&e);
    t->n = n;
    ck_assert_msg(ref_bk->ops->alloc(ref_bk, n, &t->c, &e) == 0, "%s", e.msg);
    ck_assert_msg(dev_bk->ops->alloc(dev_bk, n, &t->d, &e) == 0, "alloc(%zu): %s", n, e.msg);
}

void twin_set(struct twin *t, const float *host)
{
    struct pt_err e;
    pt_err_clear(&e);
    if (t->c != host)
        memcpy(t->c, host, t->n * sizeof *host);
    ck_assert_msg(dev_bk->ops->upload(dev_bk, t->d, host, t->n, &e) == 0, "upload(%zu): %s", t->n,
                  e.msg);
}

void twin_rand(struct twin *t, size_t n, float lo, float hi)
{
    twin_alloc(t, n);
    for (size_t i = 0; i < n; i++)
        t->c[i] = rnd_range(lo, hi);
    twin_set(t, t->c);
}

void twin_const(struct twin *t, size_t n, float v)
{
    twin_alloc(t, n);
    for (size_t i = 0; i < n; i++)
        t->c[i] = v;
    twin_set(t, t->c);
}

void twin_free(struct twin *t)
{
    if (t->c || t->d) {
        ref_bk->ops->release(ref_bk, t->c);
        dev_bk->ops->release(dev_bk, t->d);
    }
    memset(t, 0, sizeof *t);
}

float *twin_get(const struct twin *t)
{
    struct pt_err e;
    pt_err_clear(&e);
    float *h = malloc((t->n ? t->n : 1) * sizeof *h);
    ck_assert_ptr_nonnull(h);
    ck_assert_msg(dev_bk->ops->download(dev_bk, h, t->d, t->n, &e) == 0, "download(%zu): %s", t->n,
                  e.msg);
    return h;
}

void twin_sync_from_ref(struct twin *t)
{
    twin_set(t, t->c);
}

/* ---- comparisons and the per-op table ---- */

struct op_stat {
    const char *op;
    double worst, tol; /* tol < 0: bit-identical */
    unsigned long cases, values;
};
static struct op_stat stats[96];
static int nstats;

static struct op_stat *stat_of(const char *op, double tol)
{
    for (int i = 0; i < nstats; i++)
        if (strcmp(stats[i].op, op) == 0) {
            stats[i].tol = stats[i].tol > tol ? stats[i].tol : tol;
            return &stats[i];
        }
    ck_assert_int_lt(nstats, (int)(sizeof stats / sizeof stats[0]));
    stats[nstats] = (struct op_stat){.op = op, .tol = tol};
    return &stats[nstats++];
}

void check_bits(const char *op, const struct twin *t, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    float *h = twin_get(t);
    struct op_stat *s = stat_of(op, -1);
    size_t bad = t->n, nbad = 0;
    for (size_t i = 0; i < t->n; i++)
        if (memcmp(&h[i], &t->c[i], sizeof *h) != 0 && nbad++ == 0)
            bad = i;
    s->cases++;
    s->values += t->n;
    if (nbad) {
        s->worst = INFINITY;
        float want = t->c[bad], got = h[bad];
        free(h);
        ck_abort_msg("%s (%s): %zu of %zu values differ in their bits; first [%zu]: cpu %.9g "
                     "device %.9g",
                     op, what, nbad, t->n, bad, (double)want, (double)got);
    }
    free(h);
}

/* The error of one value (see check_near); INFINITY when they cannot be compared. */
static double value_error(float ref, float dev, double m, double tol)
{
    if (isnan(ref) || isnan(dev))
        return isnan(ref) && isnan(dev) ? 0.0 : INFINITY;
    if (isinf(ref) || isinf(dev))
        return ref == dev ? 0.0 : INFINITY;
    double scale = m > TOL_FLOOR / tol ? m : TOL_FLOOR / tol;
    return fabs((double)dev - (double)ref) / scale;
}

void check_near(const char *op, const struct twin *t, const double *mag, double tol,
                const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    float *h = twin_get(t);
    struct op_stat *s = stat_of(op, tol);
    double worst = 0.0;
    size_t at = 0, nbad = 0, first = t->n;
    for (size_t i = 0; i < t->n; i++) {
        double err;
        if (mag && mag[i] < 0)
            err = memcmp(&h[i], &t->c[i], sizeof *h) == 0 ? 0.0 : INFINITY;
        else
            err = value_error(t->c[i], h[i], mag ? mag[i] : fabs((double)t->c[i]), tol);
        if (err > worst || (isinf(err) && !isinf(worst)))
            worst = err, at = i;
        if (!(err <= tol) && nbad++ == 0)
            first = i;
    }
    s->cases++;
    s->values += t->n;
    s->worst = s->worst > worst ? s->worst : worst;
    if (nbad) {
        float want = t->c[first], got = h[first];
        free(h);
        ck_abort_msg("%s (%s): %zu of %zu values off by more than %g (worst %g at [%zu]); "
                     "first [%zu]: cpu %.9g device %.9g%s",
                     op, what, nbad, t->n, tol, worst, at, first, (double)want, (double)got,
                     mag && mag[first] < 0 ? " (must be untouched)" : "");
    }
    free(h);
}

void check_bytes(const char *op, const void *ref, const void *dev, size_t n, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    struct op_stat *s = stat_of(op, -1);
    const unsigned char *a = ref, *b = dev;
    size_t nbad = 0, first = n;
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i] && nbad++ == 0)
            first = i;
    s->cases++;
    s->values += n;
    if (nbad) {
        s->worst = INFINITY;
        ck_abort_msg("%s (%s): %zu of %zu bytes differ; first at byte %zu: cpu 0x%02x device "
                     "0x%02x",
                     op, what, nbad, n, first, a[first], b[first]);
    }
}

void check_scalar(const char *op, double ref, double dev, double tol, double floor_abs,
                  const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    struct op_stat *s = stat_of(op, tol);
    double err = isnan(ref) || isnan(dev) ? (isnan(ref) && isnan(dev) ? 0.0 : INFINITY)
                 : ref == dev             ? 0.0
                                          : fabs(dev - ref) / fmax(fabs(ref), floor_abs / tol);
    s->cases++;
    s->values++;
    s->worst = s->worst > err ? s->worst : err;
    ck_assert_msg(err <= tol, "%s (%s): cpu %.17g device %.17g, relative error %g > %g", op, what,
                  ref, dev, err, tol);
}

void check_synced(const char *op)
{
    struct pt_err e;
    pt_err_clear(&e);
    ck_assert_msg(dev_bk->ops->sync(dev_bk, &e) == 0, "%s: sync reports: %s", op, e.msg);
}

static void print_stats(void)
{
    printf("\n%-24s %7s %11s %13s %s\n", "op", "cases", "values", "worst error", "tolerance");
    for (int i = 0; i < nstats; i++) {
        const struct op_stat *s = &stats[i];
        char tol[32];
        if (s->tol < 0)
            snprintf(tol, sizeof tol, "bit-identical");
        else
            snprintf(tol, sizeof tol, "%g", s->tol);
        if (s->tol < 0)
            printf("%-24s %7lu %11lu %13s %s\n", s->op, s->cases, s->values,
                   isinf(s->worst) ? "DIFFERENT" : "identical", tol);
        else
            printf("%-24s %7lu %11lu %13.3g %s\n", s->op, s->cases, s->values, s->worst, tol);
    }
}

/* ---- memory ---- */

/* Some values every exact op must carry unchanged: signed zeros, subnormals, huge and
 * infinite values (no NaN: its payload is not part of any contract). */
static void sprinkle_specials(float *x, size_t n)
{
    static const float sp[] = {0.0f,     -0.0f,    1e-40f,    -3e-39f, 1e-45f, 3e38f,
                               -3.3e38f, INFINITY, -INFINITY, 1.0f,    -1.0f};
    for (size_t i = 0; i < sizeof sp / sizeof sp[0] && i * 7 < n; i++)
        x[i * 7] = sp[i];
}

START_TEST(memory_ops)
{
    struct pt_err e;
    pt_err_clear(&e);
    float *z = NULL;
    ck_assert_int_eq(dev_bk->ops->alloc(dev_bk, 0, &z, &e), 0); /* n == 0 allowed */
    dev_bk->ops->release(dev_bk, z);
    dev_bk->ops->release(dev_bk, NULL);
    enum { N = 5003 };
    struct twin a = {0}, b = {0};
    twin_rand(&a, N, -10.0f, 10.0f);
    sprinkle_specials(a.c, N);
    twin_set(&a, a.c);
    check_bits("upload/download", &a, "%d values", N);
    /* views: upload into the middle, download a part */
    float part[300], back[300];
    for (int i = 0; i < 300; i++)
        part[i] = (float)i * 0.25f - 7.0f;
    memcpy(a.c + 17, part, sizeof part);
    ck_assert_int_eq(dev_bk->ops->upload(dev_bk, a.d + 17, part, 300, &e), 0);
    ck_assert_int_eq(dev_bk->ops->upload(dev_bk, a.d, part, 0, &e), 0);
    check_bits("upload/download", &a, "upload of 300 at offset 17");
    ck_assert_int_eq(dev_bk->ops->download(dev_bk, back, a.d + 5, 300, &e), 0);
    check_bytes("upload/download", a.c + 5, back, sizeof back, "download of 300 at offset 5");
    ck_assert_int_eq(dev_bk->ops->download(dev_bk, back, a.d, 0, &e), 0);
    /* copy between buffers and views */
    twin_rand(&b, N, -1.0f, 1.0f);
    static const size_t copies[][3] = {
        {0, 0, N}, {3, 10, 700}, {N - 1, 0, 1}, {100, 4000, 1003}, {0, 0, 0}};
    for (size_t k = 0; k < sizeof copies / sizeof copies[0]; k++) {
        size_t dst = copies[k][0], src = copies[k][1], n = copies[k][2];
        ref_bk->ops->copy(ref_bk, b.c + dst, a.c + src, n);
        dev_bk->ops->copy(dev_bk, b.d + dst, a.d + src, n);
        check_bits("copy", &b, "b[%zu..] = a[%zu..], %zu values", dst, src, n);
    }
    /* a copy on the second queue (upload_ahead) beside queued work, joined, then used;
     * a download queued into host_alloc memory, there after the sync */
    ck_assert_ptr_nonnull(dev_bk->ops->upload_ahead);
    size_t hb = 1000 * sizeof(float);
    float *pin = dev_bk->ops->host_alloc ? dev_bk->ops->host_alloc(dev_bk, hb) : malloc(hb);
    float *got = dev_bk->ops->host_alloc ? dev_bk->ops->host_alloc(dev_bk, hb) : malloc(hb);
    ck_assert(pin && got);
    for (int i = 0; i < 1000; i++)
        pin[i] = (float)i * 0.5f - 3.0f;
    for (int round = 0; round < 3; round++) {
        ref_bk->ops->scale(ref_bk, b.c, N, 2.0f);
        dev_bk->ops->scale(dev_bk, b.d, N, 2.0f); /* queued before the copy, beside it */
        ck_assert_int_eq(dev_bk->ops->upload_ahead(dev_bk, a.d + 100 * round, pin, 1000, &e), 0);
        dev_bk->ops->upload_join(dev_bk);
        memcpy(a.c + 100 * round, pin, hb);
        ref_bk->ops->scale(ref_bk, a.c + 100 * round, 1000, 3.0f);
        dev_bk->ops->scale(dev_bk, a.d + 100 * round, 1000, 3.0f); /* sees the copy */
        ck_assert_int_eq(dev_bk->ops->upload_wait(dev_bk, &e), 0);
        ck_assert_int_eq(dev_bk->ops->download_async(dev_bk, got, a.d + 100 * round, 1000, &e), 0);
        ck_assert_int_eq(dev_bk->ops->sync(dev_bk, &e), 0);
        check_bytes("upload ahead", a.c + 100 * round, got, hb, "round %d: joined copy, scaled",
                    round);
        check_bits("upload ahead", &a, "round %d", round);
        check_bits("upload ahead", &b, "round %d: the work beside the copy", round);
    }
    if (dev_bk->ops->host_alloc) {
        dev_bk->ops->host_free(dev_bk, pin);
        dev_bk->ops->host_free(dev_bk, got);
    } else {
        free(pin);
        free(got);
    }
    check_synced("memory");
    twin_free(&a);
    twin_free(&b);
}
END_TEST

/* ---- gemm ---- */

/* Element (i, l) of op(A) for A stored column-major with leading dimension ld. */
static float op_at(const float *a, int ld, enum bk_trans t, int i, int l)
{
    return t == BK_TRANS ? a[l + (size_t)i * ld] : a[i + (size_t)l * ld];
}

static void gemm_case(enum bk_trans ta, enum bk_trans tb, int m, int n, int k, float alpha,
                      float beta)
{
    /* op(A) m x k stored as (ta ? k x m : m x k), and so on; every ld past its rows */
    int ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
    int lda = ar + 3, ldb = br + 5, ldc = m + 2;
    struct twin a = {0}, b = {0}, c = {0};
    twin_rand(&a, (size_t)lda * ac, -1.0f, 1.0f);
    twin_rand(&b, (size_t)ldb * bc, -1.0f, 1.0f);
    twin_rand(&c, (size_t)ldc * n, -1.0f, 1.0f);
    if (beta == 0.0f) { /* C's old values must not survive: NaN inside, marks in the gaps */
        for (size_t i = 0; i < c.n; i++)
            c.c[i] = (int)(i % (size_t)ldc) < m ? NAN : -12345.0f;
        twin_set(&c, c.c);
    }
    double *mag = malloc(c.n * sizeof *mag);
    ck_assert_ptr_nonnull(mag);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < ldc; i++) {
            size_t at = i + (size_t)j * ldc;
            if (i >= m) {
                mag[at] = -1.0; /* between the columns: untouched */
                continue;
            }
            double s = 0.0;
            for (int l = 0; l < k; l++)
                s += fabs((double)op_at(a.c, lda, ta, i, l) * op_at(b.c, ldb, tb, l, j));
            mag[at] = fabs(alpha) * s + (beta != 0.0f ? fabs(beta * c.c[at]) : 0.0);
        }
    ref_bk->ops->gemm(ref_bk, ta, tb, m, n, k, alpha, a.c, lda, b.c, ldb, beta, c.c, ldc);
    dev_bk->ops->gemm(dev_bk, ta, tb, m, n, k, alpha, a.d, lda, b.d, ldb, beta, c.d, ldc);
    check_near("gemm", &c, mag, TOL, "%c%c m=%d n=%d k=%d alpha=%g beta=%g lda=%d ldb=%d ldc=%d",
               ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, (double)alpha, (double)beta, lda, ldb, ldc);
    free(mag);
    twin_free(&a);
    twin_free(&b);
    twin_free(&c);
}

/* Each of 1, 7, 33, 257, 784 in every position, and the MLP's shapes (784 inputs, 512
 * hidden units, 10 classes, minibatch 256 / 64). */
START_TEST(gemm_transposes_and_sizes)
{
    static const int mnk[][3] = {{1, 1, 1},       {7, 1, 33},     {1, 7, 257},   {33, 33, 1},
                                 {257, 7, 784},   {7, 257, 33},   {784, 33, 7},  {33, 784, 257},
                                 {257, 257, 257}, {1, 784, 784},  {784, 1, 784}, {784, 784, 1},
                                 {512, 64, 784},  {10, 256, 512}, {7, 5, 0}};
    for (size_t s = 0; s < sizeof mnk / sizeof mnk[0]; s++)
        for (int t = 0; t < 4; t++) {
            enum bk_trans ta = t & 1 ? BK_TRANS : BK_NOTRANS, tb = t & 2 ? BK_TRANS : BK_NOTRANS;
            gemm_case(ta, tb, mnk[s][0], mnk[s][1], mnk[s][2], 1.0f, 0.0f);
            gemm_case(ta, tb, mnk[s][0], mnk[s][1], mnk[s][2], -0.75f, 1.0f);
        }
    check_synced("gemm");
}
END_TEST

/* ---- element ops ---- */

static const size_t lengths[] = {1, 37, 4099, 100003};
#define NLEN (sizeof lengths / sizeof lengths[0])

START_TEST(fill_scale_axpy_mul)
{
    for (size_t li = 0; li < NLEN; li++) {
        size_t n = lengths[li];
        struct twin x = {0}, y = {0};
        twin_rand(&x, n, -3.0f, 3.0f);
        twin_rand(&y, n, -3.0f, 3.0f);
        sprinkle_specials(x.c, n);
        twin_set(&x, x.c);
        ref_bk->ops->fill(ref_bk, y.c, n, -0.3f);
        dev_bk->ops->fill(dev_bk, y.d, n, -0.3f);
        check_bits("fill", &y, "n=%zu", n);
        ref_bk->ops->fill(ref_bk, y.c + n / 2, n - n / 2, 0.0f);
        dev_bk->ops->fill(dev_bk, y.d + n / 2, n - n / 2, 0.0f);
        check_bits("fill", &y, "the upper half of n=%zu", n);
        static const float alphas[] = {0.37f, -2.5f, 1e-30f};
        for (int k = 0; k < 3; k++) {
            struct twin s = {0};
            twin_alloc(&s, n);
            twin_set(&s, x.c);
            ref_bk->ops->scale(ref_bk, s.c, n, alphas[k]);
            dev_bk->ops->scale(dev_bk, s.d, n, alphas[k]);
            check_bits("scale", &s, "n=%zu alpha=%g", n, (double)alphas[k]);
            twin_free(&s);
        }
        /* scale by 0, axpy and mul on finite values (inf * 0 and inf - inf give NaN) */
        twin_free(&x);
        twin_rand(&x, n, -3.0f, 3.0f);
        ref_bk->ops->scale(ref_bk, y.c, n, -0.0f);
        dev_bk->ops->scale(dev_bk, y.d, n, -0.0f);
        check_bits("scale", &y, "n=%zu alpha=-0", n);
        twin_free(&y);
        twin_rand(&y, n, -3.0f, 3.0f);
        for (int k = 0; k < 2; k++) {
            float a = k ? 1.0f : -0.7f;
            ref_bk->ops->axpy(ref_bk, y.c, x.c, n, a);
            dev_bk->ops->axpy(dev_bk, y.d, x.d, n, a);
            check_bits("axpy", &y, "n=%zu a=%g", n, (double)a);
        }
        ref_bk->ops->mul(ref_bk, y.c, x.c, n);
        dev_bk->ops->mul(dev_bk, y.d, x.d, n);
        check_bits("mul", &y, "n=%zu", n);
        twin_free(&x);
        twin_free(&y);
    }
    check_synced("element ops");
}
END_TEST

static const char *const act_names[BK_ACT_COUNT] = {"none", "sigmoid", "tanh", "relu"};

START_TEST(activations_and_gradients)
{
    static const int shapes[][2] = {{1, 1}, {7, 33}, {100, 3}, {512, 64}};
    for (int a = 0; a < BK_ACT_COUNT; a++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (int with_bias = 0; with_bias < 2; with_bias++) {
                int rows = shapes[s][0], cols = shapes[s][1];
                size_t n = (size_t)rows * cols;
                struct twin z = {0}, b = {0}, dz = {0};
                twin_rand(&z, n, -12.0f, 12.0f);
                twin_rand(&b, (size_t)rows, -1.0f, 1.0f);
                for (size_t i = 0; i < n; i += 11) /* near 0, where tanh is small */
                    z.c[i] *= 1e-4f;
                twin_set(&z, z.c);
                ref_bk->ops->bias_act(ref_bk, a, z.c, with_bias ? b.c : NULL, rows, cols);
                dev_bk->ops->bias_act(dev_bk, a, z.d, with_bias ? b.d : NULL, rows, cols);
                check_near("bias_act", &z, NULL, TOL, "%s %dx%d %s", act_names[a], rows, cols,
                           with_bias ? "with bias" : "no bias");
                /* the gradient from the reference's output, on both */
                twin_sync_from_ref(&z);
                twin_rand(&dz, n, -2.0f, 2.0f);
                ref_bk->ops->act_grad(ref_bk, a, dz.c, z.c, n);
                dev_bk->ops->act_grad(dev_bk, a, dz.d, z.d, n);
                check_near("act_grad", &dz, NULL, TOL, "%s n=%zu", act_names[a], n);
                twin_free(&z);
                twin_free(&b);
                twin_free(&dz);
            }
    check_synced("activations");
}
END_TEST

START_TEST(sum_cols_and_norm)
{
    static const int shapes[][2] = {{1, 1}, {7, 5}, {300, 1000}, {10, 4097}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int rows = shapes[s][0], cols = shapes[s][1], ld = rows + 4;
        struct twin x = {0}, out = {0}, mean = {0}, inv = {0};
        twin_rand(&x, (size_t)ld * cols, -1.0f, 1.0f);
        twin_const(&out, (size_t)rows, NAN); /* overwritten */
        double *mag = calloc((size_t)rows, sizeof *mag);
        ck_assert_ptr_nonnull(mag);
        for (int j = 0; j < cols; j++)
            for (int i = 0; i < rows; i++)
                mag[i] += fabs(x.c[i + (size_t)j * ld]);
        ref_bk->ops->sum_cols(ref_bk, out.c, x.c, rows, cols, ld);
        dev_bk->ops->sum_cols(dev_bk, out.d, x.d, rows, cols, ld);
        check_near("sum_cols", &out, mag, TOL, "%dx%d ld=%d", rows, cols, ld);
        free(mag);
        /* norm over the contiguous rows x cols at the front of x */
        twin_rand(&mean, (size_t)rows, -0.5f, 0.5f);
        twin_rand(&inv, (size_t)rows, 0.1f, 20.0f);
        ref_bk->ops->norm(ref_bk, x.c, mean.c, inv.c, rows, cols);
        dev_bk->ops->norm(dev_bk, x.d, mean.d, inv.d, rows, cols);
        check_near("norm", &x, NULL, TOL, "%dx%d", rows, cols);
        twin_free(&x);
        twin_free(&out);
        twin_free(&mean);
        twin_free(&inv);
    }
    check_synced("sum_cols");
}
END_TEST

/* The masks are a pure function of (seed, index): identical bits on every backend. */
START_TEST(dropout_masks_identical)
{
    static const float rates[] = {0.0f, 0.1f, 0.5f, 0.9f};
    static const uint64_t seeds[] = {0, 1, 0x9E3779B97F4A7C15ull, 0xFFFFFFFFFFFFFFFFull};
    for (size_t li = 0; li < NLEN; li++)
        for (int r = 0; r < 4; r++)
            for (int s = 0; s < 4; s++) {
                size_t n = lengths[li];
                struct twin x = {0}, y = {0}, mask = {0};
                twin_rand(&x, n, -4.0f, 4.0f);
                twin_const(&y, n, NAN);
                twin_const(&mask, n, NAN);
                ref_bk->ops->dropout(ref_bk, y.c, mask.c, x.c, n, rates[r], seeds[s]);
                dev_bk->ops->dropout(dev_bk, y.d, mask.d, x.d, n, rates[r], seeds[s]);
                check_bits("dropout mask", &mask, "n=%zu rate=%g seed=%d", n, (double)rates[r], s);
                check_bits("dropout y", &y, "n=%zu rate=%g seed=%d", n, (double)rates[r], s);
                twin_free(&x);
                twin_free(&y);
                twin_free(&mask);
            }
    check_synced("dropout");
}
END_TEST

static TCase *core_tcase(void)
{
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, memory_ops);
    tcase_add_test(tc, gemm_transposes_and_sizes);
    tcase_add_test(tc, fill_scale_axpy_mul);
    tcase_add_test(tc, activations_and_gradients);
    tcase_add_test(tc, sum_cols_and_norm);
    tcase_add_test(tc, dropout_masks_identical);
    return tc;
}

/* The backend under test: the CUDA device PT_TEST_DEVICE (default 0), or with
 * PT_TEST_CUDA_ALT=cpu a second CPU backend. Returns 77 (after printing why) when there is
 * none. */
static int open_backends(void)
{
    struct pt_err e;
    pt_err_clear(&e);
    if (backend_cpu_new(&ref_bk, &e) != 0) {
        fprintf(stderr, "test_cuda_ops: %s\n", e.msg);
        return 99;
    }
    const char *alt = getenv("PT_TEST_CUDA_ALT"), *dev = getenv("PT_TEST_DEVICE");
    if (alt && strcmp(alt, "cpu") == 0) {
        if (backend_cpu_new(&dev_bk, &e) != 0) {
            fprintf(stderr, "test_cuda_ops: %s\n", e.msg);
            return 99;
        }
        printf("test_cuda_ops: PT_TEST_CUDA_ALT=cpu: a second CPU backend stands in for the "
               "device (a check of the harness)\n");
        return 0;
    }
    char *end = NULL;
    long device = dev && *dev ? strtol(dev, &end, 10) : 0;
    if (dev && *dev && (*end || device < 0 || device > 1024)) {
        fprintf(stderr, "test_cuda_ops: PT_TEST_DEVICE=%s: expected a device number\n", dev);
        return 99;
    }
    char name[256];
    if (backend_cuda_new(&dev_bk, (int)device, name, sizeof name, &e) != 0) {
        printf("skipped: no GPU: %s\n", e.msg);
        return 77;
    }
    if (strcmp(dev_bk->ops->name, "cuda") != 0 || dev_bk->host_memory) {
        fprintf(stderr, "test_cuda_ops: backend_cuda_new made backend '%s'%s\n", dev_bk->ops->name,
                dev_bk->host_memory ? " with host memory" : "");
        return 99;
    }
    printf("test_cuda_ops: device %ld: %s\n", device, name);
    return 0;
}

int main(void)
{
    const char *seed = getenv("PT_TEST_SEED");
    if (seed && *seed)
        rng_state = strtoull(seed, NULL, 0);
    printf("test_cuda_ops: seed %llu\n", (unsigned long long)rng_state);
    int rc = open_backends();
    if (rc != 0) {
        backend_free(ref_bk);
        return rc;
    }
    Suite *s = suite_create("cuda_ops");
    suite_add_tcase(s, core_tcase());
    suite_add_tcase(s, cuda_nn_tcase());
    suite_add_tcase(s, cuda_update_tcase());
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    print_stats();
    backend_free(dev_bk);
    backend_free(ref_bk);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
