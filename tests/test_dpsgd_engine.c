/* tests/test_dpsgd_engine: the DataParallelSGD engine under real MPI (tests/test_dpsgd_engine.sh
 * runs it with 1, 2 and 4 ranks). Each engine is built from config text through the real
 * config path (parser, ParallelTrain schema, engine_new), then fed known per-rank
 * gradients and statistics that every rank can compute for every other rank, so each rank
 * checks the engine's result against a reference computed from all ranks' inputs:
 *   - 32 bits: the exact sum (inputs are quarters: every summation order is exact), also
 *     with overlapBackward in buckets, equal to one piece;
 *   - 1, 2 and 8 bits with error feedback: bit for bit the two-stage exchange of SPEC 7.1
 *     recomputed here with the column quantizers, identical on every rank, and the
 *     residual property: the sum over steps of the aggregates is the sum of every input
 *     minus the residuals left at the end;
 *   - statistics summed; buffered mode hands back the previous step's aggregate (nothing on
 *     the first step, the last one from flush), for 32 and 1 bits;
 *   - fp16 within half precision.
 * With PT_TEST_BACKEND=cuda the engines run on GPU 0 (every rank; 77 without one) and are
 * held to the same references, computed on the CPU. Prints "ok N - what" / "not ok N - what" from
 * rank 0 (tcheck.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "core/blob.h"
#include "nn/nn.h"
#include "parallel/parallel.h"
#include "math/backend.h"
#include "math/quantize.h"
#include "parsers/cfg.h"
#include "tcheck.h"

#define STEPS 5

/* The parameter layout: column-major tensors back to back (a small MLP's shapes). */
static const struct nn_tensor tensors[] = {
    {"W0", 0, 64, 40},   {"B0", 2560, 64, 1},  {"W1", 2624, 30, 64},
    {"B1", 4544, 30, 1}, {"W2", 4574, 10, 30}, {"B2", 4874, 10, 1},
};
#define NT (sizeof tensors / sizeof tensors[0])
#define NP 4884

static struct comm *C;
static int rank, size;

static void die(const struct pt_err *e)
{
    fprintf(stderr, "test_dpsgd_engine: rank %d: %s\n", rank, e->msg);
    comm_abort(C, 2);
}

/* Rank r's gradient at step t, index i: quarters in [-5, 5] (exact sums), or, for the
 * quantizers, values with long binary expansions and a different scale per column. */
static float grad_of(int r, int t, size_t i, int exact)
{
    int k = (int)((r * 7 + t * 5 + (int)i * 3) % 41) - 20;
    if (exact)
        return (float)k * 0.25f;
    return (float)k / 7.0f * (1.0f + (float)(i % 64) / 50.0f) + (float)r / 3.0f;
}

/* Rank r's statistics at step t: criteria and samples, exact in double. */
static void stats_of(int r, int t, double s[PT_STATS])
{
    s[0] = 1.5 * (r + 1) + t;
    s[1] = 2.0 * (r + 1);
    s[2] = 10.0 + r + t;
    for (int j = 3; j < PT_STATS; j++) /* the further evaluation nodes */
        s[j] = 0.25 * j * (r + 1) + t;
}

static void stats_sum(int t, double want[PT_STATS])
{
    memset(want, 0, PT_STATS * sizeof *want);
    for (int r = 0; r < size; r++) {
        double s[PT_STATS];
        stats_of(r, t, s);
        for (int j = 0; j < PT_STATS; j++)
            want[j] += s[j];
    }
}

/* A DataParallelSGD engine from the text of an SGD block's ParallelTrain settings. */
/* The CPU backend (the engine's, and the reference codecs'), for the whole run. */
static struct backend *cpu(void)
{
    static struct backend *bk;
    struct pt_err e;
    pt_err_clear(&e);
    if (!bk && backend_cpu_new(&bk, &e))
        die(&e);
    return bk;
}

