/* BrainScript's sources of values (bs_eval_internal.h): Parameter and ParameterTensor with
 * CNTK's initializations, Input and its kinds (SparseInput, ImageInput), Constant, and the
 * dimensions their arguments give. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nn/bs_eval_internal.h"

/* An array of dimensions: the first, the product of the others (capped just above 2^24)
 * and how many there are. */
static int dims_of(struct ev *v, const struct bs_node *at, const char *what, const struct barr *a,
                   int *first, long long *rest)
{
    *rest = 1;
    for (size_t i = 0; i < a->n; i++) {
        int d = 0;
        int rc = bse_get_int(v, at, what, &a->v[i], &d);
        if (rc)
            return rc;
        if (i == 0)
            *first = d;
        else
            *rest = *rest * d > (1 << 24) ? (1 << 24) + 1 : *rest * d;
    }
    return 0;
}

/* Input's dims: a number or an array of numbers -> rows, the product of all (a tensor's
 * values, first axis fastest, as CNTK lays them out and the reader delivers them: an
 * image's 28:28:1 is its 784 pixels), and the array's rank. */
static int get_flat_dims(struct ev *v, const struct bs_node *at, const char *what,
                         const struct bv *x, int *rows, int *rank, int tdims[3])
{
    *rank = 1;
    tdims[0] = tdims[1] = tdims[2] = 1;
    if (x->k != BV_ARR)
        return bse_get_int(v, at, what, x, rows);
    /* an image's x, y and channels (the product of the dims beyond the second) */
    for (size_t i = 0; i < x->arr->n; i++) {
        int d = 0;
        if (x->arr->v[i].k == BV_NUM && bse_get_int(v, at, what, &x->arr->v[i], &d) == 0 && d > 0)
            tdims[i < 2 ? i : 2] *= d;
    }
    int first = 0;
    long long rest = 1;
    int rc = dims_of(v, at, what, x->arr, &first, &rest);
    if (rc == 0 && first * rest > (1 << 24))
        return bs_error(v->e, at, "%s: more than 2^24 values in one sample", what);
    *rows = (int)(first * rest);
    *rank = (int)x->arr->n;
    return rc;
}

/* dims: a number or an array of numbers -> rows (the first) and cols (the product of the
 * rest, or fixed_cols when there is no rest). */
int bse_get_dims(struct ev *v, const struct bs_node *at, const char *what, const struct bv *x,
                 int *rows, int *cols)
{
    if (x->k != BV_ARR)
        return bse_get_int(v, at, what, x, rows);
    long long c = 1;
    int rc = dims_of(v, at, what, x->arr, rows, &c);
    if (rc == 0 && x->arr->n > 2 && c > 0)
        return bs_error(v->e, at, "%s: tensors of rank %zu are not supported (rank 1 or 2)", what,
                        x->arr->n);
    if (rc == 0 && x->arr->n > 1)
        *cols = (int)c;
    return rc;
}

const char *bse_get_str(const struct bv *x)
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
    {"normal", G_INIT_NORMAL},
    {"uniform1", G_INIT_UNIFORM1},
    {"TruncNormal", G_INIT_TRUNC_NORMAL},
    {"fixedValue", G_INIT_FIXED},
    {"zero", G_INIT_FIXED},
};

/* Parameter args after the dims: init, initValueScale, value, initValue, lrm. */
int bse_param_node(struct ev *v, const struct bs_node *at, struct bv *a, int rows, int cols,
                   struct bv *out)
{
    const char *init = bse_get_str(&a[0]);
    if (!init || a[1].k != BV_NUM || (a[2].k != BV_NUM && a[2].k != BV_NONE) ||
        (a[3].k != BV_NUM && a[3].k != BV_NONE) || a[4].k != BV_NUM)
        return bs_error(v->e, at,
                        "Parameter: init must be a string; initValueScale, value, "
                        "initValue and learningRateMultiplier numbers");
    if (a[4].num != 1.0 && a[4].num != 0.0)
        return bs_error(v->e, at,
                        "Parameter: learningRateMultiplier=%g is not supported yet (only 1, "
                        "or 0: not learned)",
                        a[4].num);
    int rc = bse_make_node(v, at, "Parameter", NULL, 0, out);
    if (rc)
        return rc;
    struct g_node *n = &v->g->nodes[out->node];
    n->learnable = 1;
    n->state = a[4].num == 0.0;
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
                    "glorotUniform, glorotNormal, heUniform, heNormal, normal, uniform1, "
                    "TruncNormal, fixedValue, zero)",
                    init);
}

/* CNTK's init = 'fromFile': initFromFilePath's text, a line a row of the rows x cols values,
 * into *out (column-major, malloc'd). */
