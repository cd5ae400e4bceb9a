/* The action table and whole-config validation.
 *
 * Every command named in `command=` is checked before the first one runs, so a typo in
 * the test block is reported before hours of training, not after. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "math/backend.h"
#include "train/train.h"
#include "train/train_internal.h"

static const struct train_action actions[] = {
    {"train", &train_command_schema, train_run, "train a network"},
    {"test", &test_command_schema, test_run, "evaluate a model, print Final Results"},
    {"eval", &test_command_schema, test_run, "same as test"},
    {"write", &write_command_schema, write_run, "write a model's outputs to outputPath.<node>"},
    {"dumpNode", &dump_command_schema, dump_run,
     "write a model's nodes and values as text (modelPath.__AllNodes__.txt)"},
    {"dumpNodes", &dump_command_schema, dump_run, "same as dumpNode"},
    {"edit", &edit_command_schema, edit_run,
     "write the model file of a BrainScriptNetworkBuilder's network, untrained (outputModelPath), "
     "or run a MEL script on a model (editPath)"},
    {"cv", &cv_command_schema, cv_run,
     "evaluate modelPath.N for N in crossValidationInterval, name the best per criterion"},
    {"trainRNN", &train_command_schema, train_run,
     "same as train (CNTK's older name, which its recurrent configs use)"},
    {"plot", &plot_command_schema, plot_run,
     "write a model's network as a Graphviz dot file (modelPath.dot), renderCmd draws it"},
    {"writeWordAndClass", &wc_command_schema, wc_run,
     "count a text's words, write its vocabulary and word classes (outputVocabFile, ...)"},
    {"SVD", &svd_command_schema, svd_run,
     "decompose a model's weight matrices into low-rank products (outputModelPath)"},
};

/* CNTK actions partrain does not have: named so the error says "not supported", not
 * "unknown". */
static const char *const cntk_only_actions[] = {
    "adapt",      "convertDBN", "createLabelMap", "bnstat", "exportModel",
    "testunroll", "printNodes", "evalRNN",        NULL,
};

const struct train_action *train_action_find(const char *name)
{
    for (size_t i = 0; i < sizeof actions / sizeof actions[0]; i++)
        if (strcasecmp(actions[i].name, name) == 0)
            return &actions[i];
    return NULL;
}

const char *train_action_names(void)
{
    static char names[256];
    if (!names[0]) /* from the table, so that a new action is listed */
        for (size_t i = 0, o = 0; i < sizeof actions / sizeof actions[0] && o < sizeof names; i++)
            o += (size_t)snprintf(names + o, sizeof names - o, "%s%s", i ? ", " : "",
                                  actions[i].name);
    return names;
}

static int check_action(struct cfg_node *block, const struct train_action **out, struct pt_err *e)
{
    struct cfg_node *n = NULL;
    int rc = cfg_find_local(block, "action", &n, e);
    if (rc)
        return rc;
    const char *name = "train";
    if (n) {
        cfg_mark_used(n);
        rc = cfg_value(n, &name, e);
        if (rc)
            return rc;
    }
    *out = train_action_find(name);
    if (*out)
        return 0;
    char ex[128];
    pt_excerpt(ex, sizeof ex, name, strlen(name), 40);
    for (int i = 0; cntk_only_actions[i]; i++)
        if (strcasecmp(cntk_only_actions[i], name) == 0)
            return cfg_error(e, cfg_value_origin(n),
                             "action=%s is a CNTK action that partrain does not support "
                             "(supported: %s)",
                             ex, train_action_names());
    return cfg_error(e, n ? cfg_value_origin(n) : cfg_origin_of(block),
                     "unknown action \"%s\" (supported: %s)", ex, train_action_names());
}

/* The network builder of a train command, with CNTK's precedence (NetworkFactory.cpp's
 * TryGetNetworkFactory): the first of createNetwork, SimpleNetworkBuilder,
 * NDLNetworkBuilder, BrainScriptNetworkBuilder / ExperimentalNetworkBuilder that the
 * command block sees (each looked up climbing to the top level, as CNTK's Exists does) is
 * the network; the later ones are inactive. partrain builds SimpleNetworkBuilder,
 * NDLNetworkBuilder (read as BrainScript, src/nn/ndl.c) and BrainScriptNetworkBuilder
 * (ExperimentalNetworkBuilder, its old name) networks. */