/* The engine's backend: the CPU, or with PT_TEST_BACKEND=cuda GPU 0 (make check-gpu). On a
 * GPU the engine works on D, the device mirror of the test's host arrays: the inputs go
 * up before each engine call and its results come back after. */
static struct backend *GPU;
static float *D;

static void use_gpu(void)
{
    const char *want = getenv("PT_TEST_BACKEND");
    if (!want || strcmp(want, "cuda") != 0)
        return;
    struct pt_err e;
    pt_err_clear(&e);
    if (backend_cuda_new(&GPU, 0, NULL, 0, &e)) {
        if (rank == 0)
            printf("skipped: no GPU: %s\n", e.msg);
        comm_finalize(C);
        exit(77);
    }
    if (GPU->ops->alloc(GPU, NP, &D, &e))
        die(&e);
}

static struct backend *engine_bk(void)
{
    return GPU ? GPU : cpu();
}

/* The engine's view of host array g, with g's values in it. */
static float *to_dev(float *g)
{
    struct pt_err e;
    pt_err_clear(&e);
    if (!GPU)
        return g;
    if (GPU->ops->upload(GPU, D, g, NP, &e))
        die(&e);
    return D;
}

/* The engine's results back into g. */
static void from_dev(float *g)
{
    struct pt_err e;
    pt_err_clear(&e);
    if (GPU && GPU->ops->download(GPU, g, D, NP, &e))
        die(&e);
}

static int flush(struct engine *en, float *g, double s[PT_STATS], struct pt_err *e)
{
    int rc = engine_flush(en, to_dev(g), s, e);
    from_dev(g);
    return rc;
}

static struct engine *engine_from_text(const char *parallel_train, float *params)
{
    char text[1024];
    snprintf(text, sizeof text,
             "SGD = [\n  ParallelTrain = [\n    parallelizationMethod = DataParallelSGD\n"
             "    %s\n  ]\n]\n",
             parallel_train);
    struct pt_err e;
    pt_err_clear(&e);
    struct cfg *cfg = cfg_new();
    struct cfg_node *sgd = NULL;
    struct parallel_config pc;
    struct engine *en = NULL;
    struct engine_layout L = {
        .n = NP, .params = to_dev(params), .tensors = tensors, .ntensors = NT, .bk = engine_bk()};
    if (!cfg || cfg_load_string(cfg, "<test>", text, strlen(text), &e) ||
        cfg_find_block(cfg_root(cfg), "SGD", &sgd, &e) || parallel_config_read(sgd, &pc, &e) ||
        engine_new(&pc, C, NULL, &L, &en, &e) || engine_start_epoch(en, 0, &e))
        die(&e);
    parallel_config_free(&pc);
    cfg_free(cfg);
    return en;
}

static int all_identical(const float *g)
{
    long long h = (long long)blob_fnv1a(BLOB_FNV_START, g, NP * sizeof *g);
    long long *all = calloc((size_t)size, sizeof *all);
    struct pt_err e;
    pt_err_clear(&e);
    if (!all || comm_allgather(C, &h, 1, all, COMM_INT64, &e))
        die(&e);
    int same = 1;
    for (int k = 1; k < size; k++)
        same &= all[k] == all[0];
    free(all);
    return same;
}

/* One step: this rank's inputs through after_backward; in overlap mode grad_ready is
 * called per tensor from the last, as the backward pass does. */
static void step(struct engine *en, int t, int exact, int per_tensor, float *g, double s[PT_STATS])
{
    struct pt_err e;
    pt_err_clear(&e);
    for (size_t i = 0; i < NP; i++)
        g[i] = grad_of(rank, t, i, exact);
    stats_of(rank, t, s);
    float *dg = to_dev(g);
    for (size_t k = NT; per_tensor && en->ops->grad_ready && k-- > 0;)
        if (en->ops->grad_ready(en, dg, tensors[k].offset, &e))
            die(&e);
    if (engine_after_backward(en, dg, s, &e))
        die(&e);
    from_dev(g);
}

