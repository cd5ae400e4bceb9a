/* action=edit: a model file made from a BrainScriptNetworkBuilder without training (CNTK's
 * DoEdit, its BrainScript form), as CNTK's speech LSTM test creates `$modelPath$.initial`
 * and trains it with `BrainScriptNetworkBuilder = (BS.Network.Load (...))`; with editPath,
 * a MEL script (edit_mel.c).
 *
 * The network's parameters are initialized as a training's would be (randomSeed); its
 * feature statistics and label prior are not computed (no data is read), so a training
 * that starts from the file computes them. Rank 0 writes the file, safely (core/fs.h), the
 * other ranks wait for its outcome. makeMode (default true, as CNTK's) skips the action
 * when the file exists. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "comm/comm.h"
#include "core/fs.h"
#include "math/backend.h"
#include "train/train_internal.h"

struct edit_settings {
    char output[4096];
    char mel[4096];
    int make_mode;
    long long seed;
};

#define ES(m) CFG_OUT(struct edit_settings, m)

static const struct cfg_key edit_cmd_keys[] = {
    {.name = "action", .type = CFG_STRING, .def = "edit", .help = "edit: a model file made"},
    {.name = "outputModelPath",
     .type = CFG_PATH,
     .help = "the model file written (required with BrainScriptNetworkBuilder)",
     ES(output)},
    {.name = "BrainScriptNetworkBuilder",
     .type = CFG_TEXT,
     .help = "the network, in BrainScript (a block, or (BS.Network.Load (\"PATH\")): a copy "
             "of that model)"},
    {.name = "ExperimentalNetworkBuilder",
     .type = CFG_TEXT,
     .help = "BrainScriptNetworkBuilder's old name, read the same way"},
    {.name = "makeMode",
     .type = CFG_BOOL,
     .def = "true",
     .help = "skip the action when outputModelPath exists (CNTK's default)",
     ES(make_mode)},
    {.name = "randomSeed",
     .type = CFG_INT,
     .def = "1",
     .flags = CFG_HAS_MIN,
     .help = "partrain extension: the seed of the initial parameters (a training's default)",
     ES(seed)},
    {.name = "editPath",
     .type = CFG_PATH,
     .help = "a MEL script (CNTK's model editing: LoadModel, NDL lines, SetInput, SaveModel, "
             "Dump); its $name$ are keys of this block or an enclosing one",
     ES(mel)},
    {.name = "ndlMacros",
     .type = CFG_STRING,
     .help = "NDL files of macros ('+'-separated) that a MEL script's NDL lines call"},
    {.name = NULL},
};

/* With editPath, the block's other keys are the MEL script's $variables$ (CNTK's
 * currModel, newModel, currLayer ...): no warning for them. */
static int mel_variable(struct cfg_node *block, struct cfg_node *n)
{
    (void)n;
    struct cfg_node *mel = NULL;
    return cfg_find_local(block, "editPath", &mel, NULL) == 0 && mel != NULL;
}

const struct cfg_schema edit_command_schema = {
    .name = "command block (action=edit)",
    .where = "at top level, named in command=",
    .help = "Writes the model file of a BrainScriptNetworkBuilder's network, untrained, or "
            "runs a MEL script (editPath) on models. Unknown keys here are allowed (they may "
            "be variables).",
    .keys = edit_cmd_keys,
    .owns = mel_variable,
};

/* The network of the builder, initialized, into outputModelPath (rank 0). */
static int make_model(struct pt_ctx *ctx, const struct edit_settings *es, struct cfg_node *builder,
                      struct pt_err *e)
{
    struct nn_config *cfg = calloc(1, sizeof *cfg);
    struct backend *be = NULL;
    struct nn *net = NULL;
    int rc =
        cfg ? nn_bs_config_read(builder, cfg, e) : pt_err_set(e, PT_ENOMEM, "error: out of memory");
    if (rc == 0)
        rc = backend_cpu_new(&be, e);
    if (rc == 0)
        rc = nn_new(cfg, be, (uint64_t)es->seed, &net, e);
    struct pt_inputs ins = {0};
    if (rc == 0 && cfg->start_model[0]) /* a copy of a model: its values, not written over */
        rc = pt_inputs_add(&ins, cfg->start_model, "the model that BS.Network.Load reads", e);
    const struct pt_input *same = rc == 0 ? pt_inputs_find(&ins, es->output) : NULL;
    if (same)
        rc = pt_err_set(e, PT_EUSER, "error: outputModelPath '%s' is %s (%s): not written over",
                        es->output, same->what, same->real);
    pt_inputs_free(&ins);
    if (rc == 0 && cfg->start_model[0])
        rc = nn_load_params(net, cfg->start_model, e);
    if (rc == 0)
        rc = pt_make_parent_dirs(es->output, e);
    if (rc == 0)
        rc = nn_save(net, es->output, e);
    int nodes = 0, with_grad = 0;
    if (rc == 0) {
        nn_node_counts(net, &nodes, &with_grad);
        pt_log_plain(ctx->log, "\n");
        pt_log_printf(ctx->log, "Model with %d nodes saved as '%s'.\n", nodes, es->output);
    }
    nn_free(net);
    if (be)
        backend_free(be);
    free(cfg);
    return rc;
}

int edit_run(struct pt_ctx *ctx, struct cfg_node *command, struct pt_err *e)
{
    struct edit_settings es;
    memset(&es, 0, sizeof es);
    struct cfg_node *builder = NULL;
    int rc = cfg_schema_read(command, &edit_command_schema, &es, e);
    if (rc == 0)
        rc = nn_find_builder(command, 0, &builder, e);
    if (rc == 0 && es.mel[0]) { /* CNTK's MEL: its SaveModel names the files */
        if (builder)
            rc = cfg_error(e, cfg_origin_of(command),
                           "action=edit: editPath (a MEL script) or a BrainScriptNetworkBuilder, "
                           "not both");
        if (rc == 0 && comm_rank(ctx->comm) == 0)
            rc = mel_run(ctx, command, es.mel, es.seed, e);
        rc = train_agree(ctx->comm, rc, "to run the MEL script", e);
        cfg_schema_free(&edit_command_schema, &es);
        return rc;
    }
    if (rc == 0 && !builder)
        rc = cfg_error(e, cfg_origin_of(command),
                       "action=edit needs a BrainScriptNetworkBuilder (the network whose model "
                       "file it writes) or editPath (a MEL script)");
    if (rc == 0 && !es.output[0])
        rc = cfg_error(e, cfg_origin_of(command),
                       "action=edit needs outputModelPath (the model file it writes)");
    struct stat st;
    int skip = rc == 0 && es.make_mode && stat(es.output, &st) == 0;
    if (skip)
        pt_log_printf(ctx->log,
                      "'%s' exists, skipping. Specify makeMode=false to force executing the "
                      "action.\n",
                      es.output);
    if (rc == 0 && !skip && comm_rank(ctx->comm) == 0)
        rc = make_model(ctx, &es, builder, e);
    rc = train_agree(ctx->comm, rc, "to write the model", e);
    cfg_schema_free(&edit_command_schema, &es);
    return rc;
}
