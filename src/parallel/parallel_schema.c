/* ParallelTrain: the keys every method shares (SPEC §7), and the registry of parallel
 * methods. Defaults are CNTK's.
 *
 * A method is one row of PARALLEL_METHODS: X(prefix, "Name") stands for the row
 * parallel_<prefix>_method and the schema parallel_<prefix>_schema of its block, both
 * defined in the method's own file. The list gives parallelizationMethod its choices,
 * ParallelTrain its method blocks and engine_method_find its table, in this order. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "comm/comm.h"
#include "parallel/parallel.h"

#define PARALLEL_METHODS(X)                                                                        \
    X(dpsgd, "DataParallelSGD")                                                                    \
    X(ma, "ModelAveragingSGD")                                                                     \
    X(bmuf, "BlockMomentumSGD")                                                                    \
    X(asgd, "DataParallelASGD")

#define DECLARE(p, n)                                                                              \
    extern const struct engine_method parallel_##p##_method;                                       \
    extern const struct cfg_schema parallel_##p##_schema;
PARALLEL_METHODS(DECLARE)
extern const struct engine_method parallel_none_method; /* engine.c */

#define ROW(p, n) &parallel_##p##_method,
static const struct engine_method *const methods[] = {&parallel_none_method,
                                                      PARALLEL_METHODS(ROW) NULL};

