/* CNTK's LMSequenceReader's data (lm.h): the word-class file, the sentences, and the
 * minibatches as CNTK's BatchSequenceReader makes them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader/htk.h"
#include "reader/lm.h"
#include "reader/reader_internal.h"

struct lm_set {
    uint32_t *tok; /* every sentence's word ids, back to back */
    size_t ntok, cap_tok;
    uint64_t *first; /* sentence k: tok[first[k] .. first[k] + len[k]) */
    uint32_t *len, *line;
    size_t n, cap;
    uint32_t *cls;           /* each word's class */
    uint32_t *cfirst, *cend; /* each class's words [cfirst, cend) */
    size_t nclasses;
    /* the epoch: block [b0, b1) of the sentences, in the shuffled order `order`, `done`
     * marking those read; the next minibatch's scan starts at `scan` */
    uint32_t *order;
    uint8_t *done;
    size_t b0, b1, left, scan;
    uint64_t seed, returned, limit;
    /* the minibatch's sentences (every rank's), of len[pick[0]] words; with
     * nbruttsineachrecurrentiter > 0 they may come in pieces of minibatchSize steps: steps
     * [at, steps) are still to come */
    uint32_t *pick;
    size_t npick, cap_pick;
    uint32_t at, steps;
};

/* std::mt19937, as the C++ library defines it (seeded with one integer). */
struct mt {
    uint32_t x[624];
    int i;
};

static void mt_seed(struct mt *m, uint32_t s)
{
    m->x[0] = s;
    for (int i = 1; i < 624; i++)
        m->x[i] = 1812433253u * (m->x[i - 1] ^ (m->x[i - 1] >> 30)) + (uint32_t)i;
    m->i = 624;
}

