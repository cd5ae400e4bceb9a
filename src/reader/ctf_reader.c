/* The reader: epochs over the timeline, chunk loading and caching, minibatch assembly. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "reader/htk.h"
#include "reader/lm.h"
#include "reader/reader_internal.h"

size_t reader_sweep_samples(const struct reader *r)
{
    return r->ix.total_samples;
}

int reader_has_input(const struct reader *r, const char *name)
{
    for (int i = 0; i < r->rc.ninputs; i++)
        if (!strcmp(r->rc.inputs[i].name, name))
            return 1;
    return r->aux ? reader_has_input(r->aux, name) : 0;
}

const char *reader_data_file(const struct reader *r, size_t i)
{
    if (r->rc.file[0] && i-- == 0)
        return r->rc.file;
    if (r->rc.htk.on && r->rc.htk.scp[0] && i-- == 0)
        return r->rc.htk.scp;
    if (r->rc.htk.on && r->rc.htk.mlf[0] && i-- == 0)
        return r->rc.htk.mlf;
    if (r->rc.lm.on && i-- == 0)
        return r->rc.lm.wordclass;
    size_t nf = r->htk ? r->htk->paths.n : 0;
    if (i < nf)
        return r->htk->paths.buf + r->htk->paths.off[i];
    i -= nf;
    for (int k = 0; r->htk && k < r->rc.htk.nextra; k++) { /* further streams */
        const struct htk_extra *x = &r->rc.htk.extra[k];
        const char *own = x->feat ? x->scp : x->mlf;
        if (own[0] && i-- == 0)
            return own;
        const struct htk_set *xs = r->htk->xfeat[k];
        if (xs && i < xs->paths.n)
            return xs->paths.buf + xs->paths.off[i];
        i -= xs ? xs->paths.n : 0;
    }
    return r->aux ? reader_data_file(r->aux, i) : NULL;
}

size_t reader_sequences(const struct reader *r)
{
    return r->ix.nseq;
}

size_t reader_chunks(const struct reader *r)
{
    return r->ix.nchunks;
}

void reader_close(struct reader *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->ncache; i++)
        chunk_free(&r->cache[i]);
    free(r->cache);
    free(r->pick);
    free(r->pick_at);
    free(r->pick_chunk);
    fill_pool_free(r->pool); /* before image_close: its threads use the images' scratch */
    image_close(r);
    htk_close(r);
    lm_close(r);
    free(r->streams);
    free(r->seg_seq);
    free(r->seg_pos);
    free(r->seg_cnt);
    free(r->seg_at);
    free(r->seg_dst);
    free(r->seg_cont);
    reader_close(r->aux);
    tl_sweep_free(&r->sweep);
    ctf_index_free(&r->ix);
    if (r->fd >= 0)
        close(r->fd);
    free(r);
}

/* Chunks that must be resident together: those of one randomization window. */
static size_t cache_slots(const struct reader *r)
{
    size_t n = r->ix.nchunks;
    if (r->rc.keep_in_memory || !r->rc.randomize)
        return r->rc.keep_in_memory ? n : 2;
    if (!r->rc.sample_window)
        return r->rc.window + 1 < n ? r->rc.window + 1 : n;
    size_t smallest = SIZE_MAX;
    for (size_t c = 0; c < n; c++) {
        size_t s = 0;
        for (size_t i = r->ix.chunk_first[c]; i < r->ix.chunk_first[c + 1]; i++)
            s += r->ix.seq_samples[i];
        if (s < smallest)
            smallest = s;
    }
    size_t need = r->rc.window / (smallest ? smallest : 1) + 2;
    return need < n ? need : n;
}

/* How many chunks the index pass keeps: at most what cache_slots will hold (known before the
 * index: the window, or with a window in samples no chunk started past that many). */
static struct ctf_kept keep_limits(const struct reader_config *rc)
{
    struct ctf_kept k = {.max = SIZE_MAX, .max_samples = SIZE_MAX};
    if (rc->keep_in_memory)
        return k;
    if (!rc->randomize)
        k.max = 2;
    else if (!rc->sample_window)
        k.max = rc->window < SIZE_MAX - 1 ? rc->window + 1 : SIZE_MAX;
    else
        k.max_samples = rc->window;
    return k;
}

/* The second deserializer of a composite reader (rc->aux): a reader of its file and inputs,
 * in file order, with as many sequences as the first's (which are matched by number). */
