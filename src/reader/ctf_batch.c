/* Chunk loading (only the chunks a rank owns are ever parsed) and minibatch assembly. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "reader/reader_internal.h"

#define PIECE_BYTES (1u << 20) /* text read and parsed at a time */

/* len bytes at file offset off into dst. */
static int read_bytes(struct reader *r, uint64_t off, char *dst, size_t len, struct pt_err *e)
{
    for (size_t done = 0; done < len;) {
        ssize_t got = pread(r->fd, dst + done, len - done, (off_t)(off + done));
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

void chunk_reset(struct chunk *c, const struct ctf_input *in, int n)
{
    c->nseq = 0;
    for (int i = 0; i < n; i++) {
        ctf_column_clear(&c->cols[i]);
        dense_store_reset(&c->dense[i], (size_t)in[i].dim);
    }
}

int chunk_count_line(struct chunk *c, const struct ctf_input *in, int n, int starts, unsigned rows,
                     struct pt_err *e)
{
    if (starts) {
        int rc = seq_slot(c, n, e);
        if (rc)
            return rc;
        for (int i = 0; i < n; i++) {
            /* rows of input i so far: the dense ones partly still in the columns */
            size_t have = c->cols[i].rows + (in[i].sparse ? 0 : c->dense[i].rows);
            c->row0[c->nseq * (size_t)n + (size_t)i] = (uint32_t)(have - ((rows >> i) & 1));
            c->rows[c->nseq * (size_t)n + (size_t)i] = 0;
        }
        c->nseq++;
    }
    for (int i = 0; i < n; i++)
        c->rows[(c->nseq - 1) * (size_t)n + (size_t)i] += (rows >> i) & 1;
    return 0;
}

int chunk_move_dense(struct chunk *c, const struct ctf_input *in, int n, struct pt_err *e)
{
    int rc = 0;
    for (int i = 0; rc == 0 && i < n; i++)
        if (!in[i].sparse) {
            rc = dense_store_append(&c->dense[i], c->cols[i].val, c->cols[i].rows, e);
            ctf_column_clear(&c->cols[i]);
        }
    return rc;
}

void chunk_finish(struct chunk *c, const struct ctf_input *in, int n)
{
    for (int i = 0; i < n; i++) {
        if (in[i].sparse) {
            ctf_column_shrink(&c->cols[i], in[i].dim, 1);
            continue;
        }
        ctf_column_free(&c->cols[i]);
        dense_store_seal(&c->dense[i]);
    }
}

void chunk_free(struct chunk *c)
{
    for (int i = 0; i < CTF_MAX_INPUTS; i++) {
        ctf_column_free(&c->cols[i]);
        dense_store_free(&c->dense[i]);
    }
    free(c->row0);
    free(c->rows);
}

/* Parse the lines of text into c, grouping them into sequences exactly as the index did;
 * dense rows then move from the parser's columns into the packed stores. */
static int parse_lines(struct reader *r, struct chunk *c, const char *p, const char *end,
                       uint64_t *prev, struct pt_err *e)
{
    const struct ctf_index *ix = &r->ix;
    int n = r->rc.ninputs, rc = 0;
    while (rc == 0 && p < end) {
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
        int starts = ctf_starts_sequence(&r->rc, ix->has_ids, c->nseq == 0, &line, *prev);
        rc = chunk_count_line(c, r->in, n, starts, line.rows, e);
        *prev = line.id;
    }
    return rc ? rc : chunk_move_dense(c, r->in, n, e);
}

/* Parse chunk id into c, a piece of text at a time: the reader holds the parsed window
 * plus about PIECE_BYTES of text and its floats, never a whole chunk of text. It reads r
 * and writes only c, so chunks may be parsed on several threads at once (parse_ahead). */
static int parse_chunk(struct reader *r, size_t id, struct chunk *c, struct pt_err *e)
{
    const struct ctf_index *ix = &r->ix;
    size_t first = ix->chunk_first[id], last = ix->chunk_first[id + 1];
    uint64_t pos = ix->seq_offset[first];
    uint64_t stop = id + 1 < ix->nchunks ? ix->seq_offset[last] : ix->file_bytes;
    int n = r->rc.ninputs, rc = 0;
    chunk_reset(c, r->in, n);
    uint64_t prev = 0;
    char *buf = NULL;
    size_t cap_buf = 0;
    size_t have = 0; /* bytes of an unfinished line at the start of buf */
    while (rc == 0 && (pos < stop || have)) {
        size_t want = stop - pos < PIECE_BYTES ? (size_t)(stop - pos) : PIECE_BYTES;
        if (have + want + 1 > cap_buf) {
            size_t cap = have + want + 1 > 2 * cap_buf ? have + want + 1 : 2 * cap_buf;
            char *b = realloc(buf, cap);
            if (!b) {
                rc = pt_err_set(e, PT_ENOMEM, "error: out of memory (%zu bytes of text)", cap);
                break;
            }
            buf = b;
            cap_buf = cap;
        }
        if ((rc = read_bytes(r, pos, buf + have, want, e)))
            break;
        pos += want;
        have += want;
        size_t use = have; /* whole lines only, until the chunk's last byte */
        if (pos < stop) {
            while (use && buf[use - 1] != '\n')
                use--;
            if (!use)
                continue; /* a line longer than the buffer: read more */
        }
        rc = parse_lines(r, c, buf, buf + use, &prev, e);
        memmove(buf, buf + use, have - use);
        have -= use;
    }
    /* the text is parsed: give back its buffer and the columns' growth slack */
    free(buf);
    if (rc == 0)
        chunk_finish(c, r->in, n);
    if (rc == 0 && c->nseq != last - first)
        rc = pt_err_set(e, PT_EUSER,
                        "%s: error: the data file changed while training (chunk %zu "
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

/* The chunks a minibatch needs that are not in memory, parsed at once on the pool's
 * threads where empty cache slots take them all: a run's first minibatches (each touches
 * most chunks of the window), which otherwise parse one chunk after another. */
struct parse_job {
    struct reader *r;
    size_t *ids;
    struct chunk **slots;
};

static int parse_part(void *ctx, size_t lo, size_t hi, int worker, struct pt_err *e)
{
    (void)worker;
    struct parse_job *j = ctx;
    for (size_t k = lo; k < hi; k++) {
        int rc = parse_chunk(j->r, j->ids[k], j->slots[k], e);
        if (rc)
            return rc;
    }
    return 0;
}

static int parse_ahead(struct reader *r, const uint32_t *seqs, size_t n, struct pt_err *e)
{
    size_t empty = 0;
    for (size_t i = 0; i < r->ncache; i++)
        empty += r->cache[i].id == SIZE_MAX;
    struct fill_pool *pool = empty >= 2 ? reader_pool(r) : NULL;
    if (!pool)
        return 0;
    size_t *ids = malloc(empty * sizeof *ids);
    struct chunk **slots = malloc(empty * sizeof *slots);
    int rc = ids && slots ? 0 : pt_err_set(e, PT_ENOMEM, "error: out of memory");
    size_t want = 0;
    for (size_t s = 0; rc == 0 && s < n && want <= empty; s++) {
        size_t id = r->ix.seq_chunk[seqs[s]];
        int have = 0;
        for (size_t i = 0; !have && i < r->ncache; i++)
            have = r->cache[i].id == id;
        for (size_t k = 0; !have && k < want; k++)
            have = ids[k] == id;
        if (!have && want < empty)
            ids[want] = id;
        want += !have;
    }
    if (rc == 0 && want >= 2 && want <= empty) { /* else one at a time, as get_chunk does */
        size_t k = 0;
        for (size_t i = 0; i < r->ncache && k < want; i++)
            if (r->cache[i].id == SIZE_MAX)
                slots[k++] = &r->cache[i];
        struct parse_job job = {.r = r, .ids = ids, .slots = slots};
        rc = fill_pool_run(pool, want, 1, parse_part, &job, e);
        for (k = 0; k < want; k++) /* in memory, used in the order they were asked for */
            slots[k]->used = ++r->clock;
    }
    free(ids);
    free(slots);
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
            dense_store_row(&c->dense[i], row0 + t, out);
            continue;
        }
        size_t from = row0 + t == 0 ? 0 : col->row_end[row0 + t - 1];
        for (size_t k = from; k < col->row_end[row0 + t]; k++)
            out[col->idx[k]] += col->val[k];
    }
    dst->len[s] = (uint32_t)rows;
}

/* The samples of one fill, their chunks resolved (fill_pool_run's parts read them). */
struct fill_job {
    struct reader *r;
    const uint32_t *seqs;
    struct chunk **chunk;
    struct minibatch *mb;
};

static int fill_part(void *ctx, size_t lo, size_t hi, int worker, struct pt_err *e)
{
    (void)worker, (void)e;
    struct fill_job *j = ctx;
    struct reader *r = j->r;
    int ni = r->rc.ninputs;
    for (size_t s = lo; s < hi; s++) {
        uint32_t seq = j->seqs[s];
        size_t local = seq - r->ix.chunk_first[r->ix.seq_chunk[seq]];
        for (int i = 0; i < ni; i++)
            copy_rows(j->chunk[s], i, local, &r->in[i], &j->mb->in[i], s, j->mb->nseq, ni);
    }
    return 0;
}

struct fill_pool *reader_pool(struct reader *r)
{
    int n = fill_pool_threads(r->rc.img.on || r->ahead);
    if (!r->pool_tried && n > 1) {
        r->pool = fill_pool_new(n);
        r->pool_tried = 1;
    }
    return r->pool;
}

int reader_fill(struct reader *r, const uint32_t *seqs, size_t n, struct minibatch *mb,
                struct pt_err *e)
{
    int ni = r->rc.ninputs, rc = 0;
    mb->ninputs = ni;
    mb->nseq = n;
    mb->samples = 0;
    if (n > r->cap_chunk) {
        struct chunk **c = realloc(r->pick_chunk, n * sizeof *c);
        if (!c)
            return pt_err_set(e, PT_ENOMEM, "error: out of memory");
        r->pick_chunk = c;
        r->cap_chunk = n;
    }
    /* the longest sequence of each input decides its steps */
    size_t steps[CTF_MAX_INPUTS] = {0};
    rc = parse_ahead(r, seqs, n, e);
    for (size_t s = 0; s < n && rc == 0; s++) {
        struct chunk *c;
        uint32_t seq = seqs[s];
        rc = get_chunk(r, r->ix.seq_chunk[seq], &c, e);
        size_t local = seq - r->ix.chunk_first[r->ix.seq_chunk[seq]];
        for (int i = 0; rc == 0 && i < ni; i++) {
            size_t at = local * (size_t)ni + (size_t)i;
            if (c->rows[at] > steps[i])
                steps[i] = c->rows[at];
            if (!r->in[i].sparse) /* samples come in random order: ask for the rows now */
                dense_store_prefetch(&c->dense[i], c->row0[at], c->rows[at]);
        }
        r->pick_chunk[s] = c;
        mb->samples += r->ix.seq_samples[seq];
    }
    for (int i = 0; rc == 0 && i < ni; i++) {
        struct mb_input *in = &mb->in[i];
        memcpy(in->name, r->rc.inputs[i].name, sizeof in->name);
        in->dim = r->rc.inputs[i].dim;
        /* dense rows overwrite their columns: only the padding needs zeros (below); a
         * sparse row adds into zeros */
        rc = r->in[i].sparse ? mb_input_reset(in, n, steps[i], e)
                             : mb_input_shape(in, n, steps[i], e);
    }
    /* chunks of one window are resident together (cache_slots): a chunk loaded above for
     * a later sample has not replaced one an earlier sample uses, unless the window is
     * smaller than a minibatch's spread; then the chunks are loaded again, one thread */
    int resident = 1;
    for (size_t s = 0; s < n && rc == 0 && resident; s++)
        resident = r->pick_chunk[s]->id == r->ix.seq_chunk[seqs[s]];
    if (rc == 0 && resident) {
        struct fill_job job = {.r = r, .seqs = seqs, .chunk = r->pick_chunk, .mb = mb};
        rc = fill_pool_run(reader_pool(r), n, 32, fill_part, &job, e);
    }
    for (size_t s = 0; s < n && rc == 0 && !resident; s++) {
        uint32_t seq = seqs[s];
        rc = get_chunk(r, r->ix.seq_chunk[seq], &r->pick_chunk[s], e);
        size_t local = seq - r->ix.chunk_first[r->ix.seq_chunk[seq]];
        for (int i = 0; rc == 0 && i < ni; i++)
            copy_rows(r->pick_chunk[s], i, local, &r->in[i], &mb->in[i], s, n, ni);
    }
    for (int i = 0; rc == 0 && i < ni; i++)
        if (!r->in[i].sparse)
            mb_input_pad(&mb->in[i], n);
    return rc;
}
