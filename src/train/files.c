/* What a run reads and what it writes, checked at start-up: no file it writes (the log,
 * modelPath and its per-epoch files, perfStatsFile, timelineFile, writeWordAndClass's files) may
 * be a file it reads (a config file, a reader's data file, the model a test evaluates,
 * writeWordAndClass's inputFile), and the log may not be one of the other written files. Also the
 * removal of temporaries that killed runs left next to the model files. See core/fs.h for how the
 * files themselves are written. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/fs.h"
#include "parallel/parallel.h"
#include "train/logfmt.h"
#include "train/train_internal.h"

/* An output and the files written under its name. */
struct output {
    const char *key;  /* "modelPath" */
    const char *path; /* as configured */
    char at[512];     /* where it was set */
    char *canon;      /* pt_fs_canonical(path), or NULL */
    int node_suffix;  /* outputPath: base.<node name> is written (write_output_node) */
    char *own;        /* path, when this file made it (dumpNode's default name); freed */
};

/* name is base itself or base followed by ".E", ".ckp", ".rank<k>" parts (modelPath.3,
 * modelPath.3.ckp, modelPath.3.rank1, log.rank2): one of the files written as base. */
static int family_member(const char *base, const char *name)
{
    size_t bl = strlen(base);
    if (strncmp(name, base, bl) != 0)
        return 0;
    for (const char *p = name + bl; *p;) {
        if (*p != '.')
            return 0;
        p++;
        if (strncmp(p, "ckp", 3) == 0 && (p[3] == '.' || !p[3]))
            p += 3;
        else {
            if (strncmp(p, "rank", 4) == 0)
                p += 4;
            if (!isdigit((unsigned char)*p))
                return 0;
            while (isdigit((unsigned char)*p))
                p++;
        }
    }
    return 1;
}

/* Whether real (a canonical path) is written as out. */
static int written_as(const struct output *out, const char *real)
{
    if (!out->canon || !real)
        return 0;
    const char *slash = strrchr(out->canon, '/'), *rslash = strrchr(real, '/');
    size_t dl = (size_t)(slash - out->canon);
    if (!rslash || (size_t)(rslash - real) != dl || strncmp(out->canon, real, dl) != 0)
        return 0;
    size_t bl = strlen(slash + 1);
    if (out->node_suffix)
        return strncmp(rslash + 1, slash + 1, bl) == 0 && rslash[1 + bl] == '.' &&
               write_output_node(rslash + 2 + bl);
    return family_member(slash + 1, rslash + 1);
}

static int check_output(const struct pt_inputs *ins, const struct output *out, struct pt_err *e)
{
    /* models are replaced by rename, which would replace a link: refuse it now rather than
     * after an epoch (the log, perfStatsFile and timelineFile are checked when they open) */
    struct stat st;
    if (strcmp(out->key, "modelPath") == 0 && lstat(out->path, &st) == 0 && S_ISLNK(st.st_mode))
        return pt_err_set(e, PT_EUSER,
                          "%s: error: %s: '%s' is a symbolic link, and nothing is written "
                          "through a symlink (remove it, or name the real file)",
                          out->at, out->key, out->path);
    const struct pt_input *hit = out->node_suffix ? NULL : pt_inputs_find(ins, out->path);
    for (size_t i = 0; !hit && i < ins->n; i++)
        if (written_as(out, ins->v[i].real))
            hit = &ins->v[i];
    if (!hit)
        return 0;
    return pt_err_set(e, PT_EUSER,
                      "%s: error: %s: '%s' is an input (%s); refusing to write over it", out->at,
                      out->key, hit->real, hit->what);
}

static void set_origin(struct output *o, struct cfg_node *n)
{
    if (n)
        cfg_origin_str(cfg_value_origin(n), o->at, sizeof o->at);
    else
        snprintf(o->at, sizeof o->at, "<default>");
}

/* The data files of cmd's reader and cvReader; errors are left to the action. */
static int note_readers(struct cfg_node *cmd, struct pt_inputs *ins, struct pt_err *e)
{
    static const char *const blocks[] = {"reader", "cvReader"};
    for (int i = 0; i < 2; i++) {
        struct cfg_node *rd = NULL;
        struct reader_config rc;
        struct pt_err ignored;
        pt_err_clear(&ignored);
        if (cfg_find_block(cmd, blocks[i], &rd, &ignored) || !rd ||
            reader_config_read(rd, &rc, &ignored))
            continue;
        char what[1200], where[512], path[512];
        snprintf(what, sizeof what, "the data file of %s, %s", cfg_path(rd, path, sizeof path),
                 cfg_origin_str(&rc.file_origin, where, sizeof where));
        int rc2 = pt_inputs_add(ins, rc.file, what, e);
        if (rc2)
            return rc2;
    }
    return 0;
}

/* A path key of a command (modelPath: train writes it, test and write read it; outputPath:
 * write writes outputPath.<node>). */
