/* The Layers library of CNTK's BrainScript (CNTK.core.bs's Layers): DenseLayer,
 * LinearLayer, EmbeddingLayer, RecurrentLSTMLayer and BiRecurrentLSTMLayer, DelayLayer,
 * Sequential and Parallel; each a function value with its own parameters (bs_eval_internal.h,
 * rows of builtins[] in bs_builtins.c). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/bs_eval_internal.h"

/* A layer's output dimension (outDim, outputDim): one positive dimension. */
static int out_dim(struct ev *v, const struct bs_node *at, const char *name, const char *what,
                   const struct bv *x, int *n)
{
    int cols = 1;
    int rc = bse_get_dims(v, at, name, x, n, &cols);
    if (rc == 0 && (cols != 1 || *n <= 0))
        rc = bs_error(v->e, at, "%s: %s must be one positive dimension", name, what);
    return rc;
}

int bse_layer_params(struct ev *v, const struct bs_node *at, const struct bv *init, int rows,
                     int cols, int bias, const struct bv *init_bias, struct bv *w, struct bv *b)
{
    struct bv pa[5] = {init[0], init[1], {.k = BV_NONE}, {.k = BV_NONE}, {.k = BV_NUM, .num = 1}};
    *b = (struct bv){.k = BV_NONE};
    int rc = bse_param_node(v, at, pa, rows, cols, w);
    if (rc || !bias)
        return rc;
    struct bv pb[5] = {{.k = BV_STR, .str = "fixedValue"},
                       {.k = BV_NUM, .num = 1},
                       {.k = BV_NONE},
                       *init_bias,
                       {.k = BV_NUM, .num = 1}};
    return bse_param_node(v, at, pb, rows ? rows : cols, 1, b);
}

/* LinearLayer / DenseLayer {outDim, bias, [activation,] init, initValueScale, initBias}:
 * a function with its own W (outDim x Inferred) and b (outDim). */
int bse_linear(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
               struct bv *out)
{
    int dense = !strcmp(name, "DenseLayer"), rows = 0;
    struct bv *opt = a + 1 + dense; /* bias, init, initValueScale, initBias after activation */
    int rc = out_dim(v, at, name, "outDim", &a[0], &rows);
    if (rc)
        return rc;
    if (a[1].k != BV_BOOL || (dense && a[2].k != BV_FN && a[2].k != BV_NONE))
        return bs_error(v->e, at, "%s: bias must be a boolean%s", name,
                        dense ? " and activation a function" : "");
    struct bv w, b;
    if ((rc = bse_layer_params(v, at, opt + 1, rows, 0, a[1].num != 0, &opt[3], &w, &b)) != 0)
        return rc;
    struct bfn *f = bse_alloc(v, sizeof *f);
    if (!f)
        return v->e->code;
    bse_name_new(v, w.node, "W"); /* CNTK's names inside the layer: W, b */
    if (b.k == BV_NODE)
        bse_name_new(v, b.node, "b");
    f->k = FN_LINEAR;
    f->w = w.node;
    f->b = b.k == BV_NODE ? b.node : -1;
    f->act = dense ? a[2] : (struct bv){.k = BV_NONE};
    *out = (struct bv){.k = BV_FN, .fn = f};
    return 0;
}

/* A matrix from a text file, one row a line, numbers separated by blanks, blank lines
 * skipped (CNTK's initFromFilePath format): *out (row-major, malloc'ed) of *nrows x *ncols.
 * Errors name the BrainScript position and the file's line. */