static int exact_sum_is(const float *g, int t)
{
    for (size_t i = 0; i < NP; i++) {
        float want = 0;
        for (int r = 0; r < size; r++)
            want += grad_of(r, t, i, 1);
        if (g[i] != want)
            return 0;
    }
    return 1;
}

static int stats_are(const double s[PT_STATS], int t)
{
    double want[PT_STATS];
    stats_sum(t, want);
    return memcmp(s, want, sizeof want) == 0;
}

/* 32 bits: the exact sum and summed statistics, one piece or buckets. */
static void exact_case(const char *name, const char *settings, int per_tensor)
{
    float *g = calloc(NP, sizeof *g);
    struct engine *en = engine_from_text(settings, g);
    int sums = 1, stats = 1, same = 1;
    for (int t = 0; t < STEPS; t++) {
        double s[PT_STATS];
        step(en, t, 1, per_tensor, g, s);
        sums &= exact_sum_is(g, t);
        stats &= stats_are(s, t);
        same &= all_identical(g);
    }
    CHECK(sums, "%s: the aggregate is the exact sum of every rank's gradient", name);
    CHECK(stats, "%s: criteria and sample counts summed", name);
    CHECK(same, "%s: every rank holds the same aggregate", name);
    engine_free(en);
    free(g);
}

/* Buffered 32 bits: step t hands back step t-1's sum; flush hands back the last. */
static void buffered_exact_case(void)
{
    float *g = calloc(NP, sizeof *g);
    struct engine *en =
        engine_from_text("DataParallelSGD = [ useBufferedAsyncGradientAggregation = true ]", g);
    int first = 0, prev = 1;
    for (int t = 0; t < STEPS; t++) {
        double s[PT_STATS];
        step(en, t, 1, 0, g, s);
        if (t == 0)
            first = s[0] == 0 && s[1] == 0 && s[2] == 0;
        else
            prev &= exact_sum_is(g, t - 1) && stats_are(s, t - 1);
    }
    CHECK(first, "buffered 32 bits: the first step hands back nothing (stats[2] == 0)");
    CHECK(prev, "buffered 32 bits: step t hands back step t-1's exact sum and statistics");
    struct pt_err e;
    pt_err_clear(&e);
    double s[PT_STATS] = {0};
    memset(g, 0, NP * sizeof *g);
    int rc = flush(en, g, s, &e);
    CHECK(rc == 1 && exact_sum_is(g, STEPS - 1) && stats_are(s, STEPS - 1),
          "buffered 32 bits: flush hands back the last step's sum");
    CHECK(flush(en, g, s, &e) == 0, "buffered 32 bits: a second flush has nothing");
    engine_free(en);
    free(g);
}

/* The quantized exchange recomputed from every rank's input: stage 1 quantizes each
 * rank's column with its residual r1[r]; stage 2 sums the N reconstructions in rank order
 * and re-quantizes the sum with the owner's residual r2 (one per column, whoever owns it). */
struct qref {
    int bits, zt;
    float **r1, *r2, *v, *sum;
    unsigned char *buf;
};

/* One column through the backend's codecs (the engine's own kernels, called directly). */
static void encode_column(const float *col, float *res, size_t rows, int bits, int zt,
                          unsigned char *out)
{
    static const size_t zero = 0;
    struct bk_columns c = {.off = &zero,
                           .rows = &rows,
                           .boff = &zero,
                           .c0 = 0,
                           .c1 = 1,
                           .bits = bits,
                           .zero_threshold = zt};
    cpu()->ops->quantize(cpu(), &c, col, res, out);
}

static void decode_column(const unsigned char *in, size_t rows, int bits, int accumulate,
                          float *out)
{
    static const size_t zero = 0;
    struct bk_columns c = {
        .off = &zero, .rows = &rows, .boff = &zero, .c0 = 0, .c1 = 1, .bits = bits};
    cpu()->ops->unquantize(cpu(), &c, in, accumulate, out);
}