static int path_of(struct cfg_node *cmd, const struct cfg_schema *s, const char *key,
                   struct output *o)
{
    struct cfg_val v = {0};
    struct pt_err ignored;
    pt_err_clear(&ignored);
    int found = cfg_schema_get(cmd, s, key, &v, &ignored) == 0 && v.s && v.s[0];
    if (found) { /* the string belongs to the config */
        o->key = key;
        o->path = v.s;
        set_origin(o, v.node);
    }
    cfg_val_free(&v);
    return found;
}

/* The file action=dumpNode writes (outputFile, or modelPath.<nodeName>.txt). */
static int dump_output(struct cfg_node *cmd, const struct output *model, struct output *o,
                       size_t *nouts, struct pt_err *e)
{
    struct output file = {0}, node = {0};
    int given = path_of(cmd, &dump_command_schema, "outputFile", &file);
    path_of(cmd, &dump_command_schema, "nodeName", &node);
    char buf[8400];
    dump_node_output(model->path, node.path, given ? file.path : NULL, buf, sizeof buf);
    *o = given ? file : *model;
    o->key = "outputFile";
    o->own = pt_strdup(buf, e);
    if (!o->own)
        return e ? e->code : PT_ENOMEM;
    o->path = o->own;
    ++*nouts;
    return 0;
}

/* action=writeWordAndClass: inputFile is read, the vocabulary and mapping files written,
 * the class files too when there are classes. */
static int wc_files(struct cfg_node *cmd, struct pt_inputs *ins, struct output *outs, size_t *nouts,
                    struct pt_err *e)
{
    static const char *const keys[] = {"outputVocabFile", "outputMappingFile", "outputWord2Cls",
                                       "outputCls2Index"};
    struct output in = {0};
    struct cfg_val nc = {0};
    struct pt_err ignored;
    pt_err_clear(&ignored);
    int classes =
        cfg_schema_get(cmd, &wc_command_schema, "nbrClass", &nc, &ignored) == 0 && nc.i > 0;
    cfg_val_free(&nc);
    for (int i = 0; i < (classes ? 4 : 2); i++)
        if (path_of(cmd, &wc_command_schema, keys[i], &outs[*nouts]))
            ++*nouts;
    if (!path_of(cmd, &wc_command_schema, "inputFile", &in))
        return 0;
    char what[1200], block[512];
    snprintf(what, sizeof what, "the text that %s counts, inputFile at %s",
             cfg_path(cmd, block, sizeof block), in.at);
    return pt_inputs_add(ins, in.path, what, e);
}

/* A path key of ParallelTrain (perfStatsFile, timelineFile) of a train command, found as
 * parallel_config_read finds it: from the ParallelTrain block outwards; without the block
 * only when any_run (timelineFile), from SGD outwards. */
static int parallel_output(struct cfg_node *cmd, const char *key, int any_run, struct output *o)
{
    struct cfg_node *sgd = NULL, *pt = NULL;
    struct pt_err ignored;
    pt_err_clear(&ignored);
    if (cfg_find_block(cmd, "SGD", &sgd, &ignored) || !sgd ||
        parallel_find_block(sgd, &pt, &ignored) || (!pt && !any_run))
        return 0;
    struct cfg_val v = {0};
    int found = cfg_schema_get(pt ? pt : sgd, &parallel_train_schema, key, &v, &ignored) == 0 &&
                v.node && v.s && v.s[0];
    if (found) { /* the string belongs to the config */
        o->key = key;
        o->path = v.s;
        set_origin(o, v.node);
    }
    cfg_val_free(&v);
    return found;
}

int train_log_name(struct cfg *cfg, int rank, int workers, char *buf, size_t size,
                   struct cfg_node **node)
{
    struct cfg_node *root = cfg_root(cfg);
    struct cfg_val path = {0}, stamps = {0}, command = {0};
    struct cfg_list names = {0};
    struct pt_err ignored;
    pt_err_clear(&ignored);
    *node = NULL;
    if (cfg_schema_get(root, &train_top_schema, "stderr", &path, &ignored) || !path.node ||
        !path.s || !path.s[0])
        return 0;
    if (cfg_schema_get(root, &train_top_schema, "timestamping", &stamps, &ignored) == 0 &&
        stamps.b && cfg_schema_get(root, &train_top_schema, "command", &command, &ignored) == 0)
        cfg_to_list(command.node, command.s, &names, &ignored);
    logfmt_log_name(buf, size, path.s, stamps.b, (const char *const *)names.items, names.n,
                    train_parallel_switch(cfg, workers), rank);
    cfg_list_free(&names);
    cfg_val_free(&command);
    *node = path.node;
    return 1;
}

#define MAX_OUTPUTS 130

/* Whether a train command of this run writes path as its modelPath: then a test or write
 * command that reads it evaluates what this run trains (CNTK's train:test:output configs),
 * not an input to protect. */
