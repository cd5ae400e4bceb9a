/* bench/gpu_bench_quant: the quant subcommand of bench/gpu_bench (see gpu_bench.c):
 * ops->quantize and ops->unquantize throughput on the device and on one CPU thread. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "math/backend.h"
#include "math/quantize.h"
#include "gpu_bench.h"

struct quant_case {
    size_t rows, cols, n, bytes;
    int reps;
    size_t *off, *rowv, *boff;
    struct bk_columns c;
    float *g; /* host: the gradient */
};

struct quant_result {
    double enc, dec, copy, d2h, h2d; /* seconds per pass */
    unsigned char *packed;           /* the first pass's bytes (host) */
    float *decoded;                  /* their reconstruction (host) */
};

static int quant_case_make(struct quant_case *q, size_t rows, size_t cols, int bits, int reps)
{
    q->rows = rows;
    q->cols = cols;
    q->n = rows * cols;
    q->reps = reps;
    q->off = calloc(cols + 1, sizeof *q->off);
    q->rowv = calloc(cols + 1, sizeof *q->rowv);
    q->boff = calloc(cols + 1, sizeof *q->boff);
    q->g = malloc(q->n * sizeof *q->g);
    if (!q->off || !q->rowv || !q->boff || !q->g)
        return -1;
    for (size_t c = 0; c <= cols; c++) {
        q->off[c] = c * rows;
        q->rowv[c] = c < cols ? rows : 0;
        q->boff[c] = c * quant_column_bytes(rows, bits);
    }
    q->bytes = q->boff[cols];
    q->c = (struct bk_columns){.off = q->off,
                               .rows = q->rowv,
                               .boff = q->boff,
                               .c1 = cols,
                               .bits = bits,
                               .zero_threshold = 1};
    uint64_t s = 12345;
    for (size_t i = 0; i < q->n; i++) { /* roughly N(0, 0.01^2), as gradients are */
        double u = 0;
        for (int k = 0; k < 4; k++)
            u += bench_uniform(&s) - 0.5;
        q->g[i] = (float)(u * 0.017);
    }
    return 0;
}

/* Host memory for what crosses the bus, as the stages get it: ops->host_alloc (pinned on a
 * device) when the backend has one, else (or with PT_BENCH_PAGEABLE=1) malloc. */
static int pinned(const struct backend *b)
{
    const char *pageable = getenv("PT_BENCH_PAGEABLE");
    return b->ops->host_alloc && b->ops->host_free && !(pageable && atoi(pageable));
}

static void *host_alloc(struct backend *b, size_t bytes)
{
    return pinned(b) ? b->ops->host_alloc(b, bytes) : malloc(bytes);
}

static void host_free(struct backend *b, void *p)
{
    if (pinned(b))
        b->ops->host_free(b, p);
    else
        free(p);
}

/* The buffers of one backend's run; packed is host memory (backend.h). */
struct quant_bufs {
    float *g, *r, *out, *tmp; /* device: gradient, residual, decoded sum, copy target */
    float *stage;             /* host: q->bytes for the transfer references */
    unsigned char *packed;    /* host: q->bytes */
};

enum quant_op { Q_ENCODE, Q_DECODE, Q_COPY, Q_D2H, Q_H2D, Q_OPS };

static int quant_call(struct backend *b, const struct quant_case *q, const struct quant_bufs *u,
                      enum quant_op op, struct pt_err *e)
{
    size_t words = q->bytes / sizeof(float);
    switch (op) {
    case Q_ENCODE: b->ops->quantize(b, &q->c, u->g, u->r, u->packed); return 0;
    case Q_DECODE: b->ops->unquantize(b, &q->c, u->packed, 1, u->out); return 0;
    case Q_COPY: b->ops->copy(b, u->tmp, u->g, q->n); return 0;
    case Q_D2H: return b->ops->download(b, u->stage, u->g, words, e);
    default: return b->ops->upload(b, u->tmp, u->stage, words, e);
    }
}

/* Seconds per call of each op: best of ROUNDS rounds of q->reps calls, each ended by sync,
 * after two warm-up calls of each. */
