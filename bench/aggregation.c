/* bench/aggregation: DataParallelSGD's gradient aggregation against a bare MPI_Allreduce
 * of the same bytes, measured in the same run, on the fashion-mlp layout (784-512-512-10:
 * 669 706 floats; tensors W0 512x784, B0, W1 512x512, B1, W2 10x512, B2).
 *
 *   mpiexec -n 2 bench/aggregation [rounds [segment-bytes]]
 *
 * Three passes over the rows; each row keeps its best median. Rows: bare MPI_Allreduce (the
 * reference), the engine at 32 bits (bucketed slices, no
 * backward pass to overlap with, so every slice starts at once), the engine with one
 * allreduce (overlapBackward=false; allReduceAlgorithm auto, then forced to mpi and to
 * ring, the ring with allReduceSegmentBytes = segment-bytes, default 0: automatic), fp16, and
 * 1..16 bits. A call's time runs from a barrier to the barrier after it: until every rank
 * holds the result (a rank that returns early waits for the others in the next step
 * anyway; the barrier's own round trip is in every row alike). Each: best-of-rounds median
 * time per aggregation, ratio to the reference, and bytes this rank sent per aggregation
 * and their ratio to 32 bits. Prints the OpenBLAS core type (unused here) for the record. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "core/timer.h"
#include "math/backend.h"
#include "nn/nn.h"
#include "parallel/parallel.h"

#define NT 6

static struct nn_tensor tensors[NT] = {
    {"W0", 0, 512, 784},    {"B0", 401408, 512, 1},  {"W1", 401920, 512, 512},
    {"B1", 664064, 512, 1}, {"W2", 664576, 10, 512}, {"B2", 669696, 10, 1},
};
static const size_t N = 669706;

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median seconds of `reps` calls of one aggregation kind (kind < 0: bare MPI). */
static double measure(struct comm *c, struct engine *en, float *g, const float *src, int reps,
                      double *bytes)
{
    double *t = calloc((size_t)reps, sizeof *t), stats[PT_STATS];
    struct pt_err e;
    pt_err_clear(&e);
    for (int r = 0; r < reps; r++) {
        memcpy(g, src, N * sizeof *g);
        stats[0] = stats[1] = 0;
        stats[2] = 1;
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = pt_now();
        if (!en)
            MPI_Allreduce(MPI_IN_PLACE, g, (int)N, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        else if (engine_after_backward(en, g, stats, &e))
            fprintf(stderr, "aggregation failed: %s\n", e.msg), exit(1);
        MPI_Barrier(MPI_COMM_WORLD);
        t[r] = pt_now() - t0;
    }
    /* every rank reports the slowest rank's median */
    qsort(t, (size_t)reps, sizeof *t, cmp);
    double med = t[reps / 2], worst = 0;
    MPI_Allreduce(&med, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    *bytes = en ? en->perf.last_bytes : 2.0 * (comm_size(c) - 1) / comm_size(c) * 4.0 * (double)N;
    free(t);
    (void)c;
    return worst;
}

/* The engine as the trainer builds it: from ParallelTrain text (the config and pc live as
 * long as the program: the engine reads its settings from them). */
static struct engine *make(struct comm *c, int bits, int overlap, int fp16, const char *alg,
                           int flat, long seg)
{
    char text[512];
    snprintf(text, sizeof text,
             "SGD=[ParallelTrain=[parallelizationMethod=DataParallelSGD; useFp16AllReduce=%d; "
             "overlapBackward=%d; allReduceAlgorithm=%s; allReduceSegmentBytes=%ld; %s"
             "DataParallelSGD=[gradientBits=%d]]]",
             fp16, overlap, alg, seg, flat ? "hierarchicalAllReduce=false; " : "", bits);
    struct cfg *cfg = cfg_new();
    struct parallel_config *pc = calloc(1, sizeof *pc);
    struct cfg_node *sgd = NULL;
    static struct backend *bk; /* the CPU backend: the buffers are host memory */
    struct engine *en = NULL;
    struct pt_err e;
    pt_err_clear(&e);
    if (!bk && backend_cpu_new(&bk, &e)) {
        fprintf(stderr, "backend: %s\n", e.msg);
        exit(1);
    }
    struct engine_layout L = {.n = N, .tensors = tensors, .ntensors = NT, .bk = bk};
    if (!cfg || !pc || cfg_load_string(cfg, "bench", text, strlen(text), &e) ||
        cfg_find_block(cfg_root(cfg), "SGD", &sgd, &e) || parallel_config_read(sgd, pc, &e) ||
        engine_new(pc, c, NULL, &L, &en, &e) || engine_start_epoch(en, 0, &e)) {
        fprintf(stderr, "engine: %s\n", e.msg);
        exit(1);
    }
    return en;
}

int main(int argc, char **argv)
{
    struct pt_err e;
    pt_err_clear(&e);
    struct comm *c = comm_init(&argc, &argv, &e);
    if (!c)
        return fprintf(stderr, "%s\n", e.msg), 3;
    int rounds = argc > 1 ? atoi(argv[1]) : 200, rank = comm_rank(c);
    long seg = argc > 2 ? atol(argv[2]) : 0;
    float *g = malloc(N * sizeof *g), *src = malloc(N * sizeof *src);
    unsigned s = 12345u + (unsigned)rank;
    for (size_t i = 0; i < N; i++) {
        s = s * 1103515245u + 12345u;
        src[i] = ((float)(s >> 8) / 16777216.0f - 0.5f) * 1e-2f;
    }
    if (rank == 0) {
        const char *core = getenv("OPENBLAS_CORETYPE");
        printf(
            "aggregation of %zu floats (fashion-mlp), %d ranks, %d rounds; OPENBLAS_CORETYPE=%s\n",
            N, comm_size(c), rounds, core ? core : "(unset)");
        printf("%-34s %12s %8s %12s %8s\n", "what", "ms/aggr", "ratio", "bytes sent", "ratio");
    }
    struct {
        const char *name;
        int bits, overlap, fp16, bare;
        const char *alg;
        int flat; /* hierarchicalAllReduce=false (the default: split by node when ranks share one)
                   */
    } rows[] = {
        {"bare MPI_Allreduce (reference)", 32, 0, 0, 1, "auto", 0},
        {"engine 32 bits, 1 MiB slices", 32, 1, 0, 0, "auto", 0},
        {"engine 32 bits, one allreduce", 32, 0, 0, 0, "auto", 0},
        {"engine 32 bits, MPI_Allreduce", 32, 0, 0, 0, "mpi", 0},
        {"engine 32 bits, ring", 32, 0, 0, 0, "ring", 0},
        {"engine 32 bits, flat ring", 32, 0, 0, 0, "ring", 1},
        {"engine 32 bits, flat MPI", 32, 0, 0, 0, "mpi", 1},
        {"engine 32 bits, fp16 transport", 32, 0, 1, 0, "auto", 0},
        {"engine 16 bits", 16, 0, 0, 0, "auto", 0},
        {"engine 8 bits", 8, 0, 0, 0, "auto", 0},
        {"engine 4 bits", 4, 0, 0, 0, "auto", 0},
        {"engine 2 bits", 2, 0, 0, 0, "auto", 0},
        {"engine 1 bit", 1, 0, 0, 0, "auto", 0},
    };
    /* three passes over all rows, best median per row: the rows share the same noise */
    enum { NROWS = sizeof rows / sizeof rows[0], PASSES = 3 };
    double best[NROWS], bytes[NROWS];
    for (int pass = 0; pass < PASSES; pass++)
        for (size_t k = 0; k < NROWS; k++) {
            struct engine *en = rows[k].bare ? NULL
                                             : make(c, rows[k].bits, rows[k].overlap, rows[k].fp16,
                                                    rows[k].alg, rows[k].flat, seg);
            measure(c, en, g, src, 10, &bytes[k]); /* warm-up */
            double t = measure(c, en, g, src, rounds, &bytes[k]);
            best[k] = pass == 0 || t < best[k] ? t : best[k];
            engine_free(en);
        }
    for (size_t k = 0; rank == 0 && k < NROWS; k++)
        printf("%-34s %12.3f %8.3f %12.0f %8.4f\n", rows[k].name, best[k] * 1e3, best[k] / best[0],
               bytes[k], bytes[k] / bytes[0]);
    free(g);
    free(src);
    comm_finalize(c);
    return 0;
}