static int read_values(struct ev *v, const struct bs_node *at, const char *path, int rows, int cols,
                       float **out)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return bs_error(v->e, at, "Parameter: cannot read initFromFilePath '%s'", path);
    float *d = calloc((size_t)rows * (size_t)cols, sizeof *d);
    char line[65536];
    int r = 0, lineno = 0, rc = d ? 0 : pt_err_set(v->e, PT_ENOMEM, "error: out of memory");
    while (rc == 0 && fgets(line, sizeof line, f)) {
        lineno++;
        if (!strchr(line, '\n') && !feof(f)) {
            rc = bs_error(v->e, at, "Parameter: %s:%d: a line longer than %zu bytes", path, lineno,
                          sizeof line - 1);
            break;
        }
        char *s = line + strspn(line, " \t\r\n");
        if (!*s)
            continue; /* blank lines */
        if (r == rows) {
            rc = bs_error(v->e, at,
                          "Parameter: %s:%d: more than the parameter's %d rows (a line a row)",
                          path, lineno, rows);
            break;
        }
        int c = 0;
        while (rc == 0 && *s) {
            char *end;
            double x = strtod(s, &end);
            if (end == s || (*end && !strchr(" \t\r\n", *end)))
                rc = bs_error(v->e, at, "Parameter: %s:%d: value %d is not a number", path, lineno,
                              c + 1);
            else if (c == cols)
                rc = bs_error(v->e, at, "Parameter: %s:%d: more than the parameter's %d columns",
                              path, lineno, cols);
            else
                d[(size_t)c++ * (size_t)rows + (size_t)r] = (float)x;
            s = end + strspn(end, " \t\r\n");
        }
        if (rc == 0 && c != cols)
            rc = bs_error(v->e, at, "Parameter: %s:%d: %d values, the parameter has %d columns",
                          path, lineno, c, cols);
        r++;
    }
    if (rc == 0 && ferror(f))
        rc = bs_error(v->e, at, "Parameter: cannot read initFromFilePath '%s'", path);
    if (rc == 0 && r != rows)
        rc = bs_error(v->e, at, "Parameter: %s has %d rows, the parameter %d", path, r, rows);
    fclose(f);
    if (rc) {
        free(d);
        return rc;
    }
    *out = d;
    return 0;
}

/* Parameter / LearnableParameter (dims, cols, PARAM_OPTS, initFromFilePath): a[2] init, a[3]
 * initValueScale, a[6] learningRateMultiplier, a[10] initFromFilePath. */
int bse_parameter(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                  struct bv *out)
{
    (void)name;
    int rows = 0, cols = 1;
    int rc = bse_get_dims(v, at, "Parameter rows", &a[0], &rows, &cols);
    if (rc == 0 && a[1].k != BV_NONE)
        rc = bse_get_int(v, at, "Parameter cols", &a[1], &cols);
    const char *init = bse_get_str(&a[2]), *path = bse_get_str(&a[10]);
    if (rc || !init || strcasecmp(init, "fromFile"))
        return rc ? rc : bse_param_node(v, at, a + 2, rows, cols, out);
    if (!path || !path[0])
        return bs_error(v->e, at,
                        "Parameter: init = 'fromFile' needs initFromFilePath (a text file of "
                        "the values, a line a row)");
    if (rows <= 0 || cols <= 0)
        return bs_error(v->e, at,
                        "Parameter: init = 'fromFile' needs the dimensions written (%d x %d: "
                        "none may be inferred)",
                        rows, cols);
    struct bv p[5] = {
        {.k = BV_STR, .str = "fixedValue"}, a[3], {.k = BV_NONE}, {.k = BV_NONE}, a[6]};
    if ((rc = bse_param_node(v, at, p, rows, cols, out)) != 0)
        return rc;
    struct g_node *n = &v->g->nodes[out->node];
    n->init = G_INIT_DATA;
    if (v->opts && v->opts->values_follow) /* a model file's: its values are read after */
        return 0;
    return read_values(v, at, path, rows, cols, &n->data);
}

int bse_parameter_tensor(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                         struct bv *out)
{
    int rows = 0, cols = 1;
    /* initFilterRank, initOutputRank (a[9], a[10]): the fans of the random initializations;
     * CNTK's default (0, 1: the first dimension is the output), or initOutputRank = -1 (the
     * last is: a matrix's fans swapped, as the Layers library's recurrent weights ask) */
    if (a[9].k != BV_NUM || a[9].num != 0)
        return bs_error(v->e, at, "%s: initFilterRank: only 0 is supported yet", name);
    if (a[10].k != BV_NUM || (a[10].num != 1 && a[10].num != -1))
        return bs_error(v->e, at, "%s: initOutputRank: only 1 or -1 is supported yet", name);
    if (a[0].k == BV_ARR && a[0].arr->n > 2) {
        if (a[10].num != 1)
            return bs_error(v->e, at,
                            "%s: initOutputRank = -1 of a tensor of rank 3 or more is "
                            "not supported yet",
                            name);
        return bse_param_tensor_nd(v, at, a, out);
    }
    int rc = bse_get_dims(v, at, "ParameterTensor dims", &a[0], &rows, &cols);
    if (rc == 0)
        rc = bse_param_node(v, at, a + 1, rows, cols, out);
    if (rc == 0)
        v->g->nodes[out->node].fan_swap = a[10].num == -1;
    return rc;
}

