/* DataParallelSGD's quantized exchange (1-bit SGD, SPEC 7.1; the steps are in dpsgd.c's
 * header comment): the column layout and stripes, the packed buffers, and the two halves
 * of one exchange. The codecs are the backend's (math/quantize.h). */
#include <stdlib.h>

#include "comm/comm.h"
#include "math/backend.h"
#include "math/quantize.h"
#include "nn/nn.h"
#include "parallel/dpsgd_quant.h"

size_t quant_col_start(const struct quant *q, size_t c, size_t n)
{
    return c < q->ncols ? q->off[c] : n;
}

/* ------------------------------------------------------------------ quantized layout */

int quant_layout(struct quant *q, const struct engine_layout *L, int workers, struct pt_err *e)
{
    size_t ncols = 0;
    for (size_t t = 0; t < L->ntensors; t++)
        ncols += (size_t)L->tensors[t].cols;
    q->ncols = ncols;
    size_t w = (size_t)workers;
    q->off = calloc(ncols + 1, sizeof *q->off);
    q->rows = calloc(ncols + 1, sizeof *q->rows);
    q->boff = calloc(ncols + 1, sizeof *q->boff);
    q->first = calloc(w + 1, sizeof *q->first);
    q->scount = calloc(4 * w, sizeof *q->scount);
    if (!q->off || !q->rows || !q->boff || !q->first || !q->scount)
        return pt_err_set(e, PT_ENOMEM, "error: out of memory (quantizer layout)");
    if (L->bk->ops->alloc(L->bk, L->n, &q->r1, e))
        return pt_err_context(e, "for the quantizer residuals");
    q->sdispl = q->scount + w;
    q->rcount = q->sdispl + w;
    q->rdispl = q->rcount + w;
    size_t c = 0;
    for (size_t t = 0; t < L->ntensors; t++)
        for (int j = 0; j < L->tensors[t].cols; j++, c++) {
            q->rows[c] = (size_t)L->tensors[t].rows;
            q->off[c] = L->tensors[t].offset + (size_t)j * q->rows[c];
        }
    /* stripe s starts at the first column at or after s/N of the arena */
    for (size_t s = 0, col = 0; s <= w; s++) {
        size_t target = (size_t)((double)L->n * (double)s / (double)w);
        while (col < ncols && q->off[col] < target)
            col++;
        q->first[s] = s == w ? ncols : col;
    }
    return 0;
}

static void host_release(struct quant *q, void *p)
{
    if (q->host_bk)
        q->host_bk->ops->host_free(q->host_bk, p);
    else
        free(p);
}

/* A packed buffer of at least `want` bytes: the backend's host memory (pinned on a GPU, so
 * the quantizers' bytes cross the bus at full speed), else malloc. The old bytes are not
 * kept: every exchange rewrites them. */
static int grow(struct quant *q, struct backend *b, unsigned char **p, size_t *cap, size_t want,
                struct pt_err *e)
{
    if (want <= *cap)
        return 0;
    unsigned char *np = b->ops->host_alloc ? b->ops->host_alloc(b, want) : malloc(want);
    if (!np)
        return pt_err_set(e, PT_ENOMEM, "error: out of memory (quantizer buffers)");
    host_release(q, *p);
    q->host_bk = b->ops->host_alloc ? b : NULL;
    *p = np;
    *cap = want;
    return 0;
}

