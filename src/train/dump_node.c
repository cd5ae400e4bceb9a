/* action=dumpNode: a model's nodes as text (CNTK's DoDumpNodes, as its HelloWorld tutorial
 * uses it to plot the learned decision boundary).
 *
 * Each parameter tensor as CNTK prints a LearnableParameter:
 *
 *   w=LearnableParameter [1,2]   learningRateMultiplier=1.000000  NeedsGradient=true
 *    2.40208364 2.66412568
 *
 * the metadata line (printMetadata), then one line per row of values (printValues, %.9g
 * each, one leading space). A BrainScript network also lists its other nodes, one line
 * each (`p=Sigmoid (Plus)`), with printMetadata. nodeName picks one node (default
 * __AllNodes__: all); the file is outputFile, default modelPath.<nodeName>.txt. Rank 0
 * writes it, safely (core/fs.h), the other ranks wait for its outcome. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "comm/comm.h"
#include "core/fs.h"
#include "math/backend.h"
#include "train/train_internal.h"

struct dump_settings {
    char model[4096];
    char node[256];
    char output[4096];
    int values, metadata;
};

#define DS(m) CFG_OUT(struct dump_settings, m)

static const struct cfg_key dump_cmd_keys[] = {
    {.name = "action",
     .type = CFG_STRING,
     .def = "dumpNode",
     .help = "dumpNode: the model's nodes"},
    {.name = "modelPath",
     .type = CFG_PATH,
     .flags = CFG_REQUIRED,
     .help = "the model whose nodes are written",
     DS(model)},
    {.name = "nodeName",
     .type = CFG_STRING,
     .def = "__AllNodes__",
     .help = "the node to write (a parameter tensor's name, or a BrainScript node's); "
             "__AllNodes__: every node",
     DS(node)},
    {.name = "outputFile",
     .type = CFG_PATH,
     .help = "the text file (default: modelPath.<nodeName>.txt)",
     DS(output)},
    {.name = "printValues", .type = CFG_BOOL, .def = "true", .help = "the values", DS(values)},
    {.name = "printMetadata",
     .type = CFG_BOOL,
     .def = "true",
     .help = "each node's line (name, operation, shape)",
     DS(metadata)},
    {.name = "nodeNameRegex",
     .type = CFG_UNSUPPORTED,
     .help = "nodes by regular expression are not supported: name one with nodeName"},
    {.name = NULL},
};

const struct cfg_schema dump_command_schema = {
    .name = "command block (action=dumpNode)",
    .where = "at top level, named in command=",
    .help = "Writes a model's nodes as text. Unknown keys here are allowed (they may be "
            "variables).",
    .keys = dump_cmd_keys,
};

/* The default file name, CNTK's: modelPath.<nodeName>.txt. */
void dump_node_output(const char *model, const char *node, const char *output, char *buf,
                      size_t size)
{
    if (output && output[0])
        snprintf(buf, size, "%s", output);
    else
        snprintf(buf, size, "%s.%s.txt", model, node && node[0] ? node : "__AllNodes__");
}

/* Column-major host values: element (r, c) of a rows-row matrix is at c * rows + r. */
static void put_tensor(FILE *f, const struct dump_settings *ds, const struct nn_tensor *t,
                       const float *host, int learned)
{
    if (ds->metadata) /* a state: learningRateMultiplier 0 (a batch normalization's running
                         statistics) */
        fprintf(f, "%s=LearnableParameter [%d,%d]   learningRateMultiplier=%f  NeedsGradient=%s\n",
                t->name, t->rows, t->cols, learned ? 1.0 : 0.0, learned ? "true" : "false");
    const float *m = host + t->offset;
    for (int r = 0; ds->values && r < t->rows; r++) {
        for (int c = 0; c < t->cols; c++)
            fprintf(f, " %.9g", (double)m[(size_t)c * (size_t)t->rows + (size_t)r]);
        fputc('\n', f);
    }
}

struct dump_job {
    const struct dump_settings *ds;
    struct nn *net;
};

static int dump(FILE *f, void *arg, struct pt_err *e)
{
    const struct dump_job *j = arg;
    const struct dump_settings *ds = j->ds;
    struct nn *net = j->net;
    size_t nt = 0, ns = 0, np = nn_param_count(net);
    const struct nn_tensor *t = nn_tensors(net, &nt);
    nn_state_tensors(net, &ns); /* they follow the learned ones in the same table */
    float *host = malloc((np ? np : 1) * sizeof *host); /* a host copy of the arena */
    if (!host)
        return pt_err_set(e, PT_ENOMEM, "error: out of memory");
    int all = strcmp(ds->node, "__AllNodes__") == 0, found = 0;
    int rc = nn_get_params(net, host, e);
    for (size_t i = 0; rc == 0 && i < nt + ns; i++)
        if (all || strcmp(ds->node, t[i].name) == 0) {
            put_tensor(f, ds, &t[i], host, i < nt);
            found = 1;
        }
    char line[512];
    for (int i = 0; rc == 0 && ds->metadata && nn_node_text(net, i, line, sizeof line); i++)
        if (all || strncmp(line, ds->node, strlen(ds->node)) == 0) {
            if (!all && line[strlen(ds->node)] != '=')
                continue;
            fprintf(f, "%s\n", line);
            found = 1;
        }
    free(host);
    if (rc == 0 && !found)
        rc = pt_err_set(e, PT_EUSER, "error: nodeName=%s: the model '%s' has no such node",
                        ds->node, ds->model);
    return rc;
}

int dump_node_write(const char *path, struct nn *net, int values, struct pt_err *e)
{
    struct dump_settings ds = {.values = values, .metadata = 1};
    snprintf(ds.node, sizeof ds.node, "__AllNodes__");
    snprintf(ds.model, sizeof ds.model, "%s", path);
    struct dump_job j = {&ds, net};
    return pt_file_write_text(path, 1, "node dump", dump, &j, e);
}

static int dump_file(const struct dump_settings *ds, struct nn *net, struct pt_err *e)
{
    char path[8400];
    dump_node_output(ds->model, ds->node, ds->output, path, sizeof path);
    struct dump_job j = {ds, net};
    return pt_file_write_text(path, 1, "node dump", dump, &j, e);
}

int dump_run(struct pt_ctx *ctx, struct cfg_node *command, struct pt_err *e)
{
    struct dump_settings ds;
    memset(&ds, 0, sizeof ds);
    struct backend *be = NULL;
    struct nn *net = NULL;
    int rc = cfg_schema_read(command, &dump_command_schema, &ds, e);
    if (rc == 0 && !ds.values && !ds.metadata)
        rc = pt_err_set(e, PT_EUSER,
                        "error: printValues and printMetadata are both false: there is nothing "
                        "to dump");
    if (rc == 0 && comm_rank(ctx->comm) == 0) {
        rc = backend_cpu_new(&be, e);
        if (rc == 0)
            rc = nn_load(ds.model, be, &net, e);
        if (rc == 0)
            rc = dump_file(&ds, net, e);
    }
    rc = train_agree(ctx->comm, rc, "to dump the nodes", e);
    nn_free(net);
    if (be)
        backend_free(be);
    cfg_schema_free(&dump_command_schema, &ds);
    return rc;
}
