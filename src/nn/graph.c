/* The node graph (graph.h): building, shapes, parameters, workspace, forward and backward. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "nn/graph.h"
#include "nn/layer.h"

int g_add(struct nn_graph *g, const struct g_kind *k, const int *in, int nin, const char *where,
          struct pt_err *e)
{
    if (g->n >= G_MAX_NODES)
        return pt_err_set(e, PT_EUSER, "%s: error: the network has more than %d nodes", where,
                          G_MAX_NODES),
               -1;
    if (g->n == g->cap) {
        int cap = g->cap ? 2 * g->cap : 64;
        struct g_node *nodes = pt_realloc(g->nodes, (size_t)cap * sizeof *nodes, e);
        if (!nodes)
            return -1;
        g->nodes = nodes;
        g->cap = cap;
    }
    struct g_node *n = &g->nodes[g->n];
    memset(n, 0, sizeof *n);
    n->kind = k;
    snprintf(n->where, sizeof n->where, "%s", where);
    for (int i = 0; i < nin && i < G_MAX_IN; i++)
        n->in[i] = in[i];
    n->src_kind = k;
    return g->n++;
}

/* How many nodes (and roots) read node i. */
static int *consumers(struct nn_graph *g, struct pt_err *e)
{
    int *c = pt_calloc((size_t)g->n + 1, sizeof *c, e);
    if (!c)
        return NULL;
    for (int i = 0; i < g->n; i++)
        for (int k = 0; !g->nodes[i].dead && k < g->nodes[i].kind->nin; k++)
            c[g->nodes[i].in[k]]++;
    c[g->crit] += 1; /* roots are read from outside */
    c[g->eval] += 1;
    for (int k = 0; k < g->n_eval_more; k++)
        c[g->eval_more[k]] += 1;
    c[g->out] += 1;
    for (int i = 0; i < g->n; i++) /* read by an action from outside */
        c[i] += g->nodes[i].keep;
    return c;
}

static int is_act(const struct g_node *n, enum bk_act *act)
{
    static const struct {
        const char *name;
        enum bk_act act;
    } acts[] = {{"Sigmoid", BK_ACT_SIGMOID}, {"Tanh", BK_ACT_TANH}, {"ReLU", BK_ACT_RELU}};
    for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++)
        if (!strcmp(n->kind->name, acts[i].name)) {
            *act = acts[i].act;
            return 1;
        }
    return 0;
}

/* Fold Plus (Times (W, x), b) into one Affine node where b is a bias column and nothing
 * else reads the product, then an activation of an Affine into it where nothing else
 * reads the affine value: a dense layer runs as one GEMM and one fused pass. */
static int fuse(struct nn_graph *g, struct pt_err *e)
{
    int *c = consumers(g, e);
    if (!c)
        return e ? e->code : PT_ENOMEM;
    for (int i = 0; i < g->n; i++) {
        struct g_node *p = &g->nodes[i];
        if (strcmp(p->kind->name, "Plus") != 0)
            continue;
        struct g_node *t = &g->nodes[p->in[0]], *b = &g->nodes[p->in[1]];
        if (strcmp(t->kind->name, "Times") != 0 || c[p->in[0]] != 1 || t->cols != 0 ||
            b->cols != 1 || !(b->learnable || b->is_const) || b->rows != p->rows)
            continue;
        int w = t->in[0], x = t->in[1], bias = p->in[1];
        t->dead = 1;
        p->kind = &g_kind_affine;
        p->in[0] = w;
        p->in[1] = x;
        p->in[2] = bias;
        p->act = BK_ACT_NONE;
    }
    for (int i = 0; i < g->n; i++) {
        struct g_node *a = &g->nodes[i];
        enum bk_act act;
        if (!is_act(a, &act))
            continue;
        struct g_node *p = &g->nodes[a->in[0]];
        if (p->kind != &g_kind_affine || p->act != BK_ACT_NONE || c[a->in[0]] != 1)
            continue;
        p->dead = 1;
        a->kind = &g_kind_affine;
        memcpy(a->in, p->in, sizeof a->in);
        a->act = act;
    }
    free(c);
    return 0;
}

