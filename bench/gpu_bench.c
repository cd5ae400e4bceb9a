/* bench/gpu_bench: the GPU benchmark's measurements that need C (issue 17; bench/gpu.py runs
 * them beside the trainer and writes the table).
 *
 *   bench/gpu_bench probe
 *   bench/gpu_bench [-v] bound CONFIG MB STEPS [SEQLEN]
 *   bench/gpu_bench quant ROWS COLS BITS REPS
 *   bench/gpu_bench read CONFIG MB EPOCHS [KEY=VALUE...]
 *
 * probe: the CUDA device this process would use.
 *
 * bound: the cuBLAS-only bound of one training step. The SimpleNetworkBuilder network of
 * CONFIG (the first block that holds one) is built on the backend behind a copy of its ops
 * table whose gemm records every call (shapes, transposes, leading dimensions, alpha, beta,
 * operands) and forwards it. One training step of a random minibatch of MB samples (MB
 * sequences of SEQLEN steps for an LSTM, default 28: Fashion-MNIST's rows) is recorded;
 * then only those products are replayed, in the same order, on the same backend, into
 * buffers from ops->alloc laid out as the network's were (operands that overlapped in the
 * network overlap in the replay). Reported: the step's products' time (best of 3 rounds of
 * STEPS replays, each round ended by ops->sync), the implied bound MB / time, and for
 * comparison nn_train_step alone on the same minibatch (inputs uploaded, forward, criteria,
 * backward, criteria downloaded; no reader, no optimizer) and the same steps as the trainer
 * runs them on a device ("pipe": inputs sent during the step before, the criteria read
 * later; no reader, no optimizer), and where the backend records them (CUDA graphs), the
 * pipe's steps replayed from recordings ("graph"). -v lists every recorded call.
 *
 * read (gpu_bench_read.c): the reader alone, ahead of a device as in the trainer, nobody
 * computing: microseconds per minibatch.
 *
 * quant (gpu_bench_quant.c): ops->quantize (residual on) and ops->unquantize (accumulating)
 * over a ROWS x COLS matrix in columns of ROWS floats (struct bk_columns as DataParallelSGD
 * builds it), in GB/s of float input, on the device and on the CPU backend (one thread) in
 * the same run. The packed bytes are host memory (backend.h; from ops->host_alloc when the
 * backend has it, malloc with PT_BENCH_PAGEABLE=1, as DataParallelSGD's buffers are), so the
 * device's figures include moving them across the bus; the same run times ops->download /
 * ops->upload of that many bytes and ops->copy of the floats, for reference. The first
 * pass's bytes and decoded floats are compared with the CPU backend's.
 *
 * Backend: the cuBLAS backend on device PT_BENCH_DEVICE (default 0); PT_BENCH_BACKEND=cpu runs
 * the same code on the CPU backend (OPENBLAS_NUM_THREADS threads, default all cores). Without
 * a usable CUDA device it prints "no GPU: <reason>" and exits 77. Results are "key: value"
 * lines. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "data/minibatch.h"
#include "math/backend.h"
#include "nn/nn.h"
#include "parsers/cfg.h"
#include "gpu_bench.h"

double bench_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int bench_fail(const struct pt_err *e)
{
    fprintf(stderr, "gpu_bench: %s\n", e->msg[0] ? e->msg : "failed");
    return 1;
}

double bench_uniform(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*s >> 11) * (1.0 / 9007199254740992.0);
}

/* ------------------------------------------------------------------ backends */

int bench_open_cpu(struct bench_backend *bb, int threads, struct pt_err *e)
{
    char desc[300];
    backend_cpu_set_threads(threads, 1);
    snprintf(bb->what, sizeof bb->what, "cpu (%s; matrix products: %s)",
             backend_cpu_describe(desc, sizeof desc),
             backend_cpu_own_gemm() ? "partrain's AVX-512 kernel" : "OpenBLAS");
    return backend_cpu_new(&bb->b, e);
}

