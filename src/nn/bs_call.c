/* BrainScript calls (bs_eval_internal.h): arguments bound to a function's parameters
 * (positional, then named, then defaults); a lambda's arguments are bound unevaluated and
 * evaluated when first used, as CNTK's are, so that a recurrence can pass through a
 * function; the kinds of function values (lambda, built-in, Sequential, a layer, Parallel,
 * DelayLayer). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/bs_eval_internal.h"

/* ------------------------------------------------------------------ calls */

static int default_value(struct ev *v, const char *d, struct bv *out)
{
    if (!strcmp(d, "None"))
        *out = (struct bv){.k = BV_NONE};
    else if (!strcmp(d, "true") || !strcmp(d, "false"))
        *out = (struct bv){.k = BV_BOOL, .num = d[0] == 't'};
    else if (d[0] == '\'') {
        size_t n = strlen(d) - 2;
        char *s = bse_alloc(v, n + 1);
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
    int given[BS_MAX_SIG] = {0};
    while (np < BS_MAX_SIG && bi->sig[np])
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

static int same_file(const struct bs_node *a, const struct bs_node *b)
{
    return a->file == b->file || (a->file && b->file && !strcmp(a->file, b->file));
}

static int call_lambda(struct ev *v, const struct bs_node *at, struct bfn *f, struct bv *pos,
                       size_t npos, const struct bs_node **named, struct bv *nval, size_t nnamed,
                       struct bv *out)
{
    const struct bs_node *lam = f->lam;
    struct benv *r = bse_new_env(v, f->env, lam->nitems, v->path); /* named where called */
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
                                "defined at %s%s%d:%d)",
                                p->str, same_file(at, lam) ? "" : lam->file,
                                same_file(at, lam) ? "" : ":", lam->line, lam->col);
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
        /* a default is evaluated when first used, where the function is defined (not
         * among its parameters: CNTK.core.bs's precision=precision is the outer one) */
        s->state = SLOT_TODO;
        s->expr = p->a;
        s->env = f->env;
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
    return bse_eval(v, lam->a, r, out);
}

/* A built-in's tag= (CNTK's node groups; "criteria" and "eval" are CNTK's legacy names) on
 * the node it made. */
static int apply_tag(struct ev *v, const struct bs_node *at, const struct builtin *bi,
                     const struct bv *args, const struct bv *out)
{
    static const char *const names[] = {"",          "feature",    "label",
                                        "criterion", "evaluation", "output"};
    size_t i = 0;
    while (i < BS_MAX_SIG && bi->sig[i] && strncmp(bi->sig[i], "tag=", 4))
        i++;
    if (i == BS_MAX_SIG || !bi->sig[i] || out->k != BV_NODE)
        return 0;
    if (args[i].k != BV_STR)
        return bse_type_error(v, at, "tag", "a string", &args[i]);
    const char *t = args[i].str;
    t = !strcmp(t, "criteria") ? "criterion" : !strcmp(t, "eval") ? "evaluation" : t;
    for (int k = 0; k < (int)(sizeof names / sizeof *names); k++)
        if (!strcmp(t, names[k])) {
            if (k)
                v->g->nodes[out->node].tag = (enum g_tag)k;
            return 0;
        }
    return bs_error(v->e, at,
                    "%s: tag='%s' is not a node group: expected 'feature', 'label', 'criterion', "
                    "'evaluation', 'output' or ''",
                    bi->name, args[i].str);
}

int bse_apply1(struct ev *v, const struct bs_node *at, struct bv *fn, struct bv x, struct bv *out)
{
    return bse_call(v, at, fn, &x, 1, NULL, NULL, 0, out);
}

static int call_linear(struct ev *v, const struct bs_node *at, struct bfn *f, struct bv *pos,
                       size_t npos, struct bv *out)
{
    if (npos != 1)
        return bs_error(v->e, at, "a layer takes one argument, got %zu", npos);
    struct bv x = pos[0];
    int rc = bse_as_node(v, at, "layer input", &x);
    int in[2] = {f->w, x.node};
    if (rc == 0)
        rc = bse_make_node(v, at, "Times", in, 2, out);
    if (rc == 0 && f->b >= 0) {
        in[0] = out->node;
        in[1] = f->b;
        rc = bse_make_node(v, at, "Plus", in, 2, out);
    }
    if (rc == 0 && f->act.k == BV_FN)
        rc = bse_apply1(v, at, &f->act, *out, out);
    return rc;
}

static int call_lstm(struct ev *v, const struct bs_node *at, struct bfn *f, struct bv *pos,
                     size_t npos, struct bv *out)
{
    if (npos != 1)
        return bs_error(v->e, at, "a layer takes one argument, got %zu", npos);
    struct bv x = pos[0];
    int rc = bse_as_node(v, at, "layer input", &x);
    int in[5] = {x.node, f->w, f->hm, f->b, f->peep};
    if (rc == 0)
        rc = bse_make_node(v, at, "RecurrentLSTM", in, 5, out);
    if (rc == 0) {
        struct g_node *n = &v->g->nodes[out->node];
        n->rows = v->g->nodes[f->hm].cols;
        n->reverse = f->reverse;
    }
    return rc;
}

int bse_call(struct ev *v, const struct bs_node *at, struct bv *fn, struct bv *pos, size_t npos,
             const struct bs_node **named, struct bv *nval, size_t nnamed, struct bv *out)
{
    if (fn->k != BV_FN)
        return bse_type_error(v, at, "call", "a function", fn);
    if (++v->depth > v->max_depth) {
        v->depth--;
        return bs_error(v->e, at, "calls nested deeper than %d (endless recursion?)", v->max_depth);
    }
    struct bfn *f = fn->fn;
    int rc = 0;
    if (f->k == FN_LAMBDA)
        rc = call_lambda(v, at, f, pos, npos, named, nval, nnamed, out);
    else if (f->k == FN_BUILTIN) {
        struct bv args[BS_MAX_SIG];
        rc = bind_builtin(v, at, f->bi, pos, npos, named, nval, nnamed, args);
        for (size_t i = 0; rc == 0 && i < BS_MAX_SIG && f->bi->sig[i]; i++)
            rc = bse_arr_force(v, at, &args[i]); /* the built-ins read arrays' values */
        if (rc == 0)
            rc = f->bi->fn(v, at, f->bi->name, args, out);
        if (rc == 0)
            rc = apply_tag(v, at, f->bi, args, out);
    } else if (nnamed)
        rc = bs_error(v->e, named[0], "a layer takes no named arguments");
    else if (f->k == FN_LINEAR)
        rc = call_linear(v, at, f, pos, npos, out);
    else if (f->k == FN_LSTM)
        rc = call_lstm(v, at, f, pos, npos, out);
    else if (f->k == FN_CONV)
        rc = bse_conv_apply(v, at, f, pos, npos, out);
    else if (f->k == FN_BN)
        rc = bse_batch_norm_apply(v, at, f, pos, npos, out);
    else if (f->k == FN_PARALLEL) {
        struct barr *res = npos == 1 ? bse_alloc(v, sizeof *res) : NULL;
        if (npos != 1)
            rc = bs_error(v->e, at, "Parallel's function takes one argument, got %zu", npos);
        else if (!res || !(res->v = bse_alloc(v, f->seq->n * sizeof *res->v)))
            rc = v->e->code;
        for (size_t i = 0; rc == 0 && i < f->seq->n; i++)
            rc = bse_apply1(v, at, &f->seq->v[i], pos[0], &res->v[res->n++]);
        if (rc == 0)
            rc = bse_apply1(v, at, &f->join, (struct bv){.k = BV_ARR, .arr = res}, out);
    } else if (f->k == FN_DELAY) {
        if (npos != 1)
            rc = bs_error(v->e, at, "a layer takes one argument, got %zu", npos);
        else if (f->delay == 0)
            *out = pos[0];
        else
            rc = bse_delay_node(v, at, f->delay, f->dflt, 0, &pos[0], NULL, out);
    } else { /* FN_SEQ */
        if (npos != 1)
            rc = bs_error(v->e, at, "Sequential's function takes one argument, got %zu", npos);
        struct bv x = npos ? pos[0] : (struct bv){0};
        for (size_t i = 0; rc == 0 && i < f->seq->n; i++)
            rc = bse_apply1(v, at, &f->seq->v[i], x, &x);
        *out = x;
    }
    v->depth--;
    return rc;
}

int bse_eval_call(struct ev *v, const struct bs_node *x, struct benv *env, struct bv *out)
{
    struct bv fn;
    int rc = bse_eval(v, x->a, env, &fn);
    size_t n = x->nitems, npos = 0, nnamed = 0;
    struct bv *pos = bse_alloc(v, (n + 1) * sizeof *pos),
              *nval = bse_alloc(v, (n + 1) * sizeof *nval);
    const struct bs_node **named = bse_alloc(v, (n + 1) * sizeof *named);
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
            rc = bse_eval(v, ex, env, slot);
    }
    /* inside partrain's CNTK.core.bs, errors and nodes name the user's call that led
     * there (the innermost one outside it) */
    int user = x->file && strcmp(x->file, bs_prelude_file) != 0;
    const struct bs_node *outer = v->user_call;
    if (user)
        v->user_call = x;
    if (rc == 0)
        rc = bse_call(v, x, &fn, pos, npos, named, nval, nnamed, out);
    v->user_call = outer;
    size_t pre = strlen(bs_prelude_file);
    if (rc == PT_EUSER && user && !strncmp(v->e->msg, bs_prelude_file, pre) &&
        !strstr(v->e->msg, "; called at "))
        pt_err_context(v->e, "called at %s:%d:%d", x->file, x->line, x->col);
    return rc;
}
