/* CNTK's LMSequenceReader's config (lm.h): the reader block's sections, named as the config
 * likes. As CNTK's (Common/Config.cpp GetFileConfigNames): a block with labelMappingFile,
 * labelDim, labelType or sectionType = "labels" is a label section, else one with dim a
 * feature section. Of the two label sections the first by name (CNTK's order of a
 * record's members: "labelIn" before "labels") is the input, a Category, and the second the
 * output, NextWord; the feature section (dim = 0: no features of its own) names the input
 * that carries the words ("features"), the output section the labels. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "reader/lm.h"

/* One section's keys as read. */
struct lsec {
    int type; /* 0 Category, 1 NextWord */
    int label_dim, dim;
    char begin[64], end[64];
    const char *mode;
};

#define LS(m) CFG_OUT(struct lsec, m)

static const struct cfg_key label_keys[] = {
    {.name = "labelType",
     .type = CFG_ENUM,
     .flags = CFG_LOCAL,
     .def = "Category",
     .choices = "Category|NextWord",
     .unsupported = "None",
     .help = "Category: the input words (the first label section by name); NextWord: the "
             "words that follow them, the targets (the second)",
     LS(type)},
    {.name = "labelDim",
     .type = CFG_INT,
     .flags = CFG_LOCAL | CFG_HAS_MIN | CFG_HAS_MAX,
     .min = 1,
     .max = 1 << 24,
     .help = "the vocabulary's size: the word-class file's words (required on the Category "
             "section; a NextWord section's is its input's)",
     LS(label_dim)},
    {.name = "beginSequence",
     .type = CFG_STRING,
     .flags = CFG_LOCAL,
     .help = "the sentence-start word; accepted (the lines carry their own marks)",
     LS(begin)},
    {.name = "endSequence",
     .type = CFG_STRING,
     .flags = CFG_LOCAL,
     .help = "the sentence-end word; accepted (the lines carry their own marks)",
     LS(end)},
    {.name = "labelMappingFile",
     .type = CFG_PATH,
     .flags = CFG_LOCAL,
     .help = "accepted for CNTK's configs: the words' ids are the word-class file's (CNTK's "
             "too where this file does not exist, as in its examples); never written"},
    {.name = "dim",
     .type = CFG_INT,
     .flags = CFG_LOCAL,
     .help = "accepted for CNTK's configs (1: one word a step)",
     LS(dim)},
    {.name = "elementSize",
     .type = CFG_INT,
     .flags = CFG_LOCAL,
     .help = "CNTK's binary cache layout; accepted, no effect (no cache is written)"},
    {.name = "sectionType",
     .type = CFG_STRING,
     .flags = CFG_LOCAL,
     .help = "CNTK's binary cache layout; accepted, no effect"},
    {.name = "mapping",
     .type = CFG_TEXT,
     .flags = CFG_LOCAL,
     .help = "CNTK's binary cache layout; accepted, no effect"},
    {.name = "category",
     .type = CFG_TEXT,
     .flags = CFG_LOCAL,
     .help = "CNTK's binary cache layout; accepted, no effect"},
    {.name = NULL},
};

static const struct cfg_schema label_schema = {
    .name = "LMSequenceReader label section",
    .where = "inside an LMSequenceReader block (the blocks with labelType or labelDim)",
    .help = "The words of a language model's input (Category) or targets (NextWord).",
    .keys = label_keys,
};

static const struct cfg_key feature_keys[] = {
    {.name = "dim",
     .type = CFG_INT,
     .flags = CFG_LOCAL | CFG_REQUIRED,
     .help = "0: the sentences have no features besides their words (CNTK's only working "
             "value)",
     LS(dim)},
    {.name = "mode",
     .type = CFG_ENUM,
     .flags = CFG_LOCAL,
     .def = "class",
     .choices = "class",
     .unsupported = "softmax|nce",
     .help = "class: the targets as class-based rows (4 a step)",
     LS(mode)},
    {.name = "sectionType",
     .type = CFG_STRING,
     .flags = CFG_LOCAL,
     .help = "CNTK's binary cache layout; accepted, no effect"},
    {.name = NULL},
};