static int read_matrix(struct ev *v, const struct bs_node *at, const char *what, const char *path,
                       size_t *nrows, size_t *ncols, float **out)
{
    enum { MAX_VALUES = 1 << 26 };
    FILE *f = fopen(path, "r");
    if (!f)
        return bs_error(v->e, at, "%s: cannot read '%s': %s", what, path, strerror(errno));
    char *line = NULL;
    size_t cap = 0, n = 0, room = 0, lineno = 0;
    float *m = NULL;
    int rc = 0;
    *nrows = *ncols = 0;
    while (rc == 0 && getline(&line, &cap, f) >= 0) {
        lineno++;
        size_t count = 0;
        for (char *p = line;;) {
            while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
                p++;
            if (!*p)
                break;
            char *end;
            float x = strtof(p, &end);
            if (end == p || (*end && *end != ' ' && *end != '\t' && *end != '\r' && *end != '\n') ||
                !isfinite(x)) {
                rc = bs_error(v->e, at, "%s: %s:%zu: expected a finite number, found '%.20s'", what,
                              path, lineno, p);
                break;
            }
            if (n == room) {
                room = room ? 2 * room : 4096;
                float *grown = room <= MAX_VALUES ? realloc(m, room * sizeof *m) : NULL;
                if (!grown) {
                    rc = bs_error(v->e, at, "%s: %s holds more than %d values", what, path,
                                  MAX_VALUES);
                    break;
                }
                m = grown;
            }
            m[n++] = x;
            count++;
            p = end;
        }
        if (rc || count == 0)
            continue;
        if (*nrows && count != *ncols)
            rc = bs_error(v->e, at, "%s: %s:%zu: %zu numbers, the lines before %zu", what, path,
                          lineno, count, *ncols);
        *ncols = count;
        ++*nrows;
    }
    if (rc == 0 && ferror(f))
        rc = bs_error(v->e, at, "%s: cannot read '%s': %s", what, path, strerror(errno));
    if (rc == 0 && *nrows == 0)
        rc = bs_error(v->e, at, "%s: %s holds no numbers", what, path);
    free(line);
    fclose(f);
    if (rc)
        free(m);
    *out = rc ? NULL : m;
    return rc;
}

/* EmbeddingLayer's E from embeddingPath, fixed (CNTK: learningRateMultiplier 0): the file
 * holds E (outDim lines), or with transpose its transpose, a word's vector a line (CNTK's
 * TransposeTimes (E, x)); either way the Constant E (outDim x words) of Times (E, x). */
static int embedding_from_file(struct ev *v, const struct bs_node *at, const char *name, int outdim,
                               const char *path, int transpose, struct bv *w)
{
    size_t nr = 0, nc = 0;
    float *m = NULL;
    int rc = read_matrix(v, at, name, path, &nr, &nc, &m);
    if (rc)
        return rc;
    size_t dim = transpose ? nc : nr, words = transpose ? nr : nc;
    if (dim != (size_t)outdim || words > (1 << 24)) {
        free(m);
        return bs_error(v->e, at, "%s: %s holds %zu x %zu numbers; outDim %d wants %s", name, path,
                        nr, nc, outdim,
                        transpose ? "a line per word of outDim numbers (transpose=true)"
                                  : "outDim lines (transpose=false)");
    }
    float *e = transpose ? m : malloc(nr * nc * sizeof *e);
    if (!e) {
        free(m);
        return pt_err_set(v->e, PT_ENOMEM, "error: out of memory");
    }
    for (size_t i = 0; !transpose && i < nr; i++) /* row-major lines to column-major E */
        for (size_t j = 0; j < nc; j++)
            e[i + j * nr] = m[i * nc + j];
    if (!transpose)
        free(m);
    if ((rc = bse_make_node(v, at, "Constant", NULL, 0, w)) != 0) {
        free(e);
        return rc;
    }
    struct g_node *n = &v->g->nodes[w->node];
    n->is_const = 1;
    n->rows = outdim;
    n->cols = (int)words;
    n->data = e;
    return 0;
}

/* EmbeddingLayer {outDim, init, initValueScale, embeddingPath, transpose}: Times (E, x)
 * with E (outDim x Inferred) learned, no bias; or E from embeddingPath, fixed. */
int bse_embedding(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                  struct bv *out)
{
    int rows = 0;
    int rc = out_dim(v, at, name, "outDim", &a[0], &rows);
    if (rc)
        return rc;
    const char *path = bse_get_str(&a[3]);
    if (!path || a[4].k != BV_BOOL)
        return bs_error(v->e, at, "%s: embeddingPath must be a string and transpose a boolean",
                        name);
    if (!path[0] && a[4].num != 0)
        return bs_error(v->e, at,
                        "%s: transpose=true without embeddingPath (a learned transposed "
                        "embedding) is not supported yet",
                        name);
    struct bv pa[5] = {a[1], a[2], {.k = BV_NONE}, {.k = BV_NONE}, {.k = BV_NUM, .num = 1}}, w;
    rc = path[0] ? embedding_from_file(v, at, name, rows, path, a[4].num != 0, &w)
                 : bse_param_node(v, at, pa, rows, 0, &w);
    struct bfn *f = rc == 0 ? bse_alloc(v, sizeof *f) : NULL;
    if (!f)
        return rc ? rc : v->e->code;
    bse_name_new(v, w.node, "E");
    f->k = FN_LINEAR;
    f->w = w.node;
    f->b = -1;
    f->act = (struct bv){.k = BV_NONE};
    *out = (struct bv){.k = BV_FN, .fn = f};
    return 0;
}

