/* The update rules of SPEC 5 over flat arrays; see learn.h.
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
#include <stdlib.h>
#include <string.h>

#include "learn/learn.h"

#define ADAM_BETA2 0.999
#define ADAM_EPS 1e-8
#define ADAGRAD_EPS 1e-8

int learner_init(struct learner *l, enum learn_type type, size_t n, struct pt_err *e)
{
    memset(l, 0, sizeof *l);
    l->type = type;
    l->n = n;
    l->s1 = calloc(n ? n : 1, sizeof *l->s1);
    if (type == LEARN_ADAM)
        l->s2 = calloc(n ? n : 1, sizeof *l->s2);
    if (!l->s1 || (type == LEARN_ADAM && !l->s2)) {
        learner_free(l);
        return pt_err_set(e, PT_ENOMEM, "error: out of memory (learner state of %zu values)", n);
    }
    return 0;
}

void learner_free(struct learner *l)
{
    free(l->s1);
    free(l->s2);
    l->s1 = l->s2 = NULL;
}

void learner_reset(struct learner *l)
{
    if (l->type == LEARN_SGD)
        memset(l->s1, 0, l->n * sizeof *l->s1);
}

static void clip(const struct learn_config *lc, float *g, size_t samples,
                 const struct learn_span *spans, size_t nspans)
{
    if (isinf(lc->clip))
        return;
    float max = (float)(lc->clip * (double)samples);
    for (size_t t = 0; t < nspans; t++) {
        float *x = g + spans[t].offset;
        size_t n = spans[t].count;
        if (lc->clip_truncation) {
            for (size_t i = 0; i < n; i++)
                x[i] = x[i] > max ? max : x[i] < -max ? -max : x[i];
            continue;
        }
        double norm = 0;
        for (size_t i = 0; i < n; i++)
            norm += (double)x[i] * x[i];
        norm = sqrt(norm);
        if (norm > max) {
            float s = (float)(max / norm);
            for (size_t i = 0; i < n; i++)
                x[i] *= s;
        }
    }
}

static void soft_threshold(float *w, size_t n, float t)
{
    for (size_t i = 0; i < n; i++)
        w[i] = w[i] > t ? w[i] - t : w[i] < -t ? w[i] + t : 0.0f;
}

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
/* AVX2 without FMA: the vector code rounds exactly as the scalar code (bit-identical
 * models on every CPU). */
#define LEARN_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define LEARN_CLONES
#endif
#define LEARN_BLOCK 16

/* Momentum SGD over n parameters. restrict and fixed-size blocks let gcc -O2 vectorize the
 * loop (plain pointers that may alias kept it scalar: 0.29 ms per MLP step). */
LEARN_CLONES static void sgd_loop(int nag, float m, float a, float *restrict sg,
                                  float *restrict w, const float *restrict g, size_t n)
{
    size_t i = 0;
    if (!nag) {
        for (; i + LEARN_BLOCK <= n; i += LEARN_BLOCK)
            for (size_t k = i; k < i + LEARN_BLOCK; k++) {
                sg[k] = m * sg[k] + a * g[k];
                w[k] -= sg[k];
            }
        for (; i < n; i++) {
            sg[i] = m * sg[i] + a * g[i];
            w[i] -= sg[i];
        }
        return;
    }
    for (; i + LEARN_BLOCK <= n; i += LEARN_BLOCK)
        for (size_t k = i; k < i + LEARN_BLOCK; k++) {
            sg[k] = m * sg[k] + a * g[k];
            w[k] -= m * sg[k] + a * g[k];
        }
    for (; i < n; i++) {
        sg[i] = m * sg[i] + a * g[i];
        w[i] -= m * sg[i] + a * g[i];
    }
}

static void sgd(struct learner *l, int nag, float m, float lr, float *w, const float *g)
{
    sgd_loop(nag, m, (1.0f - m) * lr, l->s1, w, g, l->n);
}

static void adam(struct learner *l, double beta1, double step, float *w, const float *g)
{
    l->steps++;
    double c1 = 1.0 - pow(beta1, (double)l->steps), c2 = 1.0 - pow(ADAM_BETA2, (double)l->steps);
    float b1 = (float)beta1, b2 = (float)ADAM_BETA2;
    float scale = (float)(step / (c1 > 0 ? c1 : 1)), rc2 = (float)(1.0 / sqrt(c2));
    for (size_t i = 0; i < l->n; i++) {
        l->s1[i] = b1 * l->s1[i] + (1 - b1) * g[i];
        l->s2[i] = b2 * l->s2[i] + (1 - b2) * g[i] * g[i];
        w[i] -= scale * l->s1[i] / (sqrtf(l->s2[i]) * rc2 + (float)ADAM_EPS);
    }
}

void learner_update(struct learner *l, const struct learn_config *lc, const struct learn_epoch *ep,
                    float *w, float *g, size_t samples, const struct learn_span *spans,
                    size_t nspans)
{
    double N = (double)samples;
    if (lc->l2 > 0) {
        float k = (float)(lc->l2 * N);
        for (size_t i = 0; i < l->n; i++)
            g[i] += k * w[i];
    }
    clip(lc, g, samples, spans, nspans);
    double m = pow(ep->momentum_per_sample, N);
    float lr = (float)ep->lr_per_sample;
    if (l->type == LEARN_SGD) {
        sgd(l, lc->nag, (float)m, lr, w, g);
    } else if (l->type == LEARN_ADAM) {
        adam(l, m, ep->lr_per_sample * N, w, g);
    } else {
        float step = (float)(ep->lr_per_sample * N);
        for (size_t i = 0; i < l->n; i++) {
            l->s1[i] += g[i] * g[i];
            w[i] -= step * g[i] / (sqrtf(l->s1[i]) + (float)ADAGRAD_EPS);
        }
    }
    if (lc->l1 > 0)
        soft_threshold(w, l->n, (float)(ep->lr_per_sample * lc->l1 * N));
}