int bench_open_device(struct bench_backend *bb)
{
    struct pt_err e;
    pt_err_clear(&e);
    const char *kind = getenv("PT_BENCH_BACKEND");
    if (kind && strcasecmp(kind, "cpu") == 0)
        return bench_open_cpu(bb, 0, &e) ? bench_fail(&e) : 0;
    if (kind && *kind && strcasecmp(kind, "cuda") != 0) {
        fprintf(stderr, "gpu_bench: PT_BENCH_BACKEND=%s: use cuda or cpu\n", kind);
        return 1;
    }
    char name[256] = "", why[512] = "";
    if (backend_cuda_probe(name, sizeof name, why, sizeof why) <= 0) {
        printf("no GPU: %s\n", why);
        return EXIT_SKIP;
    }
    const char *dev = getenv("PT_BENCH_DEVICE");
    int device = dev ? atoi(dev) : 0;
    if (backend_cuda_new(&bb->b, device, name, sizeof name, &e))
        return bench_fail(&e);
    snprintf(bb->what, sizeof bb->what, "cuda %d (%s)", device, name);
    return 0;
}

/* ------------------------------------------------------------------ the gemm recorder */

struct gemm_call {
    enum bk_trans ta, tb;
    int m, n, k, lda, ldx, ldc;
    float alpha, beta;
    const float *a, *x;
    float *c;
};

/* A backend that is `real` except that gemm records its calls (while `on`) before
 * forwarding them. The other ops are real's, called with &base, which has real's impl. */
struct recorder {
    struct backend base; /* first: rec_gemm gets this pointer */
    struct backend_ops ops;
    struct backend *real;
    int on, oom;
    struct gemm_call *calls;
    size_t n, cap;
};

static void rec_gemm(struct backend *b, enum bk_trans ta, enum bk_trans tb, int m, int n, int k,
                     float alpha, const float *a, int lda, const float *x, int ldx, float beta,
                     float *c, int ldc)
{
    struct recorder *r = (struct recorder *)b;
    if (r->on && r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 64;
        struct gemm_call *p = realloc(r->calls, cap * sizeof *p);
        r->oom |= !p;
        if (p) {
            r->calls = p;
            r->cap = cap;
        }
    }
    if (r->on && r->n < r->cap)
        r->calls[r->n++] = (struct gemm_call){ta, tb, m, n, k, lda, ldx, ldc, alpha, beta, a, x, c};
    r->real->ops->gemm(r->real, ta, tb, m, n, k, alpha, a, lda, x, ldx, beta, c, ldc);
}

static void recorder_init(struct recorder *r, struct backend *real)
{
    memset(r, 0, sizeof *r);
    r->ops = *real->ops;
    r->ops.gemm = rec_gemm;
    r->base.ops = &r->ops;
    r->base.host_memory = real->host_memory;
    r->base.impl = real->impl;
    r->real = real;
}

/* ------------------------------------------------------------------ the replay */

/* Floats a rows x cols matrix with leading dimension ld spans. */
static size_t span(int rows, int cols, int ld)
{
    return rows > 0 && cols > 0 ? (size_t)rows + (size_t)(cols - 1) * (size_t)ld : 0;
}

/* Byte ranges [lo, hi) of the network's memory that the products touch: overlapping
 * operands merged into one region, each replayed in its own buffer from ops->alloc. */
struct region {
    uintptr_t lo, hi;
    float *buf;
};

struct replay {
    struct region *reg;
    size_t nreg;
    const struct gemm_call *orig; /* the recorded calls (the network's pointers) */
    struct gemm_call *calls;      /* the same calls on the replay buffers */
    size_t n;
    double flop; /* 2 m n k summed */
};

