/* action=writeWordAndClass: the vocabulary of a text and its word classes, the files a
 * class-based language model reads (CNTK's DoWriteWordAndClassInfo, the first command of
 * its PennTreebank RNN example).
 *
 *   1. each line of inputFile, spaces at both ends cut, gets "<begin> " in front unless
 *      that text occurs in it, then " <end>" behind unless that occurs; its words (split at
 *      spaces and tabs) are counted, the first one skipped when begin and end are the same
 *      word (so a PTB line "</s> w1 ... wn" counts "</s>" once);
 *   2. cutoff only lowers vocabSize: to the number of words counted more than cutoff times,
 *      when that is smaller (CNTK's warning); no word is dropped for it;
 *   3. nbrClass > 0: the vocabSize - 1 most frequent words other than unk are kept, the
 *      others' counts are added to unk's (which is always an entry, counted 0 if need be);
 *      the entries, most frequent first, are numbered and classed by their cumulative
 *      share of sqrt(count / total): df += sqrt(count / total) / dd (dd the sum of those
 *      square roots, df at most 1); the word whose df passes (class + 1) / nbrClass moves
 *      to the next class (one class per word at most);
 *      nbrClass = 0: every word, in strcmp order, all class 0, nothing merged;
 *   4. the files: outputVocabFile "     INDEX\t     COUNT\tWORD\tCLASS" (COUNT as C++
 *      prints a double: %g), outputWord2Cls one class a line, outputCls2Index the first
 *      index of each class (0 for a class no word falls in, as CNTK's zero-filled matrix
 *      leaves it), outputMappingFile one word a line.
 *
 * Where partrain differs from CNTK: words of equal count are in the order of their first
 * occurrence in inputFile (unk last when it does not occur), where CNTK's order depends on
 * its standard library's heap; dd is summed in index order (CNTK: hash order, the last bit
 * may differ); makeMode also looks at outputMappingFile; a line ending in a carriage
 * return, a NUL byte, an empty inputFile and nbrClass above the vocabulary are errors.
 * Rank 0 does the work, the other ranks wait for its outcome; each file is written safely
 * (core/fs.h): never through a symlink, never over inputFile. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "comm/comm.h"
#include "core/blob.h"
#include "core/fs.h"
#include "train/train_internal.h"

struct wc_settings {
    char input[4096], vocab[4096], w2c[4096], c2i[4096], mapping[4096];
    const char *unk, *begin, *end;
    long long vocab_size, nbr_class, cutoff;
    int make_mode;
};

#define WS(m) CFG_OUT(struct wc_settings, m)

/* A word as the text has it: no spaces or tabs, not empty. */
static int valid_word(const struct cfg_val *v, char *why, size_t size)
{
    if (v->s && v->s[0] && !strpbrk(v->s, " \t\r\n"))
        return 0;
    snprintf(why, size, "expected one word (not empty, without spaces or tabs), got \"%.60s\"",
             v->s ? v->s : "");
    return 1;
}

