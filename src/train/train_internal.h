/* Private to src/train: checkpoints, feature statistics, the actions' entry points. */
#ifndef PT_TRAIN_TRAIN_INTERNAL_H
#define PT_TRAIN_TRAIN_INTERNAL_H

#include <stdint.h>

#include "learn/learn.h"
#include "parallel/parallel.h"
#include "train/logfmt.h"
#include "nn/nn.h"
#include "reader/reader.h"
#include "train/train.h"

/* What a checkpoint restores besides the model (SPEC 8). */
/* AutoAdjust's state after an epoch (CNTK's learnRatePerSample and prevCriterion, plus
 * what CNTK recomputes on a restart: the running average and the continueReduce flag). */
struct ckp_adjust {
    double lr;          /* the rate of the next epoch beyond the schedule */
    double prev;        /* criterion at the last adjustment (+inf: none yet) */
    double avg;         /* average criterion of the interval so far (+inf: none yet) */
    double not_counted; /* epochs of this interval before a restart (CNTK's count) */
    double reduced;     /* continueReduce: a reduction happened */
};

struct ckp_state {
    uint64_t epochs_done;  /* finished epochs */
    uint64_t samples_seen; /* totalSamplesSeen so far */
    uint64_t dropout_state;
    struct ckp_adjust adjust;
    int has_adjust; /* the checkpoint held adjust (older checkpoints do not) */
};

/* "<model>.ckp" for the model file of epoch `epoch` (1-based): modelPath.E.ckp. */
void ckp_path(char *buf, size_t size, const char *model_path, uint64_t epoch);
/* Write atomically (rank 0 only): state, the learner's buffers and the engine's state. */
struct engine;
int ckp_save(const char *path, const struct ckp_state *st, const struct learner *l,
             struct engine *en, struct pt_err *e);
/* Restore into st, l (already sized for the network) and the engine; refuses a checkpoint
 * of another shape or learner. *engine_state: 1 the engine's state was restored, -1 the
 * engine keeps state but the checkpoint has none (another method wrote it), 0 the engine
 * keeps none. */
int ckp_load(const char *path, struct ckp_state *st, struct learner *l, struct engine *en,
             int *engine_state, struct pt_err *e);
/* makeMode's restart after epoch `done`: its checkpoint modelPath.done.ckp into st, l and
 * en (*engine_state as ckp_load). Missing: a warning on log (may be NULL), the learner
 * reset and st->epochs_done = done (SPEC 8). Present but unusable (damaged, truncated,
 * another network or learner): an error naming the file, what is wrong and how to go on
 * (PT_EUSER: the run fails). */
int ckp_resume(const char *model, uint64_t done, struct ckp_state *st, struct learner *l,
               struct engine *en, struct pt_log *log, int *engine_state, struct pt_err *e);
/* makeMode resumes the network of the model file `model` (have): refuse it when the config
 * (want) describes another one (layerSizes, rnnType, layerTypes), naming both. */
int ckp_check_network(const char *model, const struct nn_config *have, const struct nn_config *want,
                      struct pt_err *e);
/* A classification criterion (CrossEntropyWithSoftmax, ClassificationError) takes one-hot
 * labels: tell the readers of rc and cv (may be NULL) that their "labels" stream must be. */
void train_mark_labels(const struct nn_config *nc, struct reader_config *rc,
                       struct reader_config *cv);

/* applyMeanVarNorm / needPrior: one pass over the whole training data (not distributed). */
int train_feature_stats(struct reader *r, struct nn *net, int mean_var, int prior,
                        struct pt_err *e);

/* Collective: every rank passes its status rc; returns the lowest failing rank's status, 0
 * when all succeeded. On failure every rank's e holds the lowest failing rank's own message,
 * tagged with its rank ("rank K: <message>", and how many other ranks failed); `what` says
 * what failed when that rank had no message. One rank: rc, e untouched. */
struct comm;
int train_agree(struct comm *comm, int rc, const char *what, struct pt_err *e);
/* dump_node.c: every node of net into path as action=dumpNode writes them (printMetadata),
 * with each parameter's values where `values` (MEL's Dump) */
int dump_node_write(const char *path, struct nn *net, int values, struct pt_err *e);
/* edit_mel.c: CNTK's MEL script at path run (rank 0), its $name$ from block outward; new
 * parameters initialized from seed */
int mel_run(struct pt_ctx *ctx, struct cfg_node *block, const char *path, long long seed,
            struct pt_err *e);
