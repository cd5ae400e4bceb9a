/* CNTK's HTK readers' config (htk.h): the legacy form (readerType = "HTKMLFReader", or
 * "HTKDeserializers" with the same layout), whose feature and label streams are blocks of
 * the reader named as the config likes (the one with scpFile, the one with mlfFile), and
 * the composite form, an HTKFeatureDeserializer and an HTKMLFDeserializer. Keys, defaults
 * and their meaning are CNTK's (HTKMLFReader.cpp, HTKDeserializers/ConfigHelper.cpp); what
 * partrain does not build (lattices, label-to-target maps) is refused by name. The legacy
 * form reads several feature and label streams (rc->htk.extra after the first of each); the
 * composite form one of each. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "reader/htk.h"

/* One stream's keys as read (features or labels). */
struct hstream {
    int dim, label_dim;
    char scp[1024], prefix[1024], context[64];
    int expand, defines;
    char mlf[1024], mlf_list[1024], states[1024];
    int boundaries;
};

#define HS(m) CFG_OUT(struct hstream, m)
#define LOCAL (CFG_LOCAL)

static const struct cfg_key feature_keys[] = {
    {.name = "dim",
     .type = CFG_INT,
     .flags = CFG_REQUIRED | LOCAL | CFG_HAS_MIN | CFG_HAS_MAX,
     .min = 1,
     .max = 1 << 24,
     .help = "values of a sample: the file's values per frame times the context window's frames "
             "(363 = 11 frames of 33; the window follows from the files' dimension unless "
             "contextWindow gives it)",
     HS(dim)},
    {.name = "scpFile",
     .type = CFG_PATH,
     .flags = CFG_REQUIRED | LOCAL,
     .help = "the script file: one utterance a line, NAME=FILE[first,last] (frames of an "
             "archive, inclusive) or NAME=FILE or FILE; \"...\" at its start stands for the "
             "script file's directory",
     HS(scp)},
    {.name = "type",
     .type = CFG_ENUM,
     .flags = LOCAL,
     .def = "real",
     .choices = "real",
     .help = "the features' type (CNTK reads real-valued HTK features only)"},
    {.name = "contextWindow",
     .type = CFG_STRING,
     .flags = LOCAL,
     .help = "frames around each frame, appended in time order: N (odd: N/2 each side) or "
             "LEFT:RIGHT; then dim is the file's values per frame, and the sample has "
             "dim x (1 + LEFT + RIGHT). Default: 1, the window follows from dim",
     HS(context)},
    {.name = "prefixPathInSCP",
     .type = CFG_STRING,
     .flags = LOCAL,
     .help = "a directory put before every file path of the script file",
     HS(prefix)},
    {.name = "expandToUtterance",
     .type = CFG_BOOL,
     .flags = LOCAL,
     .def = "false",
     .help = "utterance-level features (i-vectors) repeated over the utterance's frames: not "
             "supported (true is refused)",
     HS(expand)},
    {.name = "definesMBSize",
     .type = CFG_BOOL,
     .flags = LOCAL,
     .def = "false",
     .help = "accepted for CNTK's configs: the features are the only frame stream, so they "
             "define the minibatch's size anyway",
     HS(defines)},
    {.name = NULL},
};

static const struct cfg_schema feature_schema = {
    .name = "HTK feature stream",
    .where = "inside an HTK reader (the block with scpFile)",
    .help = "Features from HTK files listed in a script file.",
    .keys = feature_keys,
};