static const struct cfg_key wc_cmd_keys[] = {
    {.name = "action",
     .type = CFG_STRING,
     .def = "writeWordAndClass",
     .help = "writeWordAndClass: a text's vocabulary and word classes"},
    {.name = "inputFile",
     .type = CFG_PATH,
     .flags = CFG_REQUIRED,
     .help = "the text: sentences, one a line, words separated by spaces or tabs",
     WS(input)},
    {.name = "outputVocabFile",
     .type = CFG_PATH,
     .flags = CFG_REQUIRED,
     .help = "the vocabulary: \"     INDEX<TAB>     COUNT<TAB>WORD<TAB>CLASS\" a line, most "
             "frequent first (the wordclass file of CNTK's LMSequenceReader)",
     WS(vocab)},
    {.name = "outputWord2Cls",
     .type = CFG_PATH,
     .help = "the class of each word, one a line, in index order (required when nbrClass > 0)",
     WS(w2c)},
    {.name = "outputCls2Index",
     .type = CFG_PATH,
     .help = "the index of each class's first word, one a line (required when nbrClass > 0)",
     WS(c2i)},
    {.name = "outputMappingFile",
     .type = CFG_PATH,
     .help = "optional: the words, one a line, in index order (a label mapping file)",
     WS(mapping)},
    {.name = "vocabSize",
     .type = CFG_INT,
     .flags = CFG_REQUIRED | CFG_HAS_MIN,
     .min = 2,
     .help = "the entries of the vocabulary, unk included: the vocabSize - 1 most frequent "
             "words, the others counted as unk (with nbrClass > 0)",
     WS(vocab_size)},
    {.name = "nbrClass",
     .type = CFG_INT,
     .def = "0",
     .flags = CFG_HAS_MIN,
     .help = "word classes, at most vocabSize; 0: no classes (every word, sorted, class 0)",
     WS(nbr_class)},
    {.name = "cutoff",
     .type = CFG_INT,
     .def = "1",
     .help = "vocabSize is lowered to the number of words counted more than cutoff times, "
             "when that is smaller (words are not dropped for it)",
     WS(cutoff)},
    {.name = "unk",
     .type = CFG_STRING,
     .def = "<unk>",
     .valid = valid_word,
     .help = "the word that stands for the words left out of the vocabulary",
     WS(unk)},
    {.name = "beginSequence",
     .type = CFG_STRING,
     .flags = CFG_REQUIRED,
     .valid = valid_word,
     .help = "the word put in front of a line that lacks it (\"</s>\" in CNTK's PTB example)",
     WS(begin)},
    {.name = "endSequence",
     .type = CFG_STRING,
     .flags = CFG_REQUIRED,
     .valid = valid_word,
     .help = "the word put at the end of a line that lacks it; when it is beginSequence, a "
             "line's first word is not counted",
     WS(end)},
    {.name = "makeMode",
     .type = CFG_BOOL,
     .def = "true",
     .help = "skip the action when every output file is at least as new as inputFile",
     WS(make_mode)},
    {.name = "printValues", .type = CFG_BOOL, .help = "accepted and ignored, as CNTK ignores it"},
    {.name = NULL},
};

const struct cfg_schema wc_command_schema = {
    .name = "command block (action=writeWordAndClass)",
    .where = "at top level, named in command=",
    .help = "Counts the words of a text and writes its vocabulary and word classes, as CNTK's "
            "writeWordAndClass action does. Unknown keys here are allowed (they may be "
            "variables).",
    .keys = wc_cmd_keys,
    .open = 1,
};

/* ------------------------------------------------------------------ counting */

struct wc_word {
    char *text;
    size_t len;
    uint64_t count;
    size_t first; /* order of first occurrence; SIZE_MAX: unk, absent from the text */
    long long cls;
};

/* The words counted, with an open-addressing index (slot: word number + 1, 0 free). */
struct wc_vocab {
    struct wc_word *w;
    size_t n, cap;
    size_t *slot;
    size_t nslot; /* a power of 2, at least twice n */
};

static void vocab_free(struct wc_vocab *v)
{
    for (size_t i = 0; i < v->n; i++)
        free(v->w[i].text);
    free(v->w);
    free(v->slot);
}

static size_t *vocab_find(const struct wc_vocab *v, const char *s, size_t len)
{
    size_t i = (size_t)blob_fnv1a(BLOB_FNV_START, s, len) & (v->nslot - 1);
    for (; v->slot[i]; i = (i + 1) & (v->nslot - 1)) {
        const struct wc_word *w = &v->w[v->slot[i] - 1];
        if (w->len == len && memcmp(w->text, s, len) == 0)
            break;
    }
    return &v->slot[i];
}

static int vocab_grow(struct wc_vocab *v, struct pt_err *e)
{
    size_t ns = v->nslot ? 2 * v->nslot : 1024;
    size_t *slot = pt_calloc(ns, sizeof *slot, e);
    struct wc_word *w = slot ? pt_realloc(v->w, ns / 2 * sizeof *w, e) : NULL;
    if (!w) {
        free(slot);
        return PT_ENOMEM;
    }
    free(v->slot);
    v->w = w;
    v->cap = ns / 2;
    v->slot = slot;
    v->nslot = ns;
    for (size_t i = 0; i < v->n; i++)
        *vocab_find(v, v->w[i].text, v->w[i].len) = i + 1;
    return 0;
}

static int vocab_count(struct wc_vocab *v, const char *s, size_t len, struct pt_err *e)
{
    if (v->n == v->cap && vocab_grow(v, e))
        return PT_ENOMEM;
    size_t *at = vocab_find(v, s, len);
    if (*at) {
        v->w[*at - 1].count++;
        return 0;
    }
    char *text = pt_strndup(s, len, e);
    if (!text)
        return PT_ENOMEM;
    v->w[v->n] = (struct wc_word){.text = text, .len = len, .count = 1, .first = v->n};
    *at = ++v->n;
    return 0;
}

