/* CNTK's autoAdjustMinibatch (SGD.cpp's AdaptiveMinibatchSizing and
 * SearchForBestMinibatchSize; F. Seide et al., "On Parallelizability of Stochastic Gradient
 * Descent for Speech DNNs", ICASSP 2014): for each epoch after minibatchSize's schedule,
 * every minibatchSizeTuningFrequency epochs, trial minibatch sizes from the smallest up
 * (times sqrt(2), rounded to multiples of 64) each train numSamples4Search samples of the
 * epoch from the model as the last epoch left it, which is then put back (its model and
 * checkpoint files, on every rank); the largest size before the first whose criterion
 * exceeds the first trial's by more than minibatchSearchCriterionErrorMargin percent is the
 * epoch's. The smallest is the schedule's last size, raised where the learning rate has
 * fallen since epoch 1 (by the square root of the fall), and, after a search, at least half
 * the last size chosen; the largest minibatchSizeTuningMax, and at most twice the last
 * size chosen. Log lines are CNTK's. Where partrain differs: a trial whose criterion is
 * not finite ends the search (CNTK counts it as good), the trials' minibatch lines are not
 * printed, and the size chosen is not kept in the checkpoint (a restart searches again).
 *
 * And CNTK's autoAdjustLR = searchBeforeEpoch (SearchForBestLearnRate), for each epoch after
 * the learning-rate schedule: the model's criterion at rate 0 on numSamples4Search samples
 * (blended with the last epoch's criterion), then trials from above the largest rate of the
 * last numPrevLearnRates searches (or 1 / 8 / 0.618 / sqrt(minibatchSize)) down by 0.618
 * until one does better than that base or the rate falls below minLearningRatePerSample x
 * 0.3; below epoch numBestSearchEpoch, a refinement between that rate and 0.01 /
 * minibatchSize. */
#include <math.h>

#include "train/train_run.h"

static size_t round64(double v)
{
    return 64 * (size_t)((v + 32) / 64);
}

/* One trial: mb_size samples a minibatch (rate: lr per sample, or ep's when < 0), n
 * samples, from the epoch's start; the model put back after. Its criterion per sample into
 * *crit. */
static int trial_at(struct run *r, size_t epoch, const struct learn_epoch *ep, size_t mb_size,
                    double lr, size_t n, double *crit, struct pt_err *e)
{
    struct learn_epoch t = *ep;
    t.mb_size = mb_size;
    if (lr >= 0)
        t.lr_per_sample = lr;
    int stop = 0;
    r->mini_samples = n;
    int rc = run_epoch(r, epoch, &t, &stop, e);
    r->mini_samples = 0;
    *crit = r->mini_crit;
    int back = adjust_restore(r, (uint64_t)epoch, 1, e);
    return rc ? rc : back;
}

static int search(struct run *r, size_t epoch, const struct learn_epoch *ep, size_t n, size_t lo,
                  size_t hi, size_t *chosen, struct pt_err *e)
{
    struct pt_log *log = run_may_log(r) ? r->ctx->log : NULL;
    int ep1 = (int)epoch + 1, rc = 0;
    if (lo > hi) { /* may happen for automatically reduced learning rates (CNTK) */
        *chosen = hi;
        return 0;
    }
    if (log)
        pt_log_printf(log,
                      " AdaptiveMinibatchSearch Epoch[%d]: Evaluating minibatchSizes %zu..%zu\n",
                      ep1, round64((double)lo), round64((double)hi));
    double base = 0, good_crit = 0;
    size_t good = 0;
    for (double f = (double)lo; rc == 0 && f <= (double)hi; f *= sqrt(2.0)) {
        size_t size = round64(f);
        if (log && r->trace > 0)
            pt_log_printf(log,
                          " AdaptiveMinibatchSearch Epoch[%d]: Evaluating trial minibatchSize=%zu "
                          "(search range: %zu..%zu)...\n",
                          ep1, size, round64((double)lo), round64((double)hi));
        double c = 0;
        if ((rc = trial_at(r, epoch, ep, size ? size : 64, -1, n, &c, e)) != 0)
            break;
        if (good == 0) {
            base = good_crit = c;
            good = size;
            if (log && r->trace > 0)
                pt_log_printf(log,
                              " AdaptiveMinibatchSearch Epoch[%d]: Computed baseCriterion %.8f "
                              "for minibatchSize=%zu\n",
                              ep1, base, size);
        } else if (!isfinite(c) || c > base * (1.0 + (double)r->lc.aa.mb_margin / 100.0)) {
            break;
        } else {
            good = size;
            good_crit = c;
            if (log && r->trace > 0 && f * sqrt(2.0) <= (double)hi)
                pt_log_printf(log,
                              " AdaptiveMinibatchSearch Epoch[%d]: Keep searching... "
                              "epochCriterion = %.8f vs. baseCriterion = %.8f\n",
                              ep1, c, base);
        }
    }
    if (rc == 0 && log && r->trace > 0)
        pt_log_printf(log,
                      " AdaptiveMinibatchSearch Epoch[%d]: Search successful. New minibatchSize "
                      "is %zu. epochCriterion = %.8f vs baseCriterion = %.8f\n",
                      ep1, good, good_crit, base);
    *chosen = good ? good : ep->mb_size;
    return rc;
}

