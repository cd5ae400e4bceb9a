/* action=write's writer = [ writerType = HTKMLFWriter ... ] (CNTK's HTKMLFWriter, as the
 * TIMIT examples' WriteScaledLogLike and WriteBottleneck use it):
 *
 *   writer = [ writerType = HTKMLFWriter
 *              ScaledLogLikelihood = [ dim = 183 ; scpFile = "out.scp" ; type = Real ] ]
 *
 * Each node that outputNodeNames names has a block of its name in the writer (a dotted name,
 * L2.BFF.FF.P, is a path of blocks, as the config nests it). Line k of its scpFile (file is
 * the same key) names the file that the reader's k-th sequence is written to (an utterance:
 * the HTK readers deliver utterances here whatever frameMode says), in the reader's order.
 * A file is an HTK feature file as CNTK writes it: a 12-byte header (frames, sample period
 * 100000, bytes a frame, parameter kind USER = 9), then every frame's dim values as 32-bit
 * floats, all big-endian. It is written to a temporary and renamed into place, its
 * directories made first; never through a symlink, never over a file the reader reads or
 * the model, and no file twice (both checked before anything is written). */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/fs.h"
#include "reader/reader.h"
#include "train/write_internal.h"

#define HTK_USER   9
#define HTK_PERIOD 100000 /* 10 ms in 100 ns units: CNTK's sampPeriod */

struct htk_out {
    char name[256];
    long long dim;
    char scp[4096];
    struct cfg_origin dim_at, scp_at;
    char **paths; /* the script file's lines */
    size_t npaths;
};

struct file_id {
    dev_t dev;
    ino_t ino;
};

struct write_htk {
    struct htk_out o[WRITE_MAX_NODES];
    size_t n;
    unsigned char *buf; /* a file's bytes */
    size_t cap;
    double *col;
    size_t cap_col;
};

struct out_cfg {
    long long dim;
    char scp[4096], file[4096];
    int type;
};

#define OC(m) CFG_OUT(struct out_cfg, m)
static const struct cfg_key out_keys[] = {
    {.name = "dim",
     .type = CFG_INT,
     .flags = CFG_REQUIRED | CFG_HAS_MIN | CFG_HAS_MAX | CFG_LOCAL,
     .min = 1,
     .max = 16383, /* a frame's bytes are a 16-bit field of the header */
     .help = "values a frame: the node's rows",
     OC(dim)},
    {.name = "scpFile",
     .type = CFG_PATH,
     .flags = CFG_LOCAL,
     .help = "a script file: its line k names the file written for the reader's k-th sequence",
     OC(scp)},
    {.name = "file",
     .type = CFG_PATH,
     .flags = CFG_LOCAL,
     .help = "scpFile's other name",
     OC(file)},
    {.name = "type",
     .type = CFG_ENUM,
     .def = "Real",
     .choices = "Real",
     .flags = CFG_LOCAL,
     .help = "Real: 32-bit floats (CNTK's writer has no other type)",
     OC(type)},
    {.name = NULL},
};

static const struct cfg_schema out_schema = {
    .name = "writer output",
    .where = "in a writer block, named as the node it writes",
    .help = "One output of CNTK's HTKMLFWriter.",
    .keys = out_keys,
};

static const struct cfg_key writer_keys[] = {
    {.name = "writerType",
     .type = CFG_ENUM,
     .flags = CFG_REQUIRED,
     .choices = "HTKMLFWriter|HTKMLFReader",
     .unsupported = "BinaryReader|BinaryWriter|LMSequenceReader|LMSequenceWriter|"
                    "LUSequenceReader|LUSequenceWriter|Kaldi2Reader|KaldiWriter",
     .help = "HTKMLFWriter (or HTKMLFReader, the module that holds it): HTK feature files"},
    {.name = "outputNodeNames",
     .type = CFG_STRING_LIST,
     .help = "the nodes to write (here or in the command block), each with a block "
             "NODE = [ dim ; scpFile ; type = Real ] in this one"},
    {.name = NULL},
};

const struct cfg_schema writer_schema = {
    .name = "writer",
    .where = "in a command block with action=write",
    .help = "CNTK's HTKMLFWriter: each output node's values for each sequence of the reader "
            "(an utterance) as an HTK feature file, named by a line of the node's scpFile. "
            "Other keys here are allowed (CNTK's examples carry reader keys into it).",
    .keys = writer_keys,
    .open = 1,
};