#define CHOICE(p, n) "|" n
#define BLOCK_KEY(p, n)                                                                            \
    {.name = n, .type = CFG_BLOCK, .sub = &parallel_##p##_schema, .help = "settings of " n},

const struct engine_method *engine_method_find(const char *name)
{
    for (size_t i = 0; methods[i]; i++)
        if (strcasecmp(methods[i]->name, name) == 0)
            return methods[i];
    return NULL;
}

#define MIN0  (CFG_HAS_MIN)
#define PC(m) CFG_OUT(struct parallel_config, m)

/* parallelizationMethod's choices are the table's rows, in order */
static int set_method(void *out, struct cfg_val *v, struct cfg_node *block, struct pt_err *e)
{
    (void)block, (void)e;
    struct parallel_config *pc = out;
    pc->method = methods[v->choice];
    return 0;
}

static int set_hierarchical(void *out, struct cfg_val *v, struct cfg_node *block, struct pt_err *e)
{
    (void)block, (void)e;
    struct parallel_config *pc = out;
    pc->hierarchical = v->choice == 0 ? -1 : v->choice == 1;
    return 0;
}

static int set_algorithm(void *out, struct cfg_val *v, struct cfg_node *block, struct pt_err *e)
{
    (void)block, (void)e;
    struct parallel_config *pc = out;
    static const int alg[] = {COMM_ALG_AUTO, COMM_ALG_MPI, COMM_ALG_RING};
    pc->algorithm = alg[v->choice];
    return 0;
}

/* allReduceSegmentBytes: 0 (automatic) or a message size worth sending on its own */
static int valid_segment(const struct cfg_val *v, char *why, size_t size)
{
    if (v->i != 0 && v->i < 1024) {
        snprintf(why, size, "%lld bytes is too small; expected 0 (automatic) or at least 1024",
                 v->i);
        return 1;
    }
    return 0;
}

static const struct cfg_key pt_keys[] = {
    {.name = "parallelizationMethod",
     .type = CFG_ENUM,
     .def = "None",
     .choices = "None" PARALLEL_METHODS(CHOICE),
     .help = "the parallel SGD method",
     .set = set_method},
    {.name = "parallelizationStartEpoch",
     .type = CFG_INT,
     .def = "1",
     .flags = MIN0,
     .min = 1,
     .help = "1-based epoch where parallel training starts; before it every worker trains "
             "the full data identically (warm start)",
     PC(start_epoch)},
    {.name = "distributedMBReading",
     .type = CFG_BOOL,
     .def = "true",
     .help = "each worker reads only its share of every global minibatch",
     PC(distributed_reading)},
    {.name = "syncPerfStats",
     .type = CFG_INT,
     .def = "0",
     .flags = MIN0,
     .help = "print synchronization statistics every n-th sync (0 = off)",
     PC(sync_perf_stats)},
    {.name = "perfStatsFile",
     .type = CFG_PATH,
     .help = "partrain extension: also write the statistics as JSON lines to this file "
             "(rank k > 0 writes PATH.rank<k>)",
     PC(perf_file)},
    {.name = "timelineFile",
     .type = CFG_PATH,
     .help = "partrain extension: write a timeline of training (minibatch read, forward, "
             "backward, update, each aggregation's communication and waits) in Chrome's trace "
             "event format (chrome://tracing, ui.perfetto.dev); rank k > 0 writes "
             "PATH.rank<k>. Read also without a ParallelTrain block (from SGD, the command "
             "block or the top level)",
     PC(timeline_file)},
    {.name = "useFp16AllReduce",
     .type = CFG_BOOL,
     .def = "false",
     .help = "DataParallelSGD at 32 bits: send gradients as IEEE half floats (half the "
             "bytes, about 3 significant digits)",
     PC(fp16)},
    {.name = "hierarchicalAllReduce",
     .type = CFG_ENUM,
     .def = "auto",
     .choices = "auto|true|false",
     .help = "partrain extension: reduce within each host, allreduce among hosts, broadcast "
             "within the host; auto = when ranks span several hosts with several ranks each",
     .set = set_hierarchical},
    {.name = "allReduceBucketBytes",
     .type = CFG_INT,
     .def = "1048576",
     .flags = MIN0,
     .min = 4096,
     .help = "partrain extension: gradient bytes per allreduce bucket (started as soon as "
             "their layers' backward pass ends)",
     PC(bucket_bytes)},
    {.name = "allReduceAlgorithm",
     .type = CFG_ENUM,
     .def = "auto",
     .choices = "auto|mpi|ring",
     .help = "partrain extension: how large gradient and model sums travel: ring = "
             "partrain's pipelined ring (reduce-scatter and allgather in segments, many in "
             "flight: keeps a TCP link busy), mpi = MPI_Allreduce; auto = the ring when the "
             "ranks span several hosts (also among the hosts' leaders of a hierarchical "
             "allreduce)",
     .set = set_algorithm},
    {.name = "allReduceSegmentBytes",
     .type = CFG_INT,
     .def = "0",
     .flags = MIN0,
     .min = 0,
     .valid = valid_segment,
     .help = "partrain extension: bytes per message of the ring (allReduceAlgorithm); 0 = "
             "automatic: 64 KiB, or less where Open MPI's TCP eager limit "
             "(btl_tcp_eager_limit) would otherwise send each segment after a rendezvous",
     PC(segment_bytes)},
    {.name = "overlapBackward",
     .type = CFG_BOOL,
     .def = "false",
     .help = "partrain extension: start each bucket's nonblocking allreduce during the "
             "backward pass (false: one blocking allreduce after it, faster when the ranks "
             "use every core: MPI then progresses only inside MPI calls)",
     PC(overlap)},
    {.name = "shareModelInHost",
     .type = CFG_BOOL,
     .def = "true",
     .help = "partrain extension: DataParallelSGD at 32 bits (unbuffered, no overlap, no "
             "fp16), every rank on one host, a SimpleNetworkBuilder network of dense layers "
             "and momentum SGD without clipping or L1/L2: the ranks keep one model in shared "
             "memory and each updates its share of it from every rank's activations (no "
             "gradient is summed or sent); false: the gradient allreduce",
     PC(share_host)},
    {.name = "everyRankSavesModel",
     .type = CFG_BOOL,
     .def = "false",
     .help = "partrain extension: rank k > 0 also writes its model after each epoch as "
             "<modelPath>.E.rank<k>, to show that all ranks hold the same model",
     PC(every_rank_saves)},
    {.name = "testSlowRank",
     .type = CFG_INT,
     .def = "-1",
     .flags = MIN0,
     .min = -1,
     .help = "testing: this rank is a slow worker (-1 = none); see testSlowSeconds",
     PC(slow_rank)},
    {.name = "testSlowSeconds",
     .type = CFG_REAL,
     .def = "0",
     .flags = MIN0,
     .help = "testing: the slow worker busy-waits this long after each minibatch of a "
             "parallel epoch",
     PC(slow_seconds)},
    PARALLEL_METHODS(BLOCK_KEY){.name = NULL},
};

const struct cfg_schema parallel_train_schema = {
    .name = "ParallelTrain",
    .where = "inside SGD",
    .help = "Which parallel SGD method runs when the MPI world has more than one rank.",
    .keys = pt_keys,
};
