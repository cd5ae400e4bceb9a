/* BrainScript evaluation: syntax tree -> node graph (see bs_eval.h).
 *
 * Values are numbers, booleans, strings, nodes (graph indices), records, arrays and
 * functions. Everything the evaluation allocates comes from one arena freed at the end;
 * only the graph survives. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nn/bs_eval.h"

/* BV_THUNK: an argument not evaluated yet (a lambda's arguments, PastValue's input): its
 * expression and where to evaluate it. */
enum bv_kind { BV_NONE, BV_NUM, BV_BOOL, BV_STR, BV_NODE, BV_REC, BV_ARR, BV_FN, BV_THUNK };

struct benv;
struct bfn;
struct barr;

struct bv {
    enum bv_kind k;
    double num;
    const char *str;
    int node;
    struct benv *rec;
    struct barr *arr;
    struct bfn *fn;
    const struct bs_node *expr; /* BV_THUNK */
    struct benv *env;
};

struct barr {
    size_t n;
    struct bv *v;
};

enum { SLOT_TODO, SLOT_BUSY, SLOT_DONE };

struct bslot {
    const char *name;
    const struct bs_node *expr;
    struct benv *env; /* where expr is evaluated; NULL: the slot's own record */
    int state;
    struct bv val;
};

struct benv {
    struct benv *parent;
    size_t n;
    struct bslot *slots;
    char path[48]; /* "" at the root, "h1" inside h1's record: node names */
};

struct ev;
typedef int (*builtin_fn)(struct ev *v, const struct bs_node *at, const char *name, struct bv *args,
                          struct bv *out);

/* A built-in's parameters: "name" (positional, required), "name=DEFAULT" (named, with a
 * default: a number, 'string', true, false or None), "?name=DEFAULT" (positional with a
 * default). */
struct builtin {
    const char *name;
    const char *sig[12];
    builtin_fn fn;
    const char *kind; /* the node kind it makes, where one */
    int lazy;         /* PastValue / FutureValue: the input (2nd argument) is evaluated later */
};

enum fn_kind { FN_LAMBDA, FN_BUILTIN, FN_SEQ, FN_LINEAR, FN_LSTM, FN_DELAY, FN_PARALLEL };

struct bfn {
    enum fn_kind k;
    const struct bs_node *lam; /* FN_LAMBDA: a BS_LAMBDA */
    struct benv *env;
    const struct builtin *bi;
    struct barr *seq; /* FN_SEQ, FN_PARALLEL: the functions */
    struct bv join;   /* FN_PARALLEL: the function that combines their results */
    int w, b;         /* FN_LINEAR, FN_LSTM: parameter nodes (b < 0: no bias) */
    int hm, peep;     /* FN_LSTM: the recurrent weights and the peepholes */
    int reverse;      /* FN_LSTM: goBackwards */
    int delay;        /* FN_DELAY: DelayLayer's T */
    double dflt;      /* FN_DELAY: its defaultHiddenActivation */
    struct bv act;    /* FN_LINEAR: the activation function, or BV_NONE */
};

struct chunk {
    struct chunk *next;
    size_t used, cap;
    max_align_t data[];
};

/* A delay node whose input is evaluated after the definitions that need the delay (how a
 * recurrence closes): node's input is the value of expr in env. */
struct fixup {
    int node;
    const struct bs_node *expr;
    struct benv *env;
};

struct ev {
    struct nn_graph *g;
    struct pt_err *e;
    struct chunk *mem;
    int depth;
    const struct bs_node *root;
    struct fixup *fix;
    size_t nfix, capfix;
};

#define MAX_DEPTH 400

