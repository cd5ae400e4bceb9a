/* CNTK's HTK readers' minibatches (htk.h): the picked frames (frame mode) or utterances,
 * read from their files with pread on the fill pool's workers (each its own descriptor and
 * buffers), each frame with its context window, the labels one-hot. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "reader/htk.h"
#include "reader/reader_internal.h"

/* n frames of file f's bytes at raw into floats at dst. */
static int decode(const struct htk_set *s, const struct htk_file *f, const unsigned char *raw,
                  size_t n, float *dst)
{
    for (size_t t = 0; t < n; t++, dst += s->dim) {
        const unsigned char *src = raw + t * f->vec;
        if (f->compressed)
            for (int i = 0; i < s->dim; i++)
                dst[i] = ((float)(int16_t)htk_be16(src + 2 * i, f->swap) + f->b[i]) / f->a[i];
        else
            for (int i = 0; i < s->dim; i++)
                dst[i] = htk_f32(src + 4 * i, f->swap);
    }
    return 0;
}

/* Frames [a, b) of utterance u into w->frames (dim floats each). */
static int read_frames(struct htk_set *s, const struct htk_utt *u, uint32_t a, uint32_t b,
                       struct htk_worker *w, struct pt_err *e)
{
    const struct htk_file *f = &s->files[u->file];
    const char *path = s->paths.buf + s->paths.off[u->file];
    size_t n = b - a, bytes = n * f->vec, vals = n * (size_t)s->dim;
    const unsigned char *raw = f->map ? f->map + f->data + (u->s + a) * f->vec : NULL;
    if (htk_grow(&w->frames, &w->cap_frames, vals, sizeof *w->frames))
        return pt_err_set(e, PT_ENOMEM, "error: out of memory");
    if (raw)
        return decode(s, f, raw, n, w->frames);
    if (w->fd < 0 || w->file != u->file) {
        if (w->fd >= 0)
            close(w->fd);
        w->fd = open(path, O_RDONLY);
        w->file = u->file;
        if (w->fd < 0)
            return pt_err_set(e, PT_EUSER, "%s: error: cannot read feature file: %s", path,
                              strerror(errno));
    }
    if (htk_grow(&w->raw, &w->cap_raw, bytes, 1))
        return pt_err_set(e, PT_ENOMEM, "error: out of memory");
    off_t at = (off_t)(f->data + (u->s + a) * f->vec);
    ssize_t got = pread(w->fd, w->raw, bytes, at);
    if (got != (ssize_t)bytes)
        return pt_err_set(e, PT_EUSER,
                          "%s: error: cannot read frames %llu to %llu (%s): the file changed "
                          "since the reader opened it?",
                          path, (unsigned long long)(u->s + a), (unsigned long long)(u->s + b - 1),
                          got < 0 ? strerror(errno) : "short read");
    return decode(s, f, w->raw, n, w->frames);
}

/* Frame t of utterance u with its context into dst (w->frames holds frames [a, ...)). */
static void expand(const struct htk_set *s, const struct htk_utt *u, uint32_t t, uint32_t a,
                   const float *frames, float *dst)
{
    for (int j = -s->left; j <= s->right; j++) {
        long long k = (long long)t + j;
        k = k < 0 ? 0 : k >= (long long)u->n ? (long long)u->n - 1 : k;
        memcpy(dst + (size_t)(j + s->left) * (size_t)s->dim,
               frames + (size_t)(k - a) * (size_t)s->dim, (size_t)s->dim * sizeof *dst);
    }
}

/* The utterance holding global frame g (frame mode). */
static size_t utt_of_frame(const struct htk_set *s, uint64_t g)
{
    size_t lo = 0, hi = s->nutt;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->utt[mid].frame0 <= g)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

struct htk_job {
    struct reader *r;
    const uint32_t *seqs;
    const uint32_t *pos, *cnt; /* segments (truncated mode): frames [pos, pos + cnt) */
    const uint32_t *at, *dst;  /* and where: sequence dst from step at */
    struct minibatch *mb;
};

