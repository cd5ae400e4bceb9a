/* action=plot: a model's network as a Graphviz dot file (CNTK's DoTopologyPlot; the text
 * is src/nn/dot.c's), outputDotFile, by default modelPath.dot; with renderCmd, the command
 * run after it with <IN> and <OUT> replaced by the dot file and outputFile (CNTK's
 * "dot -Tpng -x <IN> -o<OUT>"). Rank 0 writes and renders, the other ranks wait for its
 * outcome. The dot file is written to a temporary and renamed into place, never through a
 * symlink, never over the model. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "comm/comm.h"
#include "core/fs.h"
#include "math/backend.h"
#include "train/train_internal.h"

struct plot_settings {
    char model[4096], dot[4096], out[4096];
    const char *render;
};

#define PS(m) CFG_OUT(struct plot_settings, m)

static const struct cfg_key plot_cmd_keys[] = {
    {.name = "action", .type = CFG_STRING, .def = "plot", .help = "plot: the network as a graph"},
    {.name = "modelPath",
     .type = CFG_PATH,
     .flags = CFG_REQUIRED,
     .help = "the model whose network is drawn",
     PS(model)},
    {.name = "outputDotFile",
     .type = CFG_PATH,
     .help = "the Graphviz dot file (default: modelPath.dot)",
     PS(dot)},
    {.name = "outputFile",
     .type = CFG_PATH,
     .help = "the rendered picture, made by renderCmd (which it needs)",
     PS(out)},
    {.name = "renderCmd",
     .type = CFG_STRING,
     .help = "a shell command run after the dot file is written, <IN> and <OUT> replaced by "
             "outputDotFile and outputFile (e.g. \"dot -Tpng -x <IN> -o<OUT>\")",
     PS(render)},
    {.name = NULL},
};

const struct cfg_schema plot_command_schema = {
    .name = "command block (action=plot)",
    .where = "at top level, named in command=",
    .help = "Writes a model's network as a Graphviz dot file, as CNTK's plot action does. "
            "Unknown keys here are allowed (they may be variables).",
    .keys = plot_cmd_keys,
    .open = 1,
};

/* s with every <IN> and <OUT> replaced; NULL when out of memory. */
static char *fill(const char *s, const char *in, const char *out)
{
    size_t cap = strlen(s) + 1, n = 0;
    for (const char *p = s; (p = strchr(p, '<')); p++)
        cap += strlen(in) + strlen(out);
    char *r = malloc(cap);
    for (const char *p = s; r && *p;) {
        const char *with = !strncmp(p, "<IN>", 4) ? in : !strncmp(p, "<OUT>", 5) ? out : NULL;
        if (with) {
            memcpy(r + n, with, strlen(with));
            n += strlen(with);
            p += with == in ? 4 : 5;
        } else {
            r[n++] = *p++;
        }
    }
    if (r)
        r[n] = '\0';
    return r;
}

static int same_file(const char *a, const char *b)
{
    struct stat x, y;
    return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

static int dot_text(FILE *f, void *net, struct pt_err *e)
{
    return nn_write_dot(net, f, e);
}

static int plot(struct pt_ctx *ctx, struct plot_settings *ps, struct pt_err *e)
{
    struct backend *be = NULL;
    struct nn *net = NULL;
    int rc = backend_cpu_new(&be, e);
    if (rc == 0)
        rc = nn_load(ps->model, be, &net, e);
    if (rc == 0)
        rc = pt_file_write_text(ps->dot, 1, "dot file", dot_text, net, e);
    if (rc == 0)
        pt_log_printf(ctx->log, "Created network description in dot format: %s\n", ps->dot);
    nn_free(net);
    if (be)
        backend_free(be);
    if (rc || !ps->render || !ps->render[0])
        return rc;
    char *cmd = fill(ps->render, ps->dot, ps->out);
    if (!cmd)
        return pt_err_set(e, PT_ENOMEM, "error: out of memory");
    pt_log_printf(ctx->log, "Executing third-party tool for rendering dot:\n%s\n", cmd);
    fflush(NULL);
    int st = system(cmd);
    if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        rc = pt_err_set(e, PT_EUSER, "error: plot: renderCmd '%s' failed (%s %d)", cmd,
                        st != -1 && WIFEXITED(st) ? "exit status" : "wait status", st);
    free(cmd);
    return rc;
}

/* What can be checked before any command runs: outputFile needs renderCmd. */
static int check(struct cfg_node *command, const struct plot_settings *ps, struct pt_err *e)
{
    char at[512];
    if (ps->out[0] && (!ps->render || !ps->render[0]))
        return cfg_error(e, cfg_origin_of(command),
                         "%s: outputFile is set, but no renderCmd makes it (CNTK's rule: give "
                         "renderCmd = \"dot -Tpng -x <IN> -o<OUT>\", or leave outputFile out)",
                         cfg_path(command, at, sizeof at));
    return 0;
}

int plot_check_config(struct cfg_node *command, struct pt_err *e)
{
    struct plot_settings ps;
    memset(&ps, 0, sizeof ps);
    int rc = cfg_schema_read(command, &plot_command_schema, &ps, e);
    if (rc == 0)
        rc = check(command, &ps, e);
    cfg_schema_free(&plot_command_schema, &ps);
    return rc;
}

int plot_run(struct pt_ctx *ctx, struct cfg_node *command, struct pt_err *e)
{
    struct plot_settings ps;
    memset(&ps, 0, sizeof ps);
    int rc = cfg_schema_read(command, &plot_command_schema, &ps, e);
    if (rc == 0 && !ps.dot[0])
        snprintf(ps.dot, sizeof ps.dot, "%.4090s.dot", ps.model);
    if (rc == 0)
        rc = check(command, &ps, e);
    if (rc == 0 && same_file(ps.dot, ps.model))
        rc = pt_err_set(e, PT_EUSER,
                        "error: plot: outputDotFile '%s' is the model file; refusing to write "
                        "over it",
                        ps.dot);
    if (rc == 0 && comm_rank(ctx->comm) == 0)
        rc = plot(ctx, &ps, e);
    rc = train_agree(ctx->comm, rc, "to plot the network", e);
    cfg_schema_free(&plot_command_schema, &ps);
    return rc;
}