/* The evaluation criterion's name in progress and result lines ("EvalClassificationError",
 * or a BrainScript node's own name, "errs"). */
void train_eval_name(const struct nn *net, char *buf, size_t size);
/* How many criteria the log lines show: 1 where the evaluation node is the training
 * criterion's node (a BrainScript network that names one node for both, or no
 * evaluationNodes), as CNTK shows it once; else 2. */
int train_crit_count(const struct nn *net);
/* The criteria of a log line into c (room for 1 + NN_EVAL_MAX), how many: the training
 * criterion, the evaluation criterion where it is another node (eval_first: before the
 * training one, as Final Results puts it), then the further evaluation nodes; their sums
 * from stats (PT_STATS's layout), each over its samples (stats[2]). */
int train_crit_list(const struct nn *net, const char *eval_name, const double *stats,
                    int eval_first, struct logfmt_crit *c);

/* What every rank must have alike (train_ident.c): a name for messages ("layerSizes"),
 * a hash of the exact value, a short text for people, and what else the hash covers (for
 * the message when the texts are equal). */
#define TRAIN_IDENT_TEXT 120
struct train_ident {
    const char *name;
    const char *details;
    uint64_t hash;
    char text[TRAIN_IDENT_TEXT];
};
/* Collective: every rank's items (the same names, in the same order) equal rank 0's;
 * otherwise PT_EUSER on every rank naming the first differing item and the ranks that
 * differ, e.g. "error: rank 1: layerSizes 784:256:10 (parameters 203530) differs from rank
 * 0's 784:512:10 (parameters 407050) (...)". One rank: 0. */
int train_check_same(struct comm *comm, const struct train_ident *items, size_t n,
                     struct pt_err *e);
/* The item of a network: its description (nn_config_write) and parameter count. */
void train_ident_network(struct nn *net, struct train_ident *it);

/* Evaluate net on one pass of r (epoch_size samples, 0 = all), in minibatches of mb_size:
 * each rank its share when comm has several ranks. sums (PT_STATS's layout: training
 * criterion, eval criterion, samples, the further evaluation nodes), global; *nmb = global
 * minibatches. Collective; a failure on any rank fails every rank. */
int train_evaluate(struct comm *comm, struct nn *net, struct reader *r, size_t mb_size,
                   size_t epoch_size, double sums[PT_STATS], size_t *nmb, struct pt_err *e);

/* What test and write evaluate: the model (on the CPU backend) and the command's reader. */
struct train_model_reader {
    struct backend *be;
    struct nn *net;
    struct reader *reader;
};
/* The network builder keys of an action=test or write block (schema rows): CNTK's
 * GetModelFromConfig builds the network from a builder it finds there (a BrainScript one
 * loads the model and changes it: BS.Network.Load, Hardmax ...). */
#define TRAIN_EVAL_BUILDER_KEYS                                                                    \
    {.name = "BrainScriptNetworkBuilder",                                                          \
     .type = CFG_TEXT,                                                                             \
     .help = "the network to evaluate, in BrainScript: BS.Network.Load (\"PATH\") reads a "        \
             "trained model's network, whose nodes it names (m.outputs); without it the network "  \
             "is modelPath's"},                                                                    \
    {                                                                                              \
        .name = "ExperimentalNetworkBuilder", .type = CFG_TEXT,                                    \
        .help = "BrainScriptNetworkBuilder's old name, read the same way"                          \
    }

/* Read command's reader block, load model (or build the network of command's own
 * BrainScriptNetworkBuilder, which may BS.Network.Load it: names are the action's
 * evalNodeNames, names_eval 1, or outputNodeNames, 0), mark its label stream, open the
 * reader. how: TRAIN_OPEN_IN_ORDER reads in file order, as CNTK's write does;
 * TRAIN_OPEN_FILE_ONLY loads model whatever builder the block sees, as CNTK's cv does;
 * TRAIN_OPEN_UTTERANCES has an HTK reader deliver whole utterances (frameMode = false,
 * not truncated), as CNTK's HTKMLFWriter writes them.
 * Local; on failure mr holds what to free with train_close_model. */
enum { TRAIN_OPEN_IN_ORDER = 1, TRAIN_OPEN_FILE_ONLY = 2, TRAIN_OPEN_UTTERANCES = 4 };
int train_open_model(struct pt_ctx *ctx, struct cfg_node *command, const char *model, int how,
                     const struct cfg_val *names, int names_eval, struct train_model_reader *mr,
                     struct pt_err *e);
