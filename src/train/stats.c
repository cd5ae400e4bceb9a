/* applyMeanVarNorm and needPrior: statistics over the whole training set before epoch 1
 * (SPEC 4), one non-distributed pass, in double precision. */
#include <math.h>
#include <stdlib.h>

#include "train/train_internal.h"

#define MAX_NORM (1 + NN_NORM_MORE)

/* Sums over the pass: each normalized input's values and squares (part k of the
 * statistics vector at base[k], dim[k] values), and the labels'. */
struct acc {
    double *sum, *sq, *lab;
    double frames[MAX_NORM], seqs;
    int base[MAX_NORM], dim[MAX_NORM], n, total;
};

static void add_features(struct acc *a, int k, const struct mb_input *f, size_t nseq)
{
    double *sum = a->sum + a->base[k], *sq = a->sq + a->base[k];
    for (size_t s = 0; s < nseq; s++)
        for (size_t t = 0; t < f->len[s]; t++) {
            const float *x = f->data + (t * nseq + s) * (size_t)f->dim;
            for (int i = 0; i < f->dim; i++) {
                sum[i] += x[i];
                sq[i] += (double)x[i] * x[i];
            }
            a->frames[k]++;
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

static int finish(struct acc *a, struct nn *net, int ldim, int mean_var, int prior,
                  struct pt_err *e)
{
    int rc = 0;
    if (mean_var) {
        float *mean = malloc((size_t)a->total * sizeof *mean),
              *inv = malloc((size_t)a->total * sizeof *inv);
        for (int k = 0; mean && inv && k < a->n; k++)
            for (int i = a->base[k]; i < a->base[k] + a->dim[k]; i++) {
                double m = a->sum[i] / a->frames[k], var = a->sq[i] / a->frames[k] - m * m;
                mean[i] = (float)m;
                /* a constant feature (all-zero border pixels) must not divide by zero */
                inv[i] = var > 1e-10 ? (float)(1.0 / sqrt(var)) : 1.0f;
            }
        rc = mean && inv ? nn_set_mean_var(net, mean, inv, a->total, e)
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
    int rc = reader_start_epoch(r, 0, 0, 0, 1, e), ldim = 0;
    /* a BrainScript network's Mean / InvStdDev name their inputs */
    const struct nn_config *c = nn_get_config(net);
    const char *fnames[MAX_NORM];
    fnames[0] = c->norm_input[0] ? c->norm_input : "features";
    for (int k = 0; k < c->n_norm_more && k < NN_NORM_MORE; k++)
        fnames[1 + k] = c->norm_more[k];
    a.n = mean_var ? 1 + c->n_norm_more : 0;
    const char *lname = c->labels_input[0] ? c->labels_input : "labels";
    while (rc == 0 && (rc = reader_next(r, 4096, &mb, e)) == 0 && mb.global_samples) {
        struct mb_input *f[MAX_NORM], *l = mb_find(&mb, lname);
        const char *missing = prior && !l ? lname : NULL;
        for (int k = 0; k < a.n; k++)
            if (!(f[k] = mb_find(&mb, fnames[k])))
                missing = fnames[k];
        if (missing) {
            rc = pt_err_set(e, PT_EUSER,
                            "error: the reader needs an input named '%s' (the network's %s)",
                            missing,
                            prior && missing == lname ? "labels, whose mean is the label prior"
                                                      : "statistics: Mean, InvStdDev");
            break;
        }
        if (!a.lab) {
            for (int k = 0; k < a.n; k++) {
                a.base[k] = a.total;
                a.dim[k] = f[k]->dim;
                a.total += f[k]->dim;
            }
            ldim = l ? l->dim : 1;
            a.sum = calloc((size_t)(a.total ? a.total : 1), sizeof *a.sum);
            a.sq = calloc((size_t)(a.total ? a.total : 1), sizeof *a.sq);
            a.lab = calloc((size_t)ldim, sizeof *a.lab);
            if (!a.sum || !a.sq || !a.lab)
                rc = pt_err_set(e, PT_ENOMEM, "error: out of memory");
        }
        for (int k = 0; rc == 0 && k < a.n; k++)
            add_features(&a, k, f[k], mb.nseq);
        if (rc == 0 && l)
            add_labels(&a, l, mb.nseq);
    }
    if (rc == 0 && a.lab)
        rc = finish(&a, net, ldim, mean_var, prior, e);
    free(a.sum);
    free(a.sq);
    free(a.lab);
    mb_free(&mb);
    return rc;
}