/* The block for node name: writer.a.b.c for a.b.c. */
static int node_block(struct cfg_node *writer, const char *name, struct cfg_node **out,
                      struct pt_err *e)
{
    char part[256];
    struct cfg_node *b = writer;
    for (const char *p = name; b;) {
        size_t len = strcspn(p, ".");
        snprintf(part, sizeof part, "%.*s", (int)(len < 255 ? len : 255), p);
        struct cfg_node *k = NULL;
        int rc = cfg_find_local(b, part, &k, e);
        if (rc)
            return rc;
        b = k && cfg_is_block(k) ? k : NULL;
        if (!p[len])
            break;
        p += len + 1;
    }
    *out = b;
    return 0;
}

/* The lines of o->scp into o->paths (surrounding blanks and a CR dropped; an empty line is
 * an error naming it). */
static int read_script(struct htk_out *o, struct pt_log *log, struct pt_err *e)
{
    FILE *f = fopen(o->scp, "r");
    char where[512];
    cfg_origin_str(&o->scp_at, where, sizeof where);
    if (!f)
        return pt_err_set(e, PT_EUSER, "%s: error: scpFile: cannot read '%s': %s", where, o->scp,
                          strerror(errno));
    char *line = NULL;
    size_t cap = 0, lineno = 0, vcap = 0;
    ssize_t len;
    int rc = 0;
    while (rc == 0 && (len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        char *s = line, *end = line + len;
        while (s < end && (*s == ' ' || *s == '\t'))
            s++;
        while (end > s && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' ' || end[-1] == '\t'))
            end--;
        if (end == s) {
            rc = pt_err_set(e, PT_EUSER,
                            "%s:%zu: error: an empty line: each line of the writer's scpFile "
                            "names the file of one sequence (set at %s)",
                            o->scp, lineno, where);
            break;
        }
        if (o->npaths == vcap) {
            size_t c = vcap ? 2 * vcap : 256;
            char **v = realloc(o->paths, c * sizeof *v);
            if (!v) {
                rc = pt_err_set(e, PT_ESYS, "error: out of memory reading '%s'", o->scp);
                break;
            }
            o->paths = v;
            vcap = c;
        }
        if (!(o->paths[o->npaths] = strndup(s, (size_t)(end - s))))
            rc = pt_err_set(e, PT_ESYS, "error: out of memory reading '%s'", o->scp);
        else
            o->npaths++;
    }
    if (rc == 0 && ferror(f))
        rc = pt_err_set(e, PT_ESYS, "error: reading '%s' failed", o->scp);
    free(line);
    fclose(f);
    if (rc == 0 && o->npaths == 0)
        rc = pt_err_set(e, PT_EUSER, "%s: error: scpFile '%s' names no files (one a line)", where,
                        o->scp);
    if (rc == 0)
        pt_log_printf(log, "HTKMLFWriter::Init: reading output script file %s ... %zu entries\n",
                      o->scp, o->npaths);
    return rc;
}

int write_htk_open(struct cfg_node *writer, const char *const *names, size_t n, struct pt_log *log,
                   struct write_htk **out, struct pt_err *e)
{
    char where[512];
    cfg_origin_str(cfg_origin_of(writer), where, sizeof where);
    if (out)
        *out = NULL;
    if (n == 0)
        return pt_err_set(e, PT_EUSER,
                          "%s: error: writer: outputNodeNames is not set: the HTKMLFWriter "
                          "writes the nodes it names (here or in the command block), each with "
                          "a block NODE = [ dim = N ; scpFile = ... ] in the writer",
                          where);
    if (n > WRITE_MAX_NODES)
        return pt_err_set(e, PT_EUSER,
                          "%s: error: writer: %zu output nodes, more than the %d "
                          "partrain writes at once",
                          where, n, WRITE_MAX_NODES);
    struct write_htk *hw = calloc(1, sizeof *hw);
    if (!hw)
        return pt_err_set(e, PT_ESYS, "error: out of memory for the writer");
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        struct htk_out *o = &hw->o[hw->n++];
        snprintf(o->name, sizeof o->name, "%s", names[i]);
        struct cfg_node *b = NULL;
        rc = node_block(writer, names[i], &b, e);
        if (rc == 0 && !b) {
            rc = pt_err_set(e, PT_EUSER,
                            "%s: error: writer: no block for the output node '%s' (expected "
                            "%s = [ dim = N ; scpFile = \"...\" ; type = Real ] in the writer)",
                            where, names[i], names[i]);
            break;
        }
        struct out_cfg oc;
        memset(&oc, 0, sizeof oc);
        if (rc == 0)
            rc = cfg_schema_read(b, &out_schema, &oc, e);
        if (rc)
            break;
        struct cfg_node *k = NULL;
        const char *key = oc.scp[0] ? "scpFile" : "file";
        if (oc.scp[0] && oc.file[0])
            rc = cfg_error(e, cfg_origin_of(b), "writer: %s: give scpFile or file, not both",
                           names[i]);
        else if (!oc.scp[0] && !oc.file[0])
            rc = cfg_error(e, cfg_origin_of(b),
                           "writer: %s: scpFile is not set (a script file: line k names the file "
                           "of the k-th sequence)",
                           names[i]);
        if (rc == 0)
            rc = cfg_find_local(b, key, &k, e);
        if (rc == 0 && k)
            o->scp_at = *cfg_value_origin(k);
        if (rc == 0 && (rc = cfg_find_local(b, "dim", &k, e)) == 0 && k)
            o->dim_at = *cfg_value_origin(k);
        o->dim = oc.dim;
        snprintf(o->scp, sizeof o->scp, "%s", oc.scp[0] ? oc.scp : oc.file);
        if (rc == 0 && out)
            rc = read_script(o, log, e);
        if (rc == 0 && i > 0 && o->npaths != hw->o[0].npaths)
            rc = pt_err_set(e, PT_EUSER,
                            "error: writer: the script files name different numbers of files: "
                            "'%s' %zu, '%s' %zu (line k of each is the k-th sequence)",
                            hw->o[0].scp, hw->o[0].npaths, o->scp, o->npaths);
    }
    if (rc || !out) {
        write_htk_free(hw);
        return rc;
    }
    *out = hw;
    return 0;
}

