/* tests/test_asgd: the DataParallelASGD engine under real MPI (tests/test_asgd.sh runs it
 * with 1, 2 and 4 ranks). Each rank moves its model by known integer deltas between syncs,
 * a different number of syncs per rank, with random pauses so that pushes interleave in a
 * different order every run. A worker pushes a part of what it learned and keeps the rest
 * (asgd.c), and the epoch end pushes what is left, so the final model must be the initial
 * model plus every delta of every rank: bit for bit where every push is whole (one rank,
 * factor 1: integers add exactly in any order), else within rounding (the kept parts are
 * fractions: 1e-3, while a lost push is off by at least 1/32). No lost updates, no lost
 * progress. Also: the pipeline, SimModelAverage's exact averages, the staleness of a fixed
 * push order, the checkpointed server state, and pushes/pulls progressing while a shard's
 * owner computes without calling MPI. Prints "ok N - what" / "not ok N - what" from rank 0
 * (tcheck.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "comm/comm.h"
#include "core/blob.h"
#include "core/timer.h"
#include "math/backend.h"
#include "parallel/parallel.h"
#include "tcheck.h"

#define NP 1003 /* parameters: not a multiple of the rank count (uneven shards) */

static struct comm *C;
static int rank, size;
static char tmpdir[256];

static void die(const struct pt_err *e)
{
    fprintf(stderr, "test_asgd: rank %d: %s\n", rank, e->msg);
    comm_abort(C, 2);
}

/* The integer delta of rank r's s-th round (1-based) at parameter i, times `scale`. */
static float delta_of(int r, int s, int i, float scale)
{
    return (float)(((r * 31 + s * 17 + i * 7) % 11) - 5) * scale;
}

/* Rounds of rank r: unequal shares. */
static int rounds_of(int r)
{
    return 12 + 5 * r;
}

static void init_model(float *w)
{
    for (int i = 0; i < NP; i++)
        w[i] = (float)((i * 13) % 29 - 14);
}

