/* Keys of the top level and of command blocks (SPEC §3). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "learn/learn.h"
#include "nn/nn.h"
#include "parallel/parallel.h"
#include "reader/reader.h"
#include "train/train.h"
#include "train/train_internal.h"

/* deviceId: auto, cpu, -1 or a GPU number */
static int valid_device(const struct cfg_val *v, char *why, size_t size)
{
    const char *s = v->s;
    if (strcasecmp(s, "auto") == 0 || strcasecmp(s, "cpu") == 0)
        return 0;
    char *end = NULL;
    long n = strtol(s, &end, 10);
    if (*s && *end == '\0' && n >= -1 && n < 1024)
        return 0;
    snprintf(why, size, "\"%.60s\" is not a device: use auto, cpu, -1 (CPU) or a GPU number", s);
    return 1;
}

/* The SGD block as the trainer checks it: learn's keys, the ParallelTrain block (one
 * layer up from learn, so composed here), then the CNTK keys learn refuses. */
static const struct cfg_key sgd_parallel_keys[] = {
    {.name = "ParallelTrain",
     .type = CFG_BLOCK,
     .flags = CFG_INNER_BLOCK, /* not the top-level parallelTrain switch */
     .sub = &parallel_train_schema,
     .help = "parallel training method and its settings"},
    {.name = NULL},
};

static const struct cfg_key *const sgd_more[] = {sgd_parallel_keys, learn_sgd_refused_keys, NULL};

const struct cfg_schema train_sgd_schema = {
    .name = "SGD",
    .where = "inside a command block with action=train",
    .help = "Learning-rate and momentum schedules, regularization and the parallel method.",
    .keys = learn_sgd_keys,
    .more = sgd_more,
};

#define TS(m) CFG_OUT(struct train_settings, m)

static const struct cfg_key top_keys[] = {
    {.name = "command",
     .type = CFG_STRING,
     .def = "train",
     .help = "names of the command blocks to run, in order: a:b:c"},
    {.name = "precision",
     .type = CFG_ENUM,
     .def = "float",
     .choices = "float",
     .unsupported = "double|float16|half",
     .help = "element type; only float"},
    {.name = "deviceId",
     .type = CFG_STRING,
     .def = "auto",
     .valid = valid_device,
     .help = "cpu or -1 = CPU; auto = a GPU when built with CUDA and one is present; N = GPU N"},
    {.name = "traceLevel",
     .type = CFG_INT,
     .def = "0",
     .flags = CFG_HAS_MIN,
     .help = "above 0: per-minibatch lines, epoch start lines, config dump",
     TS(trace)},
    {.name = "stderr",
     .type = CFG_PATH,
     .help = "log to this file: rank 0 writes it, rank k writes it with .rank<k> appended; "
             "- is standard output (as CNTK's files take it)"},
    {.name = "timestamping",
     .type = CFG_BOOL,
     .def = "false",
     .help = "prefix log lines with MM/DD/YYYY HH:MM:SS"},
    {.name = "numCPUThreads",
     .type = CFG_INT,
     .def = "0",
     .flags = CFG_HAS_MIN,
     .help = "BLAS threads per rank; 0 = choose (1 when ranks >= cores)"},
    {.name = "cpuGemm",
     .type = CFG_ENUM,
     .def = "auto",
     .choices = "auto|openblas|avx512",
     .help = "partrain extension: CPU matrix products; auto = partrain's AVX-512 kernel on a "
             "CPU with AVX-512F and BLAS on 1 thread, else OpenBLAS; openblas; avx512"},
    {.name = "parallelTrain",
     .type = CFG_ENUM,
     .def = "auto",
     .choices = "auto|true|false|t|f|1|0",
     .help = "CNTK's switch: auto = true when the MPI world has more than one rank; false "
             "ignores SGD's ParallelTrain block (every rank trains on all the data, rank 0 "
             "writes the models); true or false also picks CNTK's log file names"},
    {.name = "randomSeed",
     .type = CFG_INT,
     .def = "1",
     .flags = CFG_HAS_MIN,
     .help = "partrain extension: base seed for initialization, shuffling and dropout",
     TS(seed)},
    {.name = "makeMode",
     .type = CFG_BOOL,
     .def = "true",
     .help = "restart from the newest finished epoch's model and checkpoint",
     TS(make_mode)},
    {.name = "strictConfig",
     .type = CFG_BOOL,
     .def = "false",
     .help = "partrain extension: unknown keys in trainer blocks are errors, not warnings"},
    {.name = NULL},
};

const struct cfg_schema train_top_schema = {
    .name = "top level",
    .where = "outside any block; these keys may also be set in a command block",
    .help = "Global settings. Any other top-level key is a variable for $name$.",
    .keys = top_keys,
    .open = 1,
};