/* RecurrentLSTMLayer {outputDim, cellShape, goBackwards, usePeepholes, init, initValueScale,
 * enableSelfStabilization, allowOptimizedEngine, trainInitialState}: W (4H x Inferred), H
 * (4H x H) with init, b (4H) zero, peepholes (H x 3) learned with init when usePeepholes,
 * else zero. A cellShape other than outputDim (a projection), enableSelfStabilization or
 * trainInitialState is CNTK's LSTMBlock in BrainScript, node by node. */
int bse_lstm(struct ev *v, const struct bs_node *at, const char *name, struct bv *a, struct bv *out)
{
    int h = 0;
    int rc = out_dim(v, at, name, "outputDim", &a[0], &h);
    if (rc)
        return rc;
    /* a cellShape equal to outputDim is the plain LSTM (CNTK's own tests write it so) */
    int cell = h, ccols = 1;
    if (a[1].k != BV_NONE && (rc = bse_get_dims(v, at, name, &a[1], &cell, &ccols)) != 0)
        return rc;
    if (ccols != 1)
        return bs_error(v->e, at, "%s: cellShape must be one dimension, got %d x %d", name, cell,
                        ccols);
    if (a[2].k != BV_BOOL || a[3].k != BV_BOOL || a[6].k != BV_BOOL || a[8].k != BV_BOOL)
        return bs_error(v->e, at,
                        "%s: goBackwards, usePeepholes, enableSelfStabilization and "
                        "trainInitialState must be booleans",
                        name);
    if (cell != h || a[6].num != 0 || a[8].num != 0) {
        /* a projection, self-stabilizers or a trained initial state: CNTK's LSTMBlock,
         * written in BrainScript (bs_prelude.c) */
        struct bslot *s = bse_find_local(v->prelude, "_LSTMProjLayer");
        struct bv fn, args[8] = {{.k = BV_NUM, .num = h},
                                 {.k = BV_NUM, .num = cell},
                                 a[2],
                                 a[3],
                                 a[4],
                                 a[5],
                                 a[6],
                                 a[8]};
        if (!s)
            return pt_err_set(v->e, PT_EINTERNAL, "%s: internal: no _LSTMProjLayer", name);
        rc = bse_force(v, at, v->prelude, s, &fn);
        return rc ? rc : bse_call(v, at, &fn, args, 8, NULL, NULL, 0, out);
    }
    struct bv pw[5] = {a[4], a[5], {.k = BV_NONE}, {.k = BV_NONE}, {.k = BV_NUM, .num = 1}};
    struct bv pb[5] = {{.k = BV_STR, .str = "fixedValue"},
                       {.k = BV_NUM, .num = 1},
                       {.k = BV_NONE},
                       {.k = BV_NUM, .num = 0},
                       {.k = BV_NUM, .num = 1}};
    struct bv w, hm, b, p;
    if ((rc = bse_param_node(v, at, pw, 4 * h, 0, &w)) != 0 ||
        (rc = bse_param_node(v, at, pw, 4 * h, h, &hm)) != 0 ||
        (rc = bse_param_node(v, at, pb, 4 * h, 1, &b)) != 0)
        return rc;
    if (a[3].num != 0)
        rc = bse_param_node(v, at, pw, h, 3, &p);
    else if ((rc = bse_make_node(v, at, "Constant", NULL, 0, &p)) == 0) {
        struct g_node *c = &v->g->nodes[p.node];
        c->is_const = 1;
        c->rows = h;
        c->cols = 3;
    }
    struct bfn *f = rc ? NULL : bse_alloc(v, sizeof *f);
    if (!f)
        return rc ? rc : v->e->code;
    bse_name_new(v, w.node, "W");
    bse_name_new(v, hm.node, "H");
    bse_name_new(v, b.node, "b");
    bse_name_new(v, p.node, "peep");
    f->k = FN_LSTM;
    f->w = w.node;
    f->hm = hm.node;
    f->b = b.node;
    f->peep = p.node;
    f->reverse = a[2].num != 0;
    *out = (struct bv){.k = BV_FN, .fn = f};
    return 0;
}