static const struct cfg_key label_keys[] = {
    {.name = "mlfFile",
     .type = CFG_PATH,
     .flags = LOCAL,
     .help = "the master label file: \"NAME.lab\" entries of START END STATE lines (times in "
             "100 ns units, or frames), each ended by a line \".\"; or CNTK's binary MLF "
             "(HTKMLFBinaryDeserializer's, told by its first bytes \"MLF\")",
     HS(mlf)},
    {.name = "mlfFileList",
     .type = CFG_STRING,
     .flags = LOCAL,
     .help = "several master label files: a file listing them one a line, or PATH:PATH:...",
     HS(mlf_list)},
    {.name = "labelMappingFile",
     .type = CFG_PATH,
     .flags = LOCAL,
     .help = "the state list: one state name a line, the line's number (from 0) its class; "
             "without it each MLF line gives its class as a number in a 4th column",
     HS(states)},
    {.name = "labelDim",
     .type = CFG_INT,
     .flags = LOCAL | CFG_HAS_MIN | CFG_HAS_MAX,
     .min = 1,
     .max = 1 << 24,
     .help = "classes (the labels' one-hot dimension); this or dim is required",
     HS(label_dim)},
    {.name = "dim",
     .type = CFG_INT,
     .flags = LOCAL | CFG_HAS_MIN | CFG_HAS_MAX,
     .min = 1,
     .max = 1 << 24,
     .help = "the same as labelDim (which wins)",
     HS(dim)},
    {.name = "labelType",
     .type = CFG_ENUM,
     .flags = LOCAL,
     .def = "category",
     .choices = "category",
     .unsupported = "regression|none",
     .help = "category: a class a frame, delivered one-hot"},
    {.name = "type",
     .type = CFG_ENUM,
     .flags = LOCAL,
     .def = "category",
     .choices = "category",
     .unsupported = "regression|none",
     .help = "the same as labelType (which wins)"},
    {.name = "scpFile",
     .type = CFG_PATH,
     .flags = LOCAL,
     .help = "accepted for CNTK's configs (its HTKMLFDeserializer's utterances are the "
             "features' script file's, as here)"},
    {.name = "labelToTargetMappingFile",
     .type = CFG_UNSUPPORTED,
     .help = "mapping labels to target vectors is not supported; labels are one-hot classes"},
    {.name = "targetDim",
     .type = CFG_UNSUPPORTED,
     .help = "mapping labels to target vectors is not supported"},
    {.name = "phoneBoundaries",
     .type = CFG_BOOL,
     .flags = LOCAL,
     .def = "false",
     .help = "a segment's first frame has the value 2 in its class's row, the others 1 "
             "(CNTK's CTC labels: ForwardBackward; text MLFs, utterances, not frameMode)",
     HS(boundaries)},
    {.name = NULL},
};

static const struct cfg_schema label_schema = {
    .name = "HTK label stream",
    .where = "inside an HTK reader (the block with mlfFile)",
    .help = "Frame classes from master label files.",
    .keys = label_keys,
};

/* A stream of a deserializer: checked as features or labels once its type is known. */
static const struct cfg_key no_keys[] = {{.name = NULL}};
static const struct cfg_schema any_stream = {
    .name = "HTK stream",
    .where = "inside an HTK deserializer's input",
    .help = "An HTK deserializer's stream: its keys are its type's (features or labels).",
    .keys = no_keys,
    .open = 1,
};

/* A deserializer block of the composite form: its type or module, its input. */
static const struct cfg_key deserializer_keys[] = {
    {.name = "type",
     .type = CFG_ENUM,
     .flags = LOCAL,
     .choices = "HTKFeatureDeserializer|HTKMLFDeserializer|HTKMLFBinaryDeserializer",
     .unsupported = "LatticeDeserializer",
     .help = "the deserializer"},
    {.name = "module",
     .type = CFG_ENUM,
     .flags = LOCAL,
     .choices = "HTKDeserializers",
     .help = "the reader library that holds it"},
    {.name = "chunkSizeInBytes",
     .type = CFG_INT,
     .flags = LOCAL | CFG_HAS_MIN,
     .min = 1,
     .help = "accepted for CNTK's configs, no effect (the HTK reader's chunks are whole "
             "utterances of about 1024 frames)"},
    {.name = "input",
     .type = CFG_BLOCK_MAP,
     .flags = CFG_REQUIRED | LOCAL,
     .sub = &any_stream,
     .help = "input = [ NAME = [ ... ] ]: the one stream of this deserializer"},
    {.name = NULL},
};

