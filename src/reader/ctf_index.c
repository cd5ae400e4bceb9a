/* The index pass: one streaming read of the data file (a buffer at a time, never the whole
 * file), every line parsed and validated, sequences and chunks recorded. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reader/reader_internal.h"

#define INDEX_BUF          (8u << 20)
#define MAX_SHOWN_WARNINGS 5

void reader_ctf_inputs(const struct reader_config *rc, struct ctf_input *out)
{
    for (int i = 0; i < rc->ninputs; i++) {
        out[i].alias = rc->inputs[i].alias;
        out[i].dim = rc->inputs[i].dim;
        out[i].sparse = rc->inputs[i].sparse;
    }
}

int ctf_starts_sequence(const struct reader_config *rc, int has_ids, int first,
                        const struct ctf_line *line, uint64_t prev_id)
{
    if (!has_ids || rc->skip_ids || rc->frame_mode)
        return 1;
    return first || line->id != prev_id;
}

void ctf_index_free(struct ctf_index *ix)
{
    free(ix->seq_offset);
    free(ix->seq_samples);
    free(ix->seq_chunk);
    free(ix->chunk_first);
    memset(ix, 0, sizeof *ix);
}

/* State of the pass. */
struct pass {
    const struct reader_config *rc;
    struct pt_log *log;
    struct ctf_index *ix;
    struct ctf_input in[CTF_MAX_INPUTS];
    struct ctf_column cols[CTF_MAX_INPUTS];
    size_t rows[CTF_MAX_INPUTS];   /* rows of each input in the open sequence */
    size_t padded[CTF_MAX_INPUTS]; /* zero-padded rows, and where the first was */
    size_t padded_line[CTF_MAX_INPUTS];
    long long bad; /* malformed lines skipped */
    uint64_t prev_id, chunk_start;
    int open;      /* a sequence is open */
    int ids_known; /* the id style is settled by the first non-blank line */
    size_t lineno;
    size_t seq_line;       /* where the open sequence starts */
    char unknown[72];      /* the first undeclared "|alias" in the open sequence ("": none) */
    size_t unknown_line;   /* and its line */
    struct ctf_kept *keep; /* the chunks kept (NULL: none, or no more) */
    int kept_open;         /* keep's last chunk takes lines (chunk_finish not called yet) */
};

static int push_seq(struct pass *p, uint64_t offset, struct pt_err *e)
{
    struct ctf_index *ix = p->ix;
    if (ix->nseq == ix->cap_seq) {
        size_t cap = ix->cap_seq ? ix->cap_seq * 2 : 4096;
        uint64_t *o = realloc(ix->seq_offset, cap * sizeof *o);
        if (o)
            ix->seq_offset = o;
        uint32_t *s = realloc(ix->seq_samples, cap * sizeof *s);
        if (s)
            ix->seq_samples = s;
        uint32_t *c = realloc(ix->seq_chunk, cap * sizeof *c);
        if (c)
            ix->seq_chunk = c;
        if (!o || !s || !c)
            return pt_err_set(e, PT_ENOMEM, "error: out of memory indexing %s", p->rc->file);
        ix->cap_seq = cap;
    }
    /* a chunk ends at the first sequence boundary after chunkSizeInBytes */
    if (ix->nseq == 0 || offset - p->chunk_start >= p->rc->chunk_bytes) {
        if (ix->nseq > 0)
            ix->nchunks++;
        p->chunk_start = offset;
    }
    ix->seq_offset[ix->nseq] = offset;
    ix->seq_chunk[ix->nseq] = (uint32_t)ix->nchunks;
    ix->seq_samples[ix->nseq] = 0;
    ix->nseq++;
    memset(p->rows, 0, sizeof p->rows);
    p->open = 1;
    return 0;
}