/* parallelTrain: -1 auto, else 1 or 0 as given */
static int parallel_given(struct cfg *cfg)
{
    struct cfg_val v = {0};
    struct pt_err ignored; /* the whole config was checked before */
    pt_err_clear(&ignored);
    if (cfg_schema_get(cfg_root(cfg), &train_top_schema, "parallelTrain", &v, &ignored) ||
        v.choice == 0)
        return -1;
    return v.choice % 2; /* auto|true|false|t|f|1|0: odd choices are true */
}

int train_parallel_switch(struct cfg *cfg, int workers)
{
    int given = parallel_given(cfg);
    return given < 0 ? workers > 1 : given;
}

int train_parallel_off(struct cfg *cfg)
{
    return parallel_given(cfg) == 0;
}

static const struct cfg_key train_cmd_keys[] = {
    {.name = "action",
     .type = CFG_STRING,
     .def = "train",
     .help = "what this command does: train, test (alias eval)"},
    {.name = "modelPath",
     .type = CFG_PATH,
     .flags = CFG_REQUIRED,
     .help = "model file; epoch E is saved as modelPath.E, the last also as modelPath",
     TS(model)},
    {.name = "SGD",
     .type = CFG_BLOCK,
     .flags = CFG_REQUIRED,
     .sub = &train_sgd_schema,
     .help = "training needs an SGD = [ ... ] block"},
    {.name = "reader",
     .type = CFG_BLOCK,
     .flags = CFG_REQUIRED,
     .sub = &reader_schema,
     .help = "training needs a reader = [ ... ] block"},
    /* CNTK's precedence (NetworkFactory.cpp), each key looked up climbing:
     * createNetwork, SimpleNetworkBuilder, NDLNetworkBuilder, then BrainScript's; a
     * SimpleNetworkBuilder present makes the others inactive (train_check_builder) */
    {.name = "SimpleNetworkBuilder",
     .type = CFG_BLOCK,
     .sub = &nn_simple_builder_schema,
     .help = "the network as CNTK's SimpleNetworkBuilder describes it (or write it in a "
             "BrainScriptNetworkBuilder or NDLNetworkBuilder block)"},
    {.name = "BrainScriptNetworkBuilder",
     .type = CFG_TEXT,
     .help = "the network in BrainScript (see the README's BrainScript section for what is "
             "built); inactive next to a SimpleNetworkBuilder (CNTK uses that one)"},
    {.name = "NDLNetworkBuilder",
     .type = CFG_TEXT,
     .help = "the network in CNTK's NDL: networkDescription=FILE (its load= and run= "
             "sections), ndlMacros=FILE[+FILE...], or run=SECTION naming config sections; read "
             "as BrainScript (README, \"NDL\"); inactive next to a SimpleNetworkBuilder, and "
             "ahead of a BrainScriptNetworkBuilder, as in CNTK"},
    {.name = "ExperimentalNetworkBuilder",
     .type = CFG_TEXT,
     .help = "BrainScriptNetworkBuilder's old name, read the same way"},
    {.name = "createNetwork",
     .type = CFG_TEXT,
     .help = "BrainScript's network lambda, which CNTK's configFile= mode does not implement "
             "either: refused (CNTK looks for it before SimpleNetworkBuilder)"},
    {.name = "cvReader",
     .type = CFG_BLOCK,
     .sub = &reader_schema,
     .help = "validation data: after every epoch the model is evaluated on it (distributed "
             "over the ranks) and a [Validate] line is printed"},
    {.name = NULL},
};

const struct cfg_schema train_command_schema = {
    .name = "command block (action=train)",
    .where = "at top level, named in command=",
    .help = "Trains a network. Unknown keys here are allowed (they may be variables).",
    .keys = train_cmd_keys,
    .open = 1,
};

/* The evaluation keys of action=test and action=cv (CNTK's DoEvalBase and
 * DoCrossValidate read them alike). */
#define EVAL_KEYS                                                                                  \
    {.name = "reader",                                                                             \
     .type = CFG_BLOCK,                                                                            \
     .flags = CFG_REQUIRED,                                                                        \
     .sub = &reader_schema,                                                                        \
     .help = "evaluation needs a reader = [ ... ] block"},                                         \
        {.name = "minibatchSize",                                                                  \
         .type = CFG_INT,                                                                          \
         .def = "40960",                                                                           \
         .flags = CFG_HAS_MIN | CFG_FIRST,                                                         \
         .min = 1,                                                                                 \
         .help = "samples per evaluation minibatch (an array a:b: its first value, as CNTK "       \
                 "reads it)",                                                                      \
         TS(mb_size)},                                                                             \
        {.name = "epochSize",                                                                      \
         .type = CFG_INT,                                                                          \
         .def = "0",                                                                               \
         .flags = CFG_HAS_MIN,                                                                     \
         .help = "samples to evaluate (a model on); 0 = all",                                      \
         TS(epoch_size)},                                                                          \
    {                                                                                              \
        .name = "evalNodeNames", .type = CFG_STRING_LIST,                                          \
        .help = "the criteria to report (and to choose the best model by), in this order "         \
                "(default: the training criterion and every evaluation node); each must be one "   \
                "of them",                                                                         \
        TS(eval_nodes)                                                                             \
    }

