/* The update rules of SPEC 5 and the learner registry; see learn.h. The formulas'
 * parameters are computed here, the loops over the arena are backend ops.
 *
 * Momentum SGD (unit gain), with m = momentumPerSample^N for N samples:
 *     clip g per tensor to threshold * N    (elementwise, or by the tensor's norm)
 *     g  += L2 * N * w                      (before the update, after clipping as in CNTK)
 *     sg  = m * sg + (1 - m) * lr * g
 *     w  -= sg                              (useNAG: w -= m * sg + (1 - m) * lr * g)
 *     w   = softthreshold(w, lr * L1 * N)   (after the update)
 * Adam (extension): beta1 = m (the momentum of this minibatch, so 0.9 by default),
 *     beta2 = 0.999, eps = 1e-8, bias corrected; step lr * N * mhat / (sqrt(vhat) + eps).
 * AdaGrad (extension): acc += g^2; w -= lr * N * g / (sqrt(acc) + eps).
 * FSAdaGrad (CNTK's SGD.cpp, TypedUpdateWeights): with vm = exp(-N / varianceTimeConstant),
 *     count = vm * count + (1 - vm) * N; mul = fsAdagradTargetAvDenom * sqrt(count);
 *     the backend's fsadagrad_update with the minibatch momentum m and unit gain 1 - m.
 * RmsProp (CNTK's CPUMatrix::RmsProp), tensor by tensor: see backend.h rmsprop_update;
 *     the state is initialised from the first gradient. */
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

#define UPDATE_ARGS                                                                                \
    struct learner *l, const struct learn_config *lc, const struct learn_epoch *ep, float *w,      \
        float *g, size_t samples, const struct learn_span *spans, size_t nspans
#define UNUSED_SPANS (void)spans, (void)nspans

/* sgd_update's factors: s = m s + a g */
static void sgd_factors(const struct learn_epoch *ep, size_t samples, float *m, float *a)
{
    *m = (float)minibatch_momentum(ep, samples);
    *a = (1.0f - *m) * (float)ep->lr_per_sample;
}

static void sgd_update(UPDATE_ARGS)
{
    UNUSED_SPANS;
    float m, a;
    sgd_factors(ep, samples, &m, &a);
    l->bk->ops->sgd_update(l->bk, w, g, l->s1, l->n, m, a, lc->nag);
}

static void sgd_reset(struct learner *l)
{
    l->bk->ops->fill(l->bk, l->s1, l->n, 0.0f);
}

static void adam_update(UPDATE_ARGS)
{
    (void)lc, UNUSED_SPANS;
    double beta1 = minibatch_momentum(ep, samples), step = ep->lr_per_sample * (double)samples;
    l->steps++;
    double c1 = 1.0 - pow(beta1, (double)l->steps), c2 = 1.0 - pow(ADAM_BETA2, (double)l->steps);
    float scale = (float)(step / (c1 > 0 ? c1 : 1)), rc2 = (float)(1.0 / sqrt(c2));
    l->bk->ops->adam_update(l->bk, w, g, l->s1, l->s2, l->n, (float)beta1, (float)ADAM_BETA2, scale,
                            rc2, (float)ADAM_EPS);
}

static void adagrad_update(UPDATE_ARGS)
{
    (void)lc, UNUSED_SPANS;
    float step = (float)(ep->lr_per_sample * (double)samples);
    l->bk->ops->adagrad_update(l->bk, w, g, l->s1, l->n, step, (float)ADAGRAD_EPS);
}

static void fsadagrad_update(UPDATE_ARGS)
{
    UNUSED_SPANS;
    double N = (double)samples, m = minibatch_momentum(ep, samples);
    double vm = exp(-N / lc->var_time_constant);
    l->count = vm * l->count + (1.0 - vm) * N;
    double mul = lc->fs_target * sqrt(l->count);
    l->steps++;
    l->bk->ops->fsadagrad_update(l->bk, w, g, l->s1, l->s2, l->n, (float)ep->lr_per_sample,
                                 (float)m, (float)vm, (float)mul, 1.0f - (float)m);
}

