/* Training steps replayed (nn_set_step_replay): a step's passes recorded by the backend
 * (capture_begin .. capture_end: a CUDA graph) and queued again as one recording.
 *
 * On a GPU the MLP's step is some 27 kernels and products that take the device about
 * 120 us, but the host 5-7 us to queue each (bench/RESULTS.md, issue 17): the host, not the
 * device, sets the pace. A recording is queued in one call. It holds the ops with the
 * pointers, shapes and scalars they had, so it is kept under a key of everything those
 * depend on that can change from step to step: the input buffers (nn_upload_ahead fills
 * two pairs in turn), the minibatch's shape, a fused SGD step's settings, and the
 * backend's count of freed memory (a buffer grown since may have moved). The passes'
 * host side (the layers' views, the output) is kept with it and put back at a replay, so
 * the network looks as after an unrecorded step. A key is recorded only once a step of it
 * ran unrecorded: the buffers the backend grows on first use exist by then. */
#include <stdlib.h>
#include <string.h>

#include "nn/nn_internal.h"

#define REPLAY_SLOTS 4 /* two input pairs, each for a full and a last, shorter minibatch */
#define REPLAY_TRIES 4 /* failed recordings before the network stops trying */

struct replay_key {
    const float *x, *labels;
    size_t steps, nseq;
    int fused;
    struct bk_sgd u;
    unsigned long freed;
};

/* a layer's host side after a pass */
struct replay_view {
    float *x, *dx, *y, *dy;
    size_t steps, nseq;
};

struct replay_rec {
    struct replay_key key;
    void *rec; /* NULL: free slot */
    struct replay_view view[NN_MAX_LAYERS];
    const float *out;
    size_t out_cols;
};

struct nn_replay {
    struct replay_rec slot[REPLAY_SLOTS];
    size_t next;                          /* the slot the next recording takes */
    struct replay_key seen[REPLAY_SLOTS]; /* keys that ran unrecorded */
    size_t next_seen, nseen;
    int due; /* nn_replay_defer's passes wait for nn_replay_run */
    struct nn_pass pass;
    const float *crit_mask;
    size_t replayed, recorded, failed;
};

int nn_set_step_replay(struct nn *net, int on)
{
    const struct backend_ops *o = net->bk->ops;
    if (!on || !o->capture_begin || !o->capture_end || !o->replay || !o->drop) {
        nn_replay_free(net);
        return 0;
    }
    if (!net->replay && !(net->replay = calloc(1, sizeof *net->replay)))
        return 0; /* out of memory: steps run unrecorded */
    return 1;
}

void nn_replay_counts(const struct nn *net, size_t *replayed, size_t *recorded, size_t *failed)
{
    const struct nn_replay *r = net->replay;
    *replayed = r ? r->replayed : 0;
    *recorded = r ? r->recorded : 0;
    *failed = r ? r->failed : 0;
}

static void drop_all(struct nn *net)
{
    struct nn_replay *r = net->replay;
    for (size_t i = 0; i < REPLAY_SLOTS; i++) {
        net->bk->ops->drop(net->bk, r->slot[i].rec);
        r->slot[i].rec = NULL;
    }
    r->nseen = 0;
}

void nn_replay_free(struct nn *net)
{
    if (!net->replay)
        return;
    drop_all(net);
    free(net->replay);
    net->replay = NULL;
}

void nn_replay_cancel(struct nn *net)
{
    if (net->replay)
        net->replay->due = 0;
}

int nn_replay_due(const struct nn *net)
{
    return net->replay && net->replay->due;
}

int nn_replay_defer(struct nn *net, const struct nn_pass *p, const float *crit_mask)
{
    struct nn_replay *r = net->replay;
    if (!r || r->failed >= REPLAY_TRIES || net->graph || net->team || net->grad_ready ||
        net->cfg.dropout || p->mask || crit_mask || !net->x_in || !net->labels_in)
        return 0;
    r->pass = *p;
    r->crit_mask = crit_mask;
    r->due = 1;
    return 1;
}