/* "|x (dense, dim 2), |L (labels: sparse, dim 10)": what the config declares. */
static void declared_inputs(const struct reader_config *rc, char *buf, size_t size)
{
    size_t o = 0;
    buf[0] = '\0';
    for (int i = 0; i < rc->ninputs && o < size; i++) {
        const struct reader_input *in = &rc->inputs[i];
        int same = strcmp(in->name, in->alias) == 0;
        o += (size_t)snprintf(buf + o, size - o, "%s|%s (%s%s%s, dim %d)", i ? ", " : "", in->alias,
                              same ? "" : in->name, same ? "" : ": ",
                              in->sparse ? "sparse" : "dense", in->dim);
    }
}

/* A sequence without a row of input i: CNTK rejects it ("Input is empty in sequence") and
 * so do we, whatever maxErrors says: training on it would drop it or feed zeros silently.
 * A line's undeclared alias is the usual cause (|featurs), so it is named too. */
static int missing_input(struct pass *p, int i, struct pt_err *e)
{
    char decl[1024], seq[96] = "";
    const struct reader_input *in = &p->rc->inputs[i];
    declared_inputs(p->rc, decl, sizeof decl);
    if (p->ix->has_ids && !p->rc->skip_ids && !p->rc->frame_mode)
        snprintf(seq, sizeof seq, "sequence %llu (from this line) ",
                 (unsigned long long)p->prev_id);
    else
        snprintf(seq, sizeof seq, "the line ");
    pt_err_set(e, PT_EUSER,
               "%s:%zu: error: %shas no row of input '%s' (|%s); the reader declares %s",
               p->rc->file, p->seq_line, seq, in->name, in->alias, decl);
    if (p->unknown[0])
        pt_err_context(e, "%s:%zu has '%s', which is not declared (a misspelled alias?)",
                       p->rc->file, p->unknown_line, p->unknown);
    return PT_EUSER;
}

/* The first "|name" on the line that names no declared input (comments "|#" aside) into
 * out as "|name"; 0 when there is none. Values never contain '|', so every '|' starts an
 * input or a comment. */
static int first_undeclared(const struct reader_config *rc, const char *s, size_t len, char *out,
                            size_t size)
{
    const char *end = s + len, *q = s;
    while ((q = memchr(q, '|', (size_t)(end - q))) != NULL) {
        const char *a = ++q;
        while (q < end && *q != ' ' && *q != '\t' && *q != '|' && *q != '\r')
            q++;
        size_t n = (size_t)(q - a);
        if (n == 0 || *a == '#')
            continue;
        int known = 0;
        for (int i = 0; i < rc->ninputs && !known; i++)
            known = strlen(rc->inputs[i].alias) == n && memcmp(rc->inputs[i].alias, a, n) == 0;
        if (!known) {
            char ex[64];
            snprintf(out, size, "|%s", pt_excerpt(ex, sizeof ex, a, n, 40));
            return 1;
        }
    }
    return 0;
}

/* Remember the open sequence's first undeclared alias, for missing_input. */
static void note_undeclared(struct pass *p, const char *s, size_t len)
{
    if (p->open && !p->unknown[0] && first_undeclared(p->rc, s, len, p->unknown, sizeof p->unknown))
        p->unknown_line = p->lineno;
}

/* Row `row` of input in (a classification label stream) must be one-hot: exactly one value
 * 1 and every other 0. A row of zeros would count for nothing, a 2 would count twice. */
static int check_one_hot(struct pass *p, const struct reader_input *in, const struct ctf_column *c,
                         struct pt_err *e)
{
    size_t ones = 0, others = 0;
    int bad_at = -1;
    float bad = 0;
    size_t n = in->sparse ? c->nnz : (size_t)in->dim;
    for (size_t k = 0; k < n; k++) {
        float v = c->val[k];
        if (v == 1.0f)
            ones++;
        else if (v != 0.0f) {
            if (others++ == 0) {
                bad_at = in->sparse ? c->idx[k] : (int)k;
                bad = v;
            }
        }
    }
    if (ones == 1 && others == 0)
        return 0;
    char why[128];
    if (others)
        snprintf(why, sizeof why, "value %g at index %d", (double)bad, bad_at);
    else if (ones == 0)
        snprintf(why, sizeof why, "no value 1");
    else
        snprintf(why, sizeof why, "%zu values 1", ones);
    return pt_err_set(e, PT_EUSER,
                      "%s:%zu: error: input '%s' (|%s): expected a one-hot label row (one value 1, "
                      "the others 0) for %s, got %s",
                      p->rc->file, p->lineno, in->name, in->alias, in->one_hot, why);
}