static const struct cfg_schema deserializer_schema = {
    .name = "HTK deserializer",
    .where = "inside reader.deserializers = ({ ... })",
    .help = "CNTK's HTKFeatureDeserializer or HTKMLFDeserializer.",
    .keys = deserializer_keys,
};

/* The value of key in b (own block only) as text, or NULL. */
static const char *local_text(struct cfg_node *b, const char *key)
{
    struct cfg_node *n = NULL;
    const char *v = NULL;
    struct pt_err quiet;
    pt_err_clear(&quiet);
    if (cfg_find_local(b, key, &n, &quiet) || !n || cfg_is_block(n) || cfg_value(n, &v, &quiet))
        return NULL;
    return v;
}

int htk_deserializer(struct cfg_node *d)
{
    const char *t = local_text(d, "type"), *m = local_text(d, "module");
    return (t &&
            (!strcasecmp(t, "HTKFeatureDeserializer") || !strcasecmp(t, "HTKMLFDeserializer") ||
             !strcasecmp(t, "HTKMLFBinaryDeserializer"))) ||
           (m && !strcasecmp(m, "HTKDeserializers")); /* its other types: refused by its schema */
}

static int is_feature_block(struct cfg_node *n)
{
    struct cfg_node *k = NULL;
    struct pt_err quiet;
    pt_err_clear(&quiet);
    return cfg_find_local(n, "scpFile", &k, &quiet) == 0 && k &&
           !(cfg_find_local(n, "mlfFile", &k, &quiet) == 0 && k);
}

static int is_label_block(struct cfg_node *n)
{
    struct cfg_node *k = NULL;
    struct pt_err quiet;
    pt_err_clear(&quiet);
    return (cfg_find_local(n, "mlfFile", &k, &quiet) == 0 && k) ||
           (cfg_find_local(n, "mlfFileList", &k, &quiet) == 0 && k);
}

static int legacy_type(struct cfg_node *block)
{
    struct cfg_node *t = NULL;
    const char *v = NULL;
    struct pt_err quiet;
    pt_err_clear(&quiet);
    return cfg_find(block, "readerType", &t, &quiet) == 0 && t && !cfg_is_block(t) &&
           cfg_value(t, &v, &quiet) == 0 &&
           (!strcasecmp(v, "HTKMLFReader") || !strcasecmp(v, "HTKDeserializers"));
}

/* Child n of reader block b as a block: itself, or the block a `$name$` value names; NULL
 * for other values. */
static struct cfg_node *as_block(struct cfg_node *b, struct cfg_node *n)
{
    if (cfg_is_block(n))
        return n;
    struct cfg_node *x = NULL;
    struct pt_err quiet;
    pt_err_clear(&quiet);
    if (!strchr(cfg_key(n), '.') && cfg_find_block(b, cfg_key(n), &x, &quiet) == 0 && x &&
        cfg_is_block(x))
        return x;
    return NULL;
}

int htk_legacy_stream(struct cfg_node *block, struct cfg_node *n)
{
    struct cfg_node *x = as_block(block, n);
    return x && legacy_type(block) && (is_feature_block(x) || is_label_block(x));
}

/* contextWindow: "N" (odd) or "L:R". */
static int context_window(struct cfg_node *n, const char *s, int *left, int *right,
                          struct pt_err *e)
{
    char *end = NULL;
    long a = strtol(s, &end, 10), b = -1;
    if (end != s && *end == ':') {
        const char *t = end + 1;
        b = strtol(t, &end, 10);
        if (end == t)
            end = (char *)s;
    }
    struct cfg_node *k = NULL;
    cfg_find_local(n, "contextWindow", &k, e);
    const struct cfg_origin *at = k ? cfg_value_origin(k) : cfg_origin_of(n);
    if (end == s || *end || a < 0 || a > 1000 || b > 1000 || (b < 0 && *end == '\0' && a < 1))
        return cfg_error(e, at,
                         "contextWindow: expected the frames of the window, N (odd) or "
                         "LEFT:RIGHT, got \"%s\"",
                         s);
    if (b < 0 && a % 2 == 0)
        return cfg_error(e, at,
                         "contextWindow: %ld frames are not symmetrical around a frame: give "
                         "an odd number, or LEFT:RIGHT",
                         a);
    *left = b < 0 ? (int)(a / 2) : (int)a;
    *right = b < 0 ? (int)(a / 2) : (int)b;
    return 0;
}