static void key_of(const struct nn *net, const struct nn_pass *p, struct replay_key *k)
{
    memset(k, 0, sizeof *k); /* padding too: keys compare with memcmp */
    k->x = net->x_in;
    k->labels = net->labels_in;
    k->steps = p->steps;
    k->nseq = p->nseq;
    k->fused = net->fused_due;
    if (k->fused)
        k->u = net->fused;
    k->freed = net->bk->freed;
}

static void keep_views(const struct nn *net, struct replay_rec *s)
{
    for (int i = 0; i < net->nlayers; i++) {
        const struct nn_layer *l = net->layers[i];
        s->view[i] = (struct replay_view){l->x, l->dx, l->y, l->dy, l->steps, l->nseq};
    }
    s->out = net->out;
    s->out_cols = net->out_cols;
}

static void put_views(struct nn *net, const struct replay_rec *s)
{
    for (int i = 0; i < net->nlayers; i++) {
        struct nn_layer *l = net->layers[i];
        const struct replay_view *v = &s->view[i];
        l->x = v->x;
        l->dx = v->dx;
        l->y = v->y;
        l->dy = v->dy;
        l->steps = v->steps;
        l->nseq = v->nseq;
    }
    net->out = s->out;
    net->out_cols = s->out_cols;
}

/* The passes unrecorded, as step_forward and the backward pass would have run them. */
static int run_plain(struct nn *net, struct pt_err *e)
{
    struct nn_replay *r = net->replay;
    nn_run_forward(net, &r->pass);
    nn_run_criteria(net, r->crit_mask, 1);
    return nn_run_backward(net, e); /* no grad-ready hook (nn_replay_defer): 0 */
}

/* Record the passes into slot s; 0 when recorded (nothing ran yet). */
static int record(struct nn *net, struct replay_rec *s, const struct replay_key *k,
                  struct pt_err *e)
{
    struct backend *b = net->bk;
    int fused = net->fused_due;
    if (b->ops->capture_begin(b) != 0)
        return -1;
    int rc = run_plain(net, e);
    void *rec = b->ops->capture_end(b);
    net->fused_due = fused; /* the backward pass cleared it: a plain run needs it again */
    if (!rec || rc || b->freed != k->freed) { /* memory was freed meanwhile: the key is stale */
        b->ops->drop(b, rec);
        return -1;
    }
    b->ops->drop(b, s->rec);
    s->rec = rec;
    s->key = *k;
    keep_views(net, s);
    net->fused_due = 0;
    return 0;
}

int nn_replay_run(struct nn *net, struct pt_err *e)
{
    struct nn_replay *r = net->replay;
    struct backend *b = net->bk;
    r->due = 0;
    struct replay_key k;
    key_of(net, &r->pass, &k);
    struct replay_rec *hit = NULL;
    for (size_t i = 0; i < REPLAY_SLOTS; i++) {
        struct replay_rec *s = &r->slot[i];
        if (s->rec && s->key.freed != k.freed) { /* may name freed memory */
            b->ops->drop(b, s->rec);
            s->rec = NULL;
        } else if (s->rec && memcmp(&s->key, &k, sizeof k) == 0)
            hit = s;
    }
    if (!hit) {
        int seen = 0;
        for (size_t i = 0; i < r->nseen && !seen; i++)
            seen = memcmp(&r->seen[i], &k, sizeof k) == 0;
        if (seen && r->failed < REPLAY_TRIES) {
            struct replay_rec *s = &r->slot[r->next];
            if (record(net, s, &k, e) == 0) {
                r->next = (r->next + 1) % REPLAY_SLOTS;
                r->recorded++;
                hit = s;
            } else
                r->failed++;
        } else if (!seen) {
            r->seen[r->next_seen] = k;
            r->next_seen = (r->next_seen + 1) % REPLAY_SLOTS;
            r->nseen += r->nseen < REPLAY_SLOTS;
        }
    }
    if (!hit)
        return run_plain(net, e);
    put_views(net, hit);
    net->fused_due = 0;
    r->replayed++;
    return b->ops->replay(b, hit->rec, e);
}