/* Close the open sequence: its samples are the definesMBSize input's rows, else the most
 * rows of any input. */
static int close_seq(struct pass *p, struct pt_err *e)
{
    if (!p->open)
        return 0;
    for (int i = 0; i < p->rc->ninputs; i++)
        if (p->rows[i] == 0)
            return missing_input(p, i, e);
    size_t samples = 0;
    int defining = -1;
    for (int i = 0; i < p->rc->ninputs; i++) {
        if (p->rc->inputs[i].defines_mb)
            defining = i;
        if (p->rows[i] > samples)
            samples = p->rows[i];
    }
    if (defining >= 0) /* it has rows: missing_input above */
        samples = p->rows[defining];
    if (samples > UINT32_MAX)
        return pt_err_set(e, PT_EUSER, "%s: error: sequence %zu is too long", p->rc->file,
                          p->ix->nseq);
    p->ix->seq_samples[p->ix->nseq - 1] = (uint32_t)samples;
    p->ix->total_samples += samples;
    p->open = 0;
    return 0;
}

static int bad_line(struct pass *p, struct pt_err *line_err, struct pt_err *e)
{
    p->bad++;
    if (p->bad > p->rc->max_errors) {
        int rc = pt_err_set(e, line_err->code, "%s", line_err->msg);
        if (p->rc->max_errors > 0)
            pt_err_context(e, "%lld malformed rows, more than maxErrors=%lld", p->bad,
                           p->rc->max_errors);
        return rc;
    }
    if (p->log && p->bad <= MAX_SHOWN_WARNINGS) {
        const char *msg = strstr(line_err->msg, ": error: ");
        size_t where = msg ? (size_t)(msg - line_err->msg) : 0;
        pt_log_printf(p->log, "%.*s: warning: %s; row skipped (maxErrors=%lld)\n", (int)where,
                      line_err->msg, msg ? msg + 9 : line_err->msg, p->rc->max_errors);
    }
    return 0;
}

/* A line with rows of no declared input: blank or comments only (fine), or only undeclared
 * aliases, which CNTK counts as a row it could not read (maxErrors). */
static int undeclared_only(struct pass *p, const char *s, size_t len, struct pt_err *e)
{
    char name[72], decl[1024];
    if (!first_undeclared(p->rc, s, len, name, sizeof name))
        return 0;
    note_undeclared(p, s, len);
    declared_inputs(p->rc, decl, sizeof decl);
    struct pt_err le;
    pt_err_clear(&le);
    pt_err_set(&le, PT_EUSER,
               "%s:%zu: error: no declared input on the line ('%s' is not declared; the reader "
               "declares %s)",
               p->rc->file, p->lineno, name, decl);
    return bad_line(p, &le, e);
}

/* The line (its rows in p->cols) into the chunk being kept: a new one where the line's
 * chunk begins, none once keep->max are. */
static int keep_line(struct pass *p, int starts, unsigned rows, struct pt_err *e)
{
    struct ctf_kept *k = p->keep;
    size_t id = p->ix->seq_chunk[p->ix->nseq - 1];
    int n = p->rc->ninputs, rc = 0;
    if (!p->kept_open || k->c[k->n - 1].id != id) {
        if (p->kept_open)
            chunk_finish(&k->c[k->n - 1], p->in, n);
        p->kept_open = 0;
        if (k->n == k->max || p->ix->total_samples >= k->max_samples) {
            p->keep = NULL;
            return 0;
        }
        struct chunk *c = realloc(k->c, (k->n + 1) * sizeof *c);
        if (!c)
            return pt_err_set(e, PT_ENOMEM, "error: out of memory");
        k->c = c;
        c += k->n++;
        memset(c, 0, sizeof *c);
        chunk_reset(c, p->in, n);
        c->id = id;
        p->kept_open = 1;
    }
    struct chunk *c = &k->c[k->n - 1];
    for (int i = 0; rc == 0 && i < n; i++)
        if ((rows >> i) & 1)
            rc = p->in[i].sparse
                     ? ctf_column_append(&c->cols[i], &p->cols[i], p->in[i].dim, 1, e)
                     : dense_store_append(&c->dense[i], p->cols[i].val, p->cols[i].rows, e);
    return rc ? rc : chunk_count_line(c, p->in, n, starts, rows, e);
}