/* A written file and where it is named, for the checks before writing. */
struct named {
    const char *path;
    size_t out, line;
};

static int by_path(const void *a, const void *b)
{
    const struct named *x = a, *y = b;
    int c = strcmp(x->path, y->path);
    return c ? c
             : (x->out != y->out ? (x->out < y->out ? -1 : 1)
                                 : (x->line < y->line ? -1 : x->line > y->line));
}

static int by_id(const void *a, const void *b)
{
    const struct file_id *x = a, *y = b;
    if (x->dev != y->dev)
        return x->dev < y->dev ? -1 : 1;
    return x->ino < y->ino ? -1 : x->ino > y->ino;
}

/* Add path's identity to *v (a missing path is skipped); -1: out of memory. */
static int add_id(const char *path, struct file_id **v, size_t *n, size_t *cap)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return 0;
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 16;
        struct file_id *w = realloc(*v, c * sizeof *w);
        if (!w)
            return -1;
        *v = w;
        *cap = c;
    }
    (*v)[(*n)++] = (struct file_id){st.st_dev, st.st_ino};
    return 0;
}

/* The files nothing may be written over, sorted: the reader's, the model, the scripts. */
static int inputs(const struct write_htk *hw, struct reader *r, const char *model,
                  struct file_id **out, size_t *n, struct pt_err *e)
{
    size_t cap = 0;
    struct file_id *v = NULL;
    int bad = 0;
    const char *p;
    *n = 0;
    for (size_t i = 0; !bad && (p = reader_data_file(r, i)); i++)
        bad = add_id(p, &v, n, &cap);
    for (size_t i = 0; !bad && i < hw->n; i++)
        bad = add_id(hw->o[i].scp, &v, n, &cap);
    if (!bad)
        bad = add_id(model, &v, n, &cap);
    if (bad) {
        free(v);
        return pt_err_set(e, PT_ESYS, "error: out of memory listing the reader's files");
    }
    if (*n)
        qsort(v, *n, sizeof *v, by_id);
    *out = v;
    return 0;
}

int write_htk_check(struct write_htk *hw, struct reader *r, const char *model, long long epoch_size,
                    struct pt_err *e)
{
    size_t nseq = reader_sequences(r), total = 0;
    const struct htk_out *o0 = &hw->o[0];
    char where[512];
    cfg_origin_str(&o0->scp_at, where, sizeof where);
    if (epoch_size == 0 ? o0->npaths != nseq : o0->npaths == 0)
        return pt_err_set(e, PT_EUSER,
                          "%s: error: scpFile '%s' names %zu files, and the reader has %zu "
                          "sequences (utterances): line k names the file of the k-th, in the "
                          "reader's order",
                          where, o0->scp, o0->npaths, nseq);
    for (size_t i = 0; i < hw->n; i++)
        total += hw->o[i].npaths;
    struct named *all = malloc((total ? total : 1) * sizeof *all);
    struct file_id *ins = NULL;
    size_t nins = 0;
    int rc = all ? inputs(hw, r, model, &ins, &nins, e)
                 : pt_err_set(e, PT_ESYS, "error: out of memory checking the writer's files");
    size_t k = 0;
    for (size_t i = 0; rc == 0 && i < hw->n; i++)
        for (size_t j = 0; j < hw->o[i].npaths; j++)
            all[k++] = (struct named){hw->o[i].paths[j], i, j + 1};
    if (rc == 0)
        qsort(all, total, sizeof *all, by_path);
    for (size_t j = 0; rc == 0 && j < total; j++) {
        const struct named *a = &all[j];
        if (j > 0 && !strcmp(all[j - 1].path, a->path)) {
            rc = pt_err_set(e, PT_EUSER,
                            "%s:%zu: error: '%s' is also named at %s:%zu: each sequence's "
                            "output needs a file of its own",
                            hw->o[a->out].scp, a->line, a->path, hw->o[all[j - 1].out].scp,
                            all[j - 1].line);
            break;
        }
        struct stat st;
        struct file_id id;
        if (stat(a->path, &st) != 0)
            continue;
        id = (struct file_id){st.st_dev, st.st_ino};
        if (nins && bsearch(&id, ins, nins, sizeof *ins, by_id))
            rc = pt_err_set(e, PT_EUSER,
                            "%s:%zu: error: '%s' is a file this run reads (the reader's data, "
                            "the model or a script file); refusing to write over it",
                            hw->o[a->out].scp, a->line, a->path);
    }
    free(ins);
    free(all);
    return rc;
}

