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

START_TEST(learner_registry)
{
    const struct learner_kind *k = learner_kind_find("adam");
    ck_assert(k && k->type == LEARN_ADAM && k->nstate == 2 && !k->reset);
    ck_assert(learner_kind_of(LEARN_SGD) == learner_kind_find("None"));
    ck_assert_int_eq(learner_kind_of(LEARN_ADAGRAD)->nstate, 1);
    ck_assert(learner_kind_find("RMSProp") == NULL);
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
    tcase_add_test(t, learner_registry);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return run_suite(suite());
}