/* One line (NUL-terminated, without its line end) as CNTK reads it: spaces cut at both
 * ends, begin and end added where their patterns are missing, the words counted. buf is
 * a scratch buffer the line is built in. */
static int count_line(struct wc_vocab *v, const struct wc_settings *ws, char *line, char **buf,
                      size_t *cap, struct pt_err *e)
{
    while (*line == ' ')
        line++;
    size_t len = strlen(line), bl = strlen(ws->begin), el = strlen(ws->end);
    while (len && line[len - 1] == ' ')
        line[--len] = '\0';
    if (*cap < len + bl + el + 3) {
        char *nb = pt_realloc(*buf, len + bl + el + 3, e);
        if (!nb)
            return PT_ENOMEM;
        *buf = nb;
        *cap = len + bl + el + 3;
    }
    char *s = *buf;
    s[0] = '\0';
    int has_begin = 0;
    for (const char *p = line; !has_begin && (p = strstr(p, ws->begin)); p++)
        has_begin = p[bl] == ' ';
    if (!has_begin)
        snprintf(s, *cap, "%s ", ws->begin);
    strcat(s, line);
    int has_end = 0;
    for (const char *p = s; !has_end && (p = strstr(p, ws->end)); p++)
        has_end = p > s && p[-1] == ' ';
    if (!has_end)
        strcat(strcat(s, " "), ws->end);
    int skip = strcmp(ws->begin, ws->end) == 0;
    for (const char *p = s + strspn(s, " \t"); *p; p += strspn(p, " \t")) {
        size_t n = strcspn(p, " \t");
        int rc = skip ? 0 : vocab_count(v, p, n, e);
        if (rc)
            return rc;
        skip = 0;
        p += n;
    }
    return 0;
}

/* Every word of inputFile counted into v. */
static int count_file(struct wc_vocab *v, const struct wc_settings *ws, struct pt_err *e)
{
    FILE *f = fopen(ws->input, "r");
    if (!f)
        return pt_err_set(e, PT_EUSER, "error: inputFile '%s': cannot open it: %s", ws->input,
                          strerror(errno));
    char *line = NULL, *buf = NULL;
    size_t cap = 0, bcap = 0, ln = 0;
    ssize_t got;
    int rc = 0;
    while (rc == 0 && (got = getline(&line, &cap, f)) >= 0) {
        ln++;
        size_t n = (size_t)got;
        if (n && line[n - 1] == '\n')
            line[--n] = '\0';
        if (strlen(line) != n)
            rc = pt_err_set(e, PT_EUSER,
                            "%s:%zu: error: a NUL byte: expected text, words separated by "
                            "spaces or tabs",
                            ws->input, ln);
        else if (n && line[n - 1] == '\r')
            rc = pt_err_set(e, PT_EUSER,
                            "%s:%zu: error: the line ends in a carriage return (a DOS line end): "
                            "expected lines that end in a line feed alone",
                            ws->input, ln);
        else
            rc = count_line(v, ws, line, &buf, &bcap, e);
    }
    if (rc == 0 && ferror(f))
        rc = pt_err_set(e, PT_ESYS, "%s:%zu: error: reading failed: %s", ws->input, ln + 1,
                        strerror(errno));
    if (rc == 0 && ln == 0)
        rc = pt_err_set(e, PT_EUSER,
                        "%s:1: error: inputFile is empty: expected text, sentences one a line, "
                        "words separated by spaces or tabs",
                        ws->input);
    free(line);
    free(buf);
    fclose(f);
    return rc;
}

/* ------------------------------------------------------------------ classes */

/* Most frequent first; equal counts in the order of first occurrence. */
static int by_count(const void *a, const void *b)
{
    const struct wc_word *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return x->first < y->first ? -1 : x->first > y->first;
}

static int by_text(const void *a, const void *b)
{
    return strcmp(((const struct wc_word *)a)->text, ((const struct wc_word *)b)->text);
}