static int quant_time(struct backend *b, const struct quant_case *q, const struct quant_bufs *u,
                      double sec[Q_OPS], struct pt_err *e)
{
    int rc = 0;
    for (int op = 0; op < Q_OPS; op++) {
        for (int i = 0; i < 2 && rc == 0; i++)
            rc = quant_call(b, q, u, (enum quant_op)op, e);
        if (rc == 0)
            rc = b->ops->sync(b, e);
        sec[op] = 1e30;
        for (int round = 0; round < ROUNDS && rc == 0; round++) {
            double t0 = bench_now();
            for (int k = 0; k < q->reps && rc == 0; k++)
                rc = quant_call(b, q, u, (enum quant_op)op, e);
            if (rc == 0)
                rc = b->ops->sync(b, e);
            double t = (bench_now() - t0) / q->reps;
            sec[op] = t < sec[op] ? t : sec[op];
        }
    }
    return rc;
}

/* The first pass (zero residual) kept for the comparison, then the timings. */
static int quant_run(struct backend *b, const struct quant_case *q, struct quant_result *res,
                     struct pt_err *e)
{
    struct quant_bufs u = {0};
    res->packed = malloc(q->bytes + 1);
    res->decoded = malloc(q->n * sizeof *res->decoded);
    u.packed = host_alloc(b, q->bytes + 1);
    u.stage = host_alloc(b, q->bytes + sizeof(float));
    int rc = res->packed && res->decoded && u.packed && u.stage
                 ? 0
                 : pt_err_set(e, PT_ENOMEM, "error: out of memory");
    if (rc == 0 && (rc = b->ops->alloc(b, q->n, &u.g, e)) == 0 &&
        (rc = bk_alloc_zero(b, q->n, &u.r, e)) == 0 &&
        (rc = b->ops->alloc(b, q->n, &u.out, e)) == 0)
        rc = b->ops->alloc(b, q->n, &u.tmp, e);
    if (rc == 0)
        rc = b->ops->upload(b, u.g, q->g, q->n, e);
    if (rc == 0) {
        b->ops->quantize(b, &q->c, u.g, u.r, res->packed);
        b->ops->unquantize(b, &q->c, res->packed, 0, u.out);
        rc = b->ops->download(b, res->decoded, u.out, q->n, e);
    }
    if (rc == 0)
        rc = b->ops->sync(b, e);
    double sec[Q_OPS] = {0};
    if (rc == 0)
        rc = quant_time(b, q, &u, sec, e);
    res->enc = sec[Q_ENCODE];
    res->dec = sec[Q_DECODE];
    res->copy = sec[Q_COPY];
    res->d2h = sec[Q_D2H];
    res->h2d = sec[Q_H2D];
    b->ops->release(b, u.g);
    b->ops->release(b, u.r);
    b->ops->release(b, u.out);
    b->ops->release(b, u.tmp);
    host_free(b, u.packed);
    host_free(b, u.stage);
    return rc;
}

static double gbs(const struct quant_case *q, double sec)
{
    return (double)q->n * sizeof(float) / sec / 1e9;
}

static void print_compare(const struct quant_case *q, const struct quant_result *d,
                          const struct quant_result *h)
{
    size_t at = 0;
    while (at < q->bytes && d->packed[at] == h->packed[at])
        at++;
    if (at == q->bytes)
        printf("packed_equal_to_cpu: yes (%zu bytes)\n", q->bytes);
    else
        printf("packed_equal_to_cpu: NO (first difference at byte %zu, column %zu)\n", at,
               at / quant_column_bytes(q->rows, q->c.bits));
    size_t diff = 0;
    double max = 0;
    for (size_t i = 0; i < q->n; i++) {
        double dv = (double)d->decoded[i] - (double)h->decoded[i];
        diff += d->decoded[i] != h->decoded[i];
        max = dv > max ? dv : -dv > max ? -dv : max;
    }
    printf("decoded_equal_to_cpu: %s (%zu of %zu floats differ, max |difference| %g)\n",
           diff ? "NO" : "yes", diff, q->n, max);
}