/* Stream `name`, block n (features: feat), into rc->inputs[rc->ninputs] and hc (rc->htk, or
 * a further stream's own). */
static int read_stream(struct cfg_check *ck, struct cfg_node *n, const char *name, int feat,
                       struct reader_config *rc, struct htk_config *hc, struct pt_err *e)
{
    const struct cfg_schema *s = feat ? &feature_schema : &label_schema;
    struct hstream h;
    memset(&h, 0, sizeof h);
    int r = cfg_schema_check(ck, n, s, e);
    if (r == 0)
        r = cfg_schema_read(n, s, &h, e);
    if (r)
        return r;
    struct reader_input *in = &rc->inputs[rc->ninputs];
    memset(in, 0, sizeof *in);
    if (strlen(name) >= sizeof in->name)
        return cfg_error(e, cfg_origin_of(n), "stream name '%.40s...' is too long", name);
    snprintf(in->name, sizeof in->name, "%s", name);
    snprintf(in->alias, sizeof in->alias, "%s", name);
    struct cfg_node *k = NULL;
    if (feat) {
        if (h.expand)
            return cfg_error(e, cfg_origin_of(n),
                             "%s: expandToUtterance = true (utterance-level features) is not "
                             "supported",
                             name);
        hc->features = rc->ninputs;
        memcpy(hc->scp, h.scp, sizeof hc->scp);
        memcpy(hc->prefix, h.prefix, sizeof hc->prefix);
        if ((r = cfg_find_local(n, "scpFile", &k, e)))
            return r;
        hc->scp_origin = *cfg_value_origin(k);
        hc->left = hc->right = 0;
        if (h.context[0] && (r = context_window(n, h.context, &hc->left, &hc->right, e)))
            return r;
        long long d = (long long)h.dim * (1 + hc->left + hc->right);
        if (d > (1 << 24))
            return cfg_error(e, cfg_origin_of(n), "%s: dim x context frames = %lld is too large",
                             name, d);
        in->dim = (int)d;
    } else {
        hc->labels = rc->ninputs;
        int dim = h.label_dim ? h.label_dim : h.dim;
        if (!dim)
            return cfg_error(e, cfg_origin_of(n),
                             "%s: labelDim (or dim) is not set: expected the number of classes",
                             name);
        if (h.mlf[0] && h.mlf_list[0])
            return cfg_error(e, cfg_origin_of(n), "%s: give mlfFile or mlfFileList, not both",
                             name);
        if ((r = cfg_find_local(n, h.mlf[0] ? "mlfFile" : "mlfFileList", &k, e)))
            return r;
        if (!k)
            return cfg_error(e, cfg_origin_of(n), "%s: mlfFile (or mlfFileList) is not set", name);
        hc->mlf_origin = *cfg_value_origin(k);
        memcpy(hc->mlf, h.mlf, sizeof hc->mlf);
        memcpy(hc->mlf_list, h.mlf_list, sizeof hc->mlf_list);
        memcpy(hc->states, h.states, sizeof hc->states);
        if (h.states[0] && (r = cfg_find_local(n, "labelMappingFile", &k, e)) == 0)
            hc->states_origin = *cfg_value_origin(k);
        hc->label_dim = in->dim = dim;
        hc->boundaries = h.boundaries;
    }
    rc->ninputs++;
    return r;
}

/* The fields of one stream, named alike in struct htk_config (the first feature and label
 * streams) and struct htk_extra (each further one). */