static const struct cfg_schema feature_schema = {
    .name = "LMSequenceReader feature section",
    .where = "inside an LMSequenceReader block (the block with dim and no label keys)",
    .help = "Names the network's input that carries the words.",
    .keys = feature_keys,
};

static struct cfg_node *local(struct cfg_node *b, const char *key)
{
    struct cfg_node *n = NULL;
    struct pt_err quiet;
    pt_err_clear(&quiet);
    return cfg_find_local(b, key, &n, &quiet) == 0 ? n : NULL;
}

static int is_label(struct cfg_node *n)
{
    struct cfg_node *t = local(n, "sectionType");
    const char *v = NULL;
    struct pt_err quiet;
    pt_err_clear(&quiet);
    return local(n, "labelMappingFile") || local(n, "labelDim") || local(n, "labelType") ||
           (t && !cfg_is_block(t) && cfg_value(t, &v, &quiet) == 0 && !strcmp(v, "labels"));
}

static int lm_type(struct cfg_node *block)
{
    struct cfg_node *t = NULL;
    const char *v = NULL;
    struct pt_err quiet;
    pt_err_clear(&quiet);
    return cfg_find(block, "readerType", &t, &quiet) == 0 && t && !cfg_is_block(t) &&
           cfg_value(t, &v, &quiet) == 0 && !strcasecmp(v, "LMSequenceReader");
}

int lm_stream(struct cfg_node *block, struct cfg_node *n)
{
    return cfg_is_block(n) && lm_type(block) && (is_label(n) || local(n, "dim"));
}

/* The next input, *index its place in rc->inputs. */
static int add_input(struct reader_config *rc, struct cfg_node *n, const char *name, int dim,
                     int sparse, int *index, struct pt_err *e)
{
    struct reader_input *in = &rc->inputs[rc->ninputs];
    memset(in, 0, sizeof *in);
    if (strlen(name) >= sizeof in->name)
        return cfg_error(e, cfg_origin_of(n), "section name '%.40s...' is too long", name);
    snprintf(in->name, sizeof in->name, "%s", name);
    snprintf(in->alias, sizeof in->alias, "%s", name);
    in->dim = dim;
    in->sparse = sparse;
    *index = rc->ninputs++;
    return 0;
}

/* nbruttsineachrecurrentiter: one number (CNTK's reader reads the first of a list). */
static int read_nbrutts(struct cfg_node *b, int *out, struct pt_err *e)
{
    struct cfg_node *n = NULL;
    const char *v = NULL;
    int r = cfg_find(b, "nbruttsineachrecurrentiter", &n, e);
    *out = 1; /* CNTK's default: one sentence a minibatch */
    if (r || !n)
        return r;
    if ((r = cfg_value(n, &v, e)))
        return r;
    char *end = NULL;
    long k = strtol(v, &end, 10);
    if (end == v || (*end && *end != ':') || k < 0 || k > 1 << 20)
        return cfg_error(e, cfg_value_origin(n),
                         "nbruttsineachrecurrentiter = %s: expected 0 (fill each minibatch with "
                         "sentences of one length) or the sentences of a minibatch, N > 0",
                         v);
    *out = (int)k;
    return 0;
}