/* Frames [p, p + n) of utterance u of set s, each with its context window (which reaches
 * beyond them), into input in at columns col, col + stride, ... */
static int put_frames(struct htk_set *s, const struct htk_utt *u, uint32_t p, uint32_t n,
                      size_t col, size_t stride, struct mb_input *in, struct htk_worker *w,
                      struct pt_err *e)
{
    uint32_t a = p > (uint32_t)s->left ? p - (uint32_t)s->left : 0;
    uint32_t b = p + n + (uint32_t)s->right < u->n ? p + n + (uint32_t)s->right : u->n;
    int rc = read_frames(s, u, a, b, w, e);
    for (uint32_t i = 0; rc == 0 && i < n; i++)
        expand(s, u, p + i, a, w->frames, in->data + (col + i * stride) * (size_t)in->dim);
    return rc;
}

/* The classes of frames [p, p + n) (ids from first on) one-hot into input in: 1, or 2 at
 * a segment's first frame (phoneBoundaries). */
static void put_labels(const uint32_t *ids, uint32_t n, size_t col, size_t stride,
                       struct mb_input *in)
{
    for (uint32_t i = 0; i < n; i++)
        in->data[(col + i * stride) * (size_t)in->dim + (ids[i] & ~HTK_BOUNDARY)] =
            ids[i] & HTK_BOUNDARY ? 2.0f : 1.0f;
}

static int htk_part(void *ctx, size_t lo, size_t hi, int worker, struct pt_err *e)
{
    struct htk_job *j = ctx;
    struct htk_set *s = j->r->htk;
    const struct htk_config *hc = &j->r->rc.htk;
    struct minibatch *mb = j->mb;
    struct mb_input *feat = &mb->in[hc->features];
    struct mb_input *lab = hc->labels < 0 ? NULL : &mb->in[hc->labels];
    size_t nseq = mb->nseq;
    int rc = 0;
    for (size_t k = lo; rc == 0 && k < hi; k++) {
        /* a frame (frame mode), an utterance, or its segment [p, p + n) (truncated mode;
         * none: an idle stream) */
        const struct htk_utt *u;
        uint32_t p, n;
        if (hc->frame_mode) {
            uint64_t g = j->seqs[k];
            u = &s->utt[utt_of_frame(s, g)];
            p = (uint32_t)(g - u->frame0);
            n = 1;
        } else {
            n = j->cnt ? j->cnt[k] : 0;
            p = j->pos ? j->pos[k] : 0;
            u = j->cnt && !n ? NULL : &s->utt[j->seqs[k]];
            n = u && !j->cnt ? u->n : n;
        }
        size_t col = j->dst ? (size_t)j->at[k] * nseq + j->dst[k] : k; /* its first column */
        if (u)
            rc = put_frames(s, u, p, n, col, nseq, feat, &s->w[worker], e);
        if (u && lab)
            put_labels(s->lab.ids + u->lab + p, n, col, nseq, lab);
        for (int x = 0; rc == 0 && u && x < hc->nextra; x++) {
            struct mb_input *in = &mb->in[hc->extra[x].input];
            struct htk_set *xs = s->xfeat[x];
            if (xs)
                rc = put_frames(xs, &xs->utt[u->entry], p, n, col, nseq, in, &xs->w[worker], e);
            else
                put_labels(s->xlab[x].ids + u->xlab[x] + p, n, col, nseq, in);
        }
        for (int i = 0; !j->dst && i < mb->ninputs; i++) /* segments: set by the caller */
            mb->in[i].len[k] = n;
    }
    return rc;
}

/* Whether input i is a label stream's (zeroed before its one-hot values go in). */
static int label_input(const struct htk_config *hc, int i)
{
    for (int x = 0; x < hc->nextra; x++)
        if (hc->extra[x].input == i)
            return !hc->extra[x].feat;
    return i == hc->labels;
}