static int check_builder(struct cfg_node *block, struct pt_err *e)
{
    static const struct {
        const char *key, *why;
    } refused[] = {
        {"createNetwork", "createNetwork is BrainScript's network lambda, which CNTK's "
                          "configFile= mode does not implement either"},
        {"SimpleNetworkBuilder", NULL},
        {"NDLNetworkBuilder", NULL},
        {"BrainScriptNetworkBuilder", NULL},
        {"ExperimentalNetworkBuilder", NULL},
    };
    char path[512];
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        struct cfg_node *n = NULL;
        int rc = cfg_find(block, refused[i].key, &n, e);
        if (rc)
            return rc;
        if (!n)
            continue;
        if (!refused[i].why) /* built: read by train_setup.c */
            return 0;
        cfg_mark_used(n);
        return cfg_error(e, cfg_origin_of(n),
                         "%s: not supported by partrain: %s; describe the network with "
                         "SimpleNetworkBuilder = [ layerSizes=...; ... ] or "
                         "BrainScriptNetworkBuilder = [ ... ] (next to either, this block is "
                         "inactive, as in CNTK)",
                         cfg_path(n, path, sizeof path), refused[i].why);
    }
    return cfg_error(e, cfg_origin_of(block),
                     "%s: missing the network: partrain builds networks described by "
                     "SimpleNetworkBuilder = [ ... ], NDLNetworkBuilder = [ ... ] or "
                     "BrainScriptNetworkBuilder = [ ... ]",
                     cfg_path(block, path, sizeof path));
}

/* Every reader of a command read now (readerType or deserializers, file, input), so that a
 * command's reader errors end the run before the first command starts. */
static int check_readers(struct cfg_node *block, struct pt_err *e)
{
    static const char *const names[] = {"reader", "cvReader"};
    for (int i = 0; i < 2; i++) {
        struct cfg_node *rd = NULL;
        struct reader_config rc;
        int err = cfg_find_block(block, names[i], &rd, e);
        if (err == 0 && rd)
            err = reader_config_read(rd, &rc, e);
        if (err)
            return err;
    }
    return 0;
}

/* The top-level block closest in spelling to name, for "did you mean". */
static const char *closest_block(struct cfg_node *root, const char *name)
{
    const char *best = NULL;
    size_t bd = (size_t)-1;
    for (struct cfg_node *n = cfg_first(root); n; n = cfg_next(n)) {
        if (!cfg_is_block(n))
            continue;
        size_t d = cfg_edit_distance(name, cfg_key(n));
        if (d < bd) {
            bd = d;
            best = cfg_key(n);
        }
    }
    return bd <= 2 ? best : NULL;
}

int train_check_config(struct cfg *cfg, struct train_command *cmds, size_t max, size_t *n,
                       struct pt_err *e)
{
    struct cfg_node *root = cfg_root(cfg);
    struct cfg_val strict = {0}, command = {0};
    *n = 0;
    int rc = cfg_schema_get(root, &train_top_schema, "strictConfig", &strict, e);
    if (rc)
        return rc;
    struct cfg_check ck = {.cfg = cfg, .strict = strict.b, .all = train_all_schemas()};
    rc = cfg_schema_check(&ck, root, &train_top_schema, e);
    if (rc == 0)
        rc = cfg_schema_get(root, &train_top_schema, "command", &command, e);
    struct cfg_list names = {0};
    if (rc == 0)
        rc = cfg_to_list(command.node, command.s, &names, e);
    static const struct cfg_origin def = {.file = "<default>"};
    const struct cfg_origin *corigin = command.node ? cfg_value_origin(command.node) : &def;
    for (size_t i = 0; rc == 0 && i < names.n; i++) {
        struct cfg_node *block = NULL;
        const char *name = names.items[i];
        rc = cfg_find_local(root, name, &block, e);
        if (rc)
            break;
        if (!block) {
            const char *close = closest_block(root, name);
            char hint[300] = "";
            if (close)
                snprintf(hint, sizeof hint, " (did you mean '%s'?)", close);
            if (!command.node) /* nothing set it: say so, naming the config read */
                rc = pt_err_set(e, PT_EUSER,
                                "error: %s sets no command (command = NAME[:NAME...] names "
                                "the top-level blocks to run), and the default, command=train, "
                                "finds no top-level block named 'train'%s",
                                cfg_file_count(cfg) ? cfg_file(cfg, 0) : "the configuration", hint);
            else
                rc = cfg_error(e, corigin, "command=%s: there is no top-level block named '%s'%s",
                               command.s, name, hint);
            break;
        }
        if (!cfg_is_block(block)) {
            rc = cfg_error(e, cfg_origin_of(block),
                           "command=%s names '%s', which is a value, not a block [ ... ]",
                           command.s, name);
            break;
        }
        cfg_mark_used(block);
        const struct train_action *act = NULL;
        rc = check_action(block, &act, e);
        if (rc == 0)
            rc = cfg_schema_check(&ck, block, act->schema, e);
        if (rc == 0 && act->schema == &train_command_schema)
            rc = check_builder(block, e);
        if (rc == 0)
            rc = check_readers(block, e);
        if (rc == 0 && act->schema == &write_command_schema)
            rc = write_check_config(block, e);
        if (rc == 0 && act->schema == &plot_command_schema)
            rc = plot_check_config(block, e);
        if (rc == 0 && act->schema == &wc_command_schema)
            rc = wc_check_config(block, e);
        if (rc == 0 && act->schema == &svd_command_schema)
            rc = svd_check_config(block, e);
        if (rc == 0 && *n < max) {
            cmds[*n].block = block;
            cmds[*n].action = act;
            (*n)++;
        } else if (rc == 0) {
            rc = cfg_error(e, corigin, "command= names more than %zu commands", max);
        }
    }
    cfg_list_free(&names);
    cfg_val_free(&command);
    cfg_val_free(&strict);
    return rc;
}