/* How many nodes know their rows: the shape passes go on while it grows. */
static int rows_known(const struct nn_graph *g)
{
    int k = 0;
    for (int i = 0; i < g->n; i++)
        k += g->nodes[i].rows != 0;
    return k;
}

/* Every node's shape, in schedule order, at least twice: a loop's delays learn their
 * dimension from the nodes after them (g_open), through a chain of such nodes one pass
 * per link (a delay beside a value that may be broadcast over its rows: BS.Boolean.If in
 * a fold); the passes go on while nodes learn their rows (at most 8), then again, settling
 * (g->settle), for delays beside one value per sample that no reader gave rows (a count
 * of steps: BS.Loop.Iteration), and the last pass checks them all. */
static int shapes(struct nn_graph *g, struct pt_err *e)
{
    g->settle = 0;
    for (int pass = 0, known = -1; pass < 16; pass++) {
        int before = rows_known(g);
        if (pass >= 2 && before == known) {
            if (g->settle)
                break;
            g->settle = 1; /* stable: settle what is open, then check */
            pass = 0;
        }
        known = before;
        for (int u = 0; u < g->nunits; u++)
            for (int k = 0; k < g->units[u].count; k++) {
                struct g_node *n = &g->nodes[g->order[g->units[u].first + k]];
                int rc = n->kind->shape(g, n, e);
                if (rc)
                    return rc;
                if (n->crit_value && g->units[u].loop)
                    return pt_err_set(e, PT_EUSER,
                                      "%s: error: %s: a criterion's value (its sum over the "
                                      "minibatch) cannot be used inside a recurrent loop",
                                      n->where, n->kind->name);
                /* one value of the pass, and what is computed from such values alone */
                for (int i = 0; !n->crit_value && i < n->kind->nin && n->cols; i++)
                    n->mb_scalar |= g->nodes[n->in[i]].mb_scalar;
                n->mb_scalar |= n->crit_value != 0;
            }
    }
    return 0;
}

/* needs_grad: learnable, or reading a node that needs one (a fixpoint: loops). */
static void need_grads(struct nn_graph *g)
{
    for (int i = 0; i < g->n; i++)
        g->nodes[i].needs_grad = g->nodes[i].learnable && !g->nodes[i].state;
    for (int changed = 1; changed;) {
        changed = 0;
        for (int i = 0; i < g->n; i++) {
            struct g_node *n = &g->nodes[i];
            int need = n->learnable && !n->state;
            for (int k = 0; !n->dead && k < n->kind->nin; k++)
                need |= g->nodes[n->in[k]].needs_grad;
            if (need != n->needs_grad) {
                n->needs_grad = need;
                changed = 1;
            }
        }
    }
}

/* g_over: nodes whose gradient one node writes whole, once (outside recurrent loops, where
 * gradients arrive a step at a time): that node writes over the gradient, which then needs
 * no clearing before the backward pass. */
static int over_writes(struct nn_graph *g, struct pt_err *e)
{
    int *writers = pt_calloc((size_t)g->n + 1, sizeof *writers, e);
    char *partial = pt_calloc((size_t)g->n + 1, 1, e), *looped = pt_calloc((size_t)g->n + 1, 1, e);
    if (!writers || !partial || !looped) {
        free(writers);
        free(partial);
        free(looped);
        return e ? e->code : PT_ENOMEM;
    }
    for (int u = 0; u < g->nunits; u++)
        for (int k = 0; g->units[u].loop && k < g->units[u].count; k++)
            looped[g->order[g->units[u].first + k]] = 1;
    for (int i = 0; i < g->n; i++) {
        const struct g_node *c = &g->nodes[i];
        if (c->dead || !c->needs_grad || c->kind->nin == 0 || c->kind->crit)
            continue;
        for (int k = 0; k < c->kind->nin; k++) {
            writers[c->in[k]]++;
            if (!(c->kind->overwrites & (1u << k)) || looped[i])
                partial[c->in[k]] = 1;
        }
    }
    writers[g->nodes[g->crit].in[1]]++; /* the training criterion writes its prediction's */
    for (int i = 0; i < g->n; i++) {
        struct g_node *n = &g->nodes[i];
        n->g_over = n->needs_grad && !n->dead && writers[i] == 1 && !partial[i] && !looped[i];
    }
    free(writers);
    free(partial);
    free(looped);
    return 0;
}