#define STREAM_FIELDS(X)                                                                           \
    X(scp)                                                                                         \
    X(prefix)                                                                                      \
    X(scp_origin)                                                                                  \
    X(left)                                                                                        \
    X(right) X(mlf) X(mlf_list) X(states) X(mlf_origin) X(states_origin) X(label_dim) X(boundaries)
#define COPY_FIELD(f) memcpy(&dst->f, &src->f, sizeof dst->f);

static void copy_to_extra(struct htk_extra *dst, const struct htk_config *src)
{
    STREAM_FIELDS(COPY_FIELD)
}

static void copy_from_extra(struct htk_config *dst, const struct htk_extra *src)
{
    STREAM_FIELDS(COPY_FIELD)
}

/* A further stream (the legacy form's second feature or label stream, and after): read as
 * the first is, into rc->htk.extra. */
static int read_extra(struct cfg_check *ck, struct cfg_node *n, const char *name, int feat,
                      struct reader_config *rc, struct pt_err *e)
{
    struct htk_config *hc = &rc->htk;
    if (hc->nextra == HTK_MAX_EXTRA || rc->ninputs == CTF_MAX_INPUTS)
        return cfg_error(e, cfg_origin_of(n),
                         "%s: more streams than partrain's HTK reader reads (a feature and a "
                         "label stream and %d more)",
                         name, HTK_MAX_EXTRA);
    struct htk_config *t = calloc(1, sizeof *t);
    if (!t)
        return pt_err_set(e, PT_ENOMEM, "error: out of memory");
    int r = read_stream(ck, n, name, feat, rc, t, e);
    struct htk_extra *x = &hc->extra[hc->nextra];
    memset(x, 0, sizeof *x);
    x->feat = feat;
    x->input = rc->ninputs - 1;
    copy_to_extra(x, t);
    free(t);
    if (r == 0)
        hc->nextra++;
    return r;
}

void htk_extra_config(const struct htk_config *hc, int k, struct htk_config *out)
{
    const struct htk_extra *x = &hc->extra[k];
    memset(out, 0, sizeof *out);
    out->on = hc->on;
    out->frame_mode = hc->frame_mode;
    out->features = x->feat ? x->input : -1;
    out->labels = x->feat ? -1 : x->input;
    copy_from_extra(out, x);
}

/* nbruttsineachrecurrentiter: N, or N:N:... per epoch (the last repeats). */
static int streams(struct cfg_node *n, const char *v, struct htk_config *hc, struct pt_err *e)
{
    hc->nstreams = 0;
    for (const char *p = v; *p;) {
        char *end = NULL;
        long k = strtol(p, &end, 10);
        if (end == p || k < 1 || k > 4096 || (*end && *end != ':') || hc->nstreams == HTK_MAX_SCHED)
            return cfg_error(e, cfg_value_origin(n),
                             "nbruttsineachrecurrentiter: expected utterances in parallel, 1 to "
                             "4096, or up to %d of them a:b:c (one an epoch), got \"%s\"",
                             HTK_MAX_SCHED, v);
        hc->streams[hc->nstreams++] = (int)k;
        p = *end ? end + 1 : end;
    }
    return hc->nstreams ? 0
                        : cfg_error(e, cfg_value_origin(n),
                                    "nbruttsineachrecurrentiter: expected a number, got \"\"");
}

/* What both forms share once the streams are read: frame mode (CNTK's HTK readers default
 * to frames), truncated back-propagation through time and its streams, the randomization
 * window (randomize = auto: 48 hours of 10 ms frames, in
 * samples, unless randomizationWindow is given). */