/* transfers: the backend's floats live on a device, so the packed bytes cross the bus. */
static void print_quant(const char *who, const struct quant_case *q, const struct quant_result *r,
                        int transfers)
{
    double mb = (double)q->bytes / 1e6;
    printf("%s_encode_gbs: %.2f\n", who, gbs(q, r->enc));
    printf("%s_decode_gbs: %.2f\n", who, gbs(q, r->dec));
    printf("%s_encode_us: %.1f\n", who, r->enc * 1e6);
    printf("%s_decode_us: %.1f\n", who, r->dec * 1e6);
    printf("%s_copy_gbs: %.2f (ops->copy of the same floats, GB/s of input)\n", who,
           gbs(q, r->copy));
    if (!transfers)
        return;
    printf("%s_d2h_packed_us: %.1f (ops->download of %.3f MB, %.2f GB/s)\n", who, r->d2h * 1e6, mb,
           mb / 1e3 / r->d2h);
    printf("%s_h2d_packed_us: %.1f (ops->upload of %.3f MB, %.2f GB/s)\n", who, r->h2d * 1e6, mb,
           mb / 1e3 / r->h2d);
    if (r->enc > r->d2h)
        printf("%s_encode_minus_d2h_gbs: %.2f (estimate of the kernels alone)\n", who,
               gbs(q, r->enc - r->d2h));
    if (r->dec > r->h2d)
        printf("%s_decode_minus_h2d_gbs: %.2f (estimate of the kernels alone)\n", who,
               gbs(q, r->dec - r->h2d));
}

int bench_quant(int argc, char **argv)
{
    long rows = argc == 4 ? atol(argv[0]) : 0, cols = argc == 4 ? atol(argv[1]) : 0;
    int bits = argc == 4 ? atoi(argv[2]) : 0, reps = argc == 4 ? atoi(argv[3]) : 0;
    if (rows <= 0 || cols <= 0 || bits < 1 || bits > 16 || reps <= 0) {
        fprintf(stderr, "usage: gpu_bench quant ROWS COLS BITS(1..16) REPS\n");
        return 2;
    }
    struct quant_case q = {0};
    struct quant_result dev = {0}, host = {0};
    struct bench_backend bd = {0}, bh = {0};
    struct pt_err e;
    pt_err_clear(&e);
    int rc = bench_open_device(&bd);
    if (rc)
        return rc;
    if (quant_case_make(&q, (size_t)rows, (size_t)cols, bits, reps)) {
        fprintf(stderr, "gpu_bench: out of memory\n");
        return 1;
    }
    printf("gpu_bench quant: %ld x %ld floats (%.1f MB) in %ld columns, %d bit%s%s, residual "
           "on, decode accumulating, %d passes per round, best of %d rounds\n",
           rows, cols, (double)q.n * 4 / 1e6, cols, bits, bits == 1 ? "" : "s",
           bits == 1 ? " (zero threshold)" : "", reps, ROUNDS);
    printf("backend: %s\n", bd.what);
    printf("packed_bytes: %zu\n", q.bytes);
    printf("packed_host_memory: %s\n",
           pinned(bd.b) ? "ops->host_alloc (pinned on a device)" : "malloc (pageable)");
    printf("note: the packed bytes are host memory (backend.h): encode includes their "
           "device->host copy, decode their host->device copy\n");
    rc = quant_run(bd.b, &q, &dev, &e);
    if (rc == 0 && (rc = bench_open_cpu(&bh, 1, &e)) == 0) {
        printf("reference: %s, one thread\n", bh.what);
        rc = quant_run(bh.b, &q, &host, &e);
    }
    if (rc == 0) {
        print_quant("device", &q, &dev, !bd.b->host_memory);
        print_quant("cpu", &q, &host, 0);
        printf("encode_vs_cpu: %.2fx\n", host.enc / dev.enc);
        printf("decode_vs_cpu: %.2fx\n", host.dec / dev.dec);
        print_compare(&q, &dev, &host);
    }
    backend_free(bd.b);
    backend_free(bh.b);
    free(dev.packed);
    free(dev.decoded);
    free(host.packed);
    free(host.decoded);
    free(q.off);
    free(q.rowv);
    free(q.boff);
    free(q.g);
    return rc ? bench_fail(&e) : 0;
}
