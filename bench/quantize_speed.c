/* bench/quantize_speed: column quantizer speed (the CPU backend's quantize / unquantize ops,
 * src/math/cpu_quantize.c) on one core.
 *
 *   bench/quantize_speed [ROUNDS]     (default 7)
 *
 * The gradient of the Fashion-MNIST MLP's weights: W1 (512x784), W2 (512x512) and W3
 * (10x512), column-major, so 784 + 512 columns of 512 rows and 512 columns of 10 rows
 * (668 672 floats, 2.67 MB). For each bits value it times the quantize op over every
 * column (with a persistent residual, as training does) and the unquantize op over every
 * column (accumulating, as the stripe owner does), and reports GB/s of float input (4 bytes
 * per value). References over the same floats, in the same run: memcpy, and a plain
 * out += in loop. Best of ROUNDS rounds of ITERS passes each. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "math/backend.h"
#include "math/quantize.h"

#define ITERS 20

struct layout {
    size_t cols;
    size_t rows;
};

static const struct layout tensors[] = {{784, 512}, {512, 512}, {512, 10}};
#define NTENSORS (sizeof tensors / sizeof tensors[0])

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static size_t total_floats(void)
{
    size_t n = 0;
    for (size_t t = 0; t < NTENSORS; t++)
        n += tensors[t].cols * tensors[t].rows;
    return n;
}

static size_t total_bytes(int bits)
{
    size_t n = 0;
    for (size_t t = 0; t < NTENSORS; t++)
        n += tensors[t].cols * quant_column_bytes(tensors[t].rows, bits);
    return n;
}

/* The column table of the whole gradient (as DataParallelSGD builds it) at `bits`. */
struct table {
    size_t *off, *rows, *boff, ncols;
};

static int table_make(struct table *t)
{
    t->ncols = 0;
    for (size_t k = 0; k < NTENSORS; k++)
        t->ncols += tensors[k].cols;
    t->off = calloc(t->ncols, sizeof *t->off);
    t->rows = calloc(t->ncols, sizeof *t->rows);
    t->boff = calloc(t->ncols, sizeof *t->boff);
    if (!t->off || !t->rows || !t->boff)
        return -1;
    size_t c = 0, at = 0;
    for (size_t k = 0; k < NTENSORS; k++)
        for (size_t j = 0; j < tensors[k].cols; j++, c++) {
            t->off[c] = at;
            t->rows[c] = tensors[k].rows;
            at += tensors[k].rows;
        }
    return 0;
}

static struct bk_columns table_columns(struct table *t, int bits, int zt)
{
    size_t at = 0;
    for (size_t c = 0; c < t->ncols; c++) {
        t->boff[c] = at;
        at += quant_column_bytes(t->rows[c], bits);
    }
    return (struct bk_columns){.off = t->off,
                               .rows = t->rows,
                               .boff = t->boff,
                               .c0 = 0,
                               .c1 = t->ncols,
                               .bits = bits,
                               .zero_threshold = zt};
}

/* The reference add loop: blocks of 8 so gcc -O2 vectorizes it, as our loops are. */
__attribute__((noinline)) static void add_loop(float *restrict out, const float *restrict in,
                                               size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (size_t j = 0; j < 8; j++)
            out[i + j] += in[i + j];
    for (; i < n; i++)
        out[i] += in[i];
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 7;
    if (rounds < 1)
        rounds = 1;
    size_t n = total_floats();
    float *g = malloc(n * sizeof *g), *r = calloc(n, sizeof *r), *out = calloc(n, sizeof *out);
    unsigned char *packed = malloc(total_bytes(16));
    struct backend *b = NULL;
    struct table tab;
    if (!g || !r || !out || !packed || table_make(&tab) || backend_cpu_new(&b, NULL)) {
        fprintf(stderr, "quantize_speed: out of memory\n");
        return 1;
    }
    uint64_t s = 12345;
    for (size_t i = 0; i < n; i++) { /* roughly N(0, 0.01): sums of uniforms */
        double u = 0;
        for (int k = 0; k < 4; k++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            u += (double)(s >> 11) / 9007199254740992.0 - 0.5;
        }
        g[i] = (float)(u * 0.017);
    }
    char cpu[512];
    double gb = (double)n * sizeof(float) / 1e9;
    printf("quantize_speed: %zu floats (%.2f MB) in columns of 512, 512, 10 rows; %s\n", n,
           gb * 1e3, backend_cpu_describe(cpu, sizeof cpu));

    double best_copy = 1e30, best_add = 1e30;
    for (int round = 0; round < rounds; round++) {
        double t0 = now();
        for (int it = 0; it < ITERS; it++) {
            memcpy(out, g, n * sizeof *g);
            __asm__ __volatile__("" ::"r"(out) : "memory"); /* keep every copy */
        }
        double t1 = now();
        for (int it = 0; it < ITERS; it++)
            add_loop(out, g, n);
        double t2 = now();
        best_copy = (t1 - t0) < best_copy ? t1 - t0 : best_copy;
        best_add = (t2 - t1) < best_add ? t2 - t1 : best_add;
    }
    double copy_gbs = gb * ITERS / best_copy, add_gbs = gb * ITERS / best_add;
    printf("%-10s %8s %8s %8s %9s %9s %9s\n", "bits", "packed", "enc GB/s", "dec GB/s", "e+d GB/s",
           "/memcpy", "/add");
    printf("%-10s %7.2fM %8s %8s %9.2f\n", "memcpy", gb * 1e3, "", "", copy_gbs);
    printf("%-10s %7.2fM %8s %8s %9.2f\n", "out+=in", gb * 1e3, "", "", add_gbs);

    static const struct {
        const char *name;
        int bits, zt;
    } modes[] = {{"1 zero", 1, 1}, {"1 mean", 1, 0}, {"2", 2, 0},  {"3", 3, 0},
                 {"4", 4, 0},      {"8", 8, 0},      {"16", 16, 0}};
    double checksum = 0;
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        double best_enc = 1e30, best_dec = 1e30;
        memset(r, 0, n * sizeof *r);
        struct bk_columns cols = table_columns(&tab, modes[m].bits, modes[m].zt);
        for (int round = 0; round < rounds; round++) {
            double t0 = now();
            for (int it = 0; it < ITERS; it++)
                b->ops->quantize(b, &cols, g, r, packed);
            double t1 = now();
            for (int it = 0; it < ITERS; it++)
                b->ops->unquantize(b, &cols, packed, 1, out);
            double t2 = now();
            best_enc = (t1 - t0) < best_enc ? t1 - t0 : best_enc;
            best_dec = (t2 - t1) < best_dec ? t2 - t1 : best_dec;
        }
        checksum += out[n / 2] + r[n / 3];
        double enc = gb * ITERS / best_enc, dec = gb * ITERS / best_dec;
        double both = gb * ITERS / (best_enc + best_dec);
        printf("%-10s %7.3fM %8.2f %8.2f %9.2f %8.2fx %8.2fx\n", modes[m].name,
               (double)total_bytes(modes[m].bits) / 1e6, enc, dec, both, both / copy_gbs,
               both / add_gbs);
    }
    printf("(best of %d rounds of %d passes; encode with residual, decode accumulating; "
           "checksum %g)\n",
           rounds, ITERS, checksum);
    free(g);
    free(r);
    free(out);
    free(packed);
    free(tab.off);
    free(tab.rows);
    free(tab.boff);
    backend_free(b);
    return 0;
}