static int finish(struct cfg_node *b, struct reader_config *rc, int nf, int nl, struct pt_err *e)
{
    if (nf < 1)
        return cfg_error(e, cfg_origin_of(b),
                         "an HTK reader needs a feature stream (a block with scpFile); found "
                         "%d label streams and none",
                         nl);
    if (nl == 0) /* features only (CNTK's write action) */
        rc->htk.labels = -1;
    struct cfg_node *n = NULL, *t = NULL;
    const char *v = NULL;
    int trunc = 0, r = cfg_find(b, "frameMode", &n, e);
    rc->htk.frame_mode = r == 0 && n ? rc->frame_mode : 1;
    rc->frame_mode = 0;
    if (r == 0)
        r = cfg_get_bool(b, "truncated", 0, &trunc, &t, e);
    if (r == 0 && trunc && rc->htk.frame_mode)
        return cfg_error(e, cfg_value_origin(t),
                         "truncated = true needs frameMode = false (utterances in segments; "
                         "frames have no state to carry), as in CNTK");
    int bounds = rc->htk.boundaries;
    for (int i = 0; i < rc->htk.nextra; i++)
        bounds |= rc->htk.extra[i].boundaries;
    if (r == 0 && bounds && rc->htk.frame_mode)
        return cfg_error(e, cfg_origin_of(b),
                         "phoneBoundaries = true needs frameMode = false (whole utterances), "
                         "as in CNTK");
    rc->htk.truncated = trunc;
    rc->htk.streams[0] = 1;
    rc->htk.nstreams = 1;
    if (r == 0 && (r = cfg_find(b, "nbruttsineachrecurrentiter", &n, e)) == 0 && n &&
        !cfg_is_block(n) && (r = cfg_value(n, &v, e)) == 0)
        r = streams(n, v, &rc->htk, e);
    if (r == 0 && (r = cfg_find(b, "randomizationWindow", &n, e)) == 0 && !n) {
        rc->window = 17280000;
        rc->sample_window = 1;
    }
    rc->htk.on = 1;
    return r;
}

int htk_legacy_read(struct cfg_check *ck, struct cfg_node *b, struct reader_config *rc,
                    struct pt_err *e)
{
    memset(&rc->htk, 0, sizeof rc->htk);
    rc->ninputs = 0;
    int nf = 0, nl = 0, r = cfg_parse_block(b, e);
    for (struct cfg_node *c = r ? NULL : cfg_first(b); r == 0 && c; c = cfg_next(c)) {
        struct cfg_node *n = as_block(b, c);
        if (!n)
            continue;
        struct cfg_node *k = NULL;
        static const char *const refused[] = {"denlatTocFile", "phoneFile", "numLatTocFile"};
        for (int i = 0; r == 0 && i < 3; i++)
            if ((r = cfg_find_local(n, refused[i], &k, e)) == 0 && k)
                r = cfg_error(e, cfg_origin_of(k),
                              "%s: lattices and HMMs (%s, for sequence training) are not "
                              "supported",
                              cfg_key(c), refused[i]);
        if (r || !htk_legacy_stream(b, c))
            continue;
        int feat = is_feature_block(n);
        r = (feat ? nf : nl) >= 1 ? read_extra(ck, n, cfg_key(c), feat, rc, e)
                                  : read_stream(ck, n, cfg_key(c), feat, rc, &rc->htk, e);
        nf += feat;
        nl += !feat;
    }
    return r ? r : finish(b, rc, nf, nl, e);
}

static int ctf_deserializer(struct cfg_node *d)
{
    const char *t = local_text(d, "type"), *m = local_text(d, "module");
    return (t && !strcasecmp(t, "CNTKTextFormatDeserializer")) ||
           (!t && m && !strcasecmp(m, "CNTKTextFormatReader"));
}

/* The labels from a text-format deserializer d beside the features (CNTK's
 * Speech/LSTM_CTC): its one stream, read by htk_ctf.c. */
