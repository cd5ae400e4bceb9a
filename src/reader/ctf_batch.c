/* Chunk loading (only the chunks a rank owns are ever parsed) and minibatch assembly. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "reader/reader_internal.h"

static int read_bytes(struct reader *r, uint64_t off, size_t len, struct pt_err *e)
{
    if (len + 1 > r->cap_buf) {
        char *b = realloc(r->buf, len + 1);
        if (!b)
            return pt_err_set(e, PT_ENOMEM, "error: out of memory (chunk of %zu bytes)", len);
        r->buf = b;
        r->cap_buf = len + 1;
    }
    for (size_t done = 0; done < len;) {
        ssize_t got = pread(r->fd, r->buf + done, len - done, (off_t)(off + done));
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return pt_err_set(e, PT_EUSER, "%s: error: cannot read %zu bytes at offset %llu: %s",
                              r->rc.file, len, (unsigned long long)off,
                              got < 0 ? strerror(errno) : "file shrank since it was indexed");
        done += (size_t)got;
    }
    return 0;
}

static int seq_slot(struct chunk *c, int ninputs, struct pt_err *e)
{
    if (c->nseq < c->cap_seq)
        return 0;
    size_t cap = c->cap_seq ? c->cap_seq * 2 : 1024;
    uint32_t *a = realloc(c->row0, cap * (size_t)ninputs * sizeof *a);
    if (a)
        c->row0 = a;
    uint32_t *b = realloc(c->rows, cap * (size_t)ninputs * sizeof *b);
    if (b)
        c->rows = b;
    if (!a || !b)
        return pt_err_set(e, PT_ENOMEM, "error: out of memory");
    c->cap_seq = cap;
    return 0;
}

/* Parse chunk id into c, grouping lines into sequences exactly as the index did. */
static int parse_chunk(struct reader *r, size_t id, struct chunk *c, struct pt_err *e)
{
    const struct ctf_index *ix = &r->ix;
    size_t first = ix->chunk_first[id], last = ix->chunk_first[id + 1];
    uint64_t off = ix->seq_offset[first];
    uint64_t stop = id + 1 < ix->nchunks ? ix->seq_offset[last] : ix->file_bytes;
    int rc = read_bytes(r, off, (size_t)(stop - off), e);
    int n = r->rc.ninputs;
    c->nseq = 0;
    for (int i = 0; i < n; i++)
        ctf_column_clear(&c->cols[i]);
    uint64_t prev = 0;
    for (const char *p = r->buf, *end = r->buf + (stop - off); rc == 0 && p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
        struct ctf_where at = {.file = r->rc.file, .line = 0};
        struct ctf_line line;
        struct pt_err le;
        pt_err_clear(&le);
        int bad = ctf_parse_line(r->in, n, c->cols, p, len, ix->has_ids, &at, &line, &le);
        p = nl ? nl + 1 : end;
        if (bad == PT_ENOMEM)
            return pt_err_set(e, bad, "%s", le.msg);
        if (bad || line.empty)
            continue; /* malformed rows were counted (and tolerated) by the index */
        if (ctf_starts_sequence(&r->rc, ix->has_ids, c->nseq == 0, &line, prev)) {
            if ((rc = seq_slot(c, n, e)))
                break;
            for (int i = 0; i < n; i++) {
                c->row0[c->nseq * (size_t)n + (size_t)i] = (uint32_t)c->cols[i].rows - ((line.rows >> i) & 1);
                c->rows[c->nseq * (size_t)n + (size_t)i] = 0;
            }
            c->nseq++;
        }
        prev = line.id;
        for (int i = 0; i < n; i++)
            c->rows[(c->nseq - 1) * (size_t)n + (size_t)i] += (line.rows >> i) & 1;
    }
    /* the text is parsed: give back its buffer and the columns' growth slack (the parsed
     * window is what a reader holds; peak memory matters, SPEC asks for a lean trainer) */
    free(r->buf);
    r->buf = NULL;
    r->cap_buf = 0;
    for (int i = 0; rc == 0 && i < n; i++)
        ctf_column_shrink(&c->cols[i], r->in[i].dim, r->in[i].sparse);
    if (rc == 0 && c->nseq != last - first)
        rc = pt_err_set(e, PT_EUSER, "%s: error: the data file changed while training (chunk %zu "
                                     "holds %zu sequences, the index says %zu)",
                        r->rc.file, id, c->nseq, last - first);
    c->id = rc ? SIZE_MAX : id;
    return rc;
}

