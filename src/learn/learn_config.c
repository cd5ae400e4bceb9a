/* The SGD block -> struct learn_config, and the per-epoch schedule values. */
#include <math.h>
#include <string.h>

#include "learn/learn.h"

static int get(struct cfg_node *b, const char *k, struct cfg_val *v, struct pt_err *e)
{
    return cfg_schema_get(b, &learn_sgd_schema, k, v, e);
}

void learn_config_free(struct learn_config *lc)
{
    cfg_val_free(&lc->mb_size);
    cfg_val_free(&lc->lr);
    cfg_val_free(&lc->momentum);
    cfg_val_free(&lc->dropout);
}

/* Which rate and which momentum key: that at most one of each is set is the schema's
 * exclusive groups' job (train_check_config runs them before any action). */
static int read_rates(struct cfg_node *sgd, struct learn_config *lc, struct pt_err *e)
{
    int rc = get(sgd, "learningRatesPerSample", &lc->lr, e);
    if (rc == 0 && !lc->lr.node) {
        cfg_val_free(&lc->lr);
        rc = get(sgd, "learningRatesPerMB", &lc->lr, e);
        lc->lr_per_mb = 1;
    }
    if (rc)
        return rc;
    if (!lc->lr.node)
        return cfg_error(e, cfg_origin_of(sgd),
                         "SGD: no learning rate: set learningRatesPerSample or learningRatesPerMB");
    static const char *names[] = {"momentumPerMB", "momentumPerSample", "momentumAsTimeConstant"};
    lc->momentum_kind = MOMENTUM_PER_MB;
    lc->momentum.d = 0.9; /* none given: 0.9 per minibatch (no list: sched() returns d) */
    for (int i = 0; i < 3; i++) {
        struct cfg_val v = {0};
        if ((rc = get(sgd, names[i], &v, e)))
            return rc;
        if (v.node) {
            lc->momentum = v;
            lc->momentum_kind = i == 1 ? MOMENTUM_PER_SAMPLE : i == 2 ? MOMENTUM_TIME_CONSTANT
                                                                     : MOMENTUM_PER_MB;
            break;
        }
        cfg_val_free(&v);
    }
    return 0;
}

int learn_config_read(struct cfg_node *sgd, struct learn_config *lc, struct pt_err *e)
{
    struct cfg_val v;
    memset(lc, 0, sizeof *lc);
    int rc = get(sgd, "gradUpdateType", &v, e);
    if (rc)
        return rc;
    lc->type = v.choice == 1 ? LEARN_ADAM : v.choice == 2 ? LEARN_ADAGRAD : LEARN_SGD;
    struct {
        const char *key;
        long long *dst;
    } ints[] = {{"maxEpochs", &lc->max_epochs}, {"epochSize", &lc->epoch_size},
                {"numMBsToShowResult", &lc->show_every}, {"firstMBsToShowResult", &lc->show_first},
                {"traceLevel", &lc->trace}};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        if ((rc = get(sgd, ints[i].key, &v, e)))
            return rc;
        *ints[i].dst = v.i;
    }
    struct {
        const char *key;
        double *dst;
    } reals[] = {{"L1RegWeight", &lc->l1}, {"L2RegWeight", &lc->l2},
                 {"clippingThresholdPerSample", &lc->clip}, {"minLearningRatePerSample", &lc->min_lr}};
    for (size_t i = 0; i < sizeof reals / sizeof reals[0]; i++) {
        if ((rc = get(sgd, reals[i].key, &v, e)))
            return rc;
        *reals[i].dst = v.d;
    }
    if ((rc = get(sgd, "useNAG", &v, e)))
        return rc;
    lc->nag = v.b;
    if ((rc = get(sgd, "gradientClippingWithTruncation", &v, e)))
        return rc;
    lc->clip_truncation = v.b;
    if ((rc = get(sgd, "keepCheckPointFiles", &v, e)))
        return rc;
    lc->keep_checkpoints = v.b;
    if ((rc = get(sgd, "minibatchSize", &lc->mb_size, e)) || (rc = get(sgd, "dropoutRate", &lc->dropout, e)) ||
        (rc = read_rates(sgd, lc, e))) {
        learn_config_free(lc);
        return rc;
    }
    return 0;
}

static double sched(const struct cfg_val *v, size_t epoch)
{
    return v->dlist ? cfg_sched_real(v, epoch) : v->d;
}

void learn_epoch_params(const struct learn_config *lc, size_t epoch, struct learn_epoch *out)
{
    out->mb_size = (size_t)cfg_sched_int(&lc->mb_size, epoch);
    double lr = sched(&lc->lr, epoch);
    /* CNTK holds learning rates as float: 0.2/25 prints as 0.0080000004 */
    out->lr_per_sample = (double)(float)(lc->lr_per_mb ? lr / (double)out->mb_size : lr);
    double m = sched(&lc->momentum, epoch);
    switch (lc->momentum_kind) {
    case MOMENTUM_PER_MB: out->momentum_per_sample = pow(m, 1.0 / (double)out->mb_size); break;
    case MOMENTUM_PER_SAMPLE: out->momentum_per_sample = m; break;
    case MOMENTUM_TIME_CONSTANT: out->momentum_per_sample = m > 0 ? exp(-1.0 / m) : 0.0; break;
    }
    out->dropout = sched(&lc->dropout, epoch);
}

double learn_effective_momentum(const struct learn_epoch *ep)
{
    return pow(ep->momentum_per_sample, (double)ep->mb_size);
}

double learn_momentum_time_constant(const struct learn_epoch *ep)
{
    double m = ep->momentum_per_sample;
    return m > 0 ? -1.0 / log(m) : 0.0;
}
