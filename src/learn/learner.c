/* The update rules of SPEC 5 and the learner registry; see learn.h. The formulas'
 * parameters are computed here, the loops over the arena are backend ops.
 *
 * Momentum SGD (unit gain), with m = momentumPerSample^N for N samples:
 *     g  += L2 * N * w                      (before the update)
 *     clip g per tensor to threshold * N    (elementwise, or by the tensor's norm)
 *     sg  = m * sg + (1 - m) * lr * g
 *     w  -= sg                              (useNAG: w -= m * sg + (1 - m) * lr * g)
 *     w   = softthreshold(w, lr * L1 * N)   (after the update)
 * Adam (extension): beta1 = m (the momentum of this minibatch, so 0.9 by default),
 *     beta2 = 0.999, eps = 1e-8, bias corrected; step lr * N * mhat / (sqrt(vhat) + eps).
 * AdaGrad (extension): acc += g^2; w -= lr * N * g / (sqrt(acc) + eps). */
#include <math.h>
#include <string.h>
#include <strings.h>

#include "learn/learn.h"
#include "math/backend.h"

#define ADAM_BETA2  0.999
#define ADAM_EPS    1e-8
#define ADAGRAD_EPS 1e-8

/* ------------------------------------------------------------------ the rules */

static double minibatch_momentum(const struct learn_epoch *ep, size_t samples)
{
    return pow(ep->momentum_per_sample, (double)samples);
}

static void sgd_update(struct learner *l, const struct learn_config *lc,
                       const struct learn_epoch *ep, float *w, const float *g, size_t samples)
{
    float m = (float)minibatch_momentum(ep, samples), lr = (float)ep->lr_per_sample;
    l->bk->ops->sgd_update(l->bk, w, g, l->s1, l->n, m, (1.0f - m) * lr, lc->nag);
}

static void sgd_reset(struct learner *l)
{
    l->bk->ops->fill(l->bk, l->s1, l->n, 0.0f);
}

static void adam_update(struct learner *l, const struct learn_config *lc,
                        const struct learn_epoch *ep, float *w, const float *g, size_t samples)
{
    (void)lc;
    double beta1 = minibatch_momentum(ep, samples), step = ep->lr_per_sample * (double)samples;
    l->steps++;
    double c1 = 1.0 - pow(beta1, (double)l->steps), c2 = 1.0 - pow(ADAM_BETA2, (double)l->steps);
    float scale = (float)(step / (c1 > 0 ? c1 : 1)), rc2 = (float)(1.0 / sqrt(c2));
    l->bk->ops->adam_update(l->bk, w, g, l->s1, l->s2, l->n, (float)beta1, (float)ADAM_BETA2, scale,
                            rc2, (float)ADAM_EPS);
}

static void adagrad_update(struct learner *l, const struct learn_config *lc,
                           const struct learn_epoch *ep, float *w, const float *g, size_t samples)
{
    (void)lc;
    float step = (float)(ep->lr_per_sample * (double)samples);
    l->bk->ops->adagrad_update(l->bk, w, g, l->s1, l->n, step, (float)ADAGRAD_EPS);
}

/* ------------------------------------------------------------------ the registry */

static const struct learner_kind kinds[] = {
    {"None", LEARN_SGD, 1, sgd_update, sgd_reset},
    {"Adam", LEARN_ADAM, 2, adam_update, NULL},
    {"AdaGrad", LEARN_ADAGRAD, 1, adagrad_update, NULL},
};
#define NKINDS (sizeof kinds / sizeof kinds[0])

const struct learner_kind *learner_kind_of(enum learn_type type)
{
    for (size_t i = 0; i < NKINDS; i++)
        if (kinds[i].type == type)
            return &kinds[i];
    return NULL;
}

const struct learner_kind *learner_kind_find(const char *name)
{
    for (size_t i = 0; i < NKINDS; i++)
        if (strcasecmp(kinds[i].name, name) == 0)
            return &kinds[i];
    return NULL;
}

/* ------------------------------------------------------------------ the learner */

int learner_init(struct learner *l, struct backend *b, enum learn_type type, size_t n,
                 struct pt_err *e)
{
    memset(l, 0, sizeof *l);
    l->kind = learner_kind_of(type);
    if (!l->kind)
        return pt_err_set(e, PT_EINTERNAL, "error: unknown learner type %d", (int)type);
    l->type = type;
    l->bk = b;
    l->n = n;
    float **state[2] = {&l->s1, &l->s2};
    for (int i = 0; i < l->kind->nstate && i < 2; i++)
        if (bk_alloc_zero(b, n, state[i], e)) {
            learner_free(l);
            return pt_err_context(e, "for the learner state of %zu values", n);
        }
    return 0;
}

void learner_free(struct learner *l)
{
    if (l->bk) {
        l->bk->ops->release(l->bk, l->s1);
        l->bk->ops->release(l->bk, l->s2);
    }
    l->s1 = l->s2 = NULL;
}

void learner_reset(struct learner *l)
{
    if (l->kind && l->kind->reset)
        l->kind->reset(l);
}

/* Clipping is per tensor, as in CNTK. */
static void clip(struct learner *l, const struct learn_config *lc, float *g, size_t samples,
                 const struct learn_span *spans, size_t nspans)
{
    if (isinf(lc->clip))
        return;
    struct backend *b = l->bk;
    float max = (float)(lc->clip * (double)samples);
    for (size_t t = 0; t < nspans; t++) {
        if (lc->clip_truncation)
            b->ops->clip_value(b, g + spans[t].offset, spans[t].count, max);
        else
            b->ops->clip_norm(b, g + spans[t].offset, spans[t].count, max);
    }
}

void learner_update(struct learner *l, const struct learn_config *lc, const struct learn_epoch *ep,
                    float *w, float *g, size_t samples, const struct learn_span *spans,
                    size_t nspans)
{
    struct backend *b = l->bk;
    double N = (double)samples;
    if (lc->l2 > 0)
        b->ops->axpy(b, g, w, l->n, (float)(lc->l2 * N));
    clip(l, lc, g, samples, spans, nspans);
    l->kind->update(l, lc, ep, w, g, samples);
    if (lc->l1 > 0)
        b->ops->soft_threshold(b, w, l->n, (float)(ep->lr_per_sample * lc->l1 * N));
}