static void *ev_alloc(struct ev *v, size_t size)
{
    size = (size + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
    if (!v->mem || v->mem->used + size > v->mem->cap) {
        size_t cap = size > 65536 ? size : 65536;
        struct chunk *c = pt_malloc(sizeof *c + cap, v->e);
        if (!c)
            return NULL;
        c->next = v->mem;
        c->used = 0;
        c->cap = cap;
        v->mem = c;
    }
    void *p = (char *)v->mem->data + v->mem->used;
    v->mem->used += size;
    memset(p, 0, size);
    return p;
}

static int eval(struct ev *v, const struct bs_node *x, struct benv *env, struct bv *out);
static int call(struct ev *v, const struct bs_node *at, struct bv *fn, struct bv *pos, size_t npos,
                const struct bs_node **named, struct bv *nval, size_t nnamed, struct bv *out);

static const char *kind_name(enum bv_kind k)
{
    static const char *names[] = {"None",     "a number", "a boolean",  "a string",   "a node",
                                  "a record", "an array", "a function", "an argument"};
    return names[k];
}

static int type_error(struct ev *v, const struct bs_node *at, const char *what, const char *want,
                      const struct bv *got)
{
    return bs_error(v->e, at, "%s: expected %s, got %s", what, want, kind_name(got->k));
}

/* ------------------------------------------------------------------ records */

static struct benv *new_env(struct ev *v, struct benv *parent, size_t n, const char *path)
{
    struct benv *r = ev_alloc(v, sizeof *r);
    if (!r || !(r->slots = ev_alloc(v, (n ? n : 1) * sizeof *r->slots)))
        return NULL;
    r->parent = parent;
    r->n = n;
    snprintf(r->path, sizeof r->path, "%s", path ? path : "");
    return r;
}

static struct benv *record_env(struct ev *v, const struct bs_node *rec, struct benv *parent,
                               const char *path)
{
    struct benv *r = new_env(v, parent, rec->nitems, path);
    if (!r)
        return NULL;
    for (size_t i = 0; i < rec->nitems; i++) {
        r->slots[i].name = rec->items[i]->str;
        r->slots[i].expr = rec->items[i]->a;
    }
    return r;
}

static struct bslot *find_local(struct benv *r, const char *name)
{
    for (size_t i = r->n; i-- > 0;) /* a later definition of a name wins */
        if (!strcmp(r->slots[i].name, name))
            return &r->slots[i];
    return NULL;
}

/* Give a new, unnamed node the name of the definition that made it. */
static void name_node(struct ev *v, struct benv *r, const char *name, const struct bv *val)
{
    if (val->k != BV_NODE)
        return;
    struct g_node *n = &v->g->nodes[val->node];
    if (n->name[0])
        return;
    if (r->path[0])
        snprintf(n->name, sizeof n->name, "%s.%s", r->path, name);
    else
        snprintf(n->name, sizeof n->name, "%s", name);
}

static int force(struct ev *v, const struct bs_node *at, struct benv *r, struct bslot *s,
                 struct bv *out)
{
    if (s->state == SLOT_DONE) {
        *out = s->val;
        return 0;
    }
    if (s->state == SLOT_BUSY)
        return bs_error(v->e, at,
                        "'%s' is defined in terms of itself (recurrence through PastValue / "
                        "FutureValue is not supported yet)",
                        s->name);
    s->state = SLOT_BUSY;
    int rc = eval(v, s->expr, s->env ? s->env : r, &s->val);
    if (rc)
        return rc;
    name_node(v, r, s->name, &s->val);
    s->state = SLOT_DONE;
    *out = s->val;
    return 0;
}

/* ------------------------------------------------------------------ built-ins */

static const struct builtin *find_builtin(const char *name);

static int make_node(struct ev *v, const struct bs_node *at, const char *kind, const int *in,
                     int nin, struct bv *out)
{
    const struct g_kind *k = g_kind_find(kind);
    char where[320];
    snprintf(where, sizeof where, "%s:%d:%d", at->file, at->line, at->col);
    int id = k ? g_add(v->g, k, in, nin, where, v->e) : -1;
    if (id < 0)
        return k ? v->e->code
                 : pt_err_set(v->e, PT_EINTERNAL, "%s: internal: no node kind %s", where, kind);
    *out = (struct bv){.k = BV_NODE, .node = id};
    return 0;
}

/* A number as a node: a constant column whose rows the operation infers. */
static int as_node(struct ev *v, const struct bs_node *at, const char *what, struct bv *x)
{
    if (x->k == BV_NODE)
        return 0;
    if (x->k != BV_NUM)
        return type_error(v, at, what, "a node or a number", x);
    double val = x->num;
    int rc = make_node(v, at, "Constant", NULL, 0, x);
    if (rc == 0) {
        struct g_node *n = &v->g->nodes[x->node];
        n->is_const = 1;
        n->cols = 1;
        n->init_value = val;
    }
    return rc;
}

static int node_op(struct ev *v, const struct bs_node *at, const char *name, struct bv *args,
                   struct bv *out)
{
    const struct builtin *bi = find_builtin(name);
    const char *kind = bi ? bi->kind : name; /* a kind without a row here: its own name */
    int in[G_MAX_IN], nin = g_kind_find(kind)->nin;
    for (int i = 0; i < nin; i++) {
        int rc = as_node(v, at, name, &args[i]);
        if (rc)
            return rc;
        in[i] = args[i].node;
    }
    return make_node(v, at, kind, in, nin, out);
}

static int get_int(struct ev *v, const struct bs_node *at, const char *what, const struct bv *x,
                   int *out)
{
    if (x->k != BV_NUM || x->num < 0 || x->num > (1 << 24) || x->num != floor(x->num))
        return x->k != BV_NUM ? type_error(v, at, what, "a dimension (a whole number)", x)
                              : bs_error(v->e, at, "%s: expected a dimension in [0, 2^24], got %g",
                                         what, x->num);
    *out = (int)x->num;
    return 0;
}

/* dims: a number or an array of numbers -> rows (the first) and cols (the product of the
 * rest, or fixed_cols when there is no rest). */
static int get_dims(struct ev *v, const struct bs_node *at, const char *what, const struct bv *x,
                    int *rows, int *cols)
{
    if (x->k != BV_ARR)
        return get_int(v, at, what, x, rows);
    long long c = 1;
    for (size_t i = 0; i < x->arr->n; i++) {
        int d = 0;
        int rc = get_int(v, at, what, &x->arr->v[i], &d);
        if (rc)
            return rc;
        if (i == 0)
            *rows = d;
        else
            c *= d;
    }
    if (x->arr->n > 2 && c > 0)
        return bs_error(v->e, at, "%s: tensors of rank %zu are not supported (rank 1 or 2)", what,
                        x->arr->n);
    if (x->arr->n > 1)
        *cols = (int)c;
    return 0;
}

static const char *get_str(const struct bv *x)
{
    return x->k == BV_STR ? x->str : NULL;
}

static const struct {
    const char *name;
    enum g_init init;
} inits[] = {
    {"uniform", G_INIT_UNIFORM},
    {"gaussian", G_INIT_GAUSSIAN},
    {"xavier", G_INIT_XAVIER},
    {"glorotUniform", G_INIT_GLOROT_UNIFORM},
    {"glorotNormal", G_INIT_GLOROT_NORMAL},
    {"heUniform", G_INIT_HE_UNIFORM},
    {"heNormal", G_INIT_HE_NORMAL},
    {"fixedValue", G_INIT_FIXED},
    {"zero", G_INIT_FIXED},
};

/* Parameter args after the dims: init, initValueScale, value, initValue, lrm. */
static int param_node(struct ev *v, const struct bs_node *at, struct bv *a, int rows, int cols,
                      struct bv *out)
{
    const char *init = get_str(&a[0]);
    if (!init || a[1].k != BV_NUM || (a[2].k != BV_NUM && a[2].k != BV_NONE) ||
        (a[3].k != BV_NUM && a[3].k != BV_NONE) || a[4].k != BV_NUM)
        return bs_error(v->e, at,
                        "Parameter: init must be a string; initValueScale, value, "
                        "initValue and learningRateMultiplier numbers");
    if (a[4].num != 1.0)
        return bs_error(v->e, at,
                        "Parameter: learningRateMultiplier=%g is not supported yet (only 1)",
                        a[4].num);
    int rc = make_node(v, at, "Parameter", NULL, 0, out);
    if (rc)
        return rc;
    struct g_node *n = &v->g->nodes[out->node];
    n->learnable = 1;
    n->rows = rows;
    n->cols = cols;
    n->init_scale = a[1].num;
    int fixed = a[3].k == BV_NUM || (init[0] == '\0' && a[2].k == BV_NUM && a[2].num != 0);
    n->init_value = a[3].k == BV_NUM ? a[3].num : a[2].k == BV_NUM ? a[2].num : 0.0;
    n->init = G_INIT_UNIFORM;
    if (fixed && init[0] == '\0') {
        n->init = G_INIT_FIXED;
        return 0;
    }
    if (init[0] == '\0')
        init = "uniform";
    for (size_t i = 0; i < sizeof inits / sizeof inits[0]; i++)
        if (!strcmp(inits[i].name, init)) {
            n->init = inits[i].init;
            if (!strcmp(init, "zero"))
                n->init_value = 0.0;
            return 0;
        }
    return bs_error(v->e, at,
                    "Parameter: init='%s' is not supported (uniform, gaussian, xavier, "
                    "glorotUniform, glorotNormal, heUniform, heNormal, fixedValue, zero)",
                    init);
}

static int bi_parameter(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                        struct bv *out)
{
    (void)name;
    int rows = 0, cols = 1;
    int rc = get_dims(v, at, "Parameter rows", &a[0], &rows, &cols);
    if (rc == 0 && a[1].k != BV_NONE)
        rc = get_int(v, at, "Parameter cols", &a[1], &cols);
    return rc ? rc : param_node(v, at, a + 2, rows, cols, out);
}

static int bi_parameter_tensor(struct ev *v, const struct bs_node *at, const char *name,
                               struct bv *a, struct bv *out)
{
    (void)name;
    int rows = 0, cols = 1;
    int rc = get_dims(v, at, "ParameterTensor dims", &a[0], &rows, &cols);
    return rc ? rc : param_node(v, at, a + 1, rows, cols, out);
}

static int bi_input(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                    struct bv *out)
{
    (void)name;
    int rows = 0, cols = 1;
    int rc = get_dims(v, at, "Input dims", &a[0], &rows, &cols);
    if (rc == 0 && a[3].k != BV_NONE)
        rc = get_int(v, at, "Input cols", &a[3], &cols);
    if (rc == 0 && cols != 1)
        return bs_error(v->e, at, "Input: only vector inputs are supported (dims %d x %d)", rows,
                        cols);
    if (rc == 0 && rows <= 0)
        return bs_error(v->e, at, "Input: the dimension must be positive");
    if (rc == 0 && (rc = make_node(v, at, "Input", NULL, 0, out)) == 0) {
        struct g_node *n = &v->g->nodes[out->node];
        n->is_input = 1;
        n->rows = rows;
        n->sparse = a[2].k == BV_BOOL && a[2].num != 0;
    }
    return rc;
}

static int bi_constant(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                       struct bv *out)
{
    int rows = 0, cols = 1, rc = 0;
    if (a[0].k != BV_NUM)
        return type_error(v, at, name, "a number", &a[0]);
    if (a[1].k != BV_NONE)
        rc = get_dims(v, at, name, &a[1], &rows, &cols);
    if (rc == 0 && a[2].k != BV_NONE)
        rc = get_int(v, at, name, &a[2], &cols);
    if (rc == 0 && (rc = make_node(v, at, "Constant", NULL, 0, out)) == 0) {
        struct g_node *n = &v->g->nodes[out->node];
        n->is_const = 1;
        n->rows = rows;
        n->cols = cols;
        n->init_value = a[0].num;
    }
    return rc;
}

/* LinearLayer / DenseLayer {outDim, bias, [activation,] init, initValueScale, initBias}:
 * a function with its own W (outDim x Inferred) and b (outDim). */
static int bi_linear(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                     struct bv *out)
{
    int dense = !strcmp(name, "DenseLayer"), rows = 0, cols = 1;
    struct bv *opt = a + 1 + dense; /* bias, init, initValueScale, initBias after activation */
    int rc = get_dims(v, at, name, &a[0], &rows, &cols);
    if (rc)
        return rc;
    if (cols != 1 || rows <= 0)
        return bs_error(v->e, at, "%s: outDim must be one positive dimension", name);
    if (a[1].k != BV_BOOL || (dense && a[2].k != BV_FN && a[2].k != BV_NONE))
        return bs_error(v->e, at, "%s: bias must be a boolean%s", name,
                        dense ? " and activation a function" : "");
    struct bv pa[5] = {opt[1], opt[2], {.k = BV_NONE}, {.k = BV_NONE}, {.k = BV_NUM, .num = 1}};
    struct bv w, b = {.k = BV_NONE};
    if ((rc = param_node(v, at, pa, rows, 0, &w)) != 0)
        return rc;
    if (a[1].num != 0) {
        struct bv pb[5] = {{.k = BV_STR, .str = "fixedValue"},
                           {.k = BV_NUM, .num = 1},
                           {.k = BV_NONE},
                           opt[3],
                           {.k = BV_NUM, .num = 1}};
        if ((rc = param_node(v, at, pb, rows, 1, &b)) != 0)
            return rc;
    }
    struct bfn *f = ev_alloc(v, sizeof *f);
    if (!f)
        return v->e->code;
    f->k = FN_LINEAR;
    f->w = w.node;
    f->b = b.k == BV_NODE ? b.node : -1;
    f->act = dense ? a[2] : (struct bv){.k = BV_NONE};
    *out = (struct bv){.k = BV_FN, .fn = f};
    return 0;
}

/* EmbeddingLayer {outDim, init, initValueScale, embeddingPath, transpose}: Times (E, x)
 * with E (outDim x Inferred), no bias. */
static int bi_embedding(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                        struct bv *out)
{
    int rows = 0, cols = 1;
    int rc = get_dims(v, at, name, &a[0], &rows, &cols);
    if (rc)
        return rc;
    if (cols != 1 || rows <= 0)
        return bs_error(v->e, at, "%s: outDim must be one positive dimension", name);
    if (!get_str(&a[3]) || a[3].str[0] || a[4].k != BV_BOOL || a[4].num != 0)
        return bs_error(v->e, at,
                        "%s: embeddingPath and transpose=true are not supported yet (a learned "
                        "embedding only)",
                        name);
    struct bv pa[5] = {a[1], a[2], {.k = BV_NONE}, {.k = BV_NONE}, {.k = BV_NUM, .num = 1}}, w;
    struct bfn *f = (rc = param_node(v, at, pa, rows, 0, &w)) == 0 ? ev_alloc(v, sizeof *f) : NULL;
    if (!f)
        return rc ? rc : v->e->code;
    f->k = FN_LINEAR;
    f->w = w.node;
    f->b = -1;
    f->act = (struct bv){.k = BV_NONE};
    *out = (struct bv){.k = BV_FN, .fn = f};
    return 0;
}

/* RecurrentLSTMLayer {outputDim, cellShape, goBackwards, usePeepholes, init, initValueScale,
 * enableSelfStabilization, allowOptimizedEngine}: W (4H x Inferred), H (4H x H) with init,
 * b (4H) zero, peepholes (H x 3) learned with init when usePeepholes, else zero. */
static int bi_lstm(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                   struct bv *out)
{
    int h = 0, cols = 1;
    int rc = get_dims(v, at, name, &a[0], &h, &cols);
    if (rc)
        return rc;
    if (cols != 1 || h <= 0)
        return bs_error(v->e, at, "%s: outputDim must be one positive dimension", name);
    if (a[1].k != BV_NONE || (a[6].k == BV_BOOL && a[6].num != 0))
        return bs_error(v->e, at,
                        "%s: cellShape (a projection) and enableSelfStabilization are not "
                        "supported yet",
                        name);
    if (a[2].k != BV_BOOL || a[3].k != BV_BOOL)
        return bs_error(v->e, at, "%s: goBackwards and usePeepholes must be booleans", name);
    struct bv pw[5] = {a[4], a[5], {.k = BV_NONE}, {.k = BV_NONE}, {.k = BV_NUM, .num = 1}};
    struct bv pb[5] = {{.k = BV_STR, .str = "fixedValue"},
                       {.k = BV_NUM, .num = 1},
                       {.k = BV_NONE},
                       {.k = BV_NUM, .num = 0},
                       {.k = BV_NUM, .num = 1}};
    struct bv w, hm, b, p;
    if ((rc = param_node(v, at, pw, 4 * h, 0, &w)) != 0 ||
        (rc = param_node(v, at, pw, 4 * h, h, &hm)) != 0 ||
        (rc = param_node(v, at, pb, 4 * h, 1, &b)) != 0)
        return rc;
    if (a[3].num != 0)
        rc = param_node(v, at, pw, h, 3, &p);
    else if ((rc = make_node(v, at, "Constant", NULL, 0, &p)) == 0) {
        struct g_node *c = &v->g->nodes[p.node];
        c->is_const = 1;
        c->rows = h;
        c->cols = 3;
    }
    struct bfn *f = rc ? NULL : ev_alloc(v, sizeof *f);
    if (!f)
        return rc ? rc : v->e->code;
    f->k = FN_LSTM;
    f->w = w.node;
    f->hm = hm.node;
    f->b = b.node;
    f->peep = p.node;
    f->reverse = a[2].num != 0;
    *out = (struct bv){.k = BV_FN, .fn = f};
    return 0;
}

/* A delay node over x (a node value, or an argument evaluated after the definitions that
 * need this node: a fixup). */
static int delay_node(struct ev *v, const struct bs_node *at, int steps, double dflt, int rows,
                      struct bv *x, struct bv *out)
{
    int rc = make_node(v, at, steps > 0 ? "PastValue" : "FutureValue", NULL, 0, out);
    if (rc)
        return rc;
    struct g_node *n = &v->g->nodes[out->node];
    n->delay = steps;
    n->delay_default = dflt;
    n->rows = rows;
    n->in[0] = -1;
    if (x->k != BV_THUNK) {
        if ((rc = as_node(v, at, steps > 0 ? "PastValue" : "FutureValue", x)) == 0)
            v->g->nodes[out->node].in[0] = x->node;
        return rc;
    }
    if (v->nfix == v->capfix) {
        size_t cap = v->capfix ? 2 * v->capfix : 16;
        struct fixup *f = pt_realloc(v->fix, cap * sizeof *f, v->e);
        if (!f)
            return v->e->code;
        v->fix = f;
        v->capfix = cap;
    }
    v->fix[v->nfix++] = (struct fixup){out->node, x->expr, x->env};
    return 0;
}

/* PastValue / FutureValue (shape, input, timeStep, defaultHiddenActivation) */
static int bi_delay(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                    struct bv *out)
{
    int rows = 0, cols = 1, steps = 0;
    int rc = get_dims(v, at, name, &a[0], &rows, &cols);
    if (rc == 0)
        rc = get_int(v, at, "timeStep", &a[2], &steps);
    if (rc)
        return rc;
    if (steps < 1 || cols != 1 || a[3].k != BV_NUM)
        return bs_error(v->e, at,
                        "%s: timeStep must be at least 1, the shape a vector's dimension (or 0: "
                        "inferred) and defaultHiddenActivation a number",
                        name);
    return delay_node(v, at, strcmp(name, "PastValue") ? -steps : steps, a[3].num, rows, &a[1],
                      out);
}

/* DelayLayer {T, defaultHiddenActivation}: x delayed T steps (T < 0: ahead; 0: x). */
static int bi_delay_layer(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                          struct bv *out)
{
    if (a[0].k != BV_NUM || a[0].num != floor(a[0].num) || fabs(a[0].num) > 1e6 || a[1].k != BV_NUM)
        return bs_error(v->e, at, "%s: T must be a whole number, defaultHiddenActivation a number",
                        name);
    struct bfn *f = ev_alloc(v, sizeof *f);
    if (!f)
        return v->e->code;
    f->k = FN_DELAY;
    f->delay = (int)a[0].num;
    f->dflt = a[1].num;
    *out = (struct bv){.k = BV_FN, .fn = f};
    return 0;
}

/* Splice (inputs, axis): the rows of the inputs (an array of nodes) one under the other */
static int bi_splice(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                     struct bv *out)
{
    if (a[1].k != BV_NUM || a[1].num != 1)
        return bs_error(v->e, at, "%s: only axis=1 (the rows) is supported", name);
    if (a[0].k != BV_ARR) {
        *out = a[0];
        return as_node(v, at, name, out);
    }
    struct bv acc = a[0].arr->v[0];
    int rc = as_node(v, at, name, &acc);
    for (size_t i = 1; rc == 0 && i < a[0].arr->n; i++) {
        struct bv next = a[0].arr->v[i];
        if ((rc = as_node(v, at, name, &next)) != 0)
            break;
        int in[2] = {acc.node, next.node};
        rc = make_node(v, at, "Splice", in, 2, &acc);
    }
    *out = acc;
    return rc;
}

static struct bv builtin_value(struct ev *v, const char *name);
static int bi_parallel(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                       struct bv *out);

/* BiRecurrentLSTMLayer {outputDim, ...}: Parallel ((RecurrentLSTMLayer {outputDim, ...} :
 * RecurrentLSTMLayer {outputDim, goBackwards=true, ...}), Splice): both directions' states
 * one under the other (2 outputDim rows). */
static int bi_bilstm(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                     struct bv *out)
{
    struct bv args[8], dirs[2];
    memcpy(args, a, sizeof args);
    int rc = 0;
    for (int d = 0; rc == 0 && d < 2; d++) {
        args[2] = (struct bv){.k = BV_BOOL, .num = d};
        rc = bi_lstm(v, at, name, args, &dirs[d]);
    }
    struct barr *arr = rc ? NULL : ev_alloc(v, sizeof *arr);
    if (!arr || !(arr->v = ev_alloc(v, 2 * sizeof *arr->v)))
        return rc ? rc : v->e->code;
    arr->n = 2;
    arr->v[0] = dirs[0];
    arr->v[1] = dirs[1];
    struct bv pa[2] = {{.k = BV_ARR, .arr = arr}, builtin_value(v, "Splice")};
    return pa[1].k == BV_FN ? bi_parallel(v, at, name, pa, out) : v->e->code;
}

/* DynamicAxis (): a named sequence axis for Input's dynamicAxis. partrain derives each
 * Input's axis from its use (per step, or per sequence next to BS.Sequences.Last / First),
 * so the value only has to exist. */
static int bi_dynamic_axis(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                           struct bv *out)
{
    (void)v;
    (void)at;
    (void)name;
    (void)a;
    *out = (struct bv){.k = BV_STR, .str = "DynamicAxis"};
    return 0;
}

/* Parallel (functions, combine): x => combine (f (x) : g (x) : ...) (CNTK.core.bs) */
static int bi_parallel(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                       struct bv *out)
{
    if (a[0].k != BV_ARR || a[1].k != BV_FN)
        return bs_error(v->e, at, "%s: expected an array of functions and a combining function",
                        name);
    for (size_t i = 0; i < a[0].arr->n; i++)
        if (a[0].arr->v[i].k != BV_FN)
            return type_error(v, at, name, "an array of functions", &a[0].arr->v[i]);
    struct bfn *f = ev_alloc(v, sizeof *f);
    if (!f)
        return v->e->code;
    f->k = FN_PARALLEL;
    f->seq = a[0].arr;
    f->join = a[1];
    *out = (struct bv){.k = BV_FN, .fn = f};
    return 0;
}

/* PerDimMeanVarNormalization (x, mean, invStdDev) = (x - mean) .* invStdDev (CNTK.core.bs) */
static int bi_mvn(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                  struct bv *out)
{
    (void)name;
    struct bv d;
    int rc = node_op(v, at, "Minus", a, &d);
    struct bv args[2] = {d, a[2]};
    return rc ? rc : node_op(v, at, "ElementTimes", args, out);
}

static int bi_sequential(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                         struct bv *out)
{
    struct barr *arr = a[0].k == BV_ARR ? a[0].arr : NULL;
    if (!arr) {
        if (a[0].k != BV_FN)
            return type_error(v, at, name, "an array of functions (f : g : h)", &a[0]);
        *out = a[0];
        return 0;
    }
    for (size_t i = 0; i < arr->n; i++)
        if (arr->v[i].k != BV_FN)
            return type_error(v, at, name, "an array of functions (f : g : h)", &arr->v[i]);
    struct bfn *f = ev_alloc(v, sizeof *f);
    if (!f)
        return v->e->code;
    f->k = FN_SEQ;
    f->seq = arr;
    *out = (struct bv){.k = BV_FN, .fn = f};
    return 0;
}

static int bi_identity(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                       struct bv *out)
{
    (void)v;
    (void)at;
    (void)name;
    *out = a[0];
    return 0;
}

#define PARAM_OPTS                                                                                 \
    "init=''", "initValueScale=1", "value=None", "initValue=None", "learningRateMultiplier=1",     \
        "tag=''", "initOnCPUOnly=true", "randomSeed=-1"
#define LAYER_OPTS                                                                                 \
    "init='glorotUniform'", "initValueScale=1", "initBias=0", "inputRank=None", "mapRank=None"

static const struct builtin builtins[] = {
    {"Input",
     {"dims", "tag='feature'", "isSparse=false", "?cols=None", "dynamicAxis=None"},
     bi_input,
     NULL,
     0},
    {"Parameter", {"dims", "?cols=None", PARAM_OPTS}, bi_parameter, NULL, 0},
    {"LearnableParameter", {"dims", "?cols=None", PARAM_OPTS}, bi_parameter, NULL, 0},
    {"ParameterTensor", {"dims", PARAM_OPTS}, bi_parameter_tensor, NULL, 0},
    {"Constant", {"value", "?rows=None", "?cols=None", "tag=''"}, bi_constant, NULL, 0},
    {"ConstantTensor", {"value", "dims", "tag=''"}, bi_constant, NULL, 0},
    {"Times", {"a", "b", "outputRank=1", "inferInputRankToMap=-1", "tag=''"}, node_op, "Times", 0},
    {"Plus", {"a", "b", "tag=''"}, node_op, "Plus", 0},
    {"Minus", {"a", "b", "tag=''"}, node_op, "Minus", 0},
    {"ElementTimes", {"a", "b", "tag=''"}, node_op, "ElementTimes", 0},
    {"Negate", {"x", "tag=''"}, node_op, "Negate", 0},
    {"Sigmoid", {"x", "tag=''"}, node_op, "Sigmoid", 0},
    {"Tanh", {"x", "tag=''"}, node_op, "Tanh", 0},
    {"ReLU", {"x", "tag=''"}, node_op, "ReLU", 0},
    {"RectifiedLinear", {"x", "tag=''"}, node_op, "ReLU", 0},
    {"Exp", {"x", "tag=''"}, node_op, "Exp", 0},
    {"Log", {"x", "tag=''"}, node_op, "Log", 0},
    {"Softmax", {"x", "axis=0", "tag=''"}, node_op, "Softmax", 0},
    {"CrossEntropyWithSoftmax",
     {"labels", "z", "axis=0", "tag='criterion'"},
     node_op,
     "CrossEntropyWithSoftmax",
     0},
    {"ClassificationError",
     {"labels", "z", "topN=1", "axis=0", "tag='evaluation'"},
     node_op,
     "ClassificationError",
     0},
    {"ErrorPrediction",
     {"labels", "z", "topN=1", "axis=0", "tag='evaluation'"},
     node_op,
     "ClassificationError",
     0},
    {"SquareError", {"labels", "z", "tag='criterion'"}, node_op, "SquareError", 0},
    {"Logistic", {"labels", "z", "tag='criterion'"}, node_op, "Logistic", 0},
    {"LinearLayer", {"outDim", "bias=true", LAYER_OPTS}, bi_linear, NULL, 0},
    {"DenseLayer", {"outDim", "bias=true", "activation=None", LAYER_OPTS}, bi_linear, NULL, 0},
    {"Sequential", {"arrayOfFunctions"}, bi_sequential, NULL, 0},
    {"EmbeddingLayer",
     {"outDim", "init='glorotUniform'", "initValueScale=1", "embeddingPath=''", "transpose=false"},
     bi_embedding,
     NULL,
     0},
    {"RecurrentLSTMLayer",
     {"outputDim", "cellShape=None", "goBackwards=false", "usePeepholes=false",
      "init='glorotUniform'", "initValueScale=1", "enableSelfStabilization=false",
      "allowOptimizedEngine=false"},
     bi_lstm,
     NULL,
     0},
    {"Dropout", {"x", "tag=''"}, node_op, "Dropout", 0},
    {"Splice", {"inputs", "axis=1", "tag=''"}, bi_splice, NULL, 0},
    {"Sequences.Last", {"x", "tag=''"}, node_op, "Last", 0},
    {"DynamicAxis", {"tag=''"}, bi_dynamic_axis, NULL, 0},
    {"Sequences.First", {"x", "tag=''"}, node_op, "First", 0},
    {"Parallel", {"functions", "combine"}, bi_parallel, NULL, 0},
    {"BiRecurrentLSTMLayer",
     {"outputDim", "cellShape=None", "goBackwards=false", "usePeepholes=false",
      "init='glorotUniform'", "initValueScale=1", "enableSelfStabilization=false",
      "allowOptimizedEngine=false"},
     bi_bilstm,
     NULL,
     0},
    {"PastValue",
     {"shape", "input", "timeStep=1", "defaultHiddenActivation=0.1", "tag=''"},
     bi_delay,
     NULL,
     1},
    {"FutureValue",
     {"shape", "input", "timeStep=1", "defaultHiddenActivation=0.1", "tag=''"},
     bi_delay,
     NULL,
     1},
    {"DelayLayer", {"T=1", "defaultHiddenActivation=0"}, bi_delay_layer, NULL, 0},
    {"Mean", {"x", "tag=''"}, node_op, "Mean", 0},
    {"InvStdDev", {"x", "tag=''"}, node_op, "InvStdDev", 0},
    {"PerDimMeanVarNormalization", {"x", "mean", "invStdDev", "tag=''"}, bi_mvn, NULL, 0},
    {"Identity", {"x"}, bi_identity, NULL, 0},
    {"Pass", {"x", "tag=''"}, bi_identity, NULL, 0},
};

static const struct builtin *find_builtin(const char *name)
{
    for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++)
        if (!strcmp(builtins[i].name, name))
            return &builtins[i];
    return NULL;
}