static int one_line(struct pass *p, const char *s, size_t len, uint64_t offset, struct pt_err *e)
{
    if (!p->ids_known) {
        /* "A file whose first non-blank character is '|' has no ids" */
        size_t k = 0;
        while (k < len && strchr(" \t\r", s[k]))
            k++;
        if (k == len) {
            p->lineno++;
            return 0;
        }
        p->ix->has_ids = s[k] != '|';
        p->ids_known = 1;
    }
    struct ctf_where at = {.file = p->rc->file, .line = ++p->lineno};
    struct ctf_line line;
    struct pt_err le;
    pt_err_clear(&le);
    for (int i = 0; i < p->rc->ninputs; i++) /* the columns hold this line's rows only */
        ctf_column_clear(&p->cols[i]);
    int rc =
        ctf_parse_line(p->in, p->rc->ninputs, p->cols, s, len, p->ix->has_ids, &at, &line, &le);
    int hot = 0;
    for (int i = 0; rc == 0 && hot == 0 && i < p->rc->ninputs; i++)
        if (p->rc->inputs[i].one_hot[0] && (line.rows >> i) & 1)
            hot = check_one_hot(p, &p->rc->inputs[i], &p->cols[i], e);
    if (rc == PT_ENOMEM)
        return pt_err_set(e, rc, "%s", le.msg);
    if (rc)
        return bad_line(p, &le, e);
    if (hot)
        return hot;
    if (line.empty)
        return undeclared_only(p, s, len, e);
    int starts = ctf_starts_sequence(p->rc, p->ix->has_ids, !p->open, &line, p->prev_id);
    if (starts) {
        if (p->rc->ids_are_positions && p->ix->has_ids && !p->rc->skip_ids &&
            line.id != (uint64_t)p->ix->nseq)
            return pt_err_set(e, PT_EUSER,
                              "%s:%zu: error: sequence id %llu where %zu is expected: this "
                              "file is the reader's second deserializer, read with the first "
                              "sequence by sequence (CNTK's keys), so its ids must be 0, 1, 2 "
                              "... in order",
                              p->rc->file, p->lineno, (unsigned long long)line.id, p->ix->nseq);
        if ((rc = close_seq(p, e)) || (rc = push_seq(p, offset, e)))
            return rc;
        p->seq_line = p->lineno;
        p->unknown[0] = '\0';
    }
    p->prev_id = line.id;
    if (line.rows != (1u << p->rc->ninputs) - 1)
        note_undeclared(p, s, len);
    for (int i = 0; i < p->rc->ninputs; i++) {
        p->rows[i] += (line.rows >> i) & 1;
        if ((line.padded >> i) & 1 && p->padded[i]++ == 0)
            p->padded_line[i] = p->lineno;
    }
    return p->keep ? keep_line(p, starts, line.rows, e) : 0;
}

