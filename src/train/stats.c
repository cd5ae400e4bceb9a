/* applyMeanVarNorm and needPrior: statistics over the whole training set before epoch 1
 * (SPEC 4), one non-distributed pass, in double precision. */
#include <math.h>
#include <stdlib.h>

#include "train/train_internal.h"

struct acc {
    double *sum, *sq, *lab;
    double frames, seqs;
};

static void add_features(struct acc *a, const struct mb_input *f, size_t nseq)
{
    for (size_t s = 0; s < nseq; s++)
        for (size_t t = 0; t < f->len[s]; t++) {
            const float *x = f->data + (t * nseq + s) * (size_t)f->dim;
            for (int i = 0; i < f->dim; i++) {
                a->sum[i] += x[i];
                a->sq[i] += (double)x[i] * x[i];
            }
            a->frames++;
        }
}

static void add_labels(struct acc *a, const struct mb_input *l, size_t nseq)
{
    for (size_t s = 0; s < nseq; s++)
        for (size_t t = 0; t < l->len[s]; t++) {
            const float *y = l->data + (t * nseq + s) * (size_t)l->dim;
            for (int i = 0; i < l->dim; i++)
                a->lab[i] += y[i];
            a->seqs++;
        }
}

static int finish(struct acc *a, struct nn *net, int fdim, int ldim, int mean_var, int prior,
                  struct pt_err *e)
{
    int rc = 0;
    if (mean_var) {
        float *mean = malloc((size_t)fdim * sizeof *mean),
              *inv = malloc((size_t)fdim * sizeof *inv);
        for (int i = 0; mean && inv && i < fdim; i++) {
            double m = a->sum[i] / a->frames, var = a->sq[i] / a->frames - m * m;
            mean[i] = (float)m;
            /* a constant feature (all-zero border pixels) must not divide by zero */
            inv[i] = var > 1e-10 ? (float)(1.0 / sqrt(var)) : 1.0f;
        }
        rc = mean && inv ? nn_set_mean_var(net, mean, inv, fdim, e)
                         : pt_err_set(e, PT_ENOMEM, "error: out of memory");
        free(mean);
        free(inv);
    }
    if (rc == 0 && prior) {
        float *p = malloc((size_t)ldim * sizeof *p);
        for (int i = 0; p && i < ldim; i++)
            p[i] = (float)(a->lab[i] / (a->seqs > 0 ? a->seqs : 1));
        rc = p ? nn_set_prior(net, p, ldim, e) : pt_err_set(e, PT_ENOMEM, "error: out of memory");
        free(p);
    }
    return rc;
}

int train_feature_stats(struct reader *r, struct nn *net, int mean_var, int prior, struct pt_err *e)
{
    struct minibatch mb = {0};
    struct acc a = {0};
    int rc = reader_start_epoch(r, 0, 0, 0, 1, e), fdim = 0, ldim = 0;
    /* a BrainScript network's Mean / InvStdDev name their input */
    const struct nn_config *c = nn_get_config(net);
    const char *fname = c->norm_input[0] ? c->norm_input : "features";
    const char *lname = c->labels_input[0] ? c->labels_input : "labels";
    while (rc == 0 && (rc = reader_next(r, 4096, &mb, e)) == 0 && mb.global_samples) {
        struct mb_input *f = mean_var ? mb_find(&mb, fname) : NULL, *l = mb_find(&mb, lname);
        if ((mean_var && !f) || (prior && !l)) {
            rc = pt_err_set(e, PT_EUSER, "error: the reader needs %s named '%s'%s%s%s",
                            mean_var && prior ? "inputs" : "an input", mean_var ? fname : lname,
                            mean_var && prior ? " and '" : "", mean_var && prior ? lname : "",
                            mean_var && prior ? "'" : "");
            break;
        }
        if (!a.sum) {
            fdim = f ? f->dim : 1;
            ldim = l ? l->dim : 1;
            a.sum = calloc((size_t)fdim, sizeof *a.sum);
            a.sq = calloc((size_t)fdim, sizeof *a.sq);
            a.lab = calloc((size_t)ldim, sizeof *a.lab);
            if (!a.sum || !a.sq || !a.lab)
                rc = pt_err_set(e, PT_ENOMEM, "error: out of memory");
        }
        if (rc == 0) {
            if (f)
                add_features(&a, f, mb.nseq);
            if (l)
                add_labels(&a, l, mb.nseq);
        }
    }
    if (rc == 0 && a.sum)
        rc = finish(&a, net, fdim, ldim, mean_var, prior, e);
    free(a.sum);
    free(a.sq);
    free(a.lab);
    mb_free(&mb);
    return rc;
}