/* A built-in as a function value (BV_NONE with e set on out of memory). */
static struct bv builtin_value(struct ev *v, const char *name)
{
    struct bfn *f = ev_alloc(v, sizeof *f);
    if (!f)
        return (struct bv){.k = BV_NONE};
    f->k = FN_BUILTIN;
    f->bi = find_builtin(name);
    return (struct bv){.k = BV_FN, .fn = f};
}

/* Names CNTK's library defines that partrain does not build yet: refused by name. */
static const char *const not_yet[] = {
    "ConvolutionalLayer",
    "BatchNormalizationLayer",
    "LSTMP",
    "RowSlice",
    "Reshape",
    "ReduceSum",
    "Transpose",
    "TransposeTimes",
    "Convolution",
    "Pooling",
    "MaxPoolingLayer",
    "BatchNormalization",
    "OptimizedRNNStack",
    "RecurrentLSTMLayerStack",
    "LayerStack",
    "ElementDivide",
    "Sqrt",
    "Abs",
    "Clip",
    "Hardmax",
    "LogSoftmax",
    "CosDistance",
    "CrossEntropy",
    "SumElements",
    "Scale",
    "DelayLayer",
    "FeatureMVNLayer",
    "LogPriorLayer",
    "Stabilizer",
};

/* ------------------------------------------------------------------ calls */