/* The entries (*out, *n; they share v's texts and ws->unk): step 3 of the file comment. */
static int make_entries(struct wc_vocab *v, const struct wc_settings *ws, long long vocab_size,
                        struct wc_word **out, size_t *n, struct pt_err *e)
{
    if (ws->nbr_class == 0) { /* CNTK: every word, sorted, class 0 */
        qsort(v->w, v->n, sizeof *v->w, by_text);
        *out = v->w;
        *n = v->n;
        return 0;
    }
    qsort(v->w, v->n, sizeof *v->w, by_count);
    struct wc_word *w = pt_calloc((size_t)vocab_size, sizeof *w, e);
    if (!w)
        return PT_ENOMEM;
    struct wc_word unk = {.text = (char *)ws->unk, .len = strlen(ws->unk), .first = SIZE_MAX};
    size_t kept = 0;
    for (size_t i = 0; i < v->n; i++) {
        if (strcmp(v->w[i].text, ws->unk) == 0) {
            unk.count += v->w[i].count;
            unk.first = v->w[i].first;
        } else if (kept + 1 < (size_t)vocab_size) {
            w[kept++] = v->w[i];
        } else {
            unk.count += v->w[i].count;
        }
    }
    w[kept++] = unk;
    qsort(w, kept, sizeof *w, by_count);
    double total = 0, dd = 0, df = 0;
    for (size_t i = 0; i < kept; i++)
        total += (double)w[i].count;
    for (size_t i = 0; i < kept; i++)
        dd += sqrt((double)w[i].count / total);
    long long cls = 0;
    for (size_t i = 0; i < kept; i++) {
        df += sqrt((double)w[i].count / total) / dd;
        if (df > 1)
            df = 1;
        if (df > 1.0 * (double)(cls + 1) / (double)ws->nbr_class && cls < ws->nbr_class)
            cls++;
        w[i].cls = cls;
    }
    *out = w;
    *n = kept;
    return 0;
}

/* vocabSize after cutoff (step 2), with CNTK's lines when it is lowered. */
static int allowed_size(struct pt_ctx *ctx, const struct wc_vocab *v, const struct wc_settings *ws,
                        long long *size, struct pt_err *e)
{
    size_t left = v->n;
    for (size_t i = 0; ws->cutoff > 0 && i < v->n; i++)
        left -= v->w[i].count <= (uint64_t)ws->cutoff;
    if (left == 0)
        return pt_err_set(e, PT_EUSER,
                          "%s: error: no word remained after cutoff with threshold %lld (every "
                          "word is counted at most %lld times)",
                          ws->input, ws->cutoff, ws->cutoff);
    *size = ws->vocab_size;
    if ((unsigned long long)*size > left) {
        pt_log_plain(ctx->log,
                     "Warning: actual vocabulary size is less than required.\n"
                     "\t\tRequired vocabulary size:%lld\n"
                     "\t\tActual vocabulary size:%zu\n"
                     "\t\tActual vocabulary size after cutoff:%zu\n"
                     "\t\tWe will change to actual vocabulary size: %zu\n",
                     *size, v->n, left, left);
        *size = (long long)left;
    }
    if (ws->nbr_class > *size)
        return pt_err_set(e, PT_EUSER,
                          "%s: error: nbrClass = %lld classes for a vocabulary of %lld words "
                          "(the words counted more than cutoff = %lld times): expected at most "
                          "one class a word",
                          ws->input, ws->nbr_class, *size, ws->cutoff);
    return 0;
}

/* ------------------------------------------------------------------ files */

struct wc_table {
    const struct wc_word *w;
    size_t n;
    long long nbr_class;
};

static int write_vocab(FILE *f, void *arg, struct pt_err *e)
{
    const struct wc_table *t = arg;
    (void)e;
    for (size_t i = 0; i < t->n; i++)
        fprintf(f, "     %zu\t     %g\t%s\t%lld\n", i, (double)t->w[i].count, t->w[i].text,
                t->nbr_class > 0 ? t->w[i].cls : 0);
    return 0;
}

static int write_words(FILE *f, void *arg, struct pt_err *e)
{
    const struct wc_table *t = arg;
    (void)e;
    for (size_t i = 0; i < t->n; i++)
        fprintf(f, "%s\n", t->w[i].text);
    return 0;
}

static int write_w2c(FILE *f, void *arg, struct pt_err *e)
{
    const struct wc_table *t = arg;
    (void)e;
    for (size_t i = 0; i < t->n; i++)
        fprintf(f, "%lld\n", t->w[i].cls);
    return 0;
}

