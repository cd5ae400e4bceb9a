/* Batch normalization in BrainScript (bs_eval_internal.h): CNTK's BatchNormalization node
 * and BatchNormalizationLayer (CNTK.core.bs): the layer makes its scale (initialScale),
 * bias (0) and running mean, variance and count (0, learningRateMultiplier 0: states) as
 * CNTK's does, each with rows Inferred from its first input. */
#include <math.h>
#include <string.h>

#include "nn/bs_eval_internal.h"

/* The settings both take: time constants, epsilon, engine and regularization flags. */
struct bn_opts {
    int spatial;
    double tc, eps;
};

static int read_opts(struct ev *v, const struct bs_node *at, const char *name, const struct bv *tc,
                     const struct bv *blend, const struct bv *eps, const struct bv *engine,
                     const struct bv *noreg, struct bn_opts *o)
{
    if (tc->k != BV_NUM || blend->k != BV_NUM || eps->k != BV_NUM)
        return bs_error(v->e, at,
                        "%s: normalizationTimeConstant, blendTimeConstant and epsilon must be "
                        "numbers",
                        name);
    if (engine->k != BV_BOOL || noreg->k != BV_BOOL)
        return bs_error(v->e, at,
                        "%s: useCntkEngine and disableRegularization must be true or false", name);
    if (isnan(tc->num))
        return bs_error(v->e, at, "%s: normalizationTimeConstant is not a number", name);
    if (blend->num != 0)
        return bs_error(v->e, at,
                        "%s: blendTimeConstant = %g is not supported yet (only 0: the "
                        "minibatch's own statistics in training)",
                        name, blend->num);
    if (!(eps->num > 0) || !isfinite(eps->num))
        return bs_error(v->e, at, "%s: epsilon must be positive, got %g", name, eps->num);
    if (noreg->num != 0)
        return bs_error(v->e, at,
                        "%s: disableRegularization = true is not supported yet (L1 and L2 "
                        "regularization apply to every learned parameter)",
                        name);
    o->tc = tc->num;
    o->eps = eps->num;
    return 0;
}

/* The node over x with parameters p[0..4] (scale, bias, mean, variance, count). */
static int make(struct ev *v, const struct bs_node *at, struct bv x, const int *p,
                const struct bn_opts *o, struct bv *out)
{
    int rc = bse_as_node(v, at, "BatchNormalization input", &x);
    if (rc)
        return rc;
    int in[6] = {x.node, p[0], p[1], p[2], p[3], p[4]};
    if ((rc = bse_make_kind(v, at, &g_kind_bn, in, 6, out)) != 0)
        return rc;
    struct g_node *n = &v->g->nodes[out->node];
    n->bn_spatial = o->spatial;
    n->bn_tc = o->tc;
    n->bn_eps = o->eps;
    return 0;
}

/* A parameter of rows x 1 (0: Inferred) starting at value; state: learningRateMultiplier 0. */
static int param(struct ev *v, const struct bs_node *at, int rows, double value, int state,
                 const char *member, int *node)
{
    struct bv pa[5] = {{.k = BV_STR, .str = "fixedValue"},
                       {.k = BV_NUM, .num = 1},
                       {.k = BV_NONE},
                       {.k = BV_NUM, .num = value},
                       {.k = BV_NUM, .num = state ? 0 : 1}};
    struct bv out;
    int rc = bse_param_node(v, at, pa, rows, 1, &out);
    if (rc == 0) {
        *node = out.node;
        bse_name_new(v, out.node, member);
    }
    return rc;
}

/* BatchNormalization (input, scale, bias, runMean, runVariance, runCount, spatial,
 * normalizationTimeConstant, blendTimeConstant, epsilon, useCntkEngine,
 * disableRegularization, imageLayout, tag) */
int bse_batch_norm(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                   struct bv *out)
{
    struct bn_opts o = {0};
    int rc = read_opts(v, at, name, &a[7], &a[8], &a[9], &a[10], &a[11], &o);
    if (rc)
        return rc;
    if (a[6].k != BV_BOOL)
        return bse_type_error(v, at, "BatchNormalization spatial", "true or false", &a[6]);
    o.spatial = a[6].num != 0;
    const char *layout = bse_get_str(&a[12]);
    if (!layout || (strcmp(layout, "CHW") && strcmp(layout, "cudnn")))
        return bs_error(v->e, at, "%s: imageLayout must be \"CHW\" or \"cudnn\"", name);
    int p[5];
    static const char *const what[] = {
        "BatchNormalization scale", "BatchNormalization bias", "BatchNormalization runMean",
        "BatchNormalization runVariance", "BatchNormalization runCount"};
    for (int k = 0; k < 5; k++) {
        if (k == 4 && a[5].k == BV_NONE) { /* CNTK makes one (older models had none) */
            if ((rc = param(v, at, 1, 0.0, 1, "runCount", &p[4])) != 0)
                return rc;
            continue;
        }
        struct bv x = a[1 + k];
        if ((rc = bse_as_node(v, at, what[k], &x)) != 0)
            return rc;
        p[k] = x.node;
    }
    return make(v, at, a[0], p, &o, out);
}

/* BatchNormalizationLayer {spatialRank, initialScale, normalizationTimeConstant,
 * blendTimeConstant, epsilon, useCntkEngine, disableRegularization}: a function with its
 * own parameters. */
int bse_batch_norm_layer(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                         struct bv *out)
{
    int rank;
    int rc = bse_get_int(v, at, "BatchNormalizationLayer spatialRank", &a[0], &rank);
    if (rc)
        return rc;
    if (rank < 0)
        return bs_error(v->e, at, "%s: spatialRank must be 0 or more, got %d", name, rank);
    if (a[1].k != BV_NUM)
        return bse_type_error(v, at, "BatchNormalizationLayer initialScale", "a number", &a[1]);
    struct bfn *f = bse_alloc(v, sizeof *f);
    struct bn_opts *o = bse_alloc(v, sizeof *o);
    if (!f || !o)
        return v->e->code;
    if ((rc = read_opts(v, at, name, &a[2], &a[3], &a[4], &a[5], &a[6], o)) != 0)
        return rc;
    o->spatial = rank > 0;
    static const char *const member[] = {"scale", "bias", "runMean", "runVariance", "runCount"};
    for (int k = 0; k < 5 && rc == 0; k++)
        rc = param(v, at, k == 4 ? 1 : 0, k == 0 ? a[1].num : 0.0, k >= 2, member[k], &f->bnp[k]);
    if (rc)
        return rc;
    f->k = FN_BN;
    f->bn = o;
    *out = (struct bv){.k = BV_FN, .fn = f};
    return 0;
}

int bse_batch_norm_apply(struct ev *v, const struct bs_node *at, struct bfn *f, struct bv *pos,
                         size_t npos, struct bv *out)
{
    if (npos != 1)
        return bs_error(v->e, at, "a layer takes one argument, got %zu", npos);
    return make(v, at, pos[0], f->bnp, f->bn, out);
}