static int get_chunk(struct reader *r, size_t id, struct chunk **out, struct pt_err *e)
{
    struct chunk *victim = &r->cache[0];
    for (size_t i = 0; i < r->ncache; i++) {
        struct chunk *c = &r->cache[i];
        if (c->id == id) {
            c->used = ++r->clock;
            *out = c;
            return 0;
        }
        if (c->id == SIZE_MAX || (victim->id != SIZE_MAX && c->used < victim->used))
            victim = c;
    }
    int rc = parse_chunk(r, id, victim, e);
    victim->used = ++r->clock;
    *out = victim;
    return rc;
}

static void copy_rows(const struct chunk *c, int i, size_t local, const struct ctf_input *in,
                      struct mb_input *dst, size_t s, size_t nseq, int ninputs)
{
    size_t row0 = c->row0[local * (size_t)ninputs + (size_t)i];
    size_t rows = c->rows[local * (size_t)ninputs + (size_t)i];
    const struct ctf_column *col = &c->cols[i];
    size_t dim = (size_t)in->dim;
    for (size_t t = 0; t < rows; t++) {
        float *out = dst->data + (t * nseq + s) * dim;
        if (!in->sparse) {
            memcpy(out, col->val + (row0 + t) * dim, dim * sizeof *out);
            continue;
        }
        size_t from = row0 + t == 0 ? 0 : col->row_end[row0 + t - 1];
        for (size_t k = from; k < col->row_end[row0 + t]; k++)
            out[col->idx[k]] += col->val[k];
    }
    dst->len[s] = (uint32_t)rows;
}

int reader_fill(struct reader *r, const uint32_t *seqs, size_t n, struct minibatch *mb,
                struct pt_err *e)
{
    int ni = r->rc.ninputs, rc = 0;
    mb->ninputs = ni;
    mb->nseq = n;
    mb->samples = 0;
    /* the longest sequence of each input decides its steps */
    size_t steps[CTF_MAX_INPUTS] = {0};
    for (size_t s = 0; s < n && rc == 0; s++) {
        struct chunk *c;
        uint32_t seq = seqs[s];
        rc = get_chunk(r, r->ix.seq_chunk[seq], &c, e);
        size_t local = seq - r->ix.chunk_first[r->ix.seq_chunk[seq]];
        for (int i = 0; rc == 0 && i < ni; i++)
            if (c->rows[local * (size_t)ni + (size_t)i] > steps[i])
                steps[i] = c->rows[local * (size_t)ni + (size_t)i];
        mb->samples += r->ix.seq_samples[seq];
    }
    for (int i = 0; rc == 0 && i < ni; i++) {
        struct mb_input *in = &mb->in[i];
        memcpy(in->name, r->rc.inputs[i].name, sizeof in->name);
        in->dim = r->rc.inputs[i].dim;
        rc = mb_input_reset(in, n, steps[i], e);
    }
    /* chunks of one window are resident together (cache_slots), so this second pass hits */
    for (size_t s = 0; s < n && rc == 0; s++) {
        struct chunk *c;
        uint32_t seq = seqs[s];
        rc = get_chunk(r, r->ix.seq_chunk[seq], &c, e);
        size_t local = seq - r->ix.chunk_first[r->ix.seq_chunk[seq]];
        for (int i = 0; rc == 0 && i < ni; i++)
            copy_rows(c, i, local, &r->in[i], &mb->in[i], s, n, ni);
    }
    return rc;
}