static uint32_t mt_next(struct mt *m)
{
    if (m->i == 624) {
        for (int k = 0; k < 624; k++) {
            uint32_t y = (m->x[k] & 0x80000000u) | (m->x[(k + 1) % 624] & 0x7fffffffu);
            m->x[k] = m->x[(k + 397) % 624] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
        }
        m->i = 0;
    }
    uint32_t y = m->x[m->i++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    return y ^ (y >> 18);
}

/* std::shuffle over v[0..n) as the C++ library of CNTK's Linux builds did it (GCC before
 * 7): element i from 1 up swaps with one of [0, i], drawn by rejection (one draw of the
 * generator each; later libraries draw two indices from one number, another order). */
static void shuffle(uint32_t *v, size_t n, uint32_t seed)
{
    struct mt m;
    mt_seed(&m, seed);
    for (size_t i = 1; i < n; i++) {
        uint32_t range = (uint32_t)i + 1, scale = 0xffffffffu / range, past = range * scale, x;
        do
            x = mt_next(&m);
        while (x >= past);
        uint32_t j = x / scale, t = v[i];
        v[i] = v[j];
        v[j] = t;
    }
}

/* The blank-separated words of line s into w (at most max), their count. */
static size_t split(char *s, char **w, size_t max)
{
    size_t n = 0;
    for (char *p = strtok(s, " \t\r\n"); p; p = strtok(NULL, " \t\r\n"))
        if (n < max)
            w[n++] = p;
        else
            n++;
    return n;
}

static int parse_u32(const char *s, uint32_t *out)
{
    char *end = NULL;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (end == s || *end || errno || v > UINT32_MAX || s[0] == '-')
        return -1;
    *out = (uint32_t)v;
    return 0;
}

/* The word-class file: each word's id (the index column) into names/ids, its class. */
static int read_classes(struct reader *r, struct lm_set *s, struct htk_names *names, uint32_t **ids,
                        struct pt_err *e)
{
    const struct lm_config *lc = &r->rc.lm;
    const char *path = lc->wordclass;
    FILE *f = fopen(path, "r");
    if (!f)
        return cfg_error(e, &lc->wordclass_origin, "cannot read word-class file '%s': %s", path,
                         strerror(errno));
    size_t vocab = (size_t)lc->vocab, lineno = 0, cap = 0, seen = 0;
    s->cls = malloc(vocab * sizeof *s->cls);
    uint8_t *have = calloc(vocab, 1);
    char *buf = NULL;
    size_t bcap = 0;
    int rc = s->cls && have ? 0 : pt_err_set(e, PT_ENOMEM, "error: out of memory");
    while (rc == 0 && getline(&buf, &bcap, f) >= 0) {
        lineno++;
        char *w[5];
        size_t k = split(buf, w, 5);
        uint32_t idx = 0, c = 0, count = 0;
        if (k == 0)
            continue;
        if (k != 4 || parse_u32(w[0], &idx) || parse_u32(w[3], &c) ||
            (parse_u32(w[1], &count) && strtod(w[1], NULL) <= 0.0))
            rc = pt_err_set(e, PT_EUSER,
                            "%s:%zu: error: expected INDEX COUNT WORD CLASS (four fields, "
                            "numbers but the word), as writeWordAndClass writes them",
                            path, lineno);
        else if (idx >= vocab)
            rc = pt_err_set(e, PT_EUSER,
                            "%s:%zu: error: word index %u is out of range: the vocabulary has "
                            "labelDim = %zu words (0 .. %zu)",
                            path, lineno, idx, vocab, vocab - 1);
        else if (have[idx])
            rc = pt_err_set(e, PT_EUSER, "%s:%zu: error: word index %u is given twice", path,
                            lineno, idx);
        else if (htk_names_find(names, w[2], strlen(w[2])) != SIZE_MAX)
            rc = pt_err_set(e, PT_EUSER, "%s:%zu: error: the word '%s' is given twice", path,
                            lineno, w[2]);
        else if (htk_names_add(names, w[2], strlen(w[2])) ||
                 htk_grow(ids, &cap, names->n, sizeof **ids))
            rc = pt_err_set(e, PT_ENOMEM, "error: out of memory");
        if (rc)
            break;
        (*ids)[names->n - 1] = idx;
        have[idx] = 1;
        s->cls[idx] = c;
        seen++;
    }
    if (rc == 0 && ferror(f))
        rc = pt_err_set(e, PT_ESYS, "%s: error: cannot read: %s", path, strerror(errno));
    if (rc == 0 && seen != vocab)
        rc = pt_err_set(e, PT_EUSER,
                        "%s: error: %zu words, where the reader's labelDim is %zu: the "
                        "vocabulary's size and the word-class file's words must agree",
                        path, seen, vocab);
    free(buf);
    free(have);
    fclose(f);
    /* each class's words: ids grouped by class, classes rising (CNTK's rule) */
    for (size_t j = 0; rc == 0 && j < vocab; j++) {
        if (j > 0 && s->cls[j] < s->cls[j - 1])
            return pt_err_set(e, PT_EUSER,
                              "%s: error: word %zu has class %u after word %zu's class %u: the "
                              "words must be grouped by class, classes rising with the index",
                              path, j, s->cls[j], j - 1, s->cls[j - 1]);
        if (s->cls[j] >= s->nclasses)
            s->nclasses = (size_t)s->cls[j] + 1;
    }
    if (rc == 0 && s->nclasses > vocab)
        return pt_err_set(e, PT_EUSER, "%s: error: class %zu for %zu words", path, s->nclasses - 1,
                          vocab);
    s->cfirst = rc ? NULL : calloc(s->nclasses, sizeof *s->cfirst);
    s->cend = rc ? NULL : calloc(s->nclasses, sizeof *s->cend);
    if (rc == 0 && (!s->cfirst || !s->cend))
        return pt_err_set(e, PT_ENOMEM, "error: out of memory");
    for (size_t j = vocab; rc == 0 && j-- > 0;) { /* a class without words: empty */
        s->cfirst[s->cls[j]] = (uint32_t)j;
        if (j + 1 == vocab || s->cls[j + 1] != s->cls[j])
            s->cend[s->cls[j]] = (uint32_t)j + 1;
    }
    return rc;
}

/* The sentences of the text file: lines of three words or more, each word's id. */
static int read_text(struct reader *r, struct lm_set *s, const struct htk_names *names,
                     const uint32_t *ids, struct pt_err *e)
{
    const struct lm_config *lc = &r->rc.lm;
    const char *path = r->rc.file;
    FILE *f = fopen(path, "r");
    if (!f)
        return cfg_error(e, &r->rc.file_origin, "cannot read data file '%s': %s", path,
                         strerror(errno));
    size_t unk = htk_names_find(names, lc->unk, strlen(lc->unk)), lineno = 0, cap_w = 0;
    char *buf = NULL, **w = NULL;
    size_t bcap = 0;
    int rc = 0;
    while (rc == 0 && getline(&buf, &bcap, f) >= 0) {
        lineno++;
        /* a line of b bytes has at most (b + 1) / 2 words */
        if (htk_grow(&w, &cap_w, strlen(buf) / 2 + 1, sizeof *w)) {
            rc = pt_err_set(e, PT_ENOMEM, "error: out of memory");
            break;
        }
        size_t k = split(buf, w, cap_w);
        if (k < 3)
            continue;
        size_t c1 = s->cap, c2 = s->cap; /* the three arrays grow alike from s->cap */
        if (htk_grow(&s->tok, &s->cap_tok, s->ntok + k, sizeof *s->tok) ||
            htk_grow(&s->first, &c1, s->n + 1, sizeof *s->first) ||
            htk_grow(&s->line, &c2, s->n + 1, sizeof *s->line) ||
            htk_grow(&s->len, &s->cap, s->n + 1, sizeof *s->len)) {
            rc = pt_err_set(e, PT_ENOMEM, "error: out of memory");
            break;
        }
        for (size_t i = 0; rc == 0 && i < k; i++) {
            size_t x = htk_names_find(names, w[i], strlen(w[i]));
            if (x == SIZE_MAX && unk == SIZE_MAX)
                rc = pt_err_set(e, PT_EUSER,
                                "%s:%zu: error: the word '%s' is not in the word-class file "
                                "'%s', nor is the unknown-word token '%s' (unk) that such "
                                "words read as",
                                path, lineno, w[i], lc->wordclass, lc->unk);
            else
                s->tok[s->ntok + i] = ids[x == SIZE_MAX ? unk : x];
        }
        if (k > UINT32_MAX / 2 && rc == 0)
            rc = pt_err_set(e, PT_EUSER, "%s:%zu: error: a line of %zu words", path, lineno, k);
        if (rc)
            break;
        s->first[s->n] = s->ntok;
        s->len[s->n] = (uint32_t)k;
        s->line[s->n++] = (uint32_t)lineno;
        s->ntok += k;
    }
    if (rc == 0 && ferror(f))
        rc = pt_err_set(e, PT_ESYS, "%s: error: cannot read: %s", path, strerror(errno));
    if (rc == 0 && s->n == 0)
        rc = pt_err_set(e, PT_EUSER,
                        "%s: error: no sentence: expected lines of three words or more (\"</s> "
                        "w1 ... </s>\")",
                        path);
    free(buf);
    free(w);
    fclose(f);
    return rc;
}

void lm_close(struct reader *r)
{
    struct lm_set *s = r->lm;
    if (!s)
        return;
    free(s->tok);
    free(s->first);
    free(s->len);
    free(s->line);
    free(s->cls);
    free(s->cfirst);
    free(s->cend);
    free(s->order);
    free(s->done);
    free(s->pick);
    free(s);
    r->lm = NULL;
}

int lm_open(struct reader *r, struct pt_err *e)
{
    struct lm_set *s = calloc(1, sizeof *s);
    if (!s)
        return pt_err_set(e, PT_ENOMEM, "error: out of memory");
    r->lm = s;
    struct htk_names names;
    memset(&names, 0, sizeof names);
    uint32_t *ids = NULL;
    int rc = read_classes(r, s, &names, &ids, e);
    if (rc == 0)
        rc = read_text(r, s, &names, ids, e);
    htk_names_free(&names);
    free(ids);
    struct ctf_index *ix = &r->ix; /* a sequence a sentence, one chunk */
    ix->seq_samples = rc ? NULL : malloc(s->n * sizeof *ix->seq_samples);
    ix->seq_chunk = rc ? NULL : calloc(s->n, sizeof *ix->seq_chunk);
    ix->chunk_first = rc ? NULL : malloc(2 * sizeof *ix->chunk_first);
    s->order = rc ? NULL : malloc(s->n * sizeof *s->order);
    s->done = rc ? NULL : malloc(s->n);
    if (rc == 0 &&
        (!ix->seq_samples || !ix->seq_chunk || !ix->chunk_first || !s->order || !s->done))
        rc = pt_err_set(e, PT_ENOMEM, "error: out of memory");
    for (size_t k = 0; rc == 0 && k < s->n; k++) {
        ix->seq_samples[k] = s->len[k] - 1;
        ix->total_samples += s->len[k] - 1;
    }
    if (rc == 0) {
        ix->nseq = s->n;
        ix->nchunks = 1;
        ix->chunk_first[0] = 0;
        ix->chunk_first[1] = s->n;
    }
    return rc;
}

int lm_start_epoch(struct reader *r, size_t epoch, size_t epoch_size, struct pt_err *e)
{
    (void)e;
    struct lm_set *s = r->lm;
    s->b0 = s->b1 = s->left = s->scan = 0;
    s->at = s->steps = 0;
    s->seed = epoch; /* the epoch's first block: epoch + 1 */
    s->returned = 0;
    s->limit = epoch_size;
    return 0;
}

/* The next block of whole lines, shuffled; 0 when the file is done. */
static int next_block(struct reader *r, struct lm_set *s)
{
    if (s->b1 == s->n)
        return 0;
    s->b0 = s->b1;
    uint64_t words = 0;
    while (s->b1 < s->n && words < (uint64_t)r->rc.lm.block_tokens)
        words += s->len[s->b1++];
    s->left = s->b1 - s->b0;
    for (size_t i = 0; i < s->left; i++)
        s->order[i] = (uint32_t)(s->b0 + i);
    memset(s->done, 0, s->left);
    shuffle(s->order, s->left, (uint32_t)++s->seed);
    s->scan = 0;
    return 1;
}

/* Steps [at, at + steps) of this rank's sentences of the minibatch (every rank's: s->pick)
 * into mb; cut: the sentences come in pieces (mb->cont says which piece goes on from the
 * last minibatch's), else whole (mb->cont NULL). */
static int fill(struct reader *r, struct lm_set *s, size_t at, size_t steps, int cut,
                struct minibatch *mb, struct pt_err *e)
{
    const struct lm_config *lc = &r->rc.lm;
    size_t mine = 0;
    for (size_t p = (size_t)r->rank; p < s->npick; p += (size_t)r->workers)
        mine++;
    mb->ninputs = r->rc.ninputs;
    mb->nseq = mine;
    mb->samples = mine * steps;
    int rc = 0;
    for (int i = 0; rc == 0 && i < r->rc.ninputs; i++) {
        struct mb_input *in = &mb->in[i];
        memcpy(in->name, r->rc.inputs[i].name, sizeof in->name);
        in->dim = r->rc.inputs[i].dim;
        rc = mb_input_reset(in, mine, mine ? steps : 1, e);
    }
    if (rc == 0 && cut && htk_grow(&mb->cont, &mb->cap_cont, mine ? mine : 1, 1))
        rc = pt_err_set(e, PT_ENOMEM, "error: out of memory");
    if (rc)
        return rc;
    if (cut) {
        memset(mb->cont, at > 0, mine ? mine : 1);
    } else {
        free(mb->cont);
        mb->cont = NULL;
        mb->cap_cont = 0;
    }
    struct mb_input *x = &mb->in[lc->features], *y = &mb->in[lc->labels];
    size_t vocab = (size_t)lc->vocab, q = 0;
    for (size_t p = (size_t)r->rank; p < s->npick; p += (size_t)r->workers, q++) {
        const uint32_t *w = s->tok + s->first[s->pick[p]] + at;
        x->len[q] = y->len[q] = (uint32_t)steps;
        for (size_t t = 0; t < steps; t++) {
            size_t col = t * mine + q;
            uint32_t next = w[t + 1], c = s->cls[next];
            x->data[col * vocab + w[t]] = 1.0f;
            float *l = y->data + col * 4;
            l[0] = (float)next;
            l[1] = (float)c;
            l[2] = (float)s->cfirst[c];
            l[3] = (float)s->cend[c];
        }
    }
    return 0;
}

/* The next piece of the minibatch's sentences: whole with nbruttsineachrecurrentiter = 0,
 * else at most minibatchSize steps (CNTK's: the sentences go on in the next minibatch, the
 * network's state carried over). */
static int piece(struct reader *r, struct lm_set *s, size_t mb_size, struct minibatch *mb,
                 struct pt_err *e)
{
    size_t n = s->steps - s->at;
    int cut = r->rc.lm.nbrutts > 0 && s->steps > mb_size;
    if (cut && n > mb_size)
        n = mb_size;
    int rc = fill(r, s, s->at, n, cut, mb, e);
    s->at += (uint32_t)n;
    s->returned += s->npick * (uint64_t)n;
    mb->global_samples = s->npick * n;
    return rc;
}

int lm_next(struct reader *r, size_t mb_size, struct minibatch *mb, struct pt_err *e)
{
    struct lm_set *s = r->lm;
    const struct lm_config *lc = &r->rc.lm;
    mb->global_samples = 0;
    if (s->limit && s->returned > s->limit) { /* CNTK's: the epoch ends past epochSize */
        mb->nseq = mb->samples = 0;
        return 0;
    }
    if (s->at < s->steps) /* the next piece of the sentences being read */
        return piece(r, s, mb_size, mb, e);
    if (s->left == 0 && !next_block(r, s)) {
        mb->nseq = mb->samples = 0;
        return 0;
    }
    size_t nb = s->b1 - s->b0, i0 = s->scan;
    while (s->done[i0])
        i0++;
    s->scan = i0;
    uint32_t L = s->len[s->order[i0]];
    s->npick = 0;
    uint64_t words = 0;
    for (size_t j = i0; j < nb; j++) {
        if (s->done[j] || s->len[s->order[j]] != L)
            continue;
        if (s->npick > 0 &&
            (lc->nbrutts ? s->npick >= (size_t)lc->nbrutts : words + L >= (uint64_t)mb_size))
            break;
        if (htk_grow(&s->pick, &s->cap_pick, s->npick + 1, sizeof *s->pick))
            return pt_err_set(e, PT_ENOMEM, "error: out of memory");
        s->pick[s->npick++] = s->order[j];
        s->done[j] = 1;
        s->left--;
        words += L;
    }
    s->at = 0;
    s->steps = L - 1;
    return piece(r, s, mb_size, mb, e);
}