static int default_value(struct ev *v, const char *d, struct bv *out)
{
    if (!strcmp(d, "None"))
        *out = (struct bv){.k = BV_NONE};
    else if (!strcmp(d, "true") || !strcmp(d, "false"))
        *out = (struct bv){.k = BV_BOOL, .num = d[0] == 't'};
    else if (d[0] == '\'') {
        size_t n = strlen(d) - 2;
        char *s = ev_alloc(v, n + 1);
        if (!s)
            return v->e->code;
        memcpy(s, d + 1, n);
        *out = (struct bv){.k = BV_STR, .str = s};
    } else
        *out = (struct bv){.k = BV_NUM, .num = strtod(d, NULL)};
    return 0;
}

/* Bind a built-in's arguments into args[] in its parameter order. */
static int bind_builtin(struct ev *v, const struct bs_node *at, const struct builtin *bi,
                        struct bv *pos, size_t npos, const struct bs_node **named, struct bv *nval,
                        size_t nnamed, struct bv *args)
{
    size_t np = 0, used_pos = 0;
    int given[12] = {0};
    while (np < 12 && bi->sig[np])
        np++;
    for (size_t i = 0; i < np; i++) {
        const char *p = bi->sig[i];
        int positional = !strchr(p, '=') || p[0] == '?';
        if (positional && used_pos < npos) {
            args[i] = pos[used_pos++];
            given[i] = 1;
        }
    }
    if (used_pos < npos)
        return bs_error(v->e, at, "%s: too many positional arguments (%zu, at most %zu)", bi->name,
                        npos, used_pos);
    for (size_t k = 0; k < nnamed; k++) {
        size_t i = 0;
        for (; i < np; i++) {
            const char *p = bi->sig[i] + (bi->sig[i][0] == '?');
            size_t len = strcspn(p, "=");
            if (strlen(named[k]->str) == len && !strncmp(p, named[k]->str, len))
                break;
        }
        if (i == np)
            return bs_error(v->e, named[k], "%s: no parameter called '%s'", bi->name,
                            named[k]->str);
        if (given[i])
            return bs_error(v->e, named[k], "%s: '%s' is given twice", bi->name, named[k]->str);
        args[i] = nval[k];
        given[i] = 1;
    }
    for (size_t i = 0; i < np; i++) {
        if (given[i])
            continue;
        const char *eq = strchr(bi->sig[i], '=');
        if (!eq)
            return bs_error(v->e, at, "%s: missing argument '%s'", bi->name, bi->sig[i]);
        int rc = default_value(v, eq + 1, &args[i]);
        if (rc)
            return rc;
    }
    return 0;
}