/* Byte offsets, counts and buffers for `bits`; residuals zeroed (a new epoch). */
int quant_prepare(struct quant *q, struct backend *b, int bits, int rank, int workers, size_t n,
                  struct pt_err *e)
{
    q->bits = bits;
    q->boff[0] = 0;
    for (size_t c = 0; c < q->ncols; c++)
        q->boff[c + 1] = q->boff[c] + quant_column_bytes(q->rows[c], bits);
    size_t own = q->boff[q->first[rank + 1]] - q->boff[q->first[rank]];
    q->bytes = 0;
    for (int s = 0; s < workers; s++) {
        q->sdispl[s] = q->boff[q->first[s]];
        q->scount[s] = q->boff[q->first[s + 1]] - q->sdispl[s];
        q->rcount[s] = own;
        q->rdispl[s] = (size_t)s * own;
        if (s != rank)
            q->bytes += (double)q->scount[s] + (double)own;
    }
    size_t lo = quant_col_start(q, q->first[rank], n),
           hi = quant_col_start(q, q->first[rank + 1], n);
    b->ops->release(b, q->r2);
    b->ops->release(b, q->sum);
    q->r2 = q->sum = NULL;
    if (bk_alloc_zero(b, hi - lo, &q->r2, e) || bk_alloc_zero(b, hi - lo, &q->sum, e))
        return pt_err_context(e, "for the quantizer residuals");
    b->ops->fill(b, q->r1, n, 0.0f);
    size_t total = q->boff[q->ncols] ? q->boff[q->ncols] : 1;
    size_t cap_all = q->cap_send;
    int rc = grow(q, b, &q->send, &q->cap_send, total, e);
    if (rc == 0)
        rc = grow(q, b, &q->all, &cap_all, total, e);
    if (rc == 0)
        rc = grow(q, b, &q->recv, &q->cap_recv, own * (size_t)workers + 1, e);
    return rc;
}

void quant_release(struct quant *q, struct backend *b)
{
    free(q->off);
    free(q->rows);
    free(q->boff);
    free(q->first);
    free(q->scount);
    if (b) {
        b->ops->release(b, q->r1);
        b->ops->release(b, q->r2);
        b->ops->release(b, q->sum);
    }
    host_release(q, q->send);
    host_release(q, q->recv);
    host_release(q, q->all);
}

/* ------------------------------------------------------------------ quantized exchange */

/* Columns c0..c1 of the quantized layout; floats from fbase, bytes from bbase. */
static struct bk_columns columns(const struct quant *q, size_t c0, size_t c1, size_t fbase,
                                 size_t bbase)
{
    struct bk_columns c = {.off = q->off, .rows = q->rows, .boff = q->boff, .c0 = c0, .c1 = c1};
    c.fbase = fbase;
    c.bbase = bbase;
    c.bits = q->bits;
    c.zero_threshold = q->zero_threshold;
    return c;
}

/* Steps 1-2: quantize every column of g, start the stripe exchange. */
int quant_start(struct engine *en, struct quant *q, const float *g, struct pt_err *e)
{
    struct backend *b = en->layout.bk;
    struct bk_columns all = columns(q, 0, q->ncols, 0, 0);
    b->ops->quantize(b, &all, g, q->r1, q->send);
    return comm_ialltoallv(en->comm, q->send, q->scount, q->sdispl, q->recv, q->rcount, q->rdispl,
                           COMM_BYTE, &q->req, e);
}

/* Steps 3-4: sum and re-quantize the own stripe, share it, reconstruct g. */
int quant_finish(struct engine *en, struct quant *q, float *g, struct pt_err *e)
{
    struct comm *c = en->comm;
    int rank = comm_rank(c), workers = comm_size(c);
    int rc = comm_wait(&q->req, e);
    engine_mark(en, PT_TRACE_COMM, "exchange", q->bytes - (double)q->scount[rank] * (workers - 1));
    if (rc)
        return rc;
    size_t c0 = q->first[rank], c1 = q->first[rank + 1], n = en->layout.n;
    size_t lo = quant_col_start(q, c0, n);
    struct backend *b = en->layout.bk;
    b->ops->fill(b, q->sum, quant_col_start(q, c1, n) - lo, 0.0f);
    struct bk_columns stripe = columns(q, c0, c1, lo, q->boff[c0]);
    for (int s = 0; s < workers; s++)
        b->ops->unquantize(b, &stripe, q->recv + q->rdispl[s], 1, q->sum);
    stripe.bbase = 0;
    b->ops->quantize(b, &stripe, q->sum, q->r2, q->all);
    engine_mark(en, PT_TRACE_COMPUTE, "requantize", -1);
    rc = comm_allgatherv(c, q->all + q->sdispl[rank], q->scount[rank], q->all, q->scount, q->sdispl,
                         COMM_BYTE, e);
    engine_mark(en, PT_TRACE_COMM, "allgather", (double)q->scount[rank] * (workers - 1));
    if (rc)
        return rc;
    struct bk_columns all = columns(q, 0, q->ncols, 0, 0);
    b->ops->unquantize(b, &all, q->all, 0, g);
    engine_mark(en, PT_TRACE_COMPUTE, "unquantize", -1);
    return 0;
}