int g_finish(struct nn_graph *g, struct pt_err *e)
{
    for (int i = 0; i < g->n; i++) /* the inputs as written (delays got theirs late) */
        memcpy(g->nodes[i].src_in, g->nodes[i].in, sizeof g->nodes[i].src_in);
    for (int i = 0; i < g->n; i++) { /* before shapes: a criterion's 1 x 1 misleads them */
        const struct g_node *n = &g->nodes[i];
        for (int k = 0; !n->dead && !n->kind->crit && k < n->kind->nin; k++) {
            const struct g_node *in = &g->nodes[n->in[k]];
            if (in->kind->crit)
                return pt_err_set(e, PT_EUSER,
                                  "%s: error: %s: a criterion (%s) is used as an operand; "
                                  "criteria can only be criterionNodes or evaluationNodes (a "
                                  "sum of criteria is not built)",
                                  n->where, n->kind->name, in->kind->name);
        }
    }
    int rc = g_schedule(g, e);
    if (rc == 0)
        rc = shapes(g, e);
    if (rc == 0)
        rc = fuse(g, e);
    if (rc == 0)
        rc = g_schedule(g, e);
    if (rc)
        return rc;
    need_grads(g);
    for (int i = 0; i < g->n; i++) { /* a criterion's target has no gradient */
        const struct g_node *n = &g->nodes[i],
                            *y = n->kind->crit && !n->dead ? &g->nodes[n->in[0]] : NULL;
        if (y && n->in[0] != n->in[1] && y->needs_grad)
            return pt_err_set(e, PT_EUSER,
                              "%s: error: %s: its first operand (the target, %s) is computed "
                              "from parameters, and a criterion's target gets no gradient: "
                              "give it as the second operand, or from inputs alone",
                              n->where, n->kind->name, y->name[0] ? y->name : y->kind->name);
    }
    if ((rc = over_writes(g, e)) != 0)
        return rc;
    g->nparams = 0;
    for (int i = 0; i < g->n; i++) {
        struct g_node *n = &g->nodes[i];
        if (n->dead) /* fused into another, or reached by no root */
            continue;
        if (n->rows <= 0 || ((n->learnable || n->is_const) && n->cols <= 0))
            return pt_err_set(e, PT_EUSER,
                              "%s: error: %s%s%s: its dimensions could not be inferred (use it "
                              "in a Times or Plus with a known operand, or give them)",
                              n->where, n->kind->name, n->name[0] ? " " : "", n->name);
        for (int k = 0; k < n->kind->nin; k++) {
            const struct g_node *in = &g->nodes[n->in[k]];
            if (in->kind->crit)
                return pt_err_set(e, PT_EUSER,
                                  "%s: error: %s: a criterion (%s) is used as an operand; "
                                  "criteria can only be criterionNodes or evaluationNodes",
                                  n->where, n->kind->name, in->kind->name);
        }
        if (n->learnable && !n->state) {
            n->offset = g->nparams;
            g->nparams += (size_t)n->rows * (size_t)n->cols;
        }
    }
    g->nstate = 0; /* then the states, after every learned parameter */
    for (int i = 0; i < g->n; i++) {
        struct g_node *n = &g->nodes[i];
        if (!n->dead && n->learnable && n->state) {
            n->offset = g->nparams + g->nstate;
            g->nstate += (size_t)n->rows * (size_t)n->cols;
        }
    }
    g->nparams += g->nstate;
    return 0;
}