/* Lines are split at '\n'; the BOM and the id style are settled on the first bytes. */
static int scan(struct pass *p, int fd, struct pt_err *e)
{
    char *buf = malloc(INDEX_BUF);
    size_t cap = INDEX_BUF, have = 0;
    uint64_t base = 0; /* file offset of buf[0] */
    int rc = 0, eof = 0, first = 1;
    if (!buf)
        return pt_err_set(e, PT_ENOMEM, "error: out of memory");
    while (rc == 0 && !(eof && have == 0)) {
        if (!eof && have < cap) {
            ssize_t got = read(fd, buf + have, cap - have);
            if (got < 0 && errno == EINTR)
                continue;
            if (got < 0) {
                rc = pt_err_set(e, PT_EUSER, "%s: error: read failed: %s", p->rc->file,
                                strerror(errno));
                break;
            }
            eof = got == 0;
            have += (size_t)got;
        }
        size_t pos = 0;
        if (first) {
            if (have < 3 && !eof)
                continue;
            if (have >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0)
                pos = 3; /* a UTF-8 BOM */
            p->ix->data_start = pos;
            first = 0;
        }
        while (rc == 0) {
            char *nl = memchr(buf + pos, '\n', have - pos);
            if (!nl && !(eof && pos < have))
                break;
            size_t len = nl ? (size_t)(nl - (buf + pos)) : have - pos;
            rc = one_line(p, buf + pos, len, base + pos, e);
            pos += len + (nl != NULL);
        }
        memmove(buf, buf + pos, have - pos);
        base += pos;
        have -= pos;
        if (have == cap && rc == 0) { /* one line longer than the buffer */
            char *g = realloc(buf, cap * 2);
            if (!g)
                rc = pt_err_set(e, PT_ENOMEM, "error: out of memory (a line of %zu bytes)", cap);
            else {
                buf = g;
                cap *= 2;
            }
        }
    }
    free(buf);
    return rc ? rc : close_seq(p, e);
}

static void report_padding(struct pass *p)
{
    for (int i = 0; p->log && i < p->rc->ninputs; i++)
        if (p->padded[i])
            pt_log_printf(p->log,
                          "%s:%zu: warning: input '%s' has fewer than %d values; zero-padded "
                          "(%zu row%s like this)\n",
                          p->rc->file, p->padded_line[i], p->rc->inputs[i].name,
                          p->rc->inputs[i].dim, p->padded[i], p->padded[i] == 1 ? "" : "s");
}

int ctf_index_build(const struct reader_config *rc, struct pt_log *log, struct ctf_index *ix,
                    struct ctf_kept *keep, struct pt_err *e)
{
    memset(ix, 0, sizeof *ix);
    int fd = open(rc->file, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
        int err = fd < 0 ? errno : EISDIR;
        if (fd >= 0)
            close(fd);
        return cfg_error(e, &rc->file_origin, "cannot read data file '%s': %s", rc->file,
                         strerror(err));
    }
    struct pass p = {.rc = rc, .log = log, .ix = ix, .keep = keep && keep->max ? keep : NULL};
    reader_ctf_inputs(rc, p.in);
    ix->file_bytes = (uint64_t)st.st_size;
    int r = scan(&p, fd, e);
    close(fd);
    if (p.kept_open)
        chunk_finish(&keep->c[keep->n - 1], p.in, rc->ninputs);
    for (int i = 0; i < rc->ninputs; i++)
        ctf_column_free(&p.cols[i]);
    if (r == 0 && ix->total_samples == 0)
        r = cfg_error(e, &rc->file_origin,
                      "data file '%s' holds no samples of the configured inputs", rc->file);
    if (r == 0 && ix->nseq > 0)
        ix->nchunks++;
    if (r == 0) {
        ix->chunk_first = malloc((ix->nchunks + 1) * sizeof *ix->chunk_first);
        if (!ix->chunk_first)
            r = pt_err_set(e, PT_ENOMEM, "error: out of memory");
    }
    if (r == 0) {
        for (size_t i = ix->nseq; i-- > 0;)
            ix->chunk_first[ix->seq_chunk[i]] = i;
        ix->chunk_first[ix->nchunks] = ix->nseq;
        report_padding(&p);
        if (log && p.bad > MAX_SHOWN_WARNINGS)
            pt_log_printf(log, "%s: warning: %lld malformed rows skipped in all\n", rc->file,
                          p.bad);
    }
    if (r) {
        ctf_index_free(ix);
        for (size_t i = 0; keep && i < keep->n; i++)
            chunk_free(&keep->c[i]);
        if (keep) {
            free(keep->c);
            keep->c = NULL;
            keep->n = 0;
        }
    }
    return r;
}