static struct engine *make(struct asgd_config *ac, float *w, const char *perf)
{
    static struct parallel_config store;
    struct parallel_config *pc = &store;
    memset(pc, 0, sizeof *pc);
    pc->method = engine_method_find("DataParallelASGD");
    pc->method_config = ac;
    pc->slow_rank = -1;
    pc->hierarchical = -1;
    pc->bucket_bytes = 1 << 20;
    if (perf)
        snprintf(pc->perf_file, sizeof pc->perf_file, "%s/%s", tmpdir, perf);
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

static void pause_randomly(unsigned *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    usleep((*seed >> 16) % 400);
}

/* a and b agree within tol everywhere (exactly for tol 0) */
static int near(const float *a, const float *b, float tol)
{
    for (int i = 0; i < NP; i++)
        if (!(fabsf(a[i] - b[i]) <= tol))
            return 0;
    return 1;
}

/* Every rank runs its rounds (each one sync of period samples), then half a round more
 * (pushed by the epoch-end push). want = init + every delta of every rank. */
static void lost_updates_case(const char *name, int pipeline, int adjust, double c, long long M)
{
    float scale = adjust == 0 ? 1.0f : 8.0f; /* f * delta stays exact */
    struct asgd_config pc = {
        .sync_period = 10, .pipeline = pipeline, .adjust = {.type = adjust, .coef = c, .per = M}};
    float *w = calloc(NP, sizeof *w), *want = calloc(NP, sizeof *want);
    init_model(w);
    init_model(want);
    for (int r = 0; r < size; r++) /* every rank's progress, pushed or kept and pushed later */
        for (int s = 1; s <= rounds_of(r) + 1; s++)
            for (int i = 0; i < NP; i++)
                want[i] += delta_of(r, s, i, scale);
    struct engine *en = make(&pc, w, NULL);
    struct pt_err e;
    pt_err_clear(&e);
    unsigned seed = 99u + 7u * (unsigned)rank;
    int synced = 1;
    for (int s = 1; s <= rounds_of(rank) + 1; s++) {
        for (int i = 0; i < NP; i++)
            w[i] += delta_of(rank, s, i, scale);
        pause_randomly(&seed);
        int last = s == rounds_of(rank) + 1;
        int st = engine_after_update(en, last ? 5 : 10, &e);
        if (st < 0)
            die(&e);
        synced &= st == (last ? 0 : 1);
    }
    double tally[PT_STATS] = {1, 2, 3};
    tally[PT_STATS - 1] = 4;
    if (engine_end_epoch(en, tally, &e) < 0)
        die(&e);
    CHECK(synced, "%s: a sync every period, none for half a period", name);
    int whole = size == 1 && adjust == 0; /* factor 1: nothing kept back */
    CHECK(near(w, want, whole ? 0.0f : 1e-3f),
          "%s: final model = initial + every delta of every rank%s", name,
          whole ? ", exactly" : "");
    CHECK(tally[0] == size && tally[1] == 2.0 * size && tally[2] == 3.0 * size &&
              tally[PT_STATS - 1] == 4.0 * size,
          "%s: epoch statistics summed over ranks", name);
    engine_free(en);
    free(w), free(want);
}

/* SimModelAverage: every sync leaves every rank with the exact average of the models. */
static void sim_case(void)
{
    struct asgd_config pc = {.sync_period = 4, .sim_ma = 1, .pipeline = 1};
    float *w = calloc(NP, sizeof *w), *want = calloc(NP, sizeof *want);
    float *all = calloc((size_t)size * NP, sizeof *all);
    init_model(w);
    struct engine *en = make(&pc, w, NULL);
    struct pt_err e;
    pt_err_clear(&e);
    int common = rounds_of(0), exact = 1, synced = 1;
    for (int s = 1; s <= rounds_of(rank); s++) {
        for (int i = 0; i < NP; i++)
            w[i] += delta_of(rank, s, i, (float)size);
        if (s <= common) { /* every rank is here: the expected average */
            if (comm_allgather(C, w, NP, all, COMM_FLOAT, &e))
                die(&e);
            for (int i = 0; i < NP; i++) {
                double sum = 0;
                for (int k = 0; k < size; k++)
                    sum += all[(size_t)k * NP + (size_t)i];
                want[i] = (float)(sum / size);
            }
        }
        int st = engine_after_update(en, 4, &e);
        if (st < 0)
            die(&e);
        synced &= st == 1;
        if (s <= common)
            exact &= memcmp(w, want, NP * sizeof *w) == 0;
    }
    /* ranks with fewer rounds join the others' syncs at the epoch end */
    float *mine = calloc(NP, sizeof *mine);
    init_model(mine);
    for (int r = 0; r < size; r++)
        for (int s = 1; s <= rounds_of(r); s++)
            for (int i = 0; i < NP; i++)
                mine[i] += delta_of(r, s, i, (float)size) / (float)size;
    double tally[PT_STATS] = {1, 1, 1};
    if (engine_end_epoch(en, tally, &e) < 0)
        die(&e);
    CHECK(synced, "SimModelAverage: a sync every period");
    CHECK(exact, "SimModelAverage: each sync gives the exact average of all models");
    CHECK(memcmp(w, mine, NP * sizeof *w) == 0, "SimModelAverage: unequal shares: final model "
                                                "= initial + every rank's deltas / workers");
    CHECK(tally[2] == size, "SimModelAverage: epoch statistics summed over ranks");
    engine_free(en);
    free(w), free(want), free(all), free(mine);
}

/* Ranks push in a fixed order (barriers between): rank r's first push sees r others, every
 * later one size - 1. Read back from the perfStatsFile JSON lines. */
static void staleness_case(void)
{
    struct asgd_config pc = {.sync_period = 1};
    float *w = calloc(NP, sizeof *w);
    struct engine *en = make(&pc, w, "stale.jsonl");
    struct pt_err e;
    pt_err_clear(&e);
    for (int round = 0; round < 4; round++)
        for (int r = 0; r < size; r++) {
            if (r == rank && engine_after_update(en, 1, &e) < 0)
                die(&e);
            if (comm_barrier(C, &e))
                die(&e);
        }
    double tally[PT_STATS] = {0};
    if (engine_end_epoch(en, tally, &e) < 0)
        die(&e);
    engine_free(en);
    char path[400];
    if (rank == 0)
        snprintf(path, sizeof path, "%s/stale.jsonl", tmpdir);
    else
        snprintf(path, sizeof path, "%s/stale.jsonl.rank%d", tmpdir, rank);
    FILE *f = fopen(path, "r");
    char line[1024];
    int k = 0, ok = f != NULL;
    while (f && fgets(line, sizeof line, f) && k < 4) {
        const char *p = strstr(line, "\"staleness\":");
        long long want = k == 0 ? rank : size - 1;
        ok &= p && atoll(p + 12) == want && strstr(line, "\"final\":0");
        k++;
    }
    if (f)
        fclose(f);
    CHECK(ok && k == 4, "staleness: rank r's first push follows r others, later ones size - 1");
    free(w);
}

/* The server state a checkpoint keeps: after the epoch it is the final model; restored
 * (as ckp_load does) it replaces the store, and a pull returns it. */
static void state_case(void)
{
    struct asgd_config pc = {.sync_period = 1, .adjust = {.type = 2, .coef = 0.25, .per = 2}};
    float *w = calloc(NP, sizeof *w);
    init_model(w);
    struct engine *en = make(&pc, w, NULL);
    struct pt_err e;
    pt_err_clear(&e);
    for (int s = 0; s < 3; s++) {
        w[0] += 8.0f;
        if (engine_after_update(en, 1, &e) < 0)
            die(&e);
    }
    double tally[PT_STATS] = {0};
    if (engine_end_epoch(en, tally, &e) < 0)
        die(&e);
    struct engine_state st[4];
    size_t ns = en->ops->state(en, st, 4);
    CHECK(ns == 2 && st[0].n == NP && memcmp(st[0].data, w, NP * sizeof *w) == 0,
          "state: asgd.server holds the final model");
    /* 3 syncs and the epoch-end push of what the warm-up factor (below 1) kept back */
    CHECK(ns == 2 && st[1].n == 1 && st[1].data[0] == 4.0f, "state: asgd.syncs = 4 per worker");
    for (int i = 0; i < NP; i++) /* what a checkpoint would restore */
        st[0].data[i] = (float)(i % 5) - 100.0f;
    st[1].data[0] = 5.0f;
    en->ops->state_loaded(en, 1);
    if (engine_start_epoch(en, 1, &e))
        die(&e);
    w[1] += 8.0f; /* one push, and the epoch end pushes what it kept back */
    if (engine_after_update(en, 1, &e) < 0 || engine_end_epoch(en, tally, &e) < 0)
        die(&e);
    int ok = 1;
    for (int i = 0; i < NP; i++)
        ok &=
            fabsf(w[i] - ((float)(i % 5) - 100.0f + (i == 1 ? 8.0f * (float)size : 0.0f))) <= 1e-4f;
    CHECK(ok, "state: a restored server is what the next pull returns");
    CHECK(en->ops->state(en, st, 4) == 2 && st[1].data[0] == (size == 1 ? 6.0f : 7.0f),
          "state: the sync count continues from the restored 5 (one sync, and with several "
          "ranks the push of what factor 1 / 2^k kept back)");
    engine_free(en);
    free(w);
}

/* The last rank computes for a while without any MPI call; the others push and pull to
 * all shards (the busy rank's too) meanwhile, without waiting for it. */
static void progress_case(void)
{
    struct asgd_config pc = {.sync_period = 1};
    float *w = calloc(NP, sizeof *w);
    struct engine *en = make(&pc, w, NULL);
    struct pt_err e;
    pt_err_clear(&e);
    const double busy = 1.0;
    double took = 0;
    if (comm_barrier(C, &e))
        die(&e);
    if (rank == size - 1 && size > 1) {
        double until = pt_now() + busy;
        while (pt_now() < until)
            continue;
    } else {
        double t0 = pt_now();
        for (int s = 0; s < 50; s++) {
            w[s] += 1.0f;
            if (engine_after_update(en, 1, &e) < 0)
                die(&e);
        }
        took = pt_now() - t0;
    }
    double tally[PT_STATS] = {0};
    if (engine_end_epoch(en, tally, &e) < 0)
        die(&e);
    if (rank == 0 && size > 1)
        printf("# 50 push/pulls took %.4f s while rank %d computed for %.1f s\n", took, size - 1,
               busy);
    CHECK(took < 0.5 * busy, "progress: others' push/pulls never wait for a computing owner");
    int ok = 1;
    for (int i = 0; i < NP; i++)
        ok &= fabsf(w[i] - (i < 50 ? (float)(size > 1 ? size - 1 : 1) : 0.0f)) <= 1e-4f;
    CHECK(ok, "progress: every push landed");
    engine_free(en);
    free(w);
}

int main(int argc, char **argv)
{
    struct pt_err e;
    pt_err_clear(&e);
    C = comm_init(&argc, &argv, &e);
    if (!C) {
        fprintf(stderr, "test_asgd: %s\n", e.msg);
        return 2;
    }
    rank = comm_rank(C);
    size = comm_size(C);
    snprintf(tmpdir, sizeof tmpdir, "%s", argc > 1 ? argv[1] : "/tmp");
    tcheck_init(C, "test_asgd");
    lost_updates_case("plain", 0, 0, 0, 1);
    lost_updates_case("pipeline", 1, 0, 0, 1);
    lost_updates_case("staircase warm-up", 0, 2, 0.25, 2);
    lost_updates_case("linear warm-up, pipeline", 1, 1, 0.5, 4);
    sim_case();
    staleness_case();
    state_case();
    progress_case();
    int status = tcheck_finish();
    comm_finalize(C);
    return status;
}