static void init_one(const struct g_node *n, float *w, struct pt_rng *rng)
{
    size_t count = (size_t)n->rows * (size_t)n->cols;
    double fan_in = n->fan_swap ? n->rows : n->cols, fan_out = n->fan_swap ? n->cols : n->rows,
           s = n->init_scale, r = 0.0, sd = 0.0;
    if (n->fan_filter > 0) { /* a convolution kernel (window cells x channels) x maps */
        fan_in = n->rows;
        fan_out = (double)n->cols * n->fan_filter;
    }
    switch (n->init) {
    case G_INIT_FIXED:
        for (size_t i = 0; i < count; i++)
            w[i] = (float)n->init_value;
        return;
    case G_INIT_DATA:
        for (size_t i = 0; i < count; i++)
            w[i] = n->data ? n->data[i] : 0.0f;
        return;
    case G_INIT_UNIFORM: r = 0.05 * s; break;
    case G_INIT_XAVIER: r = s * sqrt(3.0 / fan_in); break;
    case G_INIT_GLOROT_UNIFORM: r = s * sqrt(6.0 / (fan_in + fan_out)); break;
    case G_INIT_HE_UNIFORM: r = s * sqrt(6.0 / fan_in); break;
    case G_INIT_GAUSSIAN: sd = 0.2 * s / sqrt(fan_in); break;
    case G_INIT_GLOROT_NORMAL: sd = s * sqrt(2.0 / (fan_in + fan_out)); break;
    case G_INIT_HE_NORMAL: sd = s * sqrt(2.0 / fan_in); break;
    case G_INIT_NORMAL:
    case G_INIT_TRUNC_NORMAL: sd = s; break;
    case G_INIT_UNIFORM1: r = s; break;
    }
    for (size_t i = 0; i < count; i++) {
        double x = r > 0.0 ? (pt_rng_uniform(rng) * 2.0 - 1.0) * r : nn_rng_normal(rng) * sd;
        while (n->init == G_INIT_TRUNC_NORMAL && fabs(x) > 2.0 * sd) /* CNTK's rejection */
            x = nn_rng_normal(rng) * sd;
        w[i] = (float)x;
    }
}

void g_init_params(const struct nn_graph *g, float *params, uint64_t seed)
{
    struct pt_rng rng;
    pt_rng_seed(&rng, seed, 0, 0);
    for (int i = 0; i < g->n; i++)
        if (g->nodes[i].learnable)
            init_one(&g->nodes[i], params + g->nodes[i].offset, &rng);
}

void g_bind_arena(struct nn_graph *g, float *params, float *grads)
{
    for (int i = 0; i < g->n; i++)
        if (g->nodes[i].learnable) {
            g->nodes[i].v = params + g->nodes[i].offset;
            g->nodes[i].g = grads + g->nodes[i].offset;
        }
}

/* Constants: one fixed buffer, values and (unused, zero) gradients. */
static int upload_consts(struct nn_graph *g, struct pt_err *e)
{
    struct backend *b = g->bk;
    size_t total = 0;
    for (int i = 0; i < g->n; i++)
        if (g->nodes[i].is_const)
            total += (size_t)g->nodes[i].rows * (size_t)g->nodes[i].cols;
    if (total == 0 || g->consts)
        return 0;
    int rc = b->ops->alloc(b, 2 * total, &g->consts, e);
    if (rc)
        return rc;
    size_t at = 0;
    for (int i = 0; i < g->n; i++) {
        struct g_node *n = &g->nodes[i];
        if (!n->is_const)
            continue;
        size_t k = (size_t)n->rows * (size_t)n->cols;
        n->v = g->consts + at;
        n->g = g->consts + total + at;
        if (n->data && (rc = b->ops->upload(b, n->v, n->data, k, e)) != 0)
            return rc;
        if (!n->data) /* ReduceMean's row: 1 / its inferred length */
            b->ops->fill(b, n->v, k, n->mean_row ? 1.0f / (float)n->cols : (float)n->init_value);
        b->ops->fill(b, n->g, k, 0.0f);
        at += k;
    }
    return 0;
}

/* Nodes whose values live elsewhere: parameters (the arena), constants (their own block),
 * the statistics (the network's mean / invstd); the other nodes are computed per pass. */
static int fixed_store(const struct g_node *n)
{
    return n->learnable || n->is_const || !strcmp(n->kind->name, "Mean") ||
           !strcmp(n->kind->name, "InvStdDev");
}

static size_t round16(size_t n)
{
    return (n + 15) & ~(size_t)15;
}

/* The workspace for ncols columns of nseq sequences: every data node's value and
 * gradient, the kinds' own scratch, two scratch blocks and the criterion sums. Carved when
 * buf is not NULL; returns the floats it takes. */