static int trained_here(const struct train_command *cmds, size_t n, const char *path)
{
    char *want = pt_fs_canonical(path);
    int found = 0;
    for (size_t i = 0; !found && i < n; i++) {
        struct output o = {0};
        if (cmds[i].action->schema != &train_command_schema ||
            !path_of(cmds[i].block, &train_command_schema, "modelPath", &o))
            continue;
        char *have = pt_fs_canonical(o.path);
        found = want && have ? strcmp(want, have) == 0 : strcmp(path, o.path) == 0;
        free(have);
    }
    free(want);
    return found;
}

/* Inputs and outputs of every command; outs[0] is the log when there is one. */
static int collect(struct cfg *cfg, const struct train_command *cmds, size_t n, int rank,
                   int workers, struct pt_inputs *ins, struct output *outs, size_t *nouts,
                   char *logname, size_t lsize, struct pt_err *e)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < cfg_file_count(cfg); i++)
        rc = pt_inputs_add(ins, cfg_file(cfg, i), "a config file", e);
    struct cfg_node *log = NULL;
    if (rc == 0 && train_log_name(cfg, rank, workers, logname, lsize, &log) &&
        strcmp(logname, "-") != 0) { /* "-": standard output (pt_log_open), no file */
        outs[*nouts].key = "stderr";
        outs[*nouts].path = logname;
        set_origin(&outs[(*nouts)++], log);
    }
    for (size_t i = 0; rc == 0 && i < n && *nouts + 4 <= MAX_OUTPUTS; i++) {
        int train = cmds[i].action->schema == &train_command_schema;
        rc = note_readers(cmds[i].block, ins, e);
        struct output model = {0};
        if (rc == 0 && path_of(cmds[i].block, cmds[i].action->schema, "modelPath", &model)) {
            char what[1200], block[512];
            snprintf(what, sizeof what, "the model that %s evaluates, modelPath at %s",
                     cfg_path(cmds[i].block, block, sizeof block), model.at);
            if (train)
                outs[(*nouts)++] = model;
            else if (!trained_here(cmds, n, model.path))
                rc = pt_inputs_add(ins, model.path, what, e);
        }
        if (rc == 0 && train && parallel_output(cmds[i].block, "perfStatsFile", 0, &outs[*nouts]))
            ++*nouts;
        if (rc == 0 && train && parallel_output(cmds[i].block, "timelineFile", 1, &outs[*nouts]))
            ++*nouts;
        if (rc == 0 && cmds[i].action->schema == &write_command_schema &&
            path_of(cmds[i].block, &write_command_schema, "outputPath", &outs[*nouts]))
            outs[(*nouts)++].node_suffix = 1;
        if (rc == 0 && cmds[i].action->schema == &edit_command_schema &&
            path_of(cmds[i].block, &edit_command_schema, "outputModelPath", &outs[*nouts]))
            ++*nouts;
        if (rc == 0 && cmds[i].action->schema == &dump_command_schema && model.path)
            rc = dump_output(cmds[i].block, &model, &outs[*nouts], nouts, e);
        if (rc == 0 && cmds[i].action->schema == &wc_command_schema)
            rc = wc_files(cmds[i].block, ins, outs, nouts, e);
    }
    for (size_t i = 0; i < *nouts; i++)
        outs[i].canon = pt_fs_canonical(outs[i].path);
    return rc;
}

int train_check_files(struct cfg *cfg, const struct train_command *cmds, size_t n, int rank,
                      int workers, struct pt_err *e)
{
    struct pt_inputs ins = {0};
    struct output outs[MAX_OUTPUTS];
    memset(outs, 0, sizeof outs);
    size_t nouts = 0;
    char logname[4200] = "";
    int rc = collect(cfg, cmds, n, rank, workers, &ins, outs, &nouts, logname, sizeof logname, e);
    for (size_t i = 0; rc == 0 && i < nouts; i++)
        rc = check_output(&ins, &outs[i], e);
    /* the log and the other outputs: the same file written twice */
    int has_log = nouts && strcmp(outs[0].key, "stderr") == 0;
    for (size_t i = 1; rc == 0 && has_log && i < nouts; i++)
        if (written_as(&outs[i], outs[0].canon))
            rc = pt_err_set(e, PT_EUSER,
                            "%s: error: stderr: '%s' is also written as %s (%s); refusing to "
                            "write both",
                            outs[0].at, outs[0].path, outs[i].key, outs[i].at);
    for (size_t i = 0; i < nouts; i++) {
        free(outs[i].canon);
        free(outs[i].own);
    }
    pt_inputs_free(&ins);
    return rc;
}

static void note_removed(void *arg, const char *name)
{
    pt_log_printf(arg, "Removed '%s', a temporary file of a run that did not finish\n", name);
}

void train_remove_stale(const struct train_command *cmds, size_t n, struct pt_log *log)
{
    for (size_t i = 0; i < n; i++) {
        struct output model = {0};
        if (cmds[i].action->schema == &train_command_schema &&
            path_of(cmds[i].block, &train_command_schema, "modelPath", &model))
            pt_fs_remove_stale(model.path, note_removed, log);
    }
}
