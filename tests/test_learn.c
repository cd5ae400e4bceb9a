/* Learners and schedules (src/learn): CNTK's formulas, checked by hand. */
#include <math.h>
#include <stdio.h>

#include "learn/learn.h"
#include "math/backend.h"
#include "testutil.h"

static struct cfg *sgd_cfg(const char *text, struct learn_config *lc, int *rc, struct pt_err *e)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "SGD=[maxEpochs=3; %s]", text);
    struct cfg *c = load("l.cfg", buf, e);
    ck_assert_msg(e->code == 0, "%s", e->msg);
    *rc = learn_config_read(node_at(c, "SGD"), lc, e);
    return c;
}

START_TEST(schedules_as_cntk)
{
    struct learn_config lc;
    struct learn_epoch ep;
    struct pt_err e;
    int rc;
    struct cfg *c =
        sgd_cfg("minibatchSize=25; learningRatesPerMB=0.2; momentumPerMB=0.9", &lc, &rc, &e);
    ck_assert_int_eq(rc, 0);
    learn_epoch_params(&lc, 0, &ep);
    char buf[64];
    snprintf(buf, sizeof buf, "%.8g", ep.lr_per_sample);
    ck_assert_str_eq(buf, "0.0080000004");
    /* momenta are floats, as in CNTK: 0.9 is 0.89999998 */
    ck_assert(fabs(learn_effective_momentum(&ep) - (double)0.9f) < 1e-12);
    snprintf(buf, sizeof buf, "%.1f", learn_momentum_time_constant(&ep));
    ck_assert_str_eq(buf, "237.3");
    learn_config_free(&lc);
    cfg_free(c);

    c = sgd_cfg("minibatchSize=64:128; learningRatesPerSample=0.01*2:0.001; "
                "momentumAsTimeConstant=2500; dropoutRate=0:0.5",
                &lc, &rc, &e);
    ck_assert_int_eq(rc, 0);
    learn_epoch_params(&lc, 1, &ep);
    ck_assert_uint_eq(ep.mb_size, 128);
    ck_assert(ep.lr_per_sample == (double)0.01f);
    ck_assert(ep.momentum_per_sample == (double)(float)exp(-1.0 / 2500));
    /* CNTK's numbers (a float per-sample momentum), not the double's 0.950089 and 2500.0 */
    snprintf(buf, sizeof buf, "%f %.1f", learn_effective_momentum(&ep),
             learn_momentum_time_constant(&ep));
    ck_assert_str_eq(buf, "0.950085 2499.8");
    ck_assert(ep.dropout == 0.5);
    learn_epoch_params(&lc, 7, &ep); /* past the end: the last entries repeat */
    ck_assert(ep.lr_per_sample == (double)0.001f);
    learn_config_free(&lc);
    cfg_free(c);

    /* no momentum key: 0.9 per minibatch; momentumAsTimeConstant=0 means none */
    c = sgd_cfg("minibatchSize=10; learningRatesPerSample=0.1", &lc, &rc, &e);
    learn_epoch_params(&lc, 0, &ep);
    ck_assert(fabs(learn_effective_momentum(&ep) - (double)0.9f) < 1e-12);
    learn_config_free(&lc);
    cfg_free(c);
    c = sgd_cfg("learningRatesPerSample=0.1; momentumAsTimeConstant=0", &lc, &rc, &e);
    learn_epoch_params(&lc, 0, &ep);
    ck_assert(ep.momentum_per_sample == 0.0);
    learn_config_free(&lc);
    cfg_free(c);
}
END_TEST

START_TEST(config_errors)
{
    struct learn_config lc;
    struct pt_err e;
    int rc;
    struct cfg *c = sgd_cfg("minibatchSize=10", &lc, &rc, &e);
    ck_assert_int_eq(rc, PT_EUSER);
    ck_assert_str_eq(e.msg, "l.cfg:1:1: error: SGD: no learning rate: set learningRatesPerSample "
                            "or learningRatesPerMB");
    cfg_free(c);
}
END_TEST

static struct learn_config plain(void)
{
    struct learn_config lc;
    memset(&lc, 0, sizeof lc);
    lc.clip = INFINITY;
    lc.clip_truncation = 1;
    return lc;
}

/* The learners run on the CPU backend (its state and the arrays are host memory). */
static struct backend *cpu(void)
{
    static struct backend *b;
    if (!b)
        ck_assert_int_eq(backend_cpu_new(&b, NULL), 0);
    return b;
}

