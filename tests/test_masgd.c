/* tests/test_masgd: the ModelAveragingSGD and BlockMomentumSGD engines step by step under
 * real MPI (tests/test_masgd.sh runs it with 2 and 4 ranks). Each rank moves its model as
 * local training would (deterministic pseudo-random steps, different on every rank). Before
 * each sync the test gathers every rank's model, sample count and the engine's block state,
 * and computes the expected new model itself from SPEC 7.2 / 7.3; after the sync it checks
 * the engine's result against it, and that all ranks hold bit-identical models.
 * Prints "ok N - what" / "not ok N - what" from rank 0 (tcheck.h); exits non-zero on any
 * failure. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "core/blob.h"
#include "math/backend.h"
#include "parallel/parallel.h"
#include "tcheck.h"

#define NP 1000 /* parameters */

static struct comm *C;
static int rank, size;

static void die(const struct pt_err *e)
{
    fprintf(stderr, "test_masgd: rank %d: %s\n", rank, e->msg);
    comm_abort(C, 2);
}

static uint32_t rnd(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

/* local training: w += a small step, different on every rank and step */
static void local_steps(float *w, uint32_t *seed)
{
    for (int i = 0; i < NP; i++)
        w[i] += ((float)(rnd(seed) % 2001) - 1000.0f) * 1e-4f;
}

static struct engine *make(const struct parallel_config *pc, float *w)
{
    static struct backend *bk; /* the CPU backend, for the whole run */
    struct engine *en = NULL;
    struct pt_err e;
    pt_err_clear(&e);
    if (!bk && backend_cpu_new(&bk, &e))
        die(&e);
    struct engine_layout L = {.n = NP, .params = w, .bk = bk};
    if (engine_new(pc, C, NULL, &L, &en, &e) || engine_start_epoch(en, 0, &e))
        die(&e);
    return en;
}

static int all_identical(const float *w)
{
    long long h = (long long)blob_fnv1a(BLOB_FNV_START, w, NP * sizeof *w);
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

static int close_to(const float *got, const double *want)
{
    for (int i = 0; i < NP; i++)
        if (fabs((double)got[i] - want[i]) > 2e-5 * fabs(want[i]) + 2e-6)
            return 0;
    return 1;
}

/* BMUF: every call is a sync (blockSizePerWorker = 1); bm is what SPEC 7.3 derives. */
static void bmuf_case(const char *name, int nesterov, double tc, double per_sync, double blr,
                      double bm)
{
    struct masgd_config mc = {.block_per_worker = 1,
                              .nesterov = nesterov,
                              .reset_momentum = 1,
                              .block_lr = blr,
                              .bm_time_constant = tc,
                              .bm_per_sync = per_sync};
    struct parallel_config pc = {.method = engine_method_find("BlockMomentumSGD"),
                                 .method_config = &mc,
                                 .hierarchical = -1,
                                 .bucket_bytes = 1 << 20};
    float *w = calloc(NP, sizeof *w), *all = calloc((size_t)size * NP, sizeof *all);
    double *want = calloc(NP, sizeof *want), *dwant = calloc(NP, sizeof *dwant);
    uint32_t seed = 12345;
    for (int i = 0; i < NP; i++) /* the common initial model */
        w[i] = ((float)(rnd(&seed) % 1001) - 500.0f) * 1e-3f;
    seed = 777u + 31u * (uint32_t)rank;
    struct engine *en = make(&pc, w);
    CHECK(en->reset_momentum == 1, "BMUF asks for the momentum reset (step 0)");
    struct pt_err e;
    pt_err_clear(&e);
    for (int step = 1; step <= 6; step++) {
        local_steps(w, &seed);
        struct engine_state st[4];
        size_t ns = en->ops->state(en, st, 4);
        const float *delta = st[0].data, *prev = st[1].data;
        if (ns != 2 || comm_allgather(C, w, NP, all, COMM_FLOAT, &e))
            die(&e);
        for (int i = 0; i < NP; i++) {
            double g = 0;
            for (int k = 0; k < size; k++)
                g += (double)prev[i] - (double)all[(size_t)k * NP + (size_t)i];
            double d = bm * delta[i] + (1.0 - bm) * blr * g;
            dwant[i] = d;
            want[i] = prev[i] - d - (nesterov ? bm * d : 0.0);
        }
        int r = engine_after_update(en, 1, &e);
        if (r < 0)
            die(&e);
        CHECK(r == 1, "%s: a sync happened (step %d)", name, step);
        CHECK(close_to(w, want), "%s: model = reference from the workers' models (step %d)", name,
              step);
        CHECK(close_to(delta, dwant), "%s: block momentum = reference (step %d)", name, step);
        CHECK(memcmp(prev, w, NP * sizeof *w) == 0, "%s: prev = the new model (step %d)", name,
              step);
        CHECK(all_identical(w), "%s: models bit-identical on all ranks (step %d)", name, step);
    }
    engine_free(en);
    free(w), free(all), free(want), free(dwant);
}

/* ModelAveragingSGD: rank k brings k+1 samples per sync; W = sum (n_k / sum n) W_k. */
static void ma_case(void)
{
    struct masgd_config mc = {.block_per_worker = 1};
    struct parallel_config pc = {.method = engine_method_find("ModelAveragingSGD"),
                                 .method_config = &mc,
                                 .hierarchical = -1,
                                 .bucket_bytes = 1 << 20};
    float *w = calloc(NP, sizeof *w), *all = calloc((size_t)size * NP, sizeof *all);
    double *want = calloc(NP, sizeof *want);
    uint32_t seed = 4242u + 17u * (uint32_t)rank;
    struct engine *en = make(&pc, w);
    CHECK(en->reset_momentum == 0 && en->ops->state == NULL,
          "MA keeps momentum, no state (step 0)");
    struct pt_err e;
    pt_err_clear(&e);
    double total = size * (size + 1) / 2.0;
    for (int step = 1; step <= 4; step++) {
        local_steps(w, &seed);
        if (comm_allgather(C, w, NP, all, COMM_FLOAT, &e))
            die(&e);
        for (int i = 0; i < NP; i++) {
            want[i] = 0;
            for (int k = 0; k < size; k++)
                want[i] += (k + 1) / total * all[(size_t)k * NP + (size_t)i];
        }
        if (engine_after_update(en, (size_t)rank + 1, &e) != 1)
            die(&e);
        CHECK(close_to(w, want), "MA: model = sample-weighted average (step %d)", step);
        CHECK(all_identical(w), "MA: models bit-identical on all ranks (step %d)", step);
    }
    engine_free(en);
    free(w), free(all), free(want);
}

/* Unequal shares: rank k runs 7 + 5k minibatches of 3 samples, syncing every 10 samples.
 * Early ranks keep joining syncs; all end with the same sync count, the same model and
 * the global statistics. */
static void unequal_case(int bmuf)
{
    struct masgd_config mc = {.block_per_worker = 10,
                              .nesterov = 1,
                              .reset_momentum = 1,
                              .block_lr = 1,
                              .bm_time_constant = -1,
                              .bm_per_sync = -1};
    struct parallel_config pc = {
        .method = engine_method_find(bmuf ? "BlockMomentumSGD" : "ModelAveragingSGD"),
        .method_config = &mc,
        .hierarchical = -1,
        .bucket_bytes = 1 << 20};
    float *w = calloc(NP, sizeof *w);
    uint32_t seed = 99u + (uint32_t)rank;
    struct engine *en = make(&pc, w);
    struct pt_err e;
    pt_err_clear(&e);
    int steps = 7 + 5 * rank, regular = 0;
    for (int s = 0; s < steps; s++) {
        local_steps(w, &seed);
        int r = engine_after_update(en, 3, &e);
        if (r < 0)
            die(&e);
        regular += r;
    }
    double tally[PT_STATS] = {rank, 2.0 * rank, 3.0 * steps};
    tally[PT_STATS - 1] = 5.0 * rank;
    if (engine_end_epoch(en, tally, &e) != 1)
        die(&e);
    int max_regular = (7 + 5 * (size - 1)) / 4; /* 12 samples per sync: every 4th step */
    double want[PT_STATS] = {0};
    for (int k = 0; k < size; k++)
        want[0] += k, want[1] += 2.0 * k, want[2] += 3.0 * (7 + 5 * k),
            want[PT_STATS - 1] += 5.0 * k;
    const char *m = bmuf ? "BMUF" : "MA";
    CHECK(regular == steps / 4, "%s unequal shares: rank's own regular syncs (step 0)", m);
    CHECK(en->perf.syncs == max_regular + 1, "%s unequal shares: every rank did %d syncs (step 0)",
          m, max_regular + 1);
    CHECK(memcmp(tally, want, sizeof want) == 0,
          "%s unequal shares: global epoch statistics (step 0)", m);
    CHECK(all_identical(w), "%s unequal shares: models bit-identical (step 0)", m);
    engine_free(en);
    free(w);
}

int main(int argc, char **argv)
{
    struct pt_err e;
    pt_err_clear(&e);
    C = comm_init(&argc, &argv, &e);
    if (!C) {
        fprintf(stderr, "test_masgd: %s\n", e.msg);
        return 2;
    }
    rank = comm_rank(C);
    size = comm_size(C);
    tcheck_init(C, "test_masgd");
    double n = size;
    bmuf_case("BMUF Nesterov, default bm", 1, -1, -1, 1.0, 1.0 - 1.0 / n);
    bmuf_case("BMUF plain, time constant", 0, 3.0 * n, -1, 0.7, exp(-n / (3.0 * n)));
    bmuf_case("BMUF Nesterov, time constant", 1, 2.5, -1, 1.0, exp(-n / 2.5));
    bmuf_case("BMUF plain, per sync", 0, -1, 0.3, 1.3, 0.3);
    ma_case();
    unequal_case(0);
    unequal_case(1);
    int status = tcheck_finish();
    comm_finalize(C);
    return status;
}