/* DelayLayer {T, defaultHiddenActivation}: x delayed T steps (T < 0: ahead; 0: x). */
int bse_delay_layer(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                    struct bv *out)
{
    if (a[0].k != BV_NUM || a[0].num != floor(a[0].num) || fabs(a[0].num) > 1e6 || a[1].k != BV_NUM)
        return bs_error(v->e, at, "%s: T must be a whole number, defaultHiddenActivation a number",
                        name);
    struct bfn *f = bse_alloc(v, sizeof *f);
    if (!f)
        return v->e->code;
    f->k = FN_DELAY;
    f->delay = (int)a[0].num;
    f->dflt = a[1].num;
    *out = (struct bv){.k = BV_FN, .fn = f};
    return 0;
}

/* BiRecurrentLSTMLayer {outputDim, ...}: Parallel ((RecurrentLSTMLayer {outputDim, ...} :
 * RecurrentLSTMLayer {outputDim, goBackwards=true, ...}), Splice): both directions' states
 * one under the other (2 outputDim rows). */
int bse_bilstm(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
               struct bv *out)
{
    struct bv args[9], dirs[2];
    memcpy(args, a, sizeof args);
    int rc = 0;
    for (int d = 0; rc == 0 && d < 2; d++) {
        args[2] = (struct bv){.k = BV_BOOL, .num = d};
        rc = bse_lstm(v, at, name, args, &dirs[d]);
    }
    struct barr *arr = rc ? NULL : bse_alloc(v, sizeof *arr);
    if (!arr || !(arr->v = bse_alloc(v, 2 * sizeof *arr->v)))
        return rc ? rc : v->e->code;
    arr->n = 2;
    arr->v[0] = dirs[0];
    arr->v[1] = dirs[1];
    struct bv pa[2] = {{.k = BV_ARR, .arr = arr}, bse_builtin_value(v, "Splice")};
    return pa[1].k == BV_FN ? bse_parallel(v, at, name, pa, out) : v->e->code;
}

/* Parallel (functions, combine): x => combine (f (x) : g (x) : ...) (CNTK.core.bs) */
int bse_parallel(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                 struct bv *out)
{
    if (a[0].k != BV_ARR || a[1].k != BV_FN)
        return bs_error(v->e, at, "%s: expected an array of functions and a combining function",
                        name);
    for (size_t i = 0; i < a[0].arr->n; i++)
        if (a[0].arr->v[i].k != BV_FN)
            return bse_type_error(v, at, name, "an array of functions", &a[0].arr->v[i]);
    struct bfn *f = bse_alloc(v, sizeof *f);
    if (!f)
        return v->e->code;
    f->k = FN_PARALLEL;
    f->seq = a[0].arr;
    f->join = a[1];
    *out = (struct bv){.k = BV_FN, .fn = f};
    return 0;
}

int bse_sequential(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                   struct bv *out)
{
    struct barr *arr = a[0].k == BV_ARR ? a[0].arr : NULL;
    if (!arr) {
        if (a[0].k != BV_FN)
            return bse_type_error(v, at, name, "an array of functions (f : g : h)", &a[0]);
        *out = a[0];
        return 0;
    }
    for (size_t i = 0; i < arr->n; i++)
        if (arr->v[i].k != BV_FN)
            return bse_type_error(v, at, name, "an array of functions (f : g : h)", &arr->v[i]);
    struct bfn *f = bse_alloc(v, sizeof *f);
    if (!f)
        return v->e->code;
    f->k = FN_SEQ;
    f->seq = arr;
    *out = (struct bv){.k = BV_FN, .fn = f};
    return 0;
}

/* OptimizedRNNStack (weights, input, hiddenDims, numLayers, bidirectional, recurrentOp,
 * axis): CNTK's cuDNN RNN stack (cuDNN only in CNTK), built as numLayers LSTMs of hiddenDims
 * cells (no peepholes, as cuDNN's), each layer reading the one before, bidirectional: a
 * forward and a backward LSTM per layer, their states spliced (2 hiddenDims rows). cuDNN
 * keeps every weight in the one tensor `weights` (its layout, and two biases per gate);
 * here each layer and direction has its W, H and b (one bias per gate), drawn as `weights`
 * says (its init and initValueScale), and `weights` itself is no parameter of the network.
 * recurrentOp 'lstm' only (cuDNN's 'gru', 'rnnTanh' and 'rnnReLU' are refused). */