static int open_second(struct reader *r, const struct reader_config *rc, struct pt_log *log,
                       struct pt_err *e)
{
    struct reader_config *a = malloc(sizeof *a);
    if (!a)
        return pt_err_set(e, PT_ENOMEM, "error: out of memory");
    *a = *rc;
    memmove(a->inputs, rc->inputs + rc->aux.first,
            (size_t)(rc->ninputs - rc->aux.first) * sizeof *a->inputs);
    a->ninputs = rc->ninputs - rc->aux.first;
    snprintf(a->file, sizeof a->file, "%s", rc->aux.file);
    a->file_origin = rc->aux.file_origin;
    a->chunk_bytes = rc->aux.chunk_bytes;
    a->keep_in_memory = rc->aux.keep_in_memory;
    a->skip_ids = rc->aux.skip_ids;
    a->max_errors = rc->aux.max_errors;
    a->randomize = 0;      /* read where the first deserializer's sequences say: anywhere, so */
    a->keep_in_memory = 1; /* every chunk stays once parsed */
    a->img.on = 0;
    a->aux.first = 0;
    a->ids_are_positions = 1;
    int rcode = reader_open(a, log, &r->aux, e);
    free(a);
    if (rcode == 0 && r->aux->ix.nseq != r->ix.nseq)
        rcode = cfg_error(e, &rc->aux.file_origin,
                          "%s: %zu sequences, where the first deserializer's %s has %zu: the "
                          "two are read sequence by sequence (the k-th with the k-th), so they "
                          "must have as many",
                          rc->aux.file, r->aux->ix.nseq, rc->file, r->ix.nseq);
    return rcode;
}

int reader_open(const struct reader_config *rc, struct pt_log *log, struct reader **out,
                struct pt_err *e)
{
    *out = NULL;
    struct reader *r = calloc(1, sizeof *r);
    if (!r)
        return pt_err_set(e, PT_ENOMEM, "error: out of memory");
    r->rc = *rc;
    if (rc->aux.first) /* its own inputs; the second deserializer's are its reader's */
        r->rc.ninputs = rc->aux.first;
    r->log = log;
    r->fd = -1;
    r->sweep_no = UINT64_MAX;
    reader_ctf_inputs(&r->rc, r->in);
    struct ctf_kept kept = keep_limits(&r->rc);
    int rcode = rc->img.on   ? image_open(r, e)
                : rc->htk.on ? htk_open(r, e)
                : rc->lm.on  ? lm_open(r, e)
                             : ctf_index_build(&r->rc, log, &r->ix, &kept, e);
    if (rcode == 0 && !rc->img.on && !rc->htk.on && !rc->lm.on) {
        r->fd = open(rc->file, O_RDONLY);
        if (r->fd < 0)
            rcode = cfg_error(e, &rc->file_origin, "cannot read data file '%s': %s", rc->file,
                              strerror(errno));
    }
    if (rcode == 0 && rc->aux.first)
        rcode = open_second(r, rc, log, e);
    if (rcode == 0) {
        r->src = (struct tl_source){.nseq = r->ix.nseq,
                                    .nchunks = r->ix.nchunks,
                                    .seq_chunk = r->ix.seq_chunk,
                                    .seq_samples = r->ix.seq_samples,
                                    .chunk_first = r->ix.chunk_first};
        r->tp = (struct tl_params){.randomize = r->rc.randomize,
                                   .seed = r->rc.seed,
                                   .window = r->rc.window,
                                   .sample_window = r->rc.sample_window};
        r->ncache = rc->img.on || rc->htk.on || rc->lm.on ? 0 : cache_slots(r);
        r->cache = calloc(r->ncache ? r->ncache : 1, sizeof *r->cache);
        if (!r->cache)
            rcode = pt_err_set(e, PT_ENOMEM, "error: out of memory");
        for (size_t i = 0; r->cache && i < r->ncache; i++)
            r->cache[i].id = SIZE_MAX;
    }
    /* the index pass's chunks start the cache, used in file order; those beyond it go */
    for (size_t i = 0; i < kept.n; i++) {
        if (rcode == 0 && i < r->ncache) {
            r->cache[i] = kept.c[i];
            r->cache[i].used = ++r->clock;
        } else {
            chunk_free(&kept.c[i]);
        }
    }
    free(kept.c);
    if (rcode) {
        reader_close(r);
        return rcode;
    }
    if (log && rc->trace > 1)
        pt_log_printf(log, "reader: %s: %zu sequences, %zu samples, %zu chunks\n", rc->file,
                      r->ix.nseq, r->ix.total_samples, r->ix.nchunks);
    *out = r;
    return 0;
}