START_TEST(momentum_sgd_by_hand)
{
    struct learn_config lc = plain();
    struct learn_epoch ep = {.mb_size = 4, .lr_per_sample = 0.1, .momentum_per_sample = 0.5};
    struct learner l;
    struct pt_err e;
    ck_assert_int_eq(learner_init(&l, cpu(), LEARN_SGD, 2, &e), 0);
    float w[2] = {1, -1}, g[2] = {2, 4};
    struct learn_span span = {0, 2};
    /* N = 2: m = 0.25; sg = 0.75 * 0.1 * g = (0.15, 0.3) */
    learner_update(&l, &lc, &ep, w, g, 2, &span, 1);
    ck_assert(fabsf(w[0] - 0.85f) < 1e-6f && fabsf(w[1] + 1.3f) < 1e-6f);
    float g2[2] = {2, 4};
    /* sg = 0.25 * (0.15, 0.3) + (0.15, 0.3) = (0.1875, 0.375) */
    learner_update(&l, &lc, &ep, w, g2, 2, &span, 1);
    ck_assert(fabsf(w[0] - (0.85f - 0.1875f)) < 1e-6f);
    learner_reset(&l);
    ck_assert(l.s1[0] == 0.0f && l.s1[1] == 0.0f);
    /* Nesterov: w -= m*sg + (1-m)*lr*g with sg already updated */
    lc.nag = 1;
    float w3[2] = {0, 0}, g3[2] = {1, 1};
    learner_update(&l, &lc, &ep, w3, g3, 2, &span, 1);
    float sg = 0.75f * 0.1f; /* after the update */
    ck_assert(fabsf(w3[0] + (0.25f * sg + sg)) < 1e-6f);
    learner_free(&l);
}
END_TEST

START_TEST(regularization_and_clipping)
{
    struct learn_config lc = plain();
    struct learn_epoch ep = {.mb_size = 1, .lr_per_sample = 1.0, .momentum_per_sample = 0.0};
    struct learner l;
    struct pt_err e;
    learner_init(&l, cpu(), LEARN_SGD, 4, &e);
    struct learn_span spans[2] = {{0, 2}, {2, 2}};
    /* L2: g += L2 * N * w */
    lc.l2 = 0.5;
    float w[4] = {1, 2, 3, 4}, g[4] = {0, 0, 0, 0};
    learner_update(&l, &lc, &ep, w, g, 2, spans, 2);
    ck_assert(w[0] == 0.0f && w[3] == 0.0f); /* w - 1*(0.5*2*w) = 0 */
    lc.l2 = 0;
    /* L1: soft threshold by lr * L1 * N after the update */
    lc.l1 = 0.25;
    float w2[4] = {1, -1, 0.2f, -0.4f}, g2[4] = {0};
    learner_update(&l, &lc, &ep, w2, g2, 2, spans, 2);
    ck_assert(w2[0] == 0.5f && w2[1] == -0.5f && w2[2] == 0.0f && w2[3] == 0.0f);
    lc.l1 = 0;
    /* clipping by truncation: threshold 1 per sample, N = 2 -> +-2 */
    lc.clip = 1;
    float w3[4] = {0}, g3[4] = {5, -5, 1, -1};
    learner_update(&l, &lc, &ep, w3, g3, 2, spans, 2);
    ck_assert(w3[0] == -2.0f && w3[1] == 2.0f && w3[2] == -1.0f);
    /* clipping by norm, per tensor: (3,4) has norm 5 > 2 -> scaled to (1.2, 1.6) */
    lc.clip_truncation = 0;
    float w4[4] = {0}, g4[4] = {3, 4, 0.5f, 0};
    learner_update(&l, &lc, &ep, w4, g4, 2, spans, 2);
    ck_assert(fabsf(w4[0] + 1.2f) < 1e-6f && fabsf(w4[1] + 1.6f) < 1e-6f && w4[2] == -0.5f);
    learner_free(&l);
}
END_TEST

START_TEST(adam_and_adagrad)
{
    struct learn_config lc = plain();
    struct learn_epoch ep = {.mb_size = 1, .lr_per_sample = 0.01, .momentum_per_sample = 0.9};
    struct learner l;
    struct pt_err e;
    struct learn_span span = {0, 1};
    learner_init(&l, cpu(), LEARN_ADAM, 1, &e);
    float w = 1, g = 123;
    /* first Adam step: mhat/sqrt(vhat) = sign(g), so w -= lr * N */
    learner_update(&l, &lc, &ep, &w, &g, 2, &span, 1);
    ck_assert(fabsf(w - (1 - 0.02f)) < 1e-5f);
    learner_free(&l);
    learner_init(&l, cpu(), LEARN_ADAGRAD, 1, &e);
    w = 1;
    g = -3;
    learner_update(&l, &lc, &ep, &w, &g, 2, &span, 1);
    ck_assert(fabsf(w - (1 + 0.02f)) < 1e-5f); /* g / sqrt(g^2) = -1 */
    g = -4;
    learner_update(&l, &lc, &ep, &w, &g, 2, &span, 1);
    ck_assert(fabsf(w - (1.02f + 0.02f * 4 / 5)) < 1e-5f); /* sqrt(9 + 16) = 5 */
    learner_free(&l);
}
END_TEST