static size_t carve(struct nn_graph *g, float *buf, size_t ncols, size_t nseq)
{
    size_t at = 0, maxcells = 1;
    for (int i = 0; i < g->n; i++) {
        struct g_node *n = &g->nodes[i];
        if (n->dead)
            continue;
        size_t cells = (size_t)n->rows * (n->cols ? (size_t)n->cols : ncols);
        maxcells = cells > maxcells ? cells : maxcells;
        if (!fixed_store(n)) { /* computed: per step, per sequence or fixed columns */
            size_t k = round16(n->cols ? cells : (size_t)n->rows * (n->seq1 ? nseq : ncols));
            if (buf) {
                n->v = buf + at;
                n->g = buf + at + k;
            }
            at += 2 * k;
        }
        if (n->kind->workspace) {
            if (buf)
                n->ws = buf + at;
            at += round16(n->kind->workspace(n, ncols, nseq));
        }
    }
    if (buf) {
        g->tmp = buf + at;
        g->tmp2 = buf + at + round16(maxcells);
        g->stats = buf + at + 2 * round16(maxcells);
        g->seq_mask = g->stats + 16;
    }
    return at + 2 * round16(maxcells) + 16 + round16(nseq);
}

/* A column of ones as long as the longest node, for the products that broadcast a row
 * (graph_ewise.c), once. */
static int make_ones(struct nn_graph *g, struct pt_err *e)
{
    int rows = 0, need = 0;
    for (int i = 0; i < g->n; i++) {
        rows = g->nodes[i].rows > rows ? g->nodes[i].rows : rows;
        need |= g->nodes[i].row_bcast && !g->nodes[i].dead;
    }
    if (!need || g->ones)
        return 0;
    int rc = g->bk->ops->alloc(g->bk, (size_t)rows, &g->ones, e);
    if (rc == 0)
        g->bk->ops->fill(g->bk, g->ones, (size_t)rows, 1.0f);
    return rc;
}

int g_reserve(struct nn_graph *g, size_t ncols, size_t nseq, struct pt_err *e)
{
    int rc = upload_consts(g, e);
    if (rc == 0)
        rc = make_ones(g, e);
    g->ncols = ncols;
    g->c0 = 0;
    g->cw = ncols;
    g->nseq = nseq;
    if (rc)
        return rc;
    size_t need = carve(g, NULL, ncols, nseq);
    if (!g->ws || need > g->ws_size) {
        struct backend *b = g->bk;
        b->ops->release(b, g->ws);
        g->ws = NULL;
        g->ws_size = 0;
        if ((rc = b->ops->alloc(b, need, &g->ws, e)) != 0)
            return rc;
        g->ws_size = need;
    }
    carve(g, g->ws, ncols, nseq);
    return 0;
}

/* A criterion node over the pass: its sum into stats[slot..slot+2); with grad, the
 * gradient with respect to its prediction added into that input's g. */
static void run_criterion(struct nn_graph *g, int node, int slot, int grad)
{
    struct g_node *n = &g->nodes[node], *y = &g->nodes[n->in[0]], *z = &g->nodes[n->in[1]];
    enum bk_crit_kind kind = (enum bk_crit_kind)(n->kind->crit - 1);
    int want = grad && z->needs_grad && kind != BK_CRIT_CLASS_ERR;
    struct bk_crit c = {.rows = z->rows,
                        .cols = g_cols(g, z),
                        .z = z->v,
                        .y = y->v,
                        .mask = z->cols   ? NULL
                                : z->seq1 ? g->seq_mask_on
                                          : g->crit_mask,
                        .grad = want ? (z->g_over ? z->g : g->tmp) : NULL,
                        .sum = g->stats + slot,
                        .top_n = n->top_n};
    g->bk->ops->criterion(g->bk, kind, &c);
    if (want && !z->g_over)
        g->bk->ops->axpy(g->bk, z->g, g->tmp, (size_t)z->rows * c.cols, 1.0f);
}

/* A recurrent loop's products with a fixed matrix as their A (a parameter's or constant's
 * Times and Affine): the backend packs each once for all the loop's steps (gemm_hold; a
 * 200 x 150 weight times a step's few sequences otherwise spends most of its time packing:
 * CNTK's CLASSLSTM, 15 % of its run). on 0: let them go. */