/* Zero the padding of every feature stream's input. */
static void pad(struct reader *r, struct minibatch *mb, size_t n)
{
    for (int i = 0; i < mb->ninputs; i++)
        if (!label_input(&r->rc.htk, i))
            mb_input_pad(&mb->in[i], n);
}

/* The minibatch's shape: nseq sequences of up to steps frames, samples in all. */
static int shape(struct reader *r, struct minibatch *mb, size_t nseq, size_t steps, size_t samples,
                 struct pt_err *e)
{
    const struct htk_config *hc = &r->rc.htk;
    int rc = 0;
    mb->ninputs = r->rc.ninputs;
    mb->nseq = nseq;
    mb->samples = samples;
    for (int i = 0; rc == 0 && i < r->rc.ninputs; i++) {
        struct mb_input *in = &mb->in[i];
        memcpy(in->name, r->rc.inputs[i].name, sizeof in->name);
        in->dim = r->rc.inputs[i].dim;
        rc = label_input(hc, i) ? mb_input_reset(in, nseq, steps, e)
                                : mb_input_shape(in, nseq, steps, e);
    }
    return rc;
}

int htk_fill(struct reader *r, const uint32_t *seqs, size_t n, struct minibatch *mb,
             struct pt_err *e)
{
    const struct htk_config *hc = &r->rc.htk;
    size_t steps = 1, samples = n;
    if (!hc->frame_mode) {
        samples = 0;
        for (size_t k = 0; k < n; k++) {
            uint32_t len = r->htk->utt[seqs[k]].n;
            samples += len;
            steps = len > steps ? len : steps;
        }
    }
    int rc = shape(r, mb, n, steps, samples, e);
    struct htk_job job = {.r = r, .seqs = seqs, .mb = mb};
    if (rc == 0)
        rc = fill_pool_run(reader_pool(r), n, hc->frame_mode ? 32 : 1, htk_part, &job, e);
    if (rc == 0)
        pad(r, mb, n);
    return rc;
}

int htk_fill_segments(struct reader *r, const uint32_t *seqs, const uint32_t *pos,
                      const uint32_t *cnt, const uint32_t *at, const uint32_t *dst, size_t n,
                      const uint8_t *cont, size_t nstreams, struct minibatch *mb, struct pt_err *e)
{
    size_t steps = 1, samples = 0;
    for (size_t k = 0; k < n; k++) {
        samples += cnt[k];
        steps = at[k] + cnt[k] > steps ? at[k] + cnt[k] : steps;
    }
    int rc = shape(r, mb, nstreams, steps, samples, e);
    if (rc == 0 && (htk_grow(&mb->cont, &mb->cap_cont, nstreams, 1) ||
                    htk_grow(&mb->begins, &mb->cap_begins, steps * nstreams, 1)))
        return pt_err_set(e, PT_ENOMEM, "error: out of memory");
    if (rc == 0) {
        memcpy(mb->cont, cont, nstreams);
        memset(mb->begins, 0, steps * nstreams);
        for (int i = 0; i < mb->ninputs; i++)
            memset(mb->in[i].len, 0, nstreams * sizeof *mb->in[i].len);
        for (size_t k = 0; k < n; k++) {
            if (at[k] > 0 && cnt[k] > 0)
                mb->begins[(size_t)at[k] * nstreams + dst[k]] = 1;
            for (int i = 0; i < mb->ninputs; i++)
                mb->in[i].len[dst[k]] += cnt[k];
        }
    }
    struct htk_job job = {
        .r = r, .seqs = seqs, .pos = pos, .cnt = cnt, .at = at, .dst = dst, .mb = mb};
    if (rc == 0)
        rc = fill_pool_run(reader_pool(r), n, 1, htk_part, &job, e);
    if (rc == 0)
        pad(r, mb, nstreams);
    return rc;
}