/* numSamples4Search for 0-based epoch (numMiniBatch4LRSearch: its entry times
 * minibatchSize's entry of the same index, as CNTK; neither: 500 minibatches of the epoch's
 * scheduled size), at most the epoch. */
static size_t samples_for(const struct run *r, size_t epoch, const struct learn_epoch *ep)
{
    const struct learn_autoadjust *aa = &r->lc.aa;
    size_t n;
    if (aa->n_search_samples)
        n = (size_t)aa->search_samples[epoch < (size_t)aa->n_search_samples
                                           ? epoch
                                           : (size_t)aa->n_search_samples - 1];
    else if (aa->n_search_mbs) { /* CNTK: entry k times minibatchSize's entry k */
        size_t k = epoch < (size_t)aa->n_search_mbs ? epoch : (size_t)aa->n_search_mbs - 1;
        n = (size_t)aa->search_mbs[k] * (size_t)cfg_sched_int(&r->lc.mb_size, k);
    } else
        n = 500 * ep->mb_size;
    if (r->lc.epoch_size > 0 && n > (size_t)r->lc.epoch_size)
        n = (size_t)r->lc.epoch_size;
    return n;
}

int search_minibatch(struct run *r, size_t epoch, struct learn_epoch *ep, struct pt_err *e)
{
    const struct learn_autoadjust *aa = &r->lc.aa;
    size_t scheduled = r->lc.mb_size.ilist ? r->lc.mb_size.n : 1;
    if (!aa->auto_mb || epoch < scheduled)
        return 0;
    struct pt_log *log = run_may_log(r) ? r->ctx->log : NULL;
    struct learn_epoch first, now;
    learn_epoch_params(&r->lc, 0, &first);
    learn_epoch_params(&r->lc, epoch, &now);
    size_t lo = ep->mb_size;
    /* the rate of epoch 1 is taken as safe for its size: a lower rate allows a larger one
     * (by the square root of the fall, as CNTK; a rate search's factor counts too) */
    double f = r->lr_factor > 0 ? r->lr_factor : 1.0;
    double change = first.lr_per_sample > 0 ? sqrt(now.lr_per_sample / first.lr_per_sample * f) : 1;
    if (change < 1.0 && change > 0)
        lo = (size_t)((double)lo / change);
    if (epoch < 2 && r->prev_mb) {
        if (log)
            pt_log_printf(log,
                          " Before Epoch[2], previous minibatchSize %zu is considered invalid -> "
                          "resetting.\n",
                          r->prev_mb);
        r->prev_mb = 0;
    }
    size_t chosen = 0, freq = (size_t)aa->mb_freq;
    int rc = 0;
    if (r->prev_mb && epoch + 1 > freq && (epoch + 1) % freq != 0) {
        if (log)
            pt_log_printf(log,
                          " AdaptiveMinibatchSearch: Search for a better minibatchSize in epoch "
                          "%zu skipped, keeping minibatchSize of %zu\n",
                          epoch + 1, r->prev_mb);
        chosen = r->prev_mb;
    } else {
        size_t hi = (size_t)aa->mb_max;
        if (r->prev_mb) {
            lo = lo > r->prev_mb / 2 ? lo : r->prev_mb / 2;
            hi = hi < r->prev_mb * 2 ? hi : r->prev_mb * 2;
        }
        rc = search(r, epoch, ep, samples_for(r, epoch, ep), lo, hi, &chosen, e);
    }
    if (rc == 0 && log && r->trace < 1 && chosen != r->prev_mb)
        pt_log_printf(log, "Minibatch size adapted to %zu.\n", chosen);
    if (rc == 0) {
        r->prev_mb = chosen;
        ep->mb_size = chosen;
    }
    return rc;
}