/* A parameter's slot: the value, or the argument's expression to evaluate when first used
 * (as CNTK evaluates arguments: lazily, which lets a recurrence pass through a function). */
static void bind_arg(struct bslot *s, const struct bv *arg)
{
    if (arg->k != BV_THUNK) {
        s->val = *arg;
        return;
    }
    s->state = SLOT_TODO;
    s->expr = arg->expr;
    s->env = arg->env;
}

static int call_lambda(struct ev *v, const struct bs_node *at, struct bfn *f, struct bv *pos,
                       size_t npos, const struct bs_node **named, struct bv *nval, size_t nnamed,
                       struct bv *out)
{
    const struct bs_node *lam = f->lam;
    struct benv *r = new_env(v, f->env, lam->nitems, f->env ? f->env->path : "");
    if (!r)
        return v->e->code;
    size_t used = 0;
    for (size_t i = 0; i < lam->nitems; i++) {
        const struct bs_node *p = lam->items[i];
        struct bslot *s = &r->slots[i];
        s->name = p->str;
        s->state = SLOT_DONE;
        if (p->kind == BS_ID) {
            if (used == npos)
                return bs_error(v->e, at,
                                "missing positional argument '%s' (the function is "
                                "defined at %d:%d)",
                                p->str, lam->line, lam->col);
            bind_arg(s, &pos[used++]);
            continue;
        }
        size_t k = 0;
        while (k < nnamed && strcmp(named[k]->str, p->str))
            k++;
        if (k < nnamed) {
            bind_arg(s, &nval[k]);
            continue;
        }
        int rc = eval(v, p->a, f->env, &s->val);
        if (rc)
            return rc;
    }
    if (used < npos)
        return bs_error(v->e, at,
                        "too many positional arguments (%zu, the function at %d:%d "
                        "takes %zu)",
                        npos, lam->line, lam->col, used);
    for (size_t k = 0; k < nnamed; k++) {
        size_t i = 0;
        while (i < lam->nitems &&
               !(lam->items[i]->kind == BS_DEF && !strcmp(lam->items[i]->str, named[k]->str)))
            i++;
        if (i == lam->nitems)
            return bs_error(v->e, named[k], "no parameter called '%s' (the function at %d:%d)",
                            named[k]->str, lam->line, lam->col);
    }
    return eval(v, lam->a, r, out);
}