int lm_config_read(struct cfg_check *ck, struct cfg_node *b, struct reader_config *rc,
                   struct pt_err *e)
{
    struct lm_config *lc = &rc->lm;
    lc->on = 1;
    lc->origin = *cfg_origin_of(b);
    rc->ninputs = 0;
    struct cfg_node *lab[2] = {NULL, NULL}, *feat = NULL;
    int r = cfg_parse_block(b, e);
    for (struct cfg_node *c = r ? NULL : cfg_first(b); r == 0 && c; c = cfg_next(c)) {
        if (!lm_stream(b, c))
            continue;
        if (!is_label(c)) {
            if (feat)
                r = cfg_error(e, cfg_origin_of(c),
                              "%s: a second feature section (after %s): an LMSequenceReader "
                              "has one, naming the input of the words",
                              cfg_key(c), cfg_key(feat));
            feat = c;
        } else if (lab[1]) {
            r = cfg_error(e, cfg_origin_of(c),
                          "%s: a third label section: an LMSequenceReader has two, the input "
                          "words (Category) and their targets (NextWord)",
                          cfg_key(c));
        } else {
            lab[lab[0] != NULL] = c;
        }
    }
    if (r)
        return r;
    if (!lab[1])
        return cfg_error(e, cfg_origin_of(b),
                         "LMSequenceReader: expected two label sections, e.g. labelIn = [ "
                         "labelType = \"Category\"; labelDim = 10000 ] and labels = [ labelType "
                         "= \"NextWord\" ]; found %d",
                         lab[0] != NULL);
    if (strcmp(cfg_key(lab[0]), cfg_key(lab[1])) > 0) { /* CNTK's order: by name */
        struct cfg_node *t = lab[0];
        lab[0] = lab[1];
        lab[1] = t;
    }
    struct lsec s[2], f;
    memset(s, 0, sizeof s);
    memset(&f, 0, sizeof f);
    for (int i = 0; r == 0 && i < 2; i++)
        if ((r = cfg_schema_check(ck, lab[i], &label_schema, e)) == 0)
            r = cfg_schema_read(lab[i], &label_schema, &s[i], e);
    if (r == 0 && feat && (r = cfg_schema_check(ck, feat, &feature_schema, e)) == 0)
        r = cfg_schema_read(feat, &feature_schema, &f, e);
    if (r)
        return r;
    if (s[0].type != 0 || s[1].type != 1)
        return cfg_error(e, cfg_origin_of(lab[s[0].type != 0 ? 0 : 1]),
                         "%s: labelType: expected Category on %s (the input words: the first "
                         "label section by name, as CNTK orders them) and NextWord on %s",
                         cfg_key(lab[s[0].type != 0 ? 0 : 1]), cfg_key(lab[0]), cfg_key(lab[1]));
    if (!s[0].label_dim)
        return cfg_error(e, cfg_origin_of(lab[0]),
                         "%s: labelDim is not set: expected the vocabulary's size (the "
                         "word-class file's words)",
                         cfg_key(lab[0]));
    if (feat && f.dim != 0)
        return cfg_error(e, cfg_origin_of(feat),
                         "%s: dim = %d: an LMSequenceReader's sentences have no features "
                         "besides their words (dim = 0)",
                         cfg_key(feat), f.dim);
    lc->vocab = s[0].label_dim;
    if (!lc->wordclass[0])
        return cfg_error(e, cfg_origin_of(b),
                         "LMSequenceReader: wordclass is not set: expected the word-class file "
                         "(INDEX COUNT WORD CLASS a line, as writeWordAndClass writes it)");
    if (!rc->file[0])
        return cfg_error(e, cfg_origin_of(b),
                         "LMSequenceReader: file is not set: expected the text, a sentence a "
                         "line");
    struct cfg_node *wc = NULL;
    if ((r = cfg_find(b, "wordclass", &wc, e)))
        return r;
    lc->wordclass_origin = *cfg_value_origin(wc);
    if ((r = read_nbrutts(b, &lc->nbrutts, e)))
        return r;
    r = add_input(rc, feat ? feat : b, feat ? cfg_key(feat) : "features", lc->vocab, 1,
                  &lc->features, e);
    return r ? r : add_input(rc, lab[1], cfg_key(lab[1]), 4, 0, &lc->labels, e);
}