/* Input (dims, dynamicAxis, sparse, tag) as CNTK's CNTK.core.bs declares it, and
 * isSparse (an older spelling), cols (Input (rows, cols) of the legacy form; only 1):
 * a[0] dims, a[1] dynamicAxis or cols when a number, a[2] sparse, a[3] tag, a[4] isSparse.
 * The dynamic axis is derived from the input's use, so its value only has to exist. */
int bse_input(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
              struct bv *out)
{
    int rows = 0, cols = 1, rank = 1, tdims[3];
    int rc = get_flat_dims(v, at, "Input dims", &a[0], &rows, &rank, tdims);
    if (rc == 0 && a[1].k == BV_NUM)
        rc = bse_get_int(v, at, "Input cols", &a[1], &cols);
    if (rc == 0 && cols != 1)
        return bs_error(v->e, at, "%s: only vector inputs are supported (dims %d x %d)", name, rows,
                        cols);
    if (rc == 0 && rows <= 0)
        return bs_error(v->e, at, "%s: the dimension must be positive", name);
    for (int i = 2; rc == 0 && i <= 4; i += 2)
        if (a[i].k != BV_BOOL)
            return bse_type_error(v, at, i == 2 ? "Input sparse" : "Input isSparse",
                                  "true or false", &a[i]);
    if (rc == 0 && (rc = bse_make_node(v, at, "Input", NULL, 0, out)) == 0) {
        struct g_node *n = &v->g->nodes[out->node];
        n->is_input = 1;
        n->rows = rows;
        n->sparse = a[2].num != 0 || a[4].num != 0;
        n->tensor_rank = rank > 1 ? rank : 0;
        memcpy(n->tdims, tdims, sizeof n->tdims);
    }
    return rc;
}

/* SparseInput (dims, dynamicAxis, tag): Input with sparse=true (CNTK.core.bs). */
int bse_sparse_input(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                     struct bv *out)
{
    struct bv in[5] = {a[0], a[1], {.k = BV_BOOL, .num = 1}, a[2], {.k = BV_BOOL, .num = 0}};
    return bse_input(v, at, name, in, out);
}

/* ImageInput (imageWidth, imageHeight, imageChannels, imageLayout, dynamicAxis, tag): an
 * Input of dims (W:H:C), its values in the reader's order, whichever imageLayout is named
 * (only products and element-wise nodes use them: no convolution here). */
int bse_image_input(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                    struct bv *out)
{
    struct barr *dims = bse_alloc(v, sizeof *dims);
    if (!dims || !(dims->v = bse_alloc(v, 3 * sizeof *dims->v)))
        return v->e->code;
    dims->n = 3;
    for (int i = 0; i < 3; i++)
        dims->v[i] = a[i];
    const char *layout = bse_get_str(&a[3]);
    if (!layout)
        return bse_type_error(v, at, "ImageInput imageLayout", "a string", &a[3]);
    int channels = 0;
    if (!strcasecmp(layout, "HWC") &&
        bse_get_int(v, at, "ImageInput imageChannels", &a[2], &channels) == 0 && channels != 1)
        return bs_error(v->e, at,
                        "ImageInput: imageLayout='HWC' (the channels innermost, NDL's default) "
                        "is not supported for images of %d channels: partrain reads images in "
                        "CNTK's cudnn (CHW) layout; write imageLayout=\"cudnn\"",
                        channels);
    struct bv in[5] = {
        {.k = BV_ARR, .arr = dims}, a[4], {.k = BV_BOOL, .num = 0}, a[5], {.k = BV_BOOL, .num = 0}};
    return bse_input(v, at, name, in, out);
}

int bse_constant(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                 struct bv *out)
{
    int rows = 0, cols = 1, rc = 0, d[3] = {0, 0, 0};
    if (a[0].k != BV_NUM)
        return bse_type_error(v, at, name, "a number", &a[0]);
    int rank3 = a[1].k == BV_ARR && a[1].arr->n == 3;
    for (int i = 0; rank3 && rc == 0 && i < 3; i++) /* a tensor's values in one column */
        rc = bse_get_int(v, at, name, &a[1].arr->v[i], &d[i]);
    if (rc == 0 && rank3 &&
        (d[0] < 1 || d[1] < 1 || d[2] < 1 || (long long)d[0] * d[1] * d[2] > (1 << 24)))
        return bs_error(v->e, at, "%s: a tensor of rank 3 needs dimensions of 1 or more", name);
    if (rank3)
        rows = d[0] * d[1] * d[2];
    else if (a[1].k != BV_NONE)
        rc = bse_get_dims(v, at, name, &a[1], &rows, &cols);
    if (rc == 0 && a[2].k != BV_NONE && strcmp(name, "ConstantTensor")) /* its third: tag */
        rc = bse_get_int(v, at, name, &a[2], &cols);
    if (rc == 0 && (rc = bse_make_node(v, at, "Constant", NULL, 0, out)) == 0) {
        struct g_node *n = &v->g->nodes[out->node];
        n->is_const = 1;
        n->rows = rows;
        n->cols = cols;
        n->init_value = a[0].num;
        if (rank3) {
            n->tensor_rank = 3;
            memcpy(n->tdims, d, sizeof n->tdims);
        }
    }
    return rc;
}