static int region_cmp(const void *a, const void *b)
{
    const struct region *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static void add_range(struct replay *rp, const float *p, size_t floats)
{
    if (floats)
        rp->reg[rp->nreg++] = (struct region){(uintptr_t)p, (uintptr_t)(p + floats), NULL};
}

static size_t region_of(const struct replay *rp, const float *p)
{
    size_t i = 0;
    while (i + 1 < rp->nreg && (uintptr_t)p >= rp->reg[i + 1].lo)
        i++;
    return i;
}

static float *map_ptr(const struct replay *rp, const float *p)
{
    const struct region *r = &rp->reg[region_of(rp, p)];
    return r->buf + ((uintptr_t)p - r->lo) / sizeof(float);
}

/* The regions of the recorded calls, merged and allocated; the calls mapped onto them. */
static int replay_build(struct replay *rp, struct backend *b, const struct gemm_call *rec, size_t n,
                        struct pt_err *e)
{
    memset(rp, 0, sizeof *rp);
    rp->reg = calloc(3 * n + 1, sizeof *rp->reg);
    rp->calls = calloc(n + 1, sizeof *rp->calls);
    if (!rp->reg || !rp->calls)
        return pt_err_set(e, PT_ENOMEM, "error: out of memory");
    for (size_t i = 0; i < n; i++) {
        const struct gemm_call *c = &rec[i];
        add_range(rp, c->a, span(c->ta ? c->k : c->m, c->ta ? c->m : c->k, c->lda));
        add_range(rp, c->x, span(c->tb ? c->n : c->k, c->tb ? c->k : c->n, c->ldx));
        add_range(rp, c->c, span(c->m, c->n, c->ldc));
        rp->flop += 2.0 * c->m * c->n * c->k;
    }
    qsort(rp->reg, rp->nreg, sizeof *rp->reg, region_cmp);
    size_t m = 0;
    for (size_t i = 0; i < rp->nreg; i++)
        if (m && rp->reg[i].lo <= rp->reg[m - 1].hi)
            rp->reg[m - 1].hi =
                rp->reg[i].hi > rp->reg[m - 1].hi ? rp->reg[i].hi : rp->reg[m - 1].hi;
        else
            rp->reg[m++] = rp->reg[i];
    rp->nreg = m;
    for (size_t i = 0; i < rp->nreg; i++) {
        size_t floats = (rp->reg[i].hi - rp->reg[i].lo + sizeof(float) - 1) / sizeof(float);
        if (b->ops->alloc(b, floats, &rp->reg[i].buf, e))
            return pt_err_context(e, "for the replay's buffers");
        b->ops->fill(b, rp->reg[i].buf, floats, 0.01f); /* no denormals, no overflow */
    }
    for (size_t i = 0; i < n; i++) {
        rp->calls[i] = rec[i];
        rp->calls[i].a = map_ptr(rp, rec[i].a);
        rp->calls[i].x = map_ptr(rp, rec[i].x);
        rp->calls[i].c = map_ptr(rp, rec[i].c);
    }
    rp->orig = rec;
    rp->n = n;
    return b->ops->sync(b, e);
}

static void replay_free(struct replay *rp, struct backend *b)
{
    for (size_t i = 0; rp->reg && i < rp->nreg; i++)
        b->ops->release(b, rp->reg[i].buf);
    free(rp->reg);
    free(rp->calls);
}

static void replay_once(const struct replay *rp, struct backend *b)
{
    for (size_t i = 0; i < rp->n; i++) {
        const struct gemm_call *c = &rp->calls[i];
        b->ops->gemm(b, c->ta, c->tb, c->m, c->n, c->k, c->alpha, c->a, c->lda, c->x, c->ldx,
                     c->beta, c->c, c->ldc);
    }
}

/* Seconds per replay of the step's products: best of ROUNDS rounds of steps replays. */
static int replay_time(const struct replay *rp, struct backend *b, int steps, double *sec,
                       struct pt_err *e)
{
    for (int i = 0; i < 3; i++) /* warm-up: cuBLAS picks its kernels, caches fill */
        replay_once(rp, b);
    int rc = b->ops->sync(b, e);
    *sec = 1e30;
    for (int round = 0; round < ROUNDS && rc == 0; round++) {
        double t0 = bench_now();
        for (int s = 0; s < steps; s++)
            replay_once(rp, b);
        rc = b->ops->sync(b, e);
        double t = (bench_now() - t0) / steps;
        *sec = t < *sec ? t : *sec;
    }
    return rc;
}

/* One line per distinct call (count, shape); with verbose also every call in order, its
 * operands named by region ("r3+1024": float 1024 of region 3). */
static void print_calls(const struct replay *rp, int verbose)
{
    char line[256];
    for (size_t i = 0; i < rp->n; i++) {
        const struct gemm_call *c = &rp->calls[i];
        int len =
            snprintf(line, sizeof line, "%c%c m=%d n=%d k=%d lda=%d ldx=%d ldc=%d alpha=%g beta=%g",
                     c->ta ? 'T' : 'N', c->tb ? 'T' : 'N', c->m, c->n, c->k, c->lda, c->ldx, c->ldc,
                     (double)c->alpha, (double)c->beta);
        if (verbose) {
            const struct gemm_call *o = &rp->orig[i];
            const float *ops[3] = {o->a, o->x, o->c};
            printf("gemm[%zu]: %s", i, line);
            for (int j = 0; j < 3; j++) {
                size_t r = region_of(rp, ops[j]);
                printf(" %c=r%zu+%zu", "axc"[j], r,
                       (size_t)((uintptr_t)ops[j] - rp->reg[r].lo) / sizeof(float));
            }
            printf("\n");
        }
        size_t count = 0, first = 1;
        for (size_t j = 0; j < rp->n; j++) {
            const struct gemm_call *d = &rp->calls[j];
            int same = d->ta == c->ta && d->tb == c->tb && d->m == c->m && d->n == c->n &&
                       d->k == c->k && d->lda == c->lda && d->ldx == c->ldx && d->ldc == c->ldc &&
                       d->alpha == c->alpha && d->beta == c->beta;
            first &= !(same && j < i);
            count += (size_t)same;
        }
        if (first && len > 0)
            printf("gemm_shape: %zux %s\n", count, line);
    }
}

/* ------------------------------------------------------------------ bound */

/* The SimpleNetworkBuilder of the first top-level block of path that holds one. */
static int read_net_config(const char *path, struct nn_config *out, struct pt_err *e)
{
    struct cfg *c = cfg_new();
    if (!c)
        return pt_err_set(e, PT_ENOMEM, "error: out of memory");
    struct cfg_node *snb = NULL;
    int rc = cfg_load_file(c, path, NULL, e);
    if (rc == 0)
        rc = cfg_parse_block(cfg_root(c), e);
    for (struct cfg_node *n = rc ? NULL : cfg_first(cfg_root(c)); n && !snb && rc == 0;
         n = cfg_next(n))
        if (cfg_is_block(n))
            rc = cfg_find_local(n, "SimpleNetworkBuilder", &snb, e);
    if (rc == 0 && (!snb || !cfg_is_block(snb)))
        rc = pt_err_set(e, PT_EUSER, "%s: error: no block holds SimpleNetworkBuilder = [ ... ]",
                        path);
    if (rc == 0)
        rc = nn_config_read(snb, out, e);
    cfg_free(c);
    return rc;
}

/* A minibatch as the reader makes it: nseq sequences of `steps` feature columns (pixels in
 * [0, 1)), one one-hot label per sequence (steps > 1, sequence labels) or per column. */
static int make_minibatch(struct minibatch *mb, const struct nn_config *c, size_t nseq,
                          size_t steps, const struct mb_host_alloc *host, struct pt_err *e)
{
    memset(mb, 0, sizeof *mb);
    static const char *const names[2] = {"features", "labels"};
    const int dims[2] = {c->sizes[0], c->sizes[c->nsizes - 1]};
    const size_t rows[2] = {steps, steps > 1 ? 1 : steps};
    uint64_t s = 12345;
    for (int i = 0; i < 2; i++) {
        struct mb_input *in = &mb->in[i];
        snprintf(in->name, sizeof in->name, "%s", names[i]);
        in->dim = dims[i];
        in->host = host;
        if (mb_input_reset(in, nseq, rows[i], e))
            return e->code;
        for (size_t q = 0; q < nseq; q++)
            in->len[q] = (uint32_t)rows[i];
        for (size_t col = 0; col < rows[i] * nseq; col++) {
            float *v = in->data + col * (size_t)dims[i];
            if (i == 0)
                for (int r = 0; r < dims[i]; r++)
                    v[r] = (float)bench_uniform(&s);
            else
                v[(int)(bench_uniform(&s) * dims[i])] = 1.0f;
        }
    }
    mb->ninputs = 2;
    mb->nseq = mb->samples = mb->global_samples = nseq;
    return 0;
}

/* Seconds per nn_train_step on mb: best of ROUNDS rounds of steps (each ends in a sync). */
static int step_time(struct nn *net, struct minibatch *mb, int steps, double *sec, struct pt_err *e)
{
    struct nn_stats st;
    int rc = 0;
    *sec = 1e30;
    for (int round = 0; round < ROUNDS && rc == 0; round++) {
        double t0 = bench_now();
        for (int s = 0; s < steps && rc == 0; s++)
            rc = nn_train_step(net, mb, 0.0f, &st, e);
        double t = (bench_now() - t0) / steps;
        *sec = t < *sec ? t : *sec;
    }
    return rc;
}

/* Seconds per step as the trainer runs them on a device (train_epoch.c), without its
 * reader: two minibatches in the backend's host memory in turn, each one's inputs sent
 * during the step before (nn_upload_ahead), the criteria read later (nn_train_backward_to
 * into host memory), the host at most two steps ahead of the device (nn_upload_wait).
 * Best of ROUNDS rounds of steps, each ended by ops->sync. */
static int pipe_time(struct nn *net, struct backend *b, struct minibatch mb[2], int steps,
                     double *sec, struct pt_err *e)
{
    struct nn_stats st;
    float *sums = bk_host_malloc(b, NN_CRIT_SUMS * sizeof *sums);
    int rc = sums ? 0 : pt_err_set(e, PT_ENOMEM, "error: out of memory");
    *sec = 1e30;
    for (int round = 0; round < ROUNDS && rc == 0; round++) {
        double t0 = bench_now();
        for (int s = 0; s < steps && rc == 0; s++) {
            rc = nn_upload_wait(net, e);
            if (rc == 0)
                rc = nn_train_forward(net, &mb[s % 2], 0.0f, &st, e);
            if (rc == 0 && (rc = nn_train_backward_to(net, &st, sums, e)) > 0)
                rc = 0;
            if (rc == 0 && (rc = nn_upload_ahead(net, &mb[(s + 1) % 2], e)) > 0)
                rc = 0;
        }
        if (rc == 0)
            rc = nn_upload_settle(net, e);
        if (rc == 0)
            rc = b->ops->sync(b, e);
        double t = (bench_now() - t0) / steps;
        *sec = t < *sec ? t : *sec;
    }
    bk_host_release(b, sums);
    return rc;
}

static void print_bound(const struct replay *rp, size_t mbsize, double gemm_s, double step_s)
{
    printf("gemm_calls_per_step: %zu\n", rp->n);
    printf("gemm_buffers: %zu regions\n", rp->nreg);
    printf("gemm_gflop_per_step: %.4f\n", rp->flop / 1e9);
    printf("gemm_us_per_step: %.2f\n", gemm_s * 1e6);
    printf("gemm_gflops: %.1f\n", rp->flop / gemm_s / 1e9);
    printf("bound_samples_per_s: %.1f\n", (double)mbsize / gemm_s);
    printf("step_us: %.2f\n", step_s * 1e6);
    printf("step_samples_per_s: %.1f\n", (double)mbsize / step_s);
    printf("step_of_bound: %.1f %%\n", 100.0 * gemm_s / step_s);
    printf("note: gemm = the recorded step's products replayed alone (best of %d rounds, each "
           "ended by ops->sync); step = nn_train_step alone (upload, forward, criteria, "
           "backward, criteria download; no reader, no optimizer)\n",
           ROUNDS);
}

/* Record one step of the network, then time the step and the products alone. */
static int bound_measure(struct recorder *rec, struct nn *net, struct minibatch *mb,
                         struct minibatch pipe[2], size_t mbsize, int steps, int verbose,
                         struct pt_err *e)
{
    struct nn_stats st;
    struct replay rp = {0};
    double step_s = 0, gemm_s = 0, pipe_s = 0;
    int rc = nn_train_step(net, mb, 0.0f, &st, e); /* allocates the workspace */
    rec->on = 1;
    if (rc == 0)
        rc = nn_train_step(net, mb, 0.0f, &st, e);
    rec->on = 0;
    if (rc == 0 && (rec->oom || rec->n == 0))
        rc = pt_err_set(e, PT_ENOMEM, "error: %s", rec->oom ? "out of memory" : "no gemm call");
    if (rc == 0)
        rc = step_time(net, mb, steps, &step_s, e);
    if (rc == 0)
        rc = replay_build(&rp, rec->real, rec->calls, rec->n, e);
    if (rc == 0)
        rc = replay_time(&rp, rec->real, steps, &gemm_s, e);
    if (rc == 0)
        rc = pipe_time(net, rec->real, pipe, steps, &pipe_s, e);
    /* the same steps replayed from recordings (CUDA graphs), where the backend records */
    double graph_s = 0;
    size_t replayed = 0, recorded = 0, failed = 0;
    int graphs = rc == 0 && nn_set_step_replay(net, 1);
    if (graphs) {
        rc = pipe_time(net, rec->real, pipe, steps, &graph_s, e);
        nn_replay_counts(net, &replayed, &recorded, &failed);
        nn_set_step_replay(net, 0);
    }
    if (rc == 0) {
        print_calls(&rp, verbose);
        print_bound(&rp, mbsize, gemm_s, step_s);
        printf("pipe_us: %.2f\n", pipe_s * 1e6);
        printf("pipe_samples_per_s: %.1f\n", (double)mbsize / pipe_s);
        printf("pipe_of_bound: %.1f %%\n", 100.0 * gemm_s / pipe_s);
        printf("note: pipe = the steps as the trainer runs them on a device, without its reader "
               "(two minibatches in the backend's host memory in turn, each sent during the "
               "step before, the criteria read later)\n");
    }
    if (rc == 0 && graphs) {
        printf("graph_us: %.2f\n", graph_s * 1e6);
        printf("graph_samples_per_s: %.1f\n", (double)mbsize / graph_s);
        printf("graph_of_bound: %.1f %%\n", 100.0 * gemm_s / graph_s);
        printf("graph_steps: %zu replayed, %zu recorded, %zu recordings failed\n", replayed,
               recorded, failed);
        printf("note: graph = pipe with each step's passes replayed from a recording (the "
               "trainer's PT_CUDA_GRAPHS=1)\n");
    }
    replay_free(&rp, rec->real);
    return rc;
}

static int cmd_bound(int argc, char **argv, int verbose)
{
    if (argc < 3 || argc > 4 || atol(argv[1]) <= 0 || atoi(argv[2]) <= 0) {
        fprintf(stderr, "usage: gpu_bench [-v] bound CONFIG MB STEPS [SEQLEN]\n");
        return 2;
    }
    struct pt_err e;
    pt_err_clear(&e);
    struct nn_config cfg;
    if (read_net_config(argv[0], &cfg, &e))
        return bench_fail(&e);
    size_t mbsize = (size_t)atol(argv[1]);
    size_t seqlen = cfg.rnn == NN_LSTM ? (argc > 3 ? (size_t)atol(argv[3]) : 28) : 1;
    struct bench_backend bb = {0};
    int rc = bench_open_device(&bb);
    if (rc)
        return rc;
    printf("gpu_bench bound: %s (%s), minibatch %zu, %zu step%s per sequence\n", argv[0],
           cfg.origin, mbsize, seqlen, seqlen == 1 ? "" : "s");
    printf("backend: %s\n", bb.what);
    printf("minibatch: %zu\n", mbsize);
    struct recorder rec;
    recorder_init(&rec, bb.b);
    struct nn *net = NULL;
    struct minibatch mb = {0}, pipe[2] = {{0}};
    /* the pipelined steps' data in the backend's host memory, as the trainer's reader's */
    struct mb_host_alloc pinned = {bk_host_malloc_cb, bk_host_release_cb, bb.b};
    const struct mb_host_alloc *host = bb.b->ops->host_alloc ? &pinned : NULL;
    size_t len = seqlen < 1 ? 1 : seqlen;
    rc = make_minibatch(&mb, &cfg, mbsize, len, NULL, &e);
    if (rc == 0)
        rc = make_minibatch(&pipe[0], &cfg, mbsize, len, host, &e);
    if (rc == 0)
        rc = make_minibatch(&pipe[1], &cfg, mbsize, len, host, &e);
    if (rc == 0)
        rc = nn_new(&cfg, &rec.base, 1, &net, &e);
    if (rc == 0)
        rc = bound_measure(&rec, net, &mb, pipe, mbsize, atoi(argv[2]), verbose, &e);
    nn_free(net);
    mb_free(&mb);
    mb_free(&pipe[0]);
    mb_free(&pipe[1]);
    free(rec.calls);
    backend_free(bb.b);
    return rc ? bench_fail(&e) : 0;
}

/* ------------------------------------------------------------------ main */

static int cmd_probe(void)
{
    struct bench_backend bb = {0};
    int rc = bench_open_device(&bb);
    if (rc == 0)
        printf("backend: %s\n", bb.what);
    backend_free(bb.b);
    return rc;
}

int main(int argc, char **argv)
{
    int verbose = 0, n = 0;
    for (int i = 1; i < argc; i++) /* -v anywhere */
        if (strcmp(argv[i], "-v") == 0)
            verbose = 1;
        else
            argv[++n] = argv[i];
    if (n >= 1 && strcmp(argv[1], "probe") == 0 && n == 1)
        return cmd_probe();
    if (n >= 1 && strcmp(argv[1], "bound") == 0)
        return cmd_bound(n - 1, argv + 2, verbose);
    if (n >= 1 && strcmp(argv[1], "quant") == 0)
        return bench_quant(n - 1, argv + 2);
    if (n >= 1 && strcmp(argv[1], "read") == 0)
        return bench_read(n - 1, argv + 2);
    fprintf(stderr, "usage: gpu_bench probe\n"
                    "       gpu_bench [-v] bound CONFIG MB STEPS [SEQLEN]\n"
                    "       gpu_bench quant ROWS COLS BITS REPS\n"
                    "       gpu_bench read CONFIG MB EPOCHS [KEY=VALUE...]\n"
                    "(PT_BENCH_BACKEND=cpu: the CPU backend; PT_BENCH_DEVICE: the CUDA device)\n");
    return 2;
}