static void qref_step(struct qref *q, int t, float *out)
{
    memset(q->sum, 0, NP * sizeof *q->sum);
    for (size_t k = 0; k < NT; k++)
        for (int j = 0; j < tensors[k].cols; j++) {
            size_t rows = (size_t)tensors[k].rows, off = tensors[k].offset + (size_t)j * rows;
            for (int r = 0; r < size; r++) {
                for (size_t i = 0; i < rows; i++)
                    q->v[i] = grad_of(r, t, off + i, 0);
                encode_column(q->v, q->r1[r] + off, rows, q->bits, q->zt, q->buf);
                decode_column(q->buf, rows, q->bits, 1, q->sum + off);
            }
            encode_column(q->sum + off, q->r2 + off, rows, q->bits, q->zt, q->buf);
            decode_column(q->buf, rows, q->bits, 0, out + off);
        }
}

/* k bits: bit for bit the reference, the same everywhere, and the residual property. */
static void quantized_case(int bits, int zt)
{
    char settings[200], name[64];
    snprintf(settings, sizeof settings,
             "DataParallelSGD = [ gradientBits = %d ; useZeroThresholdFor1BitQuantization = %s ]",
             bits, zt ? "true" : "false");
    snprintf(name, sizeof name, "%d bit%s%s", bits, bits == 1 ? "" : "s",
             bits == 1 ? (zt ? " (zero threshold)" : " (mean threshold)") : "");
    float *g = calloc(NP, sizeof *g), *want = calloc(NP, sizeof *want);
    double *out_sum = calloc(NP, sizeof *out_sum), *in_sum = calloc(NP, sizeof *in_sum);
    struct qref q = {.bits = bits,
                     .zt = zt,
                     .r1 = calloc((size_t)size, sizeof *q.r1),
                     .r2 = calloc(NP, sizeof(float)),
                     .v = calloc(NP, sizeof(float)),
                     .sum = calloc(NP, sizeof(float)),
                     .buf = malloc(quant_column_bytes(NP, bits))};
    for (int r = 0; r < size; r++)
        q.r1[r] = calloc(NP, sizeof(float));
    struct engine *en = engine_from_text(settings, g);
    int exact = 1, same = 1, stats = 1;
    for (int t = 0; t < STEPS; t++) {
        double s[PT_STATS];
        step(en, t, 0, 0, g, s);
        qref_step(&q, t, want);
        exact &= memcmp(g, want, NP * sizeof *g) == 0;
        same &= all_identical(g);
        stats &= stats_are(s, t);
        for (size_t i = 0; i < NP; i++) {
            out_sum[i] += g[i];
            for (int r = 0; r < size; r++)
                in_sum[i] += grad_of(r, t, i, 0);
        }
    }
    CHECK(exact, "%s: the aggregate is the two-stage exchange, bit for bit", name);
    CHECK(same, "%s: every rank holds the same aggregate", name);
    CHECK(stats, "%s: criteria and sample counts summed", name);
    int residual = 1;
    double worst = 0;
    for (size_t i = 0; i < NP; i++) {
        double left = q.r2[i];
        for (int r = 0; r < size; r++)
            left += q.r1[r][i];
        double err = fabs(out_sum[i] - (in_sum[i] - left));
        double tol = 1e-5 * (fabs(in_sum[i]) + fabs(left) + 1.0) * STEPS * size;
        worst = err > worst ? err : worst;
        residual &= err <= tol;
    }
    CHECK(residual, "%s: sum of aggregates = sum of inputs - final residuals (worst %.2g)", name,
          worst);
    engine_free(en);
    for (int r = 0; r < size; r++)
        free(q.r1[r]);
    free(q.r1), free(q.r2), free(q.v), free(q.sum), free(q.buf);
    free(g), free(want), free(out_sum), free(in_sum);
}