static void put_be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

int write_htk_sequence(struct write_htk *hw, size_t oi, size_t seq, enum write_node node,
                       const float *const *cols, size_t n, size_t rows, const float *prior,
                       struct pt_log *log, struct pt_err *e)
{
    struct htk_out *o = &hw->o[oi];
    char where[512];
    if (seq >= o->npaths)
        return pt_err_set(e, PT_EUSER,
                          "%s: error: scpFile names %zu files, and the reader gives more "
                          "sequences (this is sequence %zu)",
                          cfg_origin_str(&o->scp_at, where, sizeof where), o->npaths, seq + 1);
    if ((long long)rows != o->dim)
        return pt_err_set(e, PT_EUSER,
                          "%s: error: writer: %s: dim = %lld, but the node has %zu values a "
                          "frame",
                          cfg_origin_str(&o->dim_at, where, sizeof where), o->name, o->dim, rows);
    if (n > (size_t)INT32_MAX / 2)
        return pt_err_set(e, PT_EUSER,
                          "error: writer: sequence %zu has %zu frames, more than "
                          "an HTK file holds",
                          seq + 1, n);
    size_t bytes = 12 + n * rows * 4;
    if (bytes > hw->cap) {
        unsigned char *b = realloc(hw->buf, bytes);
        if (!b)
            return pt_err_set(e, PT_ESYS, "error: out of memory for a writer's file");
        hw->buf = b;
        hw->cap = bytes;
    }
    if (rows > hw->cap_col) {
        double *c = realloc(hw->col, rows * sizeof *c);
        if (!c)
            return pt_err_set(e, PT_ESYS, "error: out of memory for a writer's file");
        hw->col = c;
        hw->cap_col = rows;
    }
    unsigned char *p = hw->buf;
    put_be32(p, (uint32_t)n);
    put_be32(p + 4, HTK_PERIOD);
    p[8] = (unsigned char)((rows * 4) >> 8);
    p[9] = (unsigned char)(rows * 4);
    p[10] = 0;
    p[11] = HTK_USER;
    p += 12;
    size_t bad = 0;
    for (size_t j = 0; j < n; j++) {
        write_node_column(node, cols[j], rows, prior, hw->col);
        for (size_t i = 0; i < rows; i++, p += 4) {
            float f = (float)hw->col[i];
            uint32_t u;
            memcpy(&u, &f, sizeof u);
            bad += !isfinite(f);
            put_be32(p, u);
        }
    }
    const char *path = o->paths[seq];
    if (bad)
        pt_log_printf(log, "chunkeval: %zu NaNs or INF detected in '%s' (%zu frames)\n", bad, path,
                      n);
    struct pt_file_out fo;
    int rc = pt_file_begin(&fo, path, 1, "output file", e);
    for (size_t done = 0; rc == 0 && done < bytes;) {
        ssize_t w = write(fo.fd, hw->buf + done, bytes - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            rc = pt_err_set(e, PT_ESYS, "error: writing '%s' failed: %s", path,
                            w < 0 ? strerror(errno) : "no space written");
        else
            done += (size_t)w;
    }
    if (rc == 0)
        rc = pt_file_commit(&fo, "output file", e);
    if (rc)
        pt_file_abort(&fo);
    if (rc == 0)
        pt_log_printf(log, "evaluate: writing %zu frames of %s\n", n, path);
    return rc;
}

void write_htk_free(struct write_htk *hw)
{
    if (!hw)
        return;
    for (size_t i = 0; i < hw->n; i++) {
        for (size_t j = 0; j < hw->o[i].npaths; j++)
            free(hw->o[i].paths[j]);
        free(hw->o[i].paths);
    }
    free(hw->buf);
    free(hw->col);
    free(hw);
}
