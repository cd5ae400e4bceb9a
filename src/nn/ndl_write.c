/* NDL's expressions and members written out as BrainScript (ndl_internal.h; ndl.c reads
 * and gathers them): NDL's functions and argument forms as BrainScript's built-ins, macros
 * through BS.NDL.Return, names in the spelling of their first definition, operators with
 * only the parentheses their precedence needs. */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nn/bs_eval_internal.h"
#include "nn/ndl_internal.h"

void ndl_put(struct out *o, const char *fmt, ...)
{
    if (o->oom)
        return;
    va_list ap;
    va_start(ap, fmt);
    int need = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (o->n + (size_t)need + 1 > o->cap) {
        size_t cap = (o->cap ? o->cap * 2 : 4096) + (size_t)need;
        char *p = realloc(o->p, cap);
        if (!p) {
            o->oom = 1;
            return;
        }
        o->p = p;
        o->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(o->p + o->n, o->cap - o->n, fmt, ap);
    va_end(ap);
    o->n += (size_t)need;
}

/* NDL's function names (any case) and BrainScript's for them. */
static const struct {
    const char *ndl, *bs;
} fn_names[] = {
    {"InputValue", "Input"},
    {"Input", "Input"},
    {"SparseInputValue", "SparseInput"},
    {"SparseInput", "SparseInput"},
    {"ImageInput", "ImageInput"},
    {"LearnableParameter", "LearnableParameter"},
    {"Parameter", "LearnableParameter"},
    {"ImageParameter", "ImageParameter"},
    {"Constant", "Constant"},
    {"Const", "Constant"},
    {"CEWithSM", "CrossEntropyWithSoftmax"},
    {"CrossEntropyWithSoftmax", "CrossEntropyWithSoftmax"},
    {"ErrorPrediction", "ClassificationError"},
    {"ClassificationError", "ClassificationError"},
    {"CBCEWithSM", "ClassBasedCrossEntropyWithSoftmax"},
    {"ClassBasedCrossEntropyWithSoftmax", "ClassBasedCrossEntropyWithSoftmax"},
    {"PerDimMVNorm", "BS.NDL.PerDimMeanVarNormalization"}, /* one node, as CNTK's NDL */
    {"PerDimMeanVarNormalization", "BS.NDL.PerDimMeanVarNormalization"},
    {"Delay", "PastValue"},
    {"PastValue", "PastValue"},
    {"FutureValue", "FutureValue"},
    {"Convolve", "Convolution"},
    {"Convolution", "Convolution"},
    {"RectifiedLinear", "RectifiedLinear"},
    {"SE", "SquareError"},
    {"LookupTable", "Times"}, /* an embedding of one-hot (or sparse) input: E x */
};

static const char *const special[][2] = {
    {"FeatureNodes", "featureNodes"},     {"LabelNodes", "labelNodes"},
    {"CriterionNodes", "criterionNodes"}, {"CriteriaNodes", "criterionNodes"},
    {"EvalNodes", "evaluationNodes"},     {"EvaluationNodes", "evaluationNodes"},
    {"OutputNodes", "outputNodes"},
};

static const char *const inits[] = {"uniform",  "gaussian", "fixedValue", "heNormal",
                                    "fromFile", "bilinear", "zero"};

/* The BrainScript name of NDL function `name`, or NULL when it is not one of NDL's own. */
static const char *ndl_function(const char *name)
{
    for (size_t i = 0; i < sizeof fn_names / sizeof fn_names[0]; i++)
        if (!strcasecmp(fn_names[i].ndl, name))
            return fn_names[i].bs;
    return NULL;
}

/* ------------------------------------------------------------------ writing */

static void expr(struct ndl *d, struct out *o, const struct bs_node *x);
static void tight(struct ndl *d, struct out *o, const struct bs_node *x, int level);

static void at(struct out *o, const struct bs_node *x)
{
    ndl_put(o, "\n#@at %d %d %s\n", x->line > 0 ? x->line : 1, x->col > 0 ? x->col : 1,
            x->file ? x->file : "<ndl>");
}

static void number(struct out *o, double v)
{
    if (isinf(v)) /* a literal beyond a double's range (1e999): the same again */
        ndl_put(o, v < 0 ? "(-1e999)" : "1e999");
    else if (v > -1e15 && v < 1e15 && v == (double)(long long)v)
        ndl_put(o, v < 0 ? "(%lld)" : "%lld", (long long)v);
    else
        ndl_put(o, v < 0 ? "(%.17g)" : "%.17g", v);
}

static void string(struct out *o, const char *s)
{
    char q = strchr(s, '\'') ? '"' : '\'';
    ndl_put(o, "%c%s%c", q, s, q);
}

static int is_number(const char *s, double *v)
{
    char *end;
    if (!*s || isspace((unsigned char)*s))
        return 0;
    *v = strtod(s, &end);
    return *end == '\0';
}

/* A named argument's value: a bare word that names nothing is a string; a string that
 * holds a number or a boolean is one (NDL's optional parameters are text). */
static void named_value(struct ndl *d, struct out *o, const char *name, const struct bs_node *x)
{
    double v;
    if (!strcasecmp(name, "tag") &&
        (x->kind == BS_STR || (x->kind == BS_ID && ndl_names_find(&d->defined, x->str) < 0))) {
        char t[64]; /* NDL's tags have no case (tag=Criteria) */
        size_t i = 0;
        for (; x->str[i] && i + 1 < sizeof t; i++)
            t[i] = (char)tolower((unsigned char)x->str[i]);
        t[i] = '\0';
        string(o, t);
        return;
    }
    if (x->kind == BS_ID && ndl_names_find(&d->defined, x->str) < 0) {
        const char *s = x->str;
        for (size_t i = 0; !strcasecmp(name, "init") && i < sizeof inits / sizeof inits[0]; i++)
            if (!strcasecmp(s, inits[i]))
                s = inits[i];
        string(o, s);
        return;
    }
    if (x->kind == BS_STR && strcasecmp(name, "tag")) {
        if (is_number(x->str, &v)) {
            number(o, v);
            return;
        }
        if (!strcasecmp(x->str, "true") || !strcasecmp(x->str, "false")) {
            ndl_put(o, "%s", tolower((unsigned char)x->str[0]) == 't' ? "true" : "false");
            return;
        }
        if (!strcasecmp(name, "init"))
            for (size_t i = 0; i < sizeof inits / sizeof inits[0]; i++)
                if (!strcasecmp(x->str, inits[i])) {
                    string(o, inits[i]);
                    return;
                }
    }
    expr(d, o, x);
}

/* Call c's last named argument `name` (any case; a BS_DEF), or NULL. */
static const struct bs_node *named_of(const struct bs_node *c, const char *name)
{
    const struct bs_node *found = NULL;
    for (size_t i = 0; i < c->nitems; i++)
        if (c->items[i]->kind == BS_DEF && !strcasecmp(c->items[i]->str, name))
            found = c->items[i];
    return found;
}

/* The call's arguments split: positional ones into pos[], named ones into nam[]. */
static void split_args(const struct bs_node *c, const struct bs_node **pos, size_t *npos,
                       const struct bs_node **nam, size_t *nnam)
{
    *npos = *nnam = 0;
    for (size_t i = 0; i < c->nitems && i < 32; i++) {
        if (c->items[i]->kind == BS_DEF)
            nam[(*nnam)++] = c->items[i];
        else
            pos[(*npos)++] = c->items[i];
    }
}

static int is_false(const struct bs_node *x)
{
    return (x->kind == BS_BOOL && x->num == 0) ||
           ((x->kind == BS_STR || x->kind == BS_ID) && !strcasecmp(x->str, "false")) ||
           (x->kind == BS_NUM && x->num == 0);
}

static int all_true(const struct bs_node *x)
{
    if (x->kind == BS_ARRAY) {
        for (size_t i = 0; i < x->nitems; i++)
            if (!all_true(x->items[i]))
                return 0;
        return 1;
    }
    return (x->kind == BS_BOOL && x->num != 0) ||
           ((x->kind == BS_STR || x->kind == BS_ID) && !strcasecmp(x->str, "true"));
}

/* An array: a : b : c from two items on, as NDL's a : b nests no deeper than its items (in
 * [| a ; b |] each item is one level deeper, and the parser's limit is 200); [| a |] or
 * [| |] below. */
static void array_of(struct ndl *d, struct out *o, const struct bs_node *const *v, size_t n)
{
    if (n < 2) {
        ndl_put(o, "[| ");
        if (n)
            expr(d, o, v[0]);
        ndl_put(o, " |]");
        return;
    }
    for (size_t i = 0; i < n; i++) {
        ndl_put(o, "%s", i ? " : " : "");
        tight(d, o, v[i], 1);
    }
}

/* A named argument as written, renamed (NULL: as it is). */
static void named_arg(struct ndl *d, struct out *o, int *first, const struct bs_node *a,
                      const char *rename)
{
    ndl_put(o, "%s%s = ", *first ? "" : ", ", rename ? rename : a->str);
    *first = 0;
    named_value(d, o, a->str, a->a);
}

/* A call of one of NDL's functions, as BrainScript's. */
static void ndl_call(struct ndl *d, struct out *o, const struct bs_node *c, const char *fn)
{
    const struct bs_node *pos[32], *nam[32];
    size_t np, nn;
    if (!fn)
        return;
    split_args(c, pos, &np, nam, &nn);
    int first = 1, has_layout = 0;
    const char *callee = fn;
    if (!strcmp(fn, "ImageParameter"))
        callee = np == 3 ? "ParameterTensor" : "LearnableParameter";
    ndl_put(o, "%s (", callee);
    if (!strcmp(fn, "Input") || !strcmp(fn, "SparseInput") || !strcmp(fn, "LearnableParameter")) {
        /* NDL's dims are every positional argument */
        if (np > 2 || (np == 2 && strcmp(fn, "LearnableParameter")))
            array_of(d, o, pos, np);
        else
            for (size_t i = 0; i < np; i++) {
                ndl_put(o, "%s", i ? ", " : "");
                expr(d, o, pos[i]);
            }
        first = np == 0;
    } else if (!strcmp(fn, "ImageParameter")) {
        if (np == 4) { /* (outDim, W, H, C): a matrix over the image's values */
            expr(d, o, pos[0]);
            ndl_put(o, ", (");
            for (size_t i = 1; i < 4; i++) {
                ndl_put(o, "%s", i > 1 ? " * " : "");
                tight(d, o, pos[i], 6);
            }
            ndl_put(o, ")");
        } else
            array_of(d, o, pos, np);
        first = 0;
    } else if (!strcmp(fn, "Convolution") && np == 7) {
        /* the 2D form: (W, x, kW, kH, outMap, hStride, vStride), zeroPadding= */
        expr(d, o, pos[0]);
        ndl_put(o, ", ");
        expr(d, o, pos[1]);
        ndl_put(o, ", ");
        array_of(d, o, pos + 2, 2);
        ndl_put(o, ", mapDims = ");
        expr(d, o, pos[4]);
        ndl_put(o, ", stride = ");
        array_of(d, o, pos + 5, 2);
        ndl_put(o, ", autoPadding = ");
        first = 0;
        const struct bs_node *pad = named_of(c, "zeroPadding"); /* the last, if repeated */
        if (pad)
            named_value(d, o, "zeroPadding", pad->a);
        else
            ndl_put(o, "false");
    } else if (!strcmp(fn, "ClassificationError") && np == 3) {
        expr(d, o, pos[0]);
        ndl_put(o, ", ");
        expr(d, o, pos[1]);
        ndl_put(o, ", topN = ");
        const struct bs_node *n = pos[2];
        if (n->kind == BS_CALL && n->a->kind == BS_ID && n->nitems >= 1 &&
            n->items[0]->kind != BS_DEF &&
            (!strcasecmp(n->a->str, "Const") || !strcasecmp(n->a->str, "Constant")))
            n = n->items[0];
        expr(d, o, n);
        first = 0;
    } else if ((!strcmp(fn, "PastValue") || !strcmp(fn, "FutureValue")) && np == 3) {
        expr(d, o, pos[0]); /* (rows, cols, x): cols is unused */
        ndl_put(o, ", ");
        expr(d, o, pos[2]);
        first = 0;
    } else if (!strcmp(fn, "RowStack")) {
        array_of(d, o, pos, np);
        first = 0;
    } else {
        for (size_t i = 0; i < np; i++) {
            ndl_put(o, "%s", i ? ", " : "");
            expr(d, o, pos[i]);
        }
        first = np == 0;
    }
    for (size_t i = 0; i < nn; i++) {
        const char *k = nam[i]->str;
        has_layout |= !strcasecmp(k, "imageLayout");
        if (!strcasecmp(k, "needGradient") || !strcasecmp(k, "needsGradient") ||
            !strcasecmp(k, "computeGradient")) {
            if (is_false(nam[i]->a)) {
                ndl_put(o, "%slearningRateMultiplier = 0", first ? "" : ", ");
                first = 0;
            }
        } else if (!strcmp(fn, "Convolution") && np == 7 && !strcasecmp(k, "zeroPadding")) {
            continue;
        } else if (!strcmp(fn, "Convolution") && !strcasecmp(k, "sharing") && all_true(nam[i]->a)) {
            continue; /* CNTK's default, written per axis */
        } else if (!strcmp(fn, "Convolution") && !strcasecmp(k, "mapCount")) {
            named_arg(d, o, &first, nam[i], "mapDims");
        } else if ((!strcmp(fn, "PastValue") || !strcmp(fn, "FutureValue")) &&
                   (!strcasecmp(k, "delayTime") || !strcasecmp(k, "timeStep"))) {
            named_arg(d, o, &first, nam[i], "timeStep");
        } else if ((!strcmp(fn, "PastValue") || !strcmp(fn, "FutureValue")) &&
                   !strcasecmp(k, "defaultHiddenActivity")) {
            named_arg(d, o, &first, nam[i], "defaultHiddenActivation");
        } else if (!strcmp(fn, "ImageParameter") && !strcasecmp(k, "imageLayout")) {
            continue; /* its dims are the image's, in partrain's one layout (W:H:C) */
        } else if (!strcasecmp(k, "initOnCPUOnly") && strcmp(fn, "LearnableParameter") &&
                   strcmp(callee, "ParameterTensor") && strcmp(callee, "LearnableParameter")) {
            continue; /* where NDL ignores it */
        } else {
            named_arg(d, o, &first, nam[i], NULL);
        }
    }
    if (!has_layout && (!strcmp(fn, "ImageInput")))
        ndl_put(o, "%simageLayout = 'HWC'", first ? "" : ", "); /* NDL's default */
    ndl_put(o, ")");
}

/* BatchNormalization's NDL-only arguments: eval= (ignored: CNTK's training switches it),
 * engine= (cntk or cudnn: useCntkEngine). */
static void bn_call(struct ndl *d, struct out *o, const struct bs_node *c)
{
    ndl_put(o, "BatchNormalization (");
    int first = 1;
    for (size_t i = 0; i < c->nitems; i++) {
        const struct bs_node *a = c->items[i];
        if (a->kind != BS_DEF) {
            ndl_put(o, "%s", first ? "" : ", ");
            expr(d, o, a);
            first = 0;
        } else if (!strcasecmp(a->str, "eval")) {
            continue;
        } else if (!strcasecmp(a->str, "engine")) {
            const char *s = a->a->kind == BS_STR || a->a->kind == BS_ID ? a->a->str : "";
            ndl_put(o, "%suseCntkEngine = %s", first ? "" : ", ",
                    strcasecmp(s, "cudnn") ? "true" : "false");
            first = 0;
        } else {
            named_arg(d, o, &first, a, NULL);
        }
    }
    ndl_put(o, ")");
}

static void call(struct ndl *d, struct out *o, const struct bs_node *c)
{
    const char *name = c->a->kind == BS_ID ? c->a->str : NULL;
    const char *fn = NULL;
    if (name && ndl_names_find(&d->macros, name) < 0) {
        fn = ndl_function(name);
        if (!fn && !strcasecmp(name, "RowStack"))
            fn = "RowStack";
        if (!fn && !strcasecmp(name, "BatchNormalization")) {
            bn_call(d, o, c);
            return;
        }
    }
    if (fn) {
        ndl_call(d, o, c, fn);
        return;
    }
    const char *spelled =
        name && ndl_names_find(&d->macros, name) < 0 ? bse_builtin_spelled(name) : NULL;
    /* a macro's call: named arguments that are not its parameters are dropped (CNTK's NDL
     * makes them symbols of the macro's script, which its text, $variables$ replaced
     * before, does not read) */
    int k = name ? ndl_names_find(&d->macros, name) : -1;
    const struct bs_node *lam = k >= 0 ? d->macro_def[k]->a : NULL;
    /* tag= of a macro's call: its result's (BS.NDL.Tag) */
    const struct bs_node *tag = lam ? named_of(c, "tag") : NULL;
    for (size_t j = 0; tag && j < lam->nitems; j++)
        if (!strcasecmp(lam->items[j]->str, "tag"))
            tag = NULL; /* a parameter of the macro */
    if (tag)
        ndl_put(o, "BS.NDL.Tag (");
    /* a name called is a macro's or a function's, never a variable's (NDL refuses
     * parameters named like functions) */
    if (k >= 0)
        ndl_put(o, "%s", d->macro_out[k]);
    else if (spelled)
        ndl_put(o, "%s", spelled);
    else if (name)
        ndl_put(o, "%s", name);
    else
        tight(d, o, c->a, 7);
    ndl_put(o, " (");
    int first = 1;
    for (size_t i = 0; i < c->nitems; i++) {
        const struct bs_node *a = c->items[i];
        if (a->kind == BS_DEF && lam) {
            size_t j = 0;
            while (j < lam->nitems && strcasecmp(lam->items[j]->str, a->str))
                j++;
            if (j == lam->nitems)
                continue;
        }
        ndl_put(o, "%s", first ? "" : ", ");
        first = 0;
        if (a->kind == BS_DEF) {
            ndl_put(o, "%s = ", lam ? ndl_canon(&d->vars, a->str) : a->str);
            named_value(d, o, a->str, a->a);
        } else
            expr(d, o, a);
    }
    ndl_put(o, ")");
    if (tag) {
        ndl_put(o, ", tag = ");
        named_value(d, o, "tag", tag->a);
        ndl_put(o, ")");
    }
}

static void record(struct ndl *d, struct out *o, const struct bs_node *r)
{
    ndl_put(o, "[");
    for (size_t i = 0; i < r->nitems; i++)
        ndl_write_member(d, o, r->items[i], 0, NULL);
    ndl_put(o, "\n]");
}

/* How tightly x binds (parsers/bs.h's grammar): 0 for what only an expression's whole value
 * can be (a lambda, an array written a : b), 1 to 5 for the binary operators, loosest
 * first, 6 for a prefix operator, 7 for what binds tighter still. */
static int prec(const struct bs_node *x)
{
    if (x->kind == BS_LAMBDA || (x->kind == BS_ARRAY && x->nitems >= 2))
        return 0;
    if (x->kind == BS_UNOP)
        return 6;
    if (x->kind != BS_BINOP)
        return 7;
    static const char *const ops[][4] = {{"||"},      {"&&"},     {"==", "!=", "<", "<="},
                                         {">", ">="}, {"+", "-"}, {"*", "/", ".*"}};
    static const int level[] = {1, 2, 3, 3, 4, 5};
    for (int i = 0; i < 6; i++)
        for (int k = 0; k < 4 && ops[i][k]; k++)
            if (!strcmp(x->op, ops[i][k]))
                return level[i];
    return 0;
}

/* x where the grammar takes what binds at least as tightly as level (prec()), in
 * parentheses if it binds more loosely, and only then: the written text nests no deeper
 * than the NDL did (the parser's limit is 200). */
static void tight(struct ndl *d, struct out *o, const struct bs_node *x, int level)
{
    int paren = prec(x) < level;
    ndl_put(o, paren ? "(" : "");
    expr(d, o, x);
    ndl_put(o, paren ? ")" : "");
}

/* An operand of parent (an operator): a binary operator of the parent's level is in
 * parentheses on the right (the operators group to the left), and on both sides for a
 * comparison (comparisons do not chain). */
static void operand(struct ndl *d, struct out *o, const struct bs_node *x,
                    const struct bs_node *parent, int right)
{
    int pp = prec(parent);
    int same = prec(x) == pp && x->kind == BS_BINOP && (right || pp == 3);
    tight(d, o, x, same ? pp + 1 : pp);
}

static void expr(struct ndl *d, struct out *o, const struct bs_node *x)
{
    switch (x->kind) {
    case BS_NUM: number(o, x->num); return;
    case BS_STR: string(o, x->str); return;
    case BS_BOOL: ndl_put(o, "%s", x->num != 0 ? "true" : "false"); return;
    case BS_ID: ndl_put(o, "%s", ndl_canon(&d->vars, x->str)); return;
    case BS_VAR: ndl_put(o, "$%s$", x->str); return;
    case BS_RECORD: record(d, o, x); return;
    case BS_DEF:
        ndl_put(o, "%s = ", ndl_canon(&d->vars, x->str));
        expr(d, o, x->a);
        return;
    case BS_LAMBDA:
        ndl_put(o, "(");
        for (size_t i = 0; i < x->nitems; i++) {
            ndl_put(o, "%s", i ? ", " : "");
            expr(d, o, x->items[i]);
        }
        ndl_put(o, ") => ");
        expr(d, o, x->a);
        return;
    case BS_ARRAY: array_of(d, o, (const struct bs_node *const *)x->items, x->nitems); return;
    case BS_CALL: call(d, o, x); return;
    case BS_INDEX:
        tight(d, o, x->a, 7);
        ndl_put(o, "[");
        expr(d, o, x->b);
        ndl_put(o, "]");
        return;
    case BS_DOT:
        tight(d, o, x->a, 7);
        ndl_put(o, ".%s", ndl_canon(&d->vars, x->str));
        return;
    case BS_IF:
        ndl_put(o, "(if ");
        expr(d, o, x->a);
        ndl_put(o, " then ");
        expr(d, o, x->b);
        ndl_put(o, " else ");
        expr(d, o, x->c);
        ndl_put(o, ")");
        return;
    case BS_BINOP:
        operand(d, o, x->a, x, 0);
        ndl_put(o, " %s ", x->op);
        operand(d, o, x->b, x, 1);
        return;
    case BS_UNOP:
        ndl_put(o, "%s ", x->op);
        operand(d, o, x->a, x, 1);
        return;
    case BS_FOR:
        ndl_put(o, "[%s:", x->str);
        tight(d, o, x->a, 1);
        ndl_put(o, "..");
        tight(d, o, x->b, 1);
        ndl_put(o, "]");
        return;
    }
}

void ndl_write_rename(struct ndl *d, struct out *o, const struct bs_node *alias,
                      const struct bs_node *def)
{
    const char *x = ndl_canon(&d->vars, alias->str);
    at(o, alias);
    ndl_put(o, "%s = %s", ndl_canon(&d->vars, def->str), x);
    for (size_t i = 0; i < sizeof special / sizeof special[0]; i++)
        if (!strcasecmp(x, special[i][0]) && strcmp(x, special[i][1])) {
            at(o, alias);
            ndl_put(o, "%s = %s", special[i][1], x);
        }
}

/* Whether member m is a call tagged for evaluation (tag = "eval...": CNTK's NDL compares
 * the first four letters). */
static int eval_tagged(const struct bs_node *m)
{
    const struct bs_node *a = m->a && m->a->kind == BS_CALL ? named_of(m->a, "tag") : NULL;
    return a && a->a && (a->a->kind == BS_STR || a->a->kind == BS_ID) &&
           !strncasecmp(a->a->str, "eval", 4);
}

/* NDL's EvalNodes = (...) as CNTK's NDL makes the group: the network's lines tagged for
 * evaluation first, in the order written (its evaluator adds them as it makes them), then
 * the listed nodes that are not among them (MNIST's 01_OneHidden: top5Errs with tag = "eval"
 * beside EvalNodes = (errs) reports both, top5Errs first). Tags inside a macro's body are
 * not seen here. */
static void eval_group(struct ndl *d, struct out *o, const struct bs_node *v)
{
    const struct bs_node *const *list = v->kind == BS_ARRAY ? (const void *)v->items : &v;
    size_t n = v->kind == BS_ARRAY ? v->nitems : 1, tagged = 0;
    for (int pass = 0; pass < 2; pass++) { /* count, then write (as array_of does) */
        size_t k = 0;
        if (pass == 1 && tagged + n < 2)
            ndl_put(o, "[| ");
        for (size_t i = 0; i < d->ntop; i++) {
            const struct bs_node *m = d->top[i];
            int listed = 0;
            for (size_t j = 0; j < n; j++)
                listed |= list[j]->kind == BS_ID && !strcasecmp(list[j]->str, m->str);
            if (listed || !eval_tagged(m))
                continue;
            if (pass == 0)
                tagged++;
            else
                ndl_put(o, "%s%s", k++ ? " : " : "", ndl_canon(&d->vars, m->str));
        }
        for (size_t j = 0; pass == 1 && j < n; j++) {
            ndl_put(o, "%s", k++ ? " : " : "");
            tight(d, o, list[j], 1);
        }
        if (pass == 1 && tagged + n < 2)
            ndl_put(o, " |]");
    }
}

/* A member: NAME = expr, a function NAME (params) = body, or NAME[i:a..b] = c. At the top,
 * NDL's special node groups take BrainScript's names; a macro whose body is a block gives
 * its result through BS.NDL.Return. */
void ndl_write_member(struct ndl *d, struct out *o, const struct bs_node *m, int top,
                      const char *as)
{
    at(o, m);
    int mk = m->a && m->a->kind == BS_LAMBDA ? ndl_names_find(&d->macros, m->str) : -1;
    const char *name = as ? as : mk >= 0 ? d->macro_out[mk] : ndl_canon(&d->vars, m->str);
    for (size_t i = 0; top && !as && i < sizeof special / sizeof special[0]; i++)
        if (!strcasecmp(name, special[i][0]))
            name = special[i][1];
    const struct bs_node *v = m->a;
    if (v->kind == BS_FOR) {
        ndl_put(o, "%s[%s:", name, v->str);
        tight(d, o, v->a, 1);
        ndl_put(o, "..");
        tight(d, o, v->b, 1);
        ndl_put(o, "] = ");
        expr(d, o, v->c);
        return;
    }
    if (v->kind != BS_LAMBDA) {
        ndl_put(o, "%s = ", name);
        if (top && !strcmp(name, "evaluationNodes"))
            eval_group(d, o, v);
        else
            expr(d, o, v);
        return;
    }
    ndl_put(o, "%s (", name);
    for (size_t i = 0; i < v->nitems; i++) {
        ndl_put(o, "%s", i ? ", " : "");
        expr(d, o, v->items[i]);
    }
    ndl_put(o, ") = ");
    if (v->a->kind != BS_RECORD) {
        expr(d, o, v->a);
        return;
    }
    const char *ret = "";
    for (size_t i = 0; i < v->a->nitems; i++)
        if (!strcasecmp(v->a->items[i]->str, m->str))
            ret = ndl_canon(&d->vars, m->str);
    ndl_put(o, "BS.NDL.Return (");
    record(d, o, v->a);
    ndl_put(o, ", ");
    string(o, ret);
    ndl_put(o, ")");
}