/* ---------------------------------------------------------------- searchBeforeEpoch */

int search_rate(struct run *r, size_t epoch, struct learn_epoch *ep, struct pt_err *e)
{
    const struct learn_autoadjust *aa = &r->lc.aa;
    r->lr_factor = 1.0;
    if (!learn_aa_search(aa) || epoch < learn_lr_schedule_len(&r->lc) || epoch == 0)
        return 0;
    size_t nprev = (size_t)aa->prev_rates < 64 ? (size_t)aa->prev_rates : 64;
    double largest = r->prev_rates[0];
    for (size_t j = 1; j < nprev; j++)
        largest = r->prev_rates[j] > largest ? r->prev_rates[j] : largest;
    /* CNTK's start: above the largest recent rate, else a guess from the minibatch size */
    double lr = largest > 0 ? largest / (double)0.618f / (double)0.618f
                            : (double)(1.0f / 8.0f / 0.618f) / sqrt((double)ep->mb_size);
    /* (CNTK's constants as it writes them, 0.618f here and 0.618 in the steps, so that the
     * rates come out as CNTK's to the last digit) */
    double min_lr = r->lc.min_lr * 0.3f, sched = ep->lr_per_sample;
    size_t n = samples_for(r, epoch, ep);
    /* the model as it is (rate 0), its criterion blended with the last epoch's (CNTK) */
    double base = 0, c = 0, prev = r->crit.train;
    int rc = trial_at(r, epoch, ep, ep->mb_size, 0.0, n, &base, e);
    if (rc)
        return rc;
    if (!isfinite(prev))
        prev = base;
    double ratio = r->lc.epoch_size > 0 ? sqrt((double)n / (double)r->lc.epoch_size) : 0.3;
    double blend = ratio * prev + (1 - ratio) * base;
    base = blend > base ? blend : base;
    do {
        lr *= 0.618;
        rc = trial_at(r, epoch, ep, ep->mb_size, lr, n, &c, e);
    } while (rc == 0 && (!isfinite(c) || (c > base && lr > min_lr)));
    double best = lr;
    if (rc == 0 && epoch < (size_t)aa->best_search_epochs) { /* refine between two rates */
        double left = 0.01 / (double)ep->mb_size, right = lr, cl = 0, cr = c;
        rc = trial_at(r, epoch, ep, ep->mb_size, left, n, &cl, e);
        while (rc == 0 && right > left * 1.2) {
            if (cr > cl) {
                right *= 0.618;
                rc = trial_at(r, epoch, ep, ep->mb_size, right, n, &cr, e);
            } else {
                left /= 0.618;
                rc = trial_at(r, epoch, ep, ep->mb_size, left, n, &cl, e);
            }
        }
        best = cl < cr ? left : right;
    }
    if (rc)
        return rc;
    if (run_may_log(r))
        pt_log_printf(r->ctx->log,
                      " SearchForBestLearnRate Epoch[%zu]: Best learningRatePerSample = %.10g, "
                      "baseCriterion=%.10g\n",
                      epoch + 1, best, base);
    r->prev_rates[epoch % (nprev ? nprev : 1)] = best;
    r->lr_factor = sched > 0 ? best / sched : 1.0;
    ep->lr_per_sample = best;
    r->st.adjust.lr = best; /* kept in the checkpoint */
    return 0;
}
