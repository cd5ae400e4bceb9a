/* The HTK reader's labels from a CNTK text-format file instead of an MLF: CNTK's
 * Speech/LSTM_CTC composes HTKFeatureDeserializer with a CNTKTextFormatDeserializer,
 *
 *   0 |l 102:2
 *   0 |l 103:2
 *   0 |l 103:1
 *   ...
 *
 * whose sequence k labels the frames of the utterance whose key is k (the script file's
 * "k=Features/...[0,367]"), a line a frame. A frame's row holds one token: one value, 1,
 * or 2 where the token starts (the form phoneBoundaries gives an MLF's labels, which
 * ForwardBackward reads). Lines are parsed by parsers/ctf.c; errors name file:line. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parsers/ctf.h"
#include "reader/htk.h"
#include "reader/reader.h"

struct ctf_labels {
    struct htk_labels *out;
    size_t cap_entries, cap_ids;
    int open; /* an entry is being read */
    uint64_t id;
};

/* Row r of col (one input) as its one token and whether it starts there; -1 when the row
 * holds anything else. */
static int token_of(const struct ctf_column *col, int dim, int sparse, size_t r, uint32_t *tok)
{
    int found = 0;
    float v = 0.0f;
    if (sparse) {
        size_t a = r ? col->row_end[r - 1] : 0, b = col->row_end[r];
        for (size_t i = a; i < b; i++)
            if (col->val[i] != 0.0f) {
                found++;
                v = col->val[i];
                *tok = (uint32_t)col->idx[i];
            }
    } else {
        const float *row = col->val + r * (size_t)dim;
        for (int i = 0; i < dim; i++)
            if (row[i] != 0.0f) {
                found++;
                v = row[i];
                *tok = (uint32_t)i;
            }
    }
    if (found != 1 || (v != 1.0f && v != 2.0f))
        return -1;
    if (v == 2.0f)
        *tok |= HTK_BOUNDARY;
    return 0;
}

static int add_frame(struct ctf_labels *s, const char *file, size_t lineno, uint64_t id,
                     uint32_t tok, struct pt_err *e)
{
    struct htk_labels *l = s->out;
    if (!s->open || id != s->id) { /* a new sequence: a new entry */
        char key[32];
        int k = snprintf(key, sizeof key, "%" PRIu64, id);
        if (htk_names_find(&l->keys, key, (size_t)k) != SIZE_MAX)
            return pt_err_set(e, PT_EUSER,
                              "%s:%zu: error: sequence %s again, after other sequences (a "
                              "sequence's lines must be together)",
                              file, lineno, key);
        if (s->open)
            l->n++;
        if (htk_grow(&l->first, &s->cap_entries, l->n + 2, sizeof *l->first) ||
            htk_names_add(&l->keys, key, (size_t)k))
            return pt_err_set(e, PT_ENOMEM, "error: out of memory");
        l->first[l->n + 1] = l->first[l->n];
        s->open = 1;
        s->id = id;
    }
    size_t at = (size_t)l->first[l->n + 1];
    if (htk_grow(&l->ids, &s->cap_ids, at + 1, sizeof *l->ids))
        return pt_err_set(e, PT_ENOMEM, "error: out of memory");
    l->ids[at] = tok;
    l->first[l->n + 1]++;
    return 0;
}

int htk_ctf_labels_read(const struct htk_config *hc, struct pt_log *log, struct htk_labels *out,
                        struct pt_err *e)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(hc->ctf, "r");
    if (!f)
        return cfg_error(e, &hc->ctf_origin, "cannot read the labels' text-format file '%s': %s",
                         hc->ctf, strerror(errno));
    struct ctf_input in = {.alias = hc->ctf_alias, .dim = hc->label_dim, .sparse = hc->ctf_sparse};
    struct ctf_column col;
    memset(&col, 0, sizeof col);
    struct ctf_labels s = {.out = out};
    char *line = NULL;
    size_t cap = 0, lineno = 0;
    ssize_t len;
    int r = 0;
    out->first = calloc(2, sizeof *out->first);
    s.cap_entries = 2;
    if (!out->first)
        r = pt_err_set(e, PT_ENOMEM, "error: out of memory");
    while (r == 0 && (len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        size_t n = (size_t)len;
        while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            n--;
        struct ctf_where at = {.file = hc->ctf, .line = lineno};
        struct ctf_line cl;
        ctf_column_clear(&col);
        r = ctf_parse_line(&in, 1, &col, line, n, 1, &at, &cl, e);
        if (r || cl.empty)
            continue;
        uint32_t tok = 0;
        if (!cl.has_id)
            r = pt_err_set(e, PT_EUSER,
                           "%s:%zu: error: expected a sequence id first (the key of the "
                           "utterance it labels in the script file)",
                           hc->ctf, lineno);
        else if (!(cl.rows & 1u) || token_of(&col, hc->label_dim, hc->ctf_sparse, 0, &tok))
            r = pt_err_set(e, PT_EUSER,
                           "%s:%zu: error: expected one token a frame in |%s: one value, 1, or "
                           "2 where the token starts",
                           hc->ctf, lineno, hc->ctf_alias);
        else
            r = add_frame(&s, hc->ctf, lineno, cl.id, tok, e);
    }
    if (r == 0 && ferror(f))
        r = pt_err_set(e, PT_EUSER, "error: cannot read '%s'", hc->ctf);
    if (s.open)
        out->n++;
    free(line);
    ctf_column_free(&col);
    fclose(f);
    out->nclasses = (size_t)hc->label_dim;
    if (r == 0 && out->n == 0)
        r = pt_err_set(e, PT_EUSER, "%s: error: no labelled frames", hc->ctf);
    if (r == 0 && log)
        pt_log_printf(log, "Text-format labels: %zu utterances with %llu frames\n", out->n,
                      (unsigned long long)out->first[out->n]);
    return r;
}