static int write_c2i(FILE *f, void *arg, struct pt_err *e)
{
    const struct wc_table *t = arg;
    size_t *first = pt_calloc((size_t)t->nbr_class, sizeof *first, e);
    if (!first)
        return PT_ENOMEM;
    for (size_t i = t->n; i-- > 0;) /* the lowest index of each class */
        first[t->w[i].cls] = i;
    for (long long c = 0; c < t->nbr_class; c++)
        fprintf(f, "%zu\n", first[c]);
    free(first);
    return 0;
}

static int write_files(struct pt_ctx *ctx, const struct wc_settings *ws, const struct wc_table *t,
                       struct pt_err *e)
{
    int rc = 0;
    if (ws->mapping[0]) {
        rc = pt_file_write_text(ws->mapping, 1, "outputMappingFile", write_words, (void *)t, e);
        if (rc == 0)
            pt_log_plain(ctx->log, "Created label-mapping file with %zu entries.\n", t->n);
    }
    if (rc == 0)
        rc = pt_file_write_text(ws->vocab, 1, "outputVocabFile", write_vocab, (void *)t, e);
    if (rc == 0)
        pt_log_plain(ctx->log, "Created vocabulary file with %zu entries.\n", t->n);
    if (rc || ws->nbr_class == 0)
        return rc;
    rc = pt_file_write_text(ws->w2c, 1, "outputWord2Cls", write_w2c, (void *)t, e);
    if (rc == 0)
        pt_log_plain(ctx->log, "Created word-to-class map with %zu entries.\n", t->n);
    if (rc == 0)
        rc = pt_file_write_text(ws->c2i, 1, "outputCls2Index", write_c2i, (void *)t, e);
    if (rc == 0)
        pt_log_plain(ctx->log, "Created class-to-index map with %lld entries.\n", ws->nbr_class);
    return rc;
}

/* makeMode: every output at least as new as inputFile (a missing inputFile: CNTK's
 * fuptodate, the outputs are up to date when they exist). A symlink is never up to date. */
static int up_to_date(const struct wc_settings *ws)
{
    const char *outs[] = {ws->vocab, ws->nbr_class > 0 ? ws->w2c : "",
                          ws->nbr_class > 0 ? ws->c2i : "", ws->mapping};
    struct stat in, st;
    int have_in = stat(ws->input, &in) == 0;
    for (size_t i = 0; i < sizeof outs / sizeof outs[0]; i++) {
        if (!outs[i][0])
            continue;
        if (lstat(outs[i], &st) != 0 || !S_ISREG(st.st_mode))
            return 0;
        if (have_in &&
            (st.st_mtim.tv_sec < in.st_mtim.tv_sec ||
             (st.st_mtim.tv_sec == in.st_mtim.tv_sec && st.st_mtim.tv_nsec < in.st_mtim.tv_nsec)))
            return 0;
    }
    return 1;
}

/* Rank 0's part: steps 1 to 4. */
static int word_class(struct pt_ctx *ctx, const struct wc_settings *ws, struct pt_err *e)
{
    if (ws->mapping[0])
        pt_log_plain(ctx->log, "Mapping file       --> %s\n", ws->mapping);
    pt_log_plain(ctx->log, "Vocabulary file    --> %s\n", ws->vocab);
    if (ws->nbr_class > 0)
        pt_log_plain(ctx->log, "Word-to-class map  --> %s\nClass-to-index map --> %s\n", ws->w2c,
                     ws->c2i);
    pt_log_plain(ctx->log, "\n");
    if (ws->make_mode && up_to_date(ws)) {
        pt_log_plain(ctx->log, "All output files up to date.\n");
        return 0;
    }
    struct wc_vocab v = {0};
    struct wc_word *w = NULL;
    size_t n = 0;
    long long size = 0;
    pt_log_plain(ctx->log, "Reading input file inputFile: %s\n", ws->input);
    int rc = count_file(&v, ws, e);
    if (rc == 0)
        pt_log_plain(ctx->log, "Vocabulary size %zu.\n", v.n);
    if (rc == 0)
        rc = allowed_size(ctx, &v, ws, &size, e);
    if (rc == 0)
        rc = make_entries(&v, ws, size, &w, &n, e);
    struct wc_table t = {.w = w, .n = n, .nbr_class = ws->nbr_class};
    if (rc == 0)
        rc = write_files(ctx, ws, &t, e);
    if (w != v.w)
        free(w);
    vocab_free(&v);
    return rc;
}