static int apply1(struct ev *v, const struct bs_node *at, struct bv *fn, struct bv x,
                  struct bv *out)
{
    return call(v, at, fn, &x, 1, NULL, NULL, 0, out);
}

static int call_linear(struct ev *v, const struct bs_node *at, struct bfn *f, struct bv *pos,
                       size_t npos, struct bv *out)
{
    if (npos != 1)
        return bs_error(v->e, at, "a layer takes one argument, got %zu", npos);
    struct bv x = pos[0];
    int rc = as_node(v, at, "layer input", &x);
    int in[2] = {f->w, x.node};
    if (rc == 0)
        rc = make_node(v, at, "Times", in, 2, out);
    if (rc == 0 && f->b >= 0) {
        in[0] = out->node;
        in[1] = f->b;
        rc = make_node(v, at, "Plus", in, 2, out);
    }
    if (rc == 0 && f->act.k == BV_FN)
        rc = apply1(v, at, &f->act, *out, out);
    return rc;
}

static int call_lstm(struct ev *v, const struct bs_node *at, struct bfn *f, struct bv *pos,
                     size_t npos, struct bv *out)
{
    if (npos != 1)
        return bs_error(v->e, at, "a layer takes one argument, got %zu", npos);
    struct bv x = pos[0];
    int rc = as_node(v, at, "layer input", &x);
    int in[5] = {x.node, f->w, f->hm, f->b, f->peep};
    if (rc == 0)
        rc = make_node(v, at, "RecurrentLSTM", in, 5, out);
    if (rc == 0) {
        struct g_node *n = &v->g->nodes[out->node];
        n->rows = v->g->nodes[f->hm].cols;
        n->reverse = f->reverse;
    }
    return rc;
}

static int call(struct ev *v, const struct bs_node *at, struct bv *fn, struct bv *pos, size_t npos,
                const struct bs_node **named, struct bv *nval, size_t nnamed, struct bv *out)
{
    if (fn->k != BV_FN)
        return type_error(v, at, "call", "a function", fn);
    if (++v->depth > MAX_DEPTH) {
        v->depth--;
        return bs_error(v->e, at, "calls nested deeper than %d (endless recursion?)", MAX_DEPTH);
    }
    struct bfn *f = fn->fn;
    int rc = 0;
    if (f->k == FN_LAMBDA)
        rc = call_lambda(v, at, f, pos, npos, named, nval, nnamed, out);
    else if (f->k == FN_BUILTIN) {
        struct bv args[12];
        rc = bind_builtin(v, at, f->bi, pos, npos, named, nval, nnamed, args);
        if (rc == 0)
            rc = f->bi->fn(v, at, f->bi->name, args, out);
    } else if (nnamed)
        rc = bs_error(v->e, named[0], "a layer takes no named arguments");
    else if (f->k == FN_LINEAR)
        rc = call_linear(v, at, f, pos, npos, out);
    else if (f->k == FN_LSTM)
        rc = call_lstm(v, at, f, pos, npos, out);
    else if (f->k == FN_PARALLEL) {
        struct barr *res = npos == 1 ? ev_alloc(v, sizeof *res) : NULL;
        if (npos != 1)
            rc = bs_error(v->e, at, "Parallel's function takes one argument, got %zu", npos);
        else if (!res || !(res->v = ev_alloc(v, f->seq->n * sizeof *res->v)))
            rc = v->e->code;
        for (size_t i = 0; rc == 0 && i < f->seq->n; i++)
            rc = apply1(v, at, &f->seq->v[i], pos[0], &res->v[res->n++]);
        if (rc == 0)
            rc = apply1(v, at, &f->join, (struct bv){.k = BV_ARR, .arr = res}, out);
    } else if (f->k == FN_DELAY) {
        if (npos != 1)
            rc = bs_error(v->e, at, "a layer takes one argument, got %zu", npos);
        else if (f->delay == 0)
            *out = pos[0];
        else
            rc = delay_node(v, at, f->delay, f->dflt, 0, &pos[0], out);
    } else { /* FN_SEQ */
        if (npos != 1)
            rc = bs_error(v->e, at, "Sequential's function takes one argument, got %zu", npos);
        struct bv x = npos ? pos[0] : (struct bv){0};
        for (size_t i = 0; rc == 0 && i < f->seq->n; i++)
            rc = apply1(v, at, &f->seq->v[i], x, &x);
        *out = x;
    }
    v->depth--;
    return rc;
}

static int eval_call(struct ev *v, const struct bs_node *x, struct benv *env, struct bv *out)
{
    struct bv fn;
    int rc = eval(v, x->a, env, &fn);
    size_t n = x->nitems, npos = 0, nnamed = 0;
    struct bv *pos = ev_alloc(v, (n + 1) * sizeof *pos),
              *nval = ev_alloc(v, (n + 1) * sizeof *nval);
    const struct bs_node **named = ev_alloc(v, (n + 1) * sizeof *named);
    if (rc == 0 && (!pos || !nval || !named))
        rc = v->e->code;
    /* a lambda's arguments, and a delay's input, are evaluated when first used */
    int lazy_all = rc == 0 && fn.k == BV_FN && fn.fn->k == FN_LAMBDA;
    int delay = rc == 0 && fn.k == BV_FN && fn.fn->k == FN_BUILTIN && fn.fn->bi->lazy;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const struct bs_node *arg = x->items[i], *ex = arg->kind == BS_DEF ? arg->a : arg;
        int lazy =
            lazy_all || (delay && (arg->kind == BS_DEF ? !strcmp(arg->str, "input") : npos == 1));
        struct bv *slot = arg->kind == BS_DEF ? &nval[nnamed] : &pos[npos];
        if (arg->kind == BS_DEF)
            named[nnamed++] = arg;
        else
            npos++;
        if (lazy)
            *slot = (struct bv){.k = BV_THUNK, .expr = ex, .env = env};
        else
            rc = eval(v, ex, env, slot);
    }
    return rc ? rc : call(v, x, &fn, pos, npos, named, nval, nnamed, out);
}

/* ------------------------------------------------------------------ expressions */