void train_close_model(struct train_model_reader *mr);
/* evaluate.c, for test and cv: the criteria Final Results reports (c, *nc; their names may
 * point into eval_name, 48 bytes): every one, evaluation first, or those evalNodeNames
 * names, in its order; a name that is none of them is an error (e non-NULL: the check
 * before evaluating). train_check_same_test: every rank evaluates the same network in the
 * same minibatches. */
int train_report_list(const struct nn *net, const struct cfg_val *names, const double *sums,
                      char *eval_name, struct logfmt_crit *c, int *nc, const char *model,
                      struct pt_err *e);
int train_check_same_test(struct comm *comm, struct nn *net, const struct train_settings *ts,
                          struct pt_err *e);
/* Whether Final Results follows the training criterion with its perplexity, exp (its
 * average): a cross entropy of the next word, CrossEntropyWithSoftmax or
 * ClassBasedCrossEntropyWithSoftmax, as CNTK shows it (evaluate.c). */
int train_has_perplexity(const struct nn *net);
/* cross_validate.c: action=cv */
int cv_run(struct pt_ctx *ctx, struct cfg_node *command, struct pt_err *e);

/* deviceId (device.c): read from a command (or the top level), then the backend it names;
 * log (NULL: none) gets a line when it is a GPU. Local: the callers agree afterwards. */
enum { TRAIN_DEVICE_AUTO = -2, TRAIN_DEVICE_CPU = -1 };
struct train_device {
    int id; /* TRAIN_DEVICE_AUTO, TRAIN_DEVICE_CPU or a GPU number */
    const struct cfg_origin *origin;
};
int train_device_read(struct cfg_node *command, struct train_device *d, struct pt_err *e);
struct backend;
struct pt_log;
/* After building the network on a backend failed with rc: where that was PT_EDEVICE and
 * deviceId is auto, the CPU backend replaces *be (the log says why) and 0 is returned (build
 * the network again); otherwise rc, the error left as it is. */
int train_backend_fallback(const struct train_device *d, struct pt_log *log, struct backend **be,
                           int rc, struct pt_err *e);
int train_backend_open(const struct train_device *d, struct comm *comm, struct pt_log *log,
                       struct backend **out, struct pt_err *e);

int train_run(struct pt_ctx *ctx, struct cfg_node *command, struct pt_err *e);
int test_run(struct pt_ctx *ctx, struct cfg_node *command, struct pt_err *e);
/* action=write (write_output.c): the model's outputs to outputPath.<node>, rank 0 only;
 * write_check_config: at start-up, outputPath or the writer block (its nodes' blocks). */
int write_run(struct pt_ctx *ctx, struct cfg_node *command, struct pt_err *e);
int write_check_config(struct cfg_node *command, struct pt_err *e);
/* action=plot (plot.c): the model's network as a Graphviz dot file, rank 0 only;
 * plot_check_config: at start-up, outputFile needs renderCmd. */
int plot_run(struct pt_ctx *ctx, struct cfg_node *command, struct pt_err *e);
int plot_check_config(struct cfg_node *command, struct pt_err *e);
/* action=writeWordAndClass (word_class.c): a text's vocabulary and word classes, rank 0
 * only; wc_check_config: at start-up, the class files, nbrClass, the outputs' paths. */
int wc_run(struct pt_ctx *ctx, struct cfg_node *command, struct pt_err *e);
int wc_check_config(struct cfg_node *command, struct pt_err *e);
/* action=SVD (svd.c): a model's weight matrices as low-rank products, rank 0 only;
 * svd_check_config: at start-up, the regular expressions and the output's path. */
int svd_run(struct pt_ctx *ctx, struct cfg_node *command, struct pt_err *e);
int svd_check_config(struct cfg_node *command, struct pt_err *e);
/* action=dumpNode (dump_node.c); the file it writes: outputFile, or
 * modelPath.<nodeName>.txt. */
int dump_run(struct pt_ctx *ctx, struct cfg_node *command, struct pt_err *e);
/* action=edit (edit_model.c) */
int edit_run(struct pt_ctx *ctx, struct cfg_node *command, struct pt_err *e);
void dump_node_output(const char *model, const char *node, const char *output, char *buf,
                      size_t size);
/* Whether name is a node action=write can write (HLast, PosteriorProb, ScaledLogLikelihood):
 * outputPath.<name> is one of its files. */
int write_output_node(const char *name);

#endif