/* Clipping comes before the L2 term (CNTK's TypedUpdateWeights): a large weight's decay is
 * not clipped away. Threshold 1 per sample, N = 2: g = 5 -> 2, then + 0.5 * 2 * w. */
START_TEST(clip_before_l2)
{
    struct learn_config lc = plain();
    struct learn_epoch ep = {.mb_size = 2, .lr_per_sample = 1.0, .momentum_per_sample = 0.0};
    struct learner l;
    struct pt_err e;
    struct learn_span span = {0, 2};
    learner_init(&l, cpu(), LEARN_SGD, 2, &e);
    lc.clip = 1;
    lc.l2 = 0.5;
    float w[2] = {10, 0}, g[2] = {5, -5};
    learner_update(&l, &lc, &ep, w, g, 2, &span, 1);
    ck_assert_msg(w[0] == 10.0f - (2.0f + 10.0f) && w[1] == 2.0f, "w = %g %g", w[0], w[1]);
    learner_free(&l);
}
END_TEST

/* Pseudo-random gradients for the reference checks, a few of them zero. */
static float ref_grad(int step, int i)
{
    unsigned x = (unsigned)(step * 7919 + i * 104729 + 13) * 2654435761u;
    if (x % 11 == 0)
        return 0.0f;
    return ((float)(x >> 8) / 16777216.0f - 0.5f) * (float)(1 + i % 3);
}

#define REF_N 7

/* FSAdaGrad against CNTK's formula, one value at a time (SGD.cpp's smoothedCount, varMomentum
 * and CPUMatrix::FSAdagrad), over 6 steps with momentum, then 2 without. */
START_TEST(fsadagrad_as_cntk)
{
    struct learn_config lc = plain();
    lc.var_time_constant = 100;
    lc.fs_target = 1;
    struct learn_epoch ep = {.mb_size = 8, .lr_per_sample = 0.01, .momentum_per_sample = 0.98};
    struct learner l;
    struct pt_err e;
    struct learn_span span = {0, REF_N};
    ck_assert_int_eq(learner_init(&l, cpu(), LEARN_FSADAGRAD, REF_N, &e), 0);
    float w[REF_N], rw[REF_N], ada[REF_N] = {0}, mom[REF_N] = {0};
    for (int i = 0; i < REF_N; i++)
        w[i] = rw[i] = 0.1f * (float)i;
    double count = 0;
    for (int step = 0; step < 8; step++) {
        if (step == 6)
            ep.momentum_per_sample = 0;
        size_t N = 8 + (size_t)step; /* the minibatch size varies */
        float g[REF_N];
        for (int i = 0; i < REF_N; i++)
            g[i] = ref_grad(step, i);
        double m = pow(ep.momentum_per_sample, (double)N);
        double vm = exp(-(double)N / 100.0);
        count = vm * count + (1 - vm) * (double)N;
        float mul = (float)(1.0 * sqrt(count)), fm = (float)m, fvm = (float)vm;
        for (int i = 0; i < REF_N; i++) {
            float gi = g[i];
            float sq = fvm * ada[i] + (1.0f - fvm) * gi * gi;
            ada[i] = sq;
            if (sq != 0.0f) {
                float f = mul * (1.0f / sqrtf(sq));
                if (f > 10.0f)
                    f = 10.0f;
                gi *= f;
            }
            if (fm > 0.0f) {
                gi = fm * mom[i] + (1.0f - fm) * gi;
                mom[i] = gi;
            }
            gi *= 0.01f;
            rw[i] -= gi;
        }
        learner_update(&l, &lc, &ep, w, g, N, &span, 1);
        for (int i = 0; i < REF_N; i++)
            ck_assert_msg(fabsf(w[i] - rw[i]) <= 1e-6f * (1 + fabsf(rw[i])),
                          "step %d w[%d] = %.9g, CNTK's formula %.9g", step, i, w[i], rw[i]);
        ck_assert(fabs(l.count - count) < 1e-9);
    }
    learner_free(&l);
}
END_TEST

/* RmsProp against CNTK's CPUMatrix::RmsProp and the step lr / aveMultiplier, one value at a
 * time, per tensor (two tensors: 3 and 4 values), over 6 steps. */