/* ------------------------------------------------------------------ texts */

void train_print_usage(FILE *out)
{
    fputs("usage: trainer [--help [BLOCK]] [--version] [--print-config]\n"
          "               configFile=FILE[+FILE...] [key=value | block=[...] | a.b.c=value]...\n"
          "       mpiexec -n N trainer configFile=FILE [ARG...]\n",
          out);
}

int train_print_help(FILE *out, const char *topic)
{
    const struct cfg_schema *const *all = train_all_schemas();
    if (topic) {
        for (int i = 0; all[i]; i++) {
            const struct cfg_schema *s = all[i];
            char action[64]; /* "test": the command block of action=test */
            snprintf(action, sizeof action, "(action=%s)", topic);
            const char *at = strstr(s->name, "(action=");
            if (strcasecmp(s->name, topic) == 0 ||
                (strncasecmp(s->name, topic, strlen(topic)) == 0 && strlen(topic) >= 3) ||
                (at && strcasecmp(at, action) == 0)) {
                cfg_schema_print_help(out, s);
                return 0;
            }
        }
        fprintf(stderr, "trainer: --help: no block named '%s'; blocks:", topic);
        for (int i = 0; all[i]; i++)
            fprintf(stderr, "%s '%s'", i ? "," : "", all[i]->name);
        fputs("\n", stderr);
        return 2;
    }
    train_print_usage(out);
    fputs("\nTrains neural networks from CNTK-style config files, on one or many MPI ranks.\n"
          "\nArguments are applied in order; a later assignment wins:\n"
          "  configFile=a.cfg+b.cfg   read config files (.ini files through inih)\n"
          "  currentDirectory=DIR     change directory at this point\n"
          "  key=value                set a top-level key\n"
          "  block=[k=v ...]          merge into a block\n"
          "  a.b.c=value              set c inside block b inside block a\n"
          "\nOptions:\n"
          "  --help [BLOCK]           this text, or every key of one block\n"
          "  --version                version and build configuration\n"
          "  --print-config           print the merged config with each value's origin, then\n"
          "                           check it and exit (status 1 when it has errors)\n"
          "  --man-keys               the key reference of trainer.cfg(5), in troff\n"
          "\nBlocks (trainer --help BLOCK lists their keys):\n",
          out);
    for (int i = 0; all[i]; i++)
        fprintf(out, "  %-30s %s\n", all[i]->name, all[i]->where);
    fprintf(out,
            "\nActions: %s.\nExit status: 0 success, 1 bad input (config, command line, data,\n"
            "model), 2 usage, 3 system failure (I/O, MPI, memory).\n"
            "See trainer(1) and trainer.cfg(5).\n",
            train_action_names());
    return 0;
}

void train_print_version(FILE *out)
{
    char cpu[512], gpu[256], why[256];
    fprintf(out, "trainer (%s) %s\n", PACKAGE_NAME, PACKAGE_VERSION);
    fprintf(out, "cpu backend: %s\n", backend_cpu_describe(cpu, sizeof cpu));
    int n = backend_cuda_probe(gpu, sizeof gpu, why, sizeof why);
    char plugin[1024];
    if (n > 0 && backend_cuda_available(plugin, sizeof plugin))
        fprintf(out, "cuda backend: cuBLAS, %s (device 0: %s)\n", why, gpu);
    else if (n > 0)
        fprintf(out, "cuda backend: unavailable: %s (device 0: %s), but %s\n", why, gpu, plugin);
    else
        fprintf(out, "cuda backend: unavailable: %s\n", why);
}

void train_print_man_keys(FILE *out)
{
    const struct cfg_schema *const *all = train_all_schemas();
    for (int i = 0; all[i]; i++)
        cfg_schema_print_man(out, all[i]);
}