/* Buffered 1 bit: the same aggregates as unbuffered, one step later, the last from flush. */
static void buffered_quantized_case(void)
{
    float *g = calloc(NP, sizeof *g), *ref = calloc((size_t)STEPS * NP, sizeof *ref);
    struct engine *en = engine_from_text("DataParallelSGD = [ gradientBits = 1 ]", g);
    for (int t = 0; t < STEPS; t++) {
        double s[PT_STATS];
        step(en, t, 0, 0, g, s);
        memcpy(ref + (size_t)t * NP, g, NP * sizeof *g);
    }
    engine_free(en);
    en = engine_from_text(
        "DataParallelSGD = [ gradientBits = 1 ; useBufferedAsyncGradientAggregation = true ]", g);
    int shifted = 1, first = 0;
    for (int t = 0; t < STEPS; t++) {
        double s[PT_STATS];
        step(en, t, 0, 0, g, s);
        if (t == 0)
            first = s[2] == 0;
        else
            shifted &=
                memcmp(g, ref + (size_t)(t - 1) * NP, NP * sizeof *g) == 0 && stats_are(s, t - 1);
    }
    struct pt_err e;
    pt_err_clear(&e);
    double s[PT_STATS];
    int rc = flush(en, g, s, &e);
    CHECK(first, "buffered 1 bit: the first step hands back nothing (stats[2] == 0)");
    CHECK(shifted, "buffered 1 bit: step t hands back unbuffered step t-1's aggregate");
    CHECK(rc == 1 && memcmp(g, ref + (size_t)(STEPS - 1) * NP, NP * sizeof *g) == 0 &&
              stats_are(s, STEPS - 1),
          "buffered 1 bit: flush hands back the last aggregate");
    engine_free(en);
    free(g), free(ref);
}

/* fp16: the sum within half precision of the exact one. */
static void fp16_case(void)
{
    float *g = calloc(NP, sizeof *g);
    struct engine *en = engine_from_text("useFp16AllReduce = true", g);
    int close = 1, same = 1, stats = 1;
    for (int t = 0; t < STEPS; t++) {
        double s[PT_STATS];
        step(en, t, 0, 0, g, s);
        for (size_t i = 0; i < NP; i++) {
            double want = 0, mag = 0;
            for (int r = 0; r < size; r++) {
                want += grad_of(r, t, i, 0);
                mag += fabs(grad_of(r, t, i, 0));
            }
            /* each input and each partial sum rounds to 11 significant bits */
            close &= fabs(g[i] - want) <= mag * size * 1e-3 + 1e-4;
        }
        same &= all_identical(g);
        stats &= stats_are(s, t);
    }
    CHECK(close, "fp16: the aggregate is the sum within half precision");
    CHECK(same, "fp16: every rank holds the same aggregate");
    CHECK(stats, "fp16: criteria and sample counts summed");
    engine_free(en);
    free(g);
}

int main(int argc, char **argv)
{
    struct pt_err e;
    pt_err_clear(&e);
    C = comm_init(&argc, &argv, &e);
    if (!C) {
        fprintf(stderr, "test_dpsgd_engine: %s\n", e.msg);
        return 2;
    }
    rank = comm_rank(C);
    size = comm_size(C);
    use_gpu();
    tcheck_init(C, "test_dpsgd_engine");
    exact_case("32 bits, one allreduce", "hierarchicalAllReduce = false", 0);
    exact_case("32 bits, overlapBackward in 4 KiB buckets",
               "overlapBackward = true ; allReduceBucketBytes = 4096", 1);
    exact_case("32 bits, overlapBackward in one bucket",
               "overlapBackward = true ; allReduceBucketBytes = 1048576", 1);
    exact_case("32 bits, hierarchical", "hierarchicalAllReduce = true", 0);
    buffered_exact_case();
    quantized_case(1, 1);
    quantized_case(1, 0);
    quantized_case(2, 1);
    quantized_case(8, 1);
    buffered_quantized_case();
    fp16_case();
    int status = tcheck_finish();
    if (GPU) {
        GPU->ops->release(GPU, D);
        backend_free(GPU);
    }
    comm_finalize(C);
    return status;
}