static int read_ctf_labels(struct cfg_node *d, struct reader_config *rc, struct pt_err *e)
{
    char path[512];
    struct reader_config *t = malloc(sizeof *t);
    if (!t)
        return pt_err_set(e, PT_ENOMEM, "error: out of memory");
    int r = reader_ctf_deserializer_read(d, t, e);
    if (r == 0 && t->ninputs != 1)
        r = cfg_error(e, cfg_origin_of(d),
                      "%s: beside HTK features a text-format deserializer gives one stream, "
                      "the labels; found %d",
                      cfg_path(d, path, sizeof path), t->ninputs);
    if (r == 0 && rc->ninputs == CTF_MAX_INPUTS)
        r = cfg_error(e, cfg_origin_of(d), "reader: more than %d inputs", CTF_MAX_INPUTS);
    if (r == 0 && strlen(t->file) >= sizeof rc->htk.ctf)
        r = cfg_error(e, &t->file_origin, "file: the path is too long");
    if (r == 0) {
        struct htk_config *hc = &rc->htk;
        hc->labels = rc->ninputs;
        rc->inputs[rc->ninputs++] = t->inputs[0];
        hc->label_dim = t->inputs[0].dim;
        memcpy(hc->ctf, t->file, strlen(t->file) + 1); /* shorter: checked above */
        hc->ctf_origin = t->file_origin;
        snprintf(hc->ctf_alias, sizeof hc->ctf_alias, "%s", t->inputs[0].alias);
        hc->ctf_sparse = t->inputs[0].sparse;
        cfg_mark_used(d);
    }
    free(t);
    return r;
}

int htk_deserializers_read(struct cfg_check *ck, struct cfg_node *b, struct cfg_node *d1,
                           struct cfg_node *d2, struct reader_config *rc, struct pt_err *e)
{
    memset(&rc->htk, 0, sizeof rc->htk);
    rc->ninputs = 0;
    char path[512];
    int nf = 0, nl = 0, r = 0;
    struct cfg_node *ds[2] = {d1, d2}, *ctf = NULL;
    for (int i = 0; r == 0 && i < 2; i++) {
        struct cfg_node *d = ds[i], *input = NULL;
        if (!d)
            break;
        if (!htk_deserializer(d) && ctf_deserializer(d) && !ctf) {
            ctf = d; /* after the features */
            continue;
        }
        if (!htk_deserializer(d))
            return cfg_error(e, cfg_origin_of(d),
                             "%s: an HTK deserializer composes with the other HTK deserializer "
                             "(HTKFeatureDeserializer : HTKMLFDeserializer) or with a "
                             "CNTKTextFormatDeserializer of the labels, not with this one",
                             cfg_path(d, path, sizeof path));
        if ((r = cfg_schema_check(ck, d, &deserializer_schema, e)) ||
            (r = cfg_find_local(d, "input", &input, e)) || (r = cfg_parse_block(input, e)))
            return r;
        const char *t = local_text(d, "type");
        int feat = t ? !strcasecmp(t, "HTKFeatureDeserializer") : -1;
        struct cfg_node *n = cfg_first(input);
        if (!n || cfg_next(n) || !cfg_is_block(n))
            return cfg_error(e, cfg_origin_of(input),
                             "%s: expected one stream, input = [ NAME = [ ... ] ]",
                             cfg_path(input, path, sizeof path));
        if (feat < 0) /* module only: the stream's keys tell */
            feat = is_feature_block(n);
        if ((feat ? nf : nl) >= 1)
            return cfg_error(e, cfg_origin_of(d),
                             "%s: a second %s: partrain's HTK reader has one feature stream "
                             "and one label stream",
                             cfg_path(d, path, sizeof path),
                             feat ? "HTKFeatureDeserializer" : "HTKMLFDeserializer");
        cfg_mark_used(d);
        r = read_stream(ck, n, cfg_key(n), feat, rc, &rc->htk, e);
        nf += feat;
        nl += !feat;
    }
    if (r == 0 && ctf && (nf != 1 || nl != 0))
        return cfg_error(e, cfg_origin_of(ctf),
                         "%s: a text-format deserializer composes with an "
                         "HTKFeatureDeserializer (its labels), not with an MLF's labels",
                         cfg_path(ctf, path, sizeof path));
    if (r == 0 && ctf) {
        r = read_ctf_labels(ctf, rc, e);
        nl++;
    }
    return r ? r : finish(b, rc, nf, nl, e);
}