#define NO_BUILDER                                                                                 \
    "a network builder in an action=test block makes the network that CNTK evaluates; "            \
    "partrain builds a BrainScript one (BS.Network.Load and additions to the loaded model), "      \
    "not NDL: without one the network is modelPath's"
static const struct cfg_key test_cmd_keys[] = {
    {.name = "action",
     .type = CFG_STRING,
     .def = "test",
     .help = "test (or eval): evaluate a model on a reader and print Final Results"},
    {.name = "modelPath",
     .type = CFG_PATH,
     .flags = CFG_REQUIRED,
     .help = "the model file to evaluate",
     TS(model)},
    EVAL_KEYS,
    TRAIN_EVAL_BUILDER_KEYS,
    {.name = "NDLNetworkBuilder", .type = CFG_UNSUPPORTED, .help = NO_BUILDER},
    {.name = NULL},
};

/* cross_validate.c: crossValidationInterval is start:step:end, step at least 1 */
#define CV_MAX_MODELS 100000
static int valid_interval(const struct cfg_val *v, char *why, size_t size)
{
    if (v->n == 3 && v->ilist[1] >= 1 && v->ilist[0] <= v->ilist[2] &&
        (v->ilist[2] - v->ilist[0]) / v->ilist[1] < CV_MAX_MODELS)
        return 0;
    snprintf(why, size,
             "expected start:step:end (three integers, step >= 1, start <= end, at most %d "
             "models), as CNTK's 0:2:25 (models 0, 2, ... 24)",
             CV_MAX_MODELS);
    return 1;
}

static const struct cfg_key cv_cmd_keys[] = {
    {.name = "action",
     .type = CFG_STRING,
     .def = "cv",
     .help = "cv: evaluate the models of a training's epochs on a reader and name the best"},
    {.name = "modelPath",
     .type = CFG_PATH,
     .flags = CFG_REQUIRED,
     .help = "the training's modelPath: the models evaluated are modelPath.N (and modelPath "
             "itself, once, for the first N whose file is missing)",
     TS(model)},
    {.name = "crossValidationInterval",
     .type = CFG_INT_LIST,
     .flags = CFG_REQUIRED | CFG_HAS_MIN,
     .min = 0,
     .valid = valid_interval,
     .help = "start:step:end: the epochs N whose models are evaluated",
     TS(cv_interval)},
    EVAL_KEYS,
    {.name = "sleepTimeBetweenRuns",
     .type = CFG_INT,
     .def = "0",
     .flags = CFG_HAS_MIN,
     .help = "seconds to wait after each model",
     TS(cv_sleep)},
    {.name = NULL},
};

const struct cfg_schema cv_command_schema = {
    .name = "command block (action=cv)",
    .where = "at top level, named in command=",
    .help = "Evaluates the models of a training's epochs and names the best. Unknown keys here "
            "are allowed (they may be variables); a network builder is ignored, as CNTK "
            "ignores it (the models are modelPath's).",
    .keys = cv_cmd_keys,
    .open = 1,
};

const struct cfg_schema test_command_schema = {
    .name = "command block (action=test)",
    .where = "at top level, named in command=",
    .help = "Evaluates a model. Unknown keys here are allowed (they may be variables).",
    .keys = test_cmd_keys,
    .open = 1,
};

static void add_schema(const struct cfg_schema **all, size_t *n, size_t max,
                       const struct cfg_schema *s, int walk)
{
    for (size_t i = 0; i < *n; i++)
        if (all[i] == s)
            return;
    if (*n < max)
        all[(*n)++] = s;
    struct cfg_key_iter it;
    for (const struct cfg_key *k = cfg_key_first(s, &it); walk && k; k = cfg_key_next(&it))
        if ((k->type == CFG_BLOCK || k->type == CFG_BLOCK_MAP) && k->sub)
            add_schema(all, n, max, k->sub, 1);
}

const struct cfg_schema *const *train_all_schemas(void)
{
    static const struct cfg_schema *all[64];
    static const struct cfg_schema *const roots[] = {
        &train_top_schema,    &train_command_schema, &test_command_schema, &write_command_schema,
        &dump_command_schema, &edit_command_schema,  &cv_command_schema,   &plot_command_schema,
        &wc_command_schema,   &svd_command_schema};
    size_t n = 0, nroots = sizeof roots / sizeof roots[0];
    if (all[0])
        return all;
    for (size_t i = 0; i < nroots; i++)
        add_schema(all, &n, 63, roots[i], 0);
    for (size_t i = 0; i < nroots; i++)
        for (const struct cfg_key *k = roots[i]->keys; k->name; k++)
            if ((k->type == CFG_BLOCK || k->type == CFG_BLOCK_MAP) && k->sub)
                add_schema(all, &n, 63, k->sub, 1);
    return all;
}