static void rmsprop_update(UPDATE_ARGS)
{
    (void)samples;
    struct bk_rmsprop p = {
        .gamma = (float)lc->rms_gamma,
        .inc = (float)lc->rms_inc,
        .dec = (float)lc->rms_dec,
        .max = (float)lc->rms_max,
        .min = (float)lc->rms_min,
        .lr = (float)ep->lr_per_sample,
        .ave_mult = lc->ave_mult,
        .init = l->steps == 0,
    };
    for (size_t t = 0; t < nspans; t++) {
        size_t o = spans[t].offset;
        l->bk->ops->rmsprop_update(l->bk, w + o, g + o, l->s1 + o, l->s2 + o, l->s3 + o,
                                   spans[t].count, &p);
    }
    l->steps++;
}

/* ------------------------------------------------------------------ the registry */

static const struct learner_kind kinds[] = {
    {"None", LEARN_SGD, 1, sgd_update, sgd_reset},
    {"Adam", LEARN_ADAM, 2, adam_update, NULL},
    {"AdaGrad", LEARN_ADAGRAD, 1, adagrad_update, NULL},
    {"FSAdaGrad", LEARN_FSADAGRAD, 2, fsadagrad_update, NULL},
    {"RmsProp", LEARN_RMSPROP, 3, rmsprop_update, NULL},
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
    float **state[3] = {&l->s1, &l->s2, &l->s3};
    for (int i = 0; i < l->kind->nstate && i < 3; i++)
        if (bk_alloc_zero(b, n, state[i], e)) {
            learner_free(l);
            return pt_err_context(e, "for the learner state of %zu values", n);
        }
    return 0;
}

void learner_lend_s1(struct learner *l, float *s1)
{
    if (!l->s1_lent)
        l->bk->ops->release(l->bk, l->s1);
    l->s1 = s1;
    l->s1_lent = 1;
}

void learner_free(struct learner *l)
{
    if (l->bk) {
        if (!l->s1_lent)
            l->bk->ops->release(l->bk, l->s1);
        l->bk->ops->release(l->bk, l->s2);
        l->bk->ops->release(l->bk, l->s3);
    }
    l->s1 = l->s2 = l->s3 = NULL;
}

void learner_reset(struct learner *l)
{
    if (l->kind && l->kind->reset)
        l->kind->reset(l);
}

int learner_fused_sgd(const struct learner *l, const struct learn_config *lc,
                      const struct learn_epoch *ep, size_t samples, struct bk_sgd *u)
{
    if (l->kind->update != sgd_update || !isinf(lc->clip) || lc->l2 > 0 || lc->l1 > 0 ||
        samples == 0)
        return 0;
    *u = (struct bk_sgd){.s = l->s1, .nag = lc->nag};
    sgd_factors(ep, samples, &u->m, &u->a);
    return 1;
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
    if (l->kind->update == sgd_update && !isinf(lc->clip) && lc->clip_truncation &&
        b->ops->sgd_update_clip && lc->l2 <= 0 && lc->l1 <= 0) { /* one pass: the same bits */
        float m, a;
        sgd_factors(ep, samples, &m, &a);
        b->ops->sgd_update_clip(b, w, g, l->s1, l->n, m, a, lc->nag,
                                (float)(lc->clip * (double)samples));
        return;
    }
    clip(l, lc, g, samples, spans, nspans); /* CNTK clips first, then adds the L2 term */
    if (lc->l2 > 0)
        b->ops->axpy(b, g, w, l->n, (float)(lc->l2 * N));
    l->kind->update(l, lc, ep, w, g, samples, spans, nspans);
    if (lc->l1 > 0)
        b->ops->soft_threshold(b, w, l->n, (float)(ep->lr_per_sample * lc->l1 * N));
}