static void hold_loop(struct nn_graph *g, const struct g_unit *u, int on)
{
    struct backend *b = g->bk;
    if (!u->loop || !b->ops->gemm_hold)
        return;
    if (!on) {
        b->ops->gemm_hold(b, NULL);
        return;
    }
    for (int i = 0; i < u->count; i++) {
        const struct g_node *n = &g->nodes[g->order[u->first + i]];
        const struct g_node *a = &g->nodes[n->in[0]];
        if ((n->kind == &g_kind_affine || !strcmp(n->kind->name, "Times")) && a->cols)
            b->ops->gemm_hold(b, a->v);
    }
}

/* Run unit u forward (dir 1) or backward (dir -1). */
static void run_unit(struct nn_graph *g, const struct g_unit *u, int dir)
{
    hold_loop(g, u, 1);
    size_t steps = u->loop ? g->ncols / g->nseq : 1;
    for (size_t s = 0; s < steps; s++) {
        size_t k = dir > 0 ? s : steps - 1 - s; /* the step of the loop's own order */
        size_t t = u->reverse ? steps - 1 - k : k;
        g->c0 = u->loop ? t * g->nseq : 0;
        g->cw = u->loop ? g->nseq : g->ncols;
        for (int i = 0; i < u->count; i++) {
            struct g_node *n = &g->nodes[g->order[u->first + (dir > 0 ? i : u->count - 1 - i)]];
            if (n->kind->crit)
                continue;
            /* padding columns hold exactly 0, values and gradients: whatever a node makes of
             * them (Log (0)) cannot reach a real column or a parameter's gradient */
            int pad = g->crit_mask && n->cols == 0 && !n->seq1;
            if (dir > 0) {
                n->kind->forward(g, n);
                if (pad)
                    g->bk->ops->mask_cols(g->bk, g_val(g, n), n->rows, g->cw, g->crit_mask + g->c0);
            } else if (n->needs_grad && n->kind->nin > 0) {
                if (pad)
                    g->bk->ops->mask_cols(g->bk, g_grad(g, n), n->rows, g->cw,
                                          g->crit_mask + g->c0);
                n->kind->backward(g, n);
            }
        }
    }
    g->c0 = 0;
    g->cw = g->ncols;
    hold_loop(g, u, 0);
}

void g_forward(struct nn_graph *g)
{
    g->fault[0] = '\0';
    for (int u = 0; u < g->nunits; u++)
        run_unit(g, &g->units[u], 1);
    run_criterion(g, g->eval, 2, 0);
    for (int k = 0; k < g->n_eval_more; k++)
        run_criterion(g, g->eval_more[k], 4 + 2 * k, 0);
    if (!g->train) /* training computes it with its gradient in g_backward */
        run_criterion(g, g->crit, 0, 0);
}

void g_backward(struct nn_graph *g, float *grads)
{
    struct backend *b = g->bk;
    (void)grads;                     /* the parameters' gradients are their nodes' (g_bind_arena) */
    for (int i = 0; i < g->n; i++) { /* what is added into starts at zero */
        struct g_node *n = &g->nodes[i];
        if (n->needs_grad && !n->dead && !n->g_over && (n->learnable || !fixed_store(n)))
            b->ops->fill(b, n->g, (size_t)n->rows * g_cols(g, n), 0.0f);
    }
    run_criterion(g, g->crit, 0, 1);
    for (int u = g->nunits; u-- > 0;)
        run_unit(g, &g->units[u], -1);
}

void g_free(struct nn_graph *g)
{
    if (!g)
        return;
    if (g->bk) {
        for (int i = 0; i < g->n; i++)
            g->bk->ops->release(g->bk, g->nodes[i].carry);
        g->bk->ops->release(g->bk, g->ws);
        g->bk->ops->release(g->bk, g->consts);
        g->bk->ops->release(g->bk, g->ones);
    }
    for (int i = 0; g->nodes && i < g->n; i++)
        free(g->nodes[i].data);
    free(g->nodes);
    free(g->order);
    free(g->units);
    free(g);
}