START_TEST(rmsprop_as_cntk)
{
    struct learn_config lc = plain();
    lc.rms_gamma = 0.9, lc.rms_inc = 1.2, lc.rms_dec = 0.75, lc.rms_max = 10, lc.rms_min = 0.1;
    struct learn_epoch ep = {.mb_size = 4, .lr_per_sample = 0.05, .momentum_per_sample = 0.9};
    struct learn_span spans[2] = {{0, 3}, {3, 4}};
    for (int ave = 0; ave < 2; ave++) {
        lc.ave_mult = ave;
        struct learner l;
        struct pt_err e;
        ck_assert_int_eq(learner_init(&l, cpu(), LEARN_RMSPROP, REF_N, &e), 0);
        float w[REF_N], rw[REF_N], avars[REF_N], signs[REF_N], steps[REF_N];
        for (int i = 0; i < REF_N; i++)
            w[i] = rw[i] = 1.0f - 0.1f * (float)i;
        for (int step = 0; step < 6; step++) {
            float g[REF_N], rg[REF_N];
            for (int i = 0; i < REF_N; i++)
                g[i] = rg[i] = ref_grad(step % 3 == 2 ? 0 : step, i); /* some signs repeat */
            for (int t = 0; t < 2; t++) {
                size_t o = spans[t].offset, n = spans[t].count;
                if (step == 0)
                    for (size_t i = o; i < o + n; i++)
                        avars[i] = rg[i] * rg[i], signs[i] = 0, steps[i] = 0.02f;
                float sum = 0;
                for (size_t i = o; i < o + n; i++) {
                    avars[i] = 0.9f * avars[i] + (1.0f - 0.9f) * (rg[i] * rg[i]);
                    int sg = (0.0f < rg[i]) - (rg[i] < 0.0f);
                    if (signs[i] * (float)sg > 0)
                        steps[i] = fminf(steps[i] * 1.2f, 10.0f);
                    else
                        steps[i] = fmaxf(steps[i] * 0.75f, 0.1f);
                    float a = steps[i] / sqrtf(avars[i] + 1e-6f);
                    rg[i] *= a;
                    signs[i] = (float)sg;
                    sum += a;
                }
                float am = ave ? sum / (float)n : 1.0f;
                for (size_t i = o; i < o + n; i++)
                    rw[i] -= (0.05f / am) * rg[i];
            }
            learner_update(&l, &lc, &ep, w, g, 4, spans, 2);
            for (int i = 0; i < REF_N; i++)
                ck_assert_msg(fabsf(w[i] - rw[i]) <= 1e-6f * (1 + fabsf(rw[i])),
                              "ave %d step %d w[%d] = %.9g, CNTK's formula %.9g", ave, step, i,
                              w[i], rw[i]);
        }
        ck_assert(l.steps == 6 && l.s3[0] >= 0.1f);
        learner_free(&l);
    }
}
END_TEST

START_TEST(learner_registry)
{
    const struct learner_kind *k = learner_kind_find("adam");
    ck_assert(k && k->type == LEARN_ADAM && k->nstate == 2 && !k->reset);
    ck_assert(learner_kind_of(LEARN_SGD) == learner_kind_find("None"));
    ck_assert_int_eq(learner_kind_of(LEARN_ADAGRAD)->nstate, 1);
    ck_assert(learner_kind_find("rmsProp") == learner_kind_of(LEARN_RMSPROP));
    ck_assert(learner_kind_find("fsAdagrad") == learner_kind_of(LEARN_FSADAGRAD));
    ck_assert(learner_kind_of(LEARN_RMSPROP)->nstate == 3 && learner_kind_find("adadelta") == NULL);
    struct learner l;
    struct pt_err e;
    pt_err_clear(&e);
    ck_assert_int_eq(learner_init(&l, cpu(), LEARN_ADAM, 3, &e), 0);
    ck_assert(l.s1 && l.s2 && l.s1[2] == 0.0f && l.s2[2] == 0.0f);
    learner_free(&l);
    ck_assert_int_eq(learner_init(&l, cpu(), (enum learn_type)42, 3, &e), PT_EINTERNAL);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("learn");
    TCase *t = tcase_create("learn");
    tcase_add_test(t, schedules_as_cntk);
    tcase_add_test(t, config_errors);
    tcase_add_test(t, momentum_sgd_by_hand);
    tcase_add_test(t, regularization_and_clipping);
    tcase_add_test(t, adam_and_adagrad);
    tcase_add_test(t, clip_before_l2);
    tcase_add_test(t, fsadagrad_as_cntk);
    tcase_add_test(t, rmsprop_as_cntk);
    tcase_add_test(t, learner_registry);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return run_suite(suite());
}