static int lookup(struct ev *v, const struct bs_node *x, struct benv *env, struct bv *out)
{
    for (struct benv *r = env; r; r = r->parent) {
        struct bslot *s = find_local(r, x->str);
        if (s)
            return force(v, x, r, s, out);
    }
    const struct builtin *bi = find_builtin(x->str);
    if (bi) {
        struct bfn *f = ev_alloc(v, sizeof *f);
        if (!f)
            return v->e->code;
        f->k = FN_BUILTIN;
        f->bi = bi;
        *out = (struct bv){.k = BV_FN, .fn = f};
        return 0;
    }
    const struct g_kind *k = g_kind_find(x->str);
    if (k && k->nin > 0 && k != &g_kind_affine && k != &g_kind_lstm) {
        /* a node kind with no row in builtins[] (adding a node is its row in the kind
         * table): a function of its inputs, positional, and an ignored tag */
        static const char *const sig[] = {"x0", "x1", "x2", "x3", "x4"};
        struct builtin *b = ev_alloc(v, sizeof *b);
        struct bfn *f = b ? ev_alloc(v, sizeof *f) : NULL;
        if (!f)
            return v->e->code;
        b->name = k->name;
        for (int i = 0; i < k->nin; i++)
            b->sig[i] = sig[i];
        b->sig[k->nin] = "tag=''";
        b->fn = node_op;
        b->kind = k->name;
        f->k = FN_BUILTIN;
        f->bi = b;
        *out = (struct bv){.k = BV_FN, .fn = f};
        return 0;
    }
    if (!strcmp(x->str, "Inferred")) {
        *out = (struct bv){.k = BV_NUM, .num = 0};
        return 0;
    }
    if (!strcmp(x->str, "None")) {
        *out = (struct bv){.k = BV_NONE};
        return 0;
    }
    for (size_t i = 0; i < sizeof not_yet / sizeof not_yet[0]; i++)
        if (!strcmp(not_yet[i], x->str))
            return bs_error(v->e, x,
                            "%s is not supported yet by partrain's BrainScript (see the "
                            "README's BrainScript section)",
                            x->str);
    return bs_error(v->e, x, "unknown name '%s'", x->str);
}

static int eval_dot(struct ev *v, const struct bs_node *x, struct benv *env, struct bv *out)
{
    /* BS.Namespace.Name: CNTK's library namespaces, mapped onto the built-ins */
    const struct bs_node *base = x->a;
    while (base->kind == BS_DOT)
        base = base->a;
    int user_bs = 0;
    for (struct benv *r = env; r && base->kind == BS_ID; r = r->parent)
        user_bs |= find_local(r, base->str) != NULL;
    if (base->kind == BS_ID && !strcmp(base->str, "BS") && !user_bs) {
        struct bs_node id = *x;
        id.kind = BS_ID;
        char qualified[128]; /* BS.Sequences.Last: the built-in "Sequences.Last" */
        if (x->a->kind == BS_DOT) {
            snprintf(qualified, sizeof qualified, "%s.%s", x->a->str, x->str);
            if (find_builtin(qualified))
                id.str = qualified;
        }
        int rc = lookup(v, &id, NULL, out);
        if (rc && v->e->code == PT_EUSER && !find_builtin(x->str)) {
            pt_err_clear(v->e);
            return bs_error(v->e, x, "BS...%s: not supported yet by partrain's BrainScript",
                            x->str);
        }
        return rc;
    }
    struct bv rec;
    int rc = eval(v, x->a, env, &rec);
    if (rc)
        return rc;
    if (rec.k != BV_REC)
        return type_error(v, x, "'.' member access", "a record", &rec);
    struct bslot *s = find_local(rec.rec, x->str);
    if (!s)
        return bs_error(v->e, x, "the record has no member '%s'", x->str);
    return force(v, x, rec.rec, s, out);
}

static int eval_array(struct ev *v, const struct bs_node *x, struct benv *env, struct bv *out)
{
    struct barr *arr = ev_alloc(v, sizeof *arr);
    size_t cap = x->nitems;
    if (!arr || !(arr->v = ev_alloc(v, cap * sizeof *arr->v)))
        return v->e->code;
    for (size_t i = 0; i < x->nitems; i++) {
        struct bv el;
        int rc = eval(v, x->items[i], env, &el);
        if (rc)
            return rc;
        if (el.k != BV_ARR) {
            arr->v[arr->n++] = el;
            continue;
        }
        struct bv *grown = ev_alloc(v, (cap + el.arr->n) * sizeof *grown); /* a : (b : c) */
        if (!grown)
            return v->e->code;
        memcpy(grown, arr->v, arr->n * sizeof *grown);
        memcpy(grown + arr->n, el.arr->v, el.arr->n * sizeof *grown);
        arr->v = grown;
        arr->n += el.arr->n;
        cap += el.arr->n;
    }
    *out = (struct bv){.k = BV_ARR, .arr = arr};
    return 0;
}

static int num_binop(struct ev *v, const struct bs_node *x, double a, double b, struct bv *out)
{
    const char *op = x->op;
    double r = 0;
    int boolean = 1;
    if (!strcmp(op, "=="))
        r = a == b;
    else if (!strcmp(op, "!="))
        r = a != b;
    else if (!strcmp(op, "<"))
        r = a < b;
    else if (!strcmp(op, "<="))
        r = a <= b;
    else if (!strcmp(op, ">"))
        r = a > b;
    else if (!strcmp(op, ">="))
        r = a >= b;
    else {
        boolean = 0;
        if (!strcmp(op, "+"))
            r = a + b;
        else if (!strcmp(op, "-"))
            r = a - b;
        else if (!strcmp(op, "*") || !strcmp(op, ".*"))
            r = a * b;
        else if (!strcmp(op, "/")) {
            if (b == 0)
                return bs_error(v->e, x, "division by zero");
            r = a / b;
        } else
            return bs_error(v->e, x, "'%s' needs booleans, got numbers", op);
    }
    *out = (struct bv){.k = boolean ? BV_BOOL : BV_NUM, .num = r};
    return 0;
}

static int eval_binop(struct ev *v, const struct bs_node *x, struct benv *env, struct bv *out)
{
    struct bv a, b;
    const char *op = x->op;
    int rc = eval(v, x->a, env, &a);
    if (rc)
        return rc;
    if (!strcmp(op, "&&") || !strcmp(op, "||")) { /* short-circuit, as in CNTK */
        if (a.k != BV_BOOL)
            return type_error(v, x->a, op, "a boolean", &a);
        if ((a.num != 0) == (op[0] == '|')) {
            *out = a;
            return 0;
        }
        if ((rc = eval(v, x->b, env, &b)) != 0)
            return rc;
        if (b.k != BV_BOOL)
            return type_error(v, x->b, op, "a boolean", &b);
        *out = b;
        return 0;
    }
    if ((rc = eval(v, x->b, env, &b)) != 0)
        return rc;
    if (a.k == BV_NUM && b.k == BV_NUM)
        return num_binop(v, x, a.num, b.num, out);
    if (a.k == BV_STR && b.k == BV_STR) {
        int cmp = strcmp(a.str, b.str);
        if (!strcmp(op, "==") || !strcmp(op, "!=")) {
            *out = (struct bv){.k = BV_BOOL, .num = (cmp == 0) == (op[0] == '=')};
            return 0;
        }
        if (strcmp(op, "+"))
            return bs_error(v->e, x, "'%s' is not defined on strings", op);
        size_t la = strlen(a.str), lb = strlen(b.str);
        char *s = ev_alloc(v, la + lb + 1);
        if (!s)
            return v->e->code;
        memcpy(s, a.str, la);
        memcpy(s + la, b.str, lb);
        *out = (struct bv){.k = BV_STR, .str = s};
        return 0;
    }
    if (a.k == BV_BOOL && b.k == BV_BOOL && (!strcmp(op, "==") || !strcmp(op, "!="))) {
        *out = (struct bv){.k = BV_BOOL, .num = (a.num == b.num) == (op[0] == '=')};
        return 0;
    }
    if (a.k == BV_NODE || b.k == BV_NODE) {
        const char *kind = !strcmp(op, "*")    ? "Times"
                           : !strcmp(op, "+")  ? "Plus"
                           : !strcmp(op, "-")  ? "Minus"
                           : !strcmp(op, ".*") ? "ElementTimes"
                                               : NULL;
        if (!kind)
            return bs_error(v->e, x, "'%s' on nodes is not supported (use +, -, * or .*)", op);
        struct bv args[2] = {a, b};
        return node_op(v, x, kind, args, out);
    }
    return bs_error(v->e, x, "'%s' cannot combine %s and %s", op, kind_name(a.k), kind_name(b.k));
}

