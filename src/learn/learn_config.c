/* The SGD block -> struct learn_config (the schema says where each key goes), and the
 * per-epoch schedule values. */
#include <math.h>
#include <string.h>

#include "learn/learn.h"

void learn_config_free(struct learn_config *lc)
{
    cfg_schema_free(&learn_sgd_schema, lc);
    cfg_val_free(&lc->momentum); /* taken over by a momentum key's setter */
}

int learn_config_read(struct cfg_node *sgd, struct learn_config *lc, struct pt_err *e)
{
    memset(lc, 0, sizeof *lc);
    int rc = cfg_schema_read(sgd, &learn_sgd_schema, lc, e);
    if (rc == 0 && !lc->lr.node)
        rc = cfg_error(e, cfg_origin_of(sgd),
                       "SGD: no learning rate: set learningRatesPerSample or learningRatesPerMB");
    if (rc) {
        learn_config_free(lc);
        return rc;
    }
    if (!lc->momentum.node) { /* none given: 0.9 per minibatch (no list: sched() returns d) */
        lc->momentum_kind = MOMENTUM_PER_MB;
        lc->momentum.d = 0.9;
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
    int k = lc->n_mb_streams
                ? lc->mb_streams[epoch < (size_t)lc->n_mb_streams ? epoch
                                                                  : (size_t)lc->n_mb_streams - 1]
                : 1;
    out->mb_units = out->mb_size * (size_t)(k > 0 ? k : 1);
    double lr = sched(&lc->lr, epoch);
    /* CNTK holds learning rates as float: 0.2/25 prints as 0.0080000004 */
    out->lr_per_sample = (double)(float)(lc->lr_per_mb ? lr / (double)out->mb_units : lr);
    /* CNTK holds the momentum values as float too (SGD.cpp's floatargvector; a time
     * constant becomes a float per-sample momentum): TC 2500 at 128 samples per
     * minibatch prints as effective momentum 0.950085, time constant 2499.8 */
    double m = (double)(float)sched(&lc->momentum, epoch);
    switch (lc->momentum_kind) {
    case MOMENTUM_PER_MB: out->momentum_per_sample = pow(m, 1.0 / (double)out->mb_units); break;
    case MOMENTUM_PER_SAMPLE: out->momentum_per_sample = m; break;
    case MOMENTUM_TIME_CONSTANT:
        out->momentum_per_sample = m > 0 ? (double)(float)exp(-1.0 / m) : 0.0;
        break;
    }
    out->dropout = sched(&lc->dropout, epoch);
}

double learn_effective_momentum(const struct learn_epoch *ep)
{
    return pow(ep->momentum_per_sample, (double)ep->mb_units);
}

double learn_momentum_time_constant(const struct learn_epoch *ep)
{
    double m = ep->momentum_per_sample;
    return m > 0 ? -1.0 / log(m) : 0.0;
}

size_t learn_lr_schedule_len(const struct learn_config *lc)
{
    return lc->lr.dlist ? lc->lr.n : 1;
}