/* ------------------------------------------------------------------ the action */

/* What can be checked before any command runs: the class files with classes, nbrClass
 * within vocabSize, no output a symlink, inputFile or another output. */
static int check(struct cfg_node *command, const struct wc_settings *ws, struct pt_err *e)
{
    static const char *const keys[] = {"outputVocabFile", "outputWord2Cls", "outputCls2Index",
                                       "outputMappingFile"};
    const char *paths[] = {ws->vocab, ws->nbr_class > 0 ? ws->w2c : "",
                           ws->nbr_class > 0 ? ws->c2i : "", ws->mapping};
    char at[512], why[256];
    struct cfg_val nc = {0};
    int rc = cfg_schema_get(command, &wc_command_schema, "nbrClass", &nc, e);
    for (int i = 1; rc == 0 && i < 3 && ws->nbr_class > 0; i++)
        if (!paths[i][0])
            rc =
                cfg_error(e, cfg_origin_of(command), "%s: nbrClass = %lld needs %s, the file of %s",
                          cfg_path(command, at, sizeof at), ws->nbr_class, keys[i],
                          i == 1 ? "each word's class" : "each class's first word");
    if (rc == 0 && ws->nbr_class > ws->vocab_size)
        rc = cfg_error(e, nc.node ? cfg_value_origin(nc.node) : cfg_origin_of(command),
                       "nbrClass: %lld classes for vocabSize = %lld words: expected at most one "
                       "class a word",
                       ws->nbr_class, ws->vocab_size);
    cfg_val_free(&nc);
    struct pt_inputs ins = {0};
    snprintf(why, sizeof why, "inputFile of %s", cfg_path(command, at, sizeof at));
    if (rc == 0)
        rc = pt_inputs_add(&ins, ws->input, why, e);
    char *canon[4] = {0};
    for (int i = 0; rc == 0 && i < 4; i++) {
        if (!paths[i][0])
            continue;
        struct cfg_val p = {0};
        struct stat st;
        rc = cfg_schema_get(command, &wc_command_schema, keys[i], &p, e);
        const struct cfg_origin *o = p.node ? cfg_value_origin(p.node) : cfg_origin_of(command);
        canon[i] = pt_fs_canonical(paths[i]);
        for (int j = 0; rc == 0 && j < i; j++)
            if (paths[j][0] && (canon[i] && canon[j] ? strcmp(canon[i], canon[j]) == 0
                                                     : strcmp(paths[i], paths[j]) == 0))
                rc = cfg_error(e, o, "%s: '%s' is also %s: each output needs its own file", keys[i],
                               paths[i], keys[j]);
        if (rc == 0 && lstat(paths[i], &st) == 0 && S_ISLNK(st.st_mode))
            rc = cfg_error(e, o,
                           "%s: '%s' is a symbolic link, and nothing is written through a "
                           "symlink (remove it, or name the real file)",
                           keys[i], paths[i]);
        if (rc == 0 && pt_inputs_find(&ins, paths[i]))
            rc = cfg_error(e, o, "%s: '%s' is the %s; refusing to write over it", keys[i], paths[i],
                           why);
        cfg_val_free(&p);
    }
    for (int i = 0; i < 4; i++)
        free(canon[i]);
    pt_inputs_free(&ins);
    return rc;
}

int wc_check_config(struct cfg_node *command, struct pt_err *e)
{
    struct wc_settings ws;
    memset(&ws, 0, sizeof ws);
    int rc = cfg_schema_read(command, &wc_command_schema, &ws, e);
    if (rc == 0)
        rc = check(command, &ws, e);
    cfg_schema_free(&wc_command_schema, &ws);
    return rc;
}

int wc_run(struct pt_ctx *ctx, struct cfg_node *command, struct pt_err *e)
{
    struct wc_settings ws;
    memset(&ws, 0, sizeof ws);
    int rc = cfg_schema_read(command, &wc_command_schema, &ws, e);
    if (rc == 0)
        rc = check(command, &ws, e); /* again: an earlier command may have made a link */
    if (rc == 0 && comm_rank(ctx->comm) == 0)
        rc = word_class(ctx, &ws, e);
    rc = train_agree(ctx->comm, rc, "to write the vocabulary and word classes", e);
    cfg_schema_free(&wc_command_schema, &ws);
    return rc;
}