static int use_sweep(struct reader *r, uint64_t w, struct pt_err *e)
{
    if (r->sweep_no == w)
        return 0;
    int rc = tl_sweep_build(&r->src, &r->tp, w, &r->sweep, e);
    r->sweep_no = rc ? UINT64_MAX : w;
    return rc;
}

/* Room for n pieces of this rank's segments (and n streams' flags): every array grown alike
 * from the shared capacity. */
static int seg_room(struct reader *r, size_t n, struct pt_err *e)
{
    void *arr[] = {&r->seg_seq, &r->seg_pos, &r->seg_cnt, &r->seg_at, &r->seg_dst};
    size_t cap = r->cap_seg;
    for (size_t i = 0; i < sizeof arr / sizeof *arr; i++) {
        cap = r->cap_seg;
        if (htk_grow(arr[i], &cap, n, sizeof(uint32_t)))
            return pt_err_set(e, PT_ENOMEM, "error: out of memory");
    }
    size_t c = r->cap_seg;
    if (htk_grow(&r->seg_cont, &c, n, 1))
        return pt_err_set(e, PT_ENOMEM, "error: out of memory");
    r->cap_seg = cap;
    return 0;
}

/* Truncated mode: this epoch's streams (nbruttsineachrecurrentiter a rank), all idle. */
static int segments_start(struct reader *r, size_t epoch, struct pt_err *e)
{
    const struct htk_config *hc = &r->rc.htk;
    size_t k = (size_t)hc->streams[epoch < (size_t)hc->nstreams ? epoch : (size_t)hc->nstreams - 1];
    size_t all = k * (size_t)r->workers;
    if (all != r->nstreams) {
        struct seg_stream *s = realloc(r->streams, all * sizeof *s);
        if (!s)
            return pt_err_set(e, PT_ENOMEM, "error: out of memory");
        r->streams = s;
        r->nstreams = all;
    }
    r->per_rank = k;
    memset(r->streams, 0, all * sizeof *r->streams);
    return seg_room(r, k, e);
}

void reader_split_by_sequence(struct reader *r, int on)
{
    r->split_by_sequence = on;
}

int reader_start_epoch(struct reader *r, size_t epoch, size_t epoch_size, int rank, int workers,
                       struct pt_err *e)
{
    uint64_t T = r->ix.total_samples, E = epoch_size ? epoch_size : T;
    uint64_t start = (uint64_t)epoch * E;
    r->rank = rank;
    r->workers = workers > 0 ? workers : 1;
    if (r->rc.lm.on) /* every epoch from the file's start (CNTK's) */
        return lm_start_epoch(r, epoch, epoch_size, e);
    r->end = start + E;
    r->w = start / T;
    r->next = r->w * T;
    r->k = 0;
    int rc = use_sweep(r, r->w, e);
    if (rc == 0 && r->rc.htk.truncated)
        rc = segments_start(r, epoch, e);
    /* skip to the first sequence that starts at or after `start` */
    while (rc == 0 && r->next < start) {
        r->next += r->ix.seq_samples[r->sweep.order[r->k++]];
        if (r->k == r->sweep.n) {
            r->w++;
            r->k = 0;
            rc = use_sweep(r, r->w, e);
        }
    }
    return rc;
}

/* The epoch's next sequence into *seq: 1, or 0 when the epoch has no more (-1: error). */
static int take(struct reader *r, uint32_t *seq, struct pt_err *e)
{
    if (r->k == r->sweep.n) {
        r->w++;
        r->k = 0;
        if (use_sweep(r, r->w, e))
            return -1;
    }
    if (r->next >= r->end)
        return 0;
    *seq = r->sweep.order[r->k++];
    r->next += r->ix.seq_samples[*seq];
    return 1;
}

/* Truncated mode: each stream's next segment of up to mb_size frames, packed as CNTK's
 * truncated packer does: a stream whose utterance ends takes the epoch's next one at the
 * following frame, in the same sequence (mb->begins marks the step). Every rank walks all
 * streams alike (so all agree on the minibatch's size and the epoch's end) and fills its
 * own streams' pieces. */