static int eval_unop(struct ev *v, const struct bs_node *x, struct benv *env, struct bv *out)
{
    struct bv a;
    int rc = eval(v, x->a, env, &a);
    if (rc)
        return rc;
    if (!strcmp(x->op, "!")) {
        if (a.k != BV_BOOL)
            return type_error(v, x, "'!'", "a boolean", &a);
        *out = (struct bv){.k = BV_BOOL, .num = a.num == 0};
        return 0;
    }
    if (a.k == BV_NUM) {
        *out = (struct bv){.k = BV_NUM, .num = x->op[0] == '-' ? -a.num : a.num};
        return 0;
    }
    if (a.k != BV_NODE)
        return type_error(v, x, x->op, "a number or a node", &a);
    if (x->op[0] == '+') {
        *out = a;
        return 0;
    }
    return node_op(v, x, "Negate", &a, out);
}

static int eval_inner(struct ev *v, const struct bs_node *x, struct benv *env, struct bv *out)
{
    switch (x->kind) {
    case BS_NUM: *out = (struct bv){.k = BV_NUM, .num = x->num}; return 0;
    case BS_BOOL: *out = (struct bv){.k = BV_BOOL, .num = x->num}; return 0;
    case BS_STR: *out = (struct bv){.k = BV_STR, .str = x->str}; return 0;
    case BS_ID: return lookup(v, x, env, out);
    case BS_VAR:
        return bs_error(v->e, x, "$%s$ was not replaced (variables are not allowed here)", x->str);
    case BS_RECORD: {
        if (x->str)
            return bs_error(v->e, x, "'new %s [...]' is CNTK's internal form; not supported",
                            x->str);
        struct benv *r = record_env(v, x, env, env ? env->path : "");
        if (!r)
            return v->e->code;
        *out = (struct bv){.k = BV_REC, .rec = r};
        return 0;
    }
    case BS_LAMBDA: {
        struct bfn *f = ev_alloc(v, sizeof *f);
        if (!f)
            return v->e->code;
        f->k = FN_LAMBDA;
        f->lam = x;
        f->env = env;
        *out = (struct bv){.k = BV_FN, .fn = f};
        return 0;
    }
    case BS_ARRAY: return eval_array(v, x, env, out);
    case BS_CALL: return eval_call(v, x, env, out);
    case BS_DOT: return eval_dot(v, x, env, out);
    case BS_INDEX: {
        struct bv a, i;
        int rc = eval(v, x->a, env, &a);
        if (rc == 0)
            rc = eval(v, x->b, env, &i);
        if (rc)
            return rc;
        if (a.k != BV_ARR)
            return type_error(v, x, "'[ ]' indexing", "an array", &a);
        if (i.k != BV_NUM || i.num < 0 || i.num >= (double)a.arr->n || i.num != floor(i.num))
            return bs_error(v->e, x->b, "index out of range: the array has %zu elements", a.arr->n);
        *out = a.arr->v[(size_t)i.num];
        return 0;
    }
    case BS_IF: {
        struct bv c;
        int rc = eval(v, x->a, env, &c);
        if (rc)
            return rc;
        if (c.k != BV_BOOL)
            return type_error(v, x->a, "if", "a boolean condition", &c);
        return eval(v, c.num != 0 ? x->b : x->c, env, out);
    }
    case BS_BINOP: return eval_binop(v, x, env, out);
    case BS_UNOP: return eval_unop(v, x, env, out);
    case BS_DEF: break;
    }
    return bs_error(v->e, x, "unexpected definition here");
}

static int eval(struct ev *v, const struct bs_node *x, struct benv *env, struct bv *out)
{
    if (++v->depth > MAX_DEPTH) {
        v->depth--;
        return bs_error(v->e, x, "expressions nested deeper than %d", MAX_DEPTH);
    }
    int rc = eval_inner(v, x, env, out);
    v->depth--;
    return rc;
}

/* ------------------------------------------------------------------ the roots */

/* The first node of root list `key` (a node or an array of nodes), or -1 when absent. */
static int root_node(struct ev *v, struct benv *root, const char *key, int *out)
{
    *out = -1;
    struct bslot *s = find_local(root, key);
    if (!s)
        return 0;
    struct bv val;
    int rc = force(v, s->expr, root, s, &val);
    if (rc)
        return rc;
    if (val.k == BV_ARR) {
        for (size_t i = 0; i < val.arr->n; i++)
            if (val.arr->v[i].k != BV_NODE)
                return type_error(v, s->expr, key, "nodes", &val.arr->v[i]);
        if (val.arr->n > 1 && strcmp(key, "featureNodes") && strcmp(key, "labelNodes") &&
            strcmp(key, "outputNodes"))
            return bs_error(v->e, s->expr, "%s: more than one node is not supported yet", key);
        if (val.arr->n)
            *out = val.arr->v[0].node;
        return 0;
    }
    if (val.k != BV_NODE)
        return type_error(v, s->expr, key, "a node or an array of nodes", &val);
    *out = val.node;
    return 0;
}

int bs_build_graph(struct bs_tree *tree, struct nn_graph *g, struct pt_err *e)
{
    struct ev v = {.g = g, .e = e, .root = bs_tree_root(tree)};
    struct benv *root = record_env(&v, v.root, NULL, "");
    int rc = root ? 0 : e->code;
    const char *keys[] = {"featureNodes", "labelNodes", "criterionNodes", "evaluationNodes",
                          "outputNodes"};
    int roots[5] = {-1, -1, -1, -1, -1};
    for (int i = 0; rc == 0 && i < 5; i++)
        rc = root_node(&v, root, keys[i], &roots[i]);
    /* the delays' inputs, now that the definitions they close a loop over exist (an input
     * may make more delays: the list grows while it is walked) */
    for (size_t i = 0; rc == 0 && i < v.nfix; i++) {
        struct fixup f = v.fix[i];
        struct bv x;
        rc = eval(&v, f.expr, f.env, &x);
        if (rc == 0)
            rc = as_node(&v, f.expr, g->nodes[f.node].kind->name, &x);
        if (rc == 0)
            g->nodes[f.node].in[0] = x.node;
    }
    free(v.fix);
    if (rc == 0 && roots[2] < 0)
        rc = bs_error(e, v.root,
                      "the network has no criterionNodes (say criterionNodes = (ce) in the "
                      "BrainScriptNetworkBuilder block)");
    if (rc == 0 && !g->nodes[roots[2]].kind->crit)
        rc = bs_error(e, v.root, "criterionNodes: '%s' is a %s node, not a criterion",
                      g->nodes[roots[2]].name, g->nodes[roots[2]].kind->name);
    if (rc == 0 && g->nodes[roots[2]].kind->crit == BK_CRIT_CLASS_ERR + 1)
        rc = bs_error(e, v.root,
                      "criterionNodes: '%s' (ClassificationError) has no gradient to train with; "
                      "make it an evaluationNodes",
                      g->nodes[roots[2]].name);
    if (rc == 0 && roots[3] >= 0 && !g->nodes[roots[3]].kind->crit)
        rc = bs_error(e, v.root, "evaluationNodes: '%s' is a %s node, not a criterion",
                      g->nodes[roots[3]].name, g->nodes[roots[3]].kind->name);
    if (rc == 0) {
        g->crit = roots[2];
        g->eval = roots[3] >= 0 ? roots[3] : roots[2];
        g->out = roots[4] >= 0 ? roots[4] : g->nodes[g->crit].in[1];
    }
    for (int i = 0; rc == 0 && i < 2; i++) { /* before g_finish fuses nodes */
        const struct g_node *c = &g->nodes[i ? g->eval : g->crit], *y = &g->nodes[c->in[0]];
        if (!y->is_input)
            rc = pt_err_set(e, PT_EUSER,
                            "%s: error: %s: the first operand (labels) must be an Input node, "
                            "got %s",
                            c->where, c->kind->name, y->kind->name);
    }
    if (rc == 0)
        rc = g_finish(g, e);
    while (v.mem) {
        struct chunk *next = v.mem->next;
        free(v.mem);
        v.mem = next;
    }
    return rc;
}