int bse_rnn_stack(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                  struct bv *out)
{
    if (a[0].k != BV_NODE || !v->g->nodes[a[0].node].learnable)
        return bs_error(v->e, at, "%s: weights must be a parameter (ParameterTensor {0:0, ...})",
                        name);
    int h = 0, layers = 0;
    int rc = out_dim(v, at, name, "hiddenDims", &a[2], &h);
    if (rc == 0)
        rc = bse_get_int(v, at, "numLayers", &a[3], &layers);
    if (rc)
        return rc;
    if (layers < 1 || layers > 64)
        return bs_error(v->e, at, "%s: numLayers = %d: expected 1 to 64", name, layers);
    if (a[4].k != BV_BOOL)
        return bse_type_error(v, at, "bidirectional", "a boolean", &a[4]);
    const char *op = bse_get_str(&a[5]);
    if (!op || strcmp(op, "lstm"))
        return bs_error(v->e, at,
                        "%s: recurrentOp = '%s' is not supported yet: only 'lstm' (cuDNN's gru, "
                        "rnnTanh and rnnReLU are not built)",
                        name, op ? op : "?");
    if (a[6].k != BV_NUM || a[6].num != -1)
        return bs_error(v->e, at, "%s: axis: only the sequence axis (-1) is supported", name);
    int wnode = a[0].node, dirs = a[4].num != 0 ? 2 : 1;
    struct bv x = a[1];
    if ((rc = bse_as_node(v, at, "input", &x)) != 0)
        return rc;
    for (int l = 0; l < layers; l++) {
        struct bv y[2];
        for (int d = 0; d < dirs; d++) {
            /* RecurrentLSTMLayer's arguments: outputDim, cellShape, goBackwards,
             * usePeepholes, init, initValueScale, enableSelfStabilization,
             * allowOptimizedEngine, trainInitialState */
            struct bv args[9] = {{.k = BV_NUM, .num = h},         {.k = BV_NONE},
                                 {.k = BV_BOOL, .num = d},        {.k = BV_BOOL, .num = 0},
                                 {.k = BV_STR, .str = "uniform"}, {.k = BV_NUM, .num = 1},
                                 {.k = BV_BOOL, .num = 0},        {.k = BV_BOOL, .num = 1},
                                 {.k = BV_BOOL, .num = 0}},
                      fn;
            if ((rc = bse_lstm(v, at, name, args, &fn)) != 0 ||
                (rc = bse_apply1(v, at, &fn, x, &y[d])) != 0)
                return rc;
            const int made[4] = {fn.fn->w, fn.fn->hm, fn.fn->b, fn.fn->peep};
            static const char *const part[4] = {"W", "H", "b", "peep"};
            for (int k = 0; k < 4; k++) { /* weights.l0.W, weights.l0.back.W, ... */
                struct g_node *n = &v->g->nodes[made[k]];
                char m[32];
                snprintf(m, sizeof m, "rnn.l%d%s.%s", l % 100, d ? ".back" : "", part[k]);
                n->name[0] = '\0';
                if (v->g->nodes[wnode].name[0])
                    snprintf(n->name, sizeof n->name, "%.38s%.24s", v->g->nodes[wnode].name, m + 3);
                else
                    bse_name_new(v, made[k], m + 4);
                if (k < 2) { /* as weights says */
                    n->init = v->g->nodes[wnode].init;
                    n->init_scale = v->g->nodes[wnode].init_scale;
                }
            }
        }
        if (dirs == 1) {
            x = y[0];
            continue;
        }
        struct barr *arr = bse_alloc(v, sizeof *arr);
        if (!arr || !(arr->v = bse_alloc(v, 2 * sizeof *arr->v)))
            return v->e->code;
        arr->n = 2;
        arr->v[0] = y[0];
        arr->v[1] = y[1];
        struct bv splice = bse_builtin_value(v, "Splice");
        if (splice.k != BV_FN)
            return v->e->code;
        if ((rc = bse_apply1(v, at, &splice, (struct bv){.k = BV_ARR, .arr = arr}, &x)) != 0)
            return rc;
    }
    /* cuDNN's one tensor is not made: nothing reads it here */
    g_retire(&v->g->nodes[wnode]);
    *out = x;
    return 0;
}

/* RNNStack (x, W, hiddenSize, numLayers, bidirectional, rnnMode): CNTK's legacy name, which
 * CNTK.core.bs defines as OptimizedRNNStack (W, x, hiddenSize, numLayers = 1, bidirectional
 * = false, recurrentOp = rnnMode), numLayers and bidirectional not passed on. */
int bse_rnn_stack_legacy(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                         struct bv *out)
{
    struct bv args[8] = {a[1],
                         a[0],
                         a[2],
                         {.k = BV_NUM, .num = 1},
                         {.k = BV_BOOL, .num = 0},
                         a[5],
                         {.k = BV_NUM, .num = -1},
                         a[6]};
    return bse_rnn_stack(v, at, name, args, out);
}