static int next_segments(struct reader *r, size_t mb_size, struct minibatch *mb, struct pt_err *e)
{
    uint64_t total = 0;
    size_t mine = (size_t)r->rank * r->per_rank, k = 0;
    for (size_t i = 0; i < r->nstreams; i++) {
        struct seg_stream *st = &r->streams[i];
        int me = i >= mine && i < mine + r->per_rank;
        uint32_t room = (uint32_t)mb_size, at = 0;
        if (me)
            r->seg_cont[i - mine] = (uint8_t)(st->busy && !st->fresh);
        for (;;) {
            uint32_t seq = 0;
            int got = st->busy ? 0 : take(r, &seq, e);
            if (got < 0)
                return -1;
            if (got)
                *st = (struct seg_stream){.seq = seq, .pos = 0, .busy = 1, .fresh = 1};
            uint32_t left = st->busy ? r->ix.seq_samples[st->seq] - st->pos : 0;
            uint32_t n = left < room ? left : room;
            if (n == 0)
                break; /* nothing left this epoch */
            if (me) {
                if (seg_room(r, k + 1, e))
                    return -1;
                r->seg_seq[k] = st->seq;
                r->seg_pos[k] = st->pos;
                r->seg_cnt[k] = n;
                r->seg_at[k] = at;
                r->seg_dst[k++] = (uint32_t)(i - mine);
            }
            total += n;
            room -= n;
            at += n;
            st->pos += n;
            st->fresh = 0;
            st->busy = st->busy && st->pos < r->ix.seq_samples[st->seq];
            if (room == 0)
                break;
        }
    }
    int rc = htk_fill_segments(r, r->seg_seq, r->seg_pos, r->seg_cnt, r->seg_at, r->seg_dst, k,
                               r->seg_cont, r->per_rank, mb, e);
    mb->global_samples = total;
    return rc;
}

int reader_next(struct reader *r, size_t mb_size, struct minibatch *mb, struct pt_err *e)
{
    if (r->rc.htk.truncated)
        return next_segments(r, mb_size ? mb_size : 1, mb, e);
    if (r->rc.lm.on)
        return lm_next(r, mb_size ? mb_size : 1, mb, e);
    size_t total = 0, n = 0, picked = 0; /* picked: sequences of this global minibatch */
    int rc = 0;
    /* the fill threads wake while the minibatch is picked (images: one a part; text: parts
     * of at least 32 samples) */
    if (mb_size >= (r->rc.img.on ? 2u : 64u))
        fill_pool_wake(reader_pool(r));
    for (;;) {
        if (r->k == r->sweep.n) {
            r->w++;
            r->k = 0;
            if ((rc = use_sweep(r, r->w, e)))
                return rc;
        }
        if (r->next >= r->end)
            break;
        uint32_t seq = r->sweep.order[r->k];
        size_t len = r->ix.seq_samples[seq];
        if (total > 0 && total + len > mb_size)
            break;
        uint32_t owner_key =
            r->rc.by_sequence || r->split_by_sequence ? (uint32_t)(picked++) : r->sweep.key[r->k];
        if ((int)(owner_key % (uint32_t)r->workers) == r->rank) {
            if (n == r->cap_pick) {
                size_t cap = r->cap_pick ? r->cap_pick * 2 : 256;
                uint32_t *p = realloc(r->pick, cap * sizeof *p);
                if (p)
                    r->pick = p;
                uint64_t *at = p ? realloc(r->pick_at, cap * sizeof *at) : NULL;
                if (!at)
                    return pt_err_set(e, PT_ENOMEM, "error: out of memory");
                r->pick_at = at;
                r->cap_pick = cap;
            }
            r->pick_at[n] = r->next;
            r->pick[n++] = seq;
        }
        total += len;
        r->next += len;
        r->k++;
    }
    rc = r->rc.img.on   ? image_fill(r, r->pick, r->pick_at, n, mb, e)
         : r->rc.htk.on ? htk_fill(r, r->pick, n, mb, e)
                        : reader_fill(r, r->pick, n, mb, e);
    if (rc == 0 && r->aux) { /* the second deserializer's inputs, filled in mb's own */
        int first = r->rc.ninputs, na = r->aux->rc.ninputs;
        struct mb_input t;
        for (int j = 0; j < na; j++)
            t = r->aux_mb.in[j], r->aux_mb.in[j] = mb->in[first + j], mb->in[first + j] = t;
        rc = reader_fill(r->aux, r->pick, n, &r->aux_mb, e);
        for (int j = 0; j < na; j++)
            t = r->aux_mb.in[j], r->aux_mb.in[j] = mb->in[first + j], mb->in[first + j] = t;
        mb->ninputs = first + na;
    }
    mb->global_samples = total;
    return rc;
}
