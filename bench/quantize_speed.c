/* bench/quantize_speed: column quantizer speed (src/parallel/quantize.c) on one core.
 *
 *   bench/quantize_speed [ROUNDS]     (default 7)
 *
 * The gradient of the Fashion-MNIST MLP's weights: W1 (512x784), W2 (512x512) and W3
 * (10x512), column-major, so 784 + 512 columns of 512 rows and 512 columns of 10 rows
 * (668 672 floats, 2.67 MB). For each bits value it times quant_encode_column over every
 * column (with a persistent residual, as training does) and quant_decode_column over every
 * column (accumulating, as the stripe owner does), and reports GB/s of float input (4 bytes
 * per value). References over the same floats, in the same run: memcpy, and a plain
 * out += in loop. Best of ROUNDS rounds of ITERS passes each. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "math/backend.h"
#include "parallel/quantize.h"

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

static void encode_all(const float *g, float *r, int bits, int zt, unsigned char *out)
{
    for (size_t t = 0; t < NTENSORS; t++) {
        size_t rows = tensors[t].rows, size = quant_column_bytes(rows, bits);
        for (size_t c = 0; c < tensors[t].cols; c++) {
            quant_encode_column(g, r, rows, bits, zt, out);
            g += rows;
            r += rows;
            out += size;
        }
    }
}

static void decode_all(const unsigned char *in, int bits, float *out)
{
    for (size_t t = 0; t < NTENSORS; t++) {
        size_t rows = tensors[t].rows, size = quant_column_bytes(rows, bits);
        for (size_t c = 0; c < tensors[t].cols; c++) {
            quant_decode_column(in, rows, bits, 1, out);
            in += size;
            out += rows;
        }
    }
}

/* The reference add loop: blocks of 8 so gcc -O2 vectorizes it, as our loops are. */
__attribute__((noinline)) static void add_loop(float *restrict out, const float *restrict in, size_t n)
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
    if (!g || !r || !out || !packed) {
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
    printf("%-10s %8s %8s %8s %9s %9s %9s\n", "bits", "packed", "enc GB/s", "dec GB/s",
           "e+d GB/s", "/memcpy", "/add");
    printf("%-10s %7.2fM %8s %8s %9.2f\n", "memcpy", gb * 1e3, "", "", copy_gbs);
    printf("%-10s %7.2fM %8s %8s %9.2f\n", "out+=in", gb * 1e3, "", "", add_gbs);

    static const struct {
        const char *name;
        int bits, zt;
    } modes[] = {{"1 zero", 1, 1}, {"1 mean", 1, 0}, {"2", 2, 0}, {"3", 3, 0},
                 {"4", 4, 0},      {"8", 8, 0},      {"16", 16, 0}};
    double checksum = 0;
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        double best_enc = 1e30, best_dec = 1e30;
        memset(r, 0, n * sizeof *r);
        for (int round = 0; round < rounds; round++) {
            double t0 = now();
            for (int it = 0; it < ITERS; it++)
                encode_all(g, r, modes[m].bits, modes[m].zt, packed);
            double t1 = now();
            for (int it = 0; it < ITERS; it++)
                decode_all(packed, modes[m].bits, out);
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
    return 0;
}
