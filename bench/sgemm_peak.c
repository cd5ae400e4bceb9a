/* bench/sgemm_peak: single-precision GEMM rate on this machine, at a large square size and
 * at the shapes of the Fashion-MNIST MLP (784-512-512-10, batch 256) forward and backward:
 * OpenBLAS (with THREADS threads and the kernel OPENBLAS_CORETYPE selects), and, on CPUs
 * with AVX-512F, partrain's one-thread kernel (src/math/cpu_gemm.c) with the ratio. The
 * training benchmark compares its achieved GFLOP/s with these.
 *
 *   bench/sgemm_peak [THREADS]        (default 1) */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "math/backend.h"
#include "math/cpu_gemm.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* GFLOP/s of C(m,n) = op(A) op(B), best of several timed rounds of ~0.3 s; by OpenBLAS,
 * or by partrain's kernel when own is not NULL. */
static double rate(struct cpu_gemm *own, int ta, int tb, int m, int n, int k)
{
    float *a = calloc((size_t)m * k, sizeof *a), *b = calloc((size_t)k * n, sizeof *b);
    float *c = calloc((size_t)m * n, sizeof *c);
    for (size_t i = 0; i < (size_t)m * k; i++)
        a[i] = (float)(i % 7) * 0.01f;
    for (size_t i = 0; i < (size_t)k * n; i++)
        b[i] = (float)(i % 5) * 0.01f;
    double best = 0;
    for (int round = 0; round < 5; round++) {
        int reps = 0;
        double t0 = now(), t1;
        do {
            if (own)
                cpu_gemm_run(own, ta, tb, m, n, k, 1.0f, a, ta ? k : m, b, tb ? n : k, 0.0f, c, m);
            else
                cblas_sgemm(CblasColMajor, ta ? CblasTrans : CblasNoTrans,
                            tb ? CblasTrans : CblasNoTrans, m, n, k, 1.0f, a, ta ? k : m, b,
                            tb ? n : k, 0.0f, c, m);
            reps++;
            t1 = now();
        } while (t1 - t0 < 0.3);
        double g = 2.0 * m * n * k * reps / (t1 - t0) / 1e9;
        if (g > best)
            best = g;
    }
    free(a);
    free(b);
    free(c);
    return best;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 1;
    int got = backend_cpu_set_threads(threads, 1);
    char cpu[512];
    printf("sgemm_peak: %s, %d thread%s\n", backend_cpu_describe(cpu, sizeof cpu), got,
           got == 1 ? "" : "s");
    static const struct {
        const char *what;
        int ta, tb, m, n, k;
    } cases[] = {
        {"square 2048", 0, 0, 2048, 2048, 2048},
        {"fwd  W1(512x784) X(784x256)", 0, 0, 512, 256, 784},
        {"fwd  W2(512x512) H(512x256)", 0, 0, 512, 256, 512},
        {"bwd  dW1 = dH X^T", 0, 1, 512, 784, 256},
        {"bwd  dX2 = W2^T dH", 1, 0, 512, 256, 512},
    };
    struct cpu_gemm *own = cpu_gemm_supported() ? cpu_gemm_new() : NULL;
    if (!own)
        printf("  (no AVX-512F: partrain's kernel is not used on this CPU)\n");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double ob = rate(NULL, cases[i].ta, cases[i].tb, cases[i].m, cases[i].n, cases[i].k);
        printf("  %-30s OpenBLAS %6.1f GFLOP/s", cases[i].what, ob);
        if (own) {
            double pt = rate(own, cases[i].ta, cases[i].tb, cases[i].m, cases[i].n, cases[i].k);
            printf("   partrain %6.1f GFLOP/s   %.2fx", pt, pt / ob);
        }
        printf("\n");
    }
    cpu_gemm_free(own);
    return 0;
}
