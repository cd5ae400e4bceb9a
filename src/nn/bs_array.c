/* BrainScript arrays (bs_eval_internal.h): a : b : c, CNTK's array definition
 * NAME[i:first..last] = ... whose elements are evaluated when first used, and a[i]. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nn/bs_eval_internal.h"

int bse_arr_at(struct ev *v, const struct bs_node *at, struct barr *a, size_t k, struct bv *out)
{
    if (a->lazy && a->v[k].k == BV_THUNK) {
        struct bslot *s = &a->lazy[k];
        if (!s->name) {
            char buf[64];
            int len =
                snprintf(buf, sizeof buf, "%s[%ld]", a->name ? a->name : "", a->first + (long)k);
            len = len < 0 ? 0 : len >= (int)sizeof buf ? (int)sizeof buf - 1 : len;
            char *name = bse_alloc(v, (size_t)len + 1);
            if (!name)
                return v->e->code;
            memcpy(name, buf, (size_t)len + 1);
            s->name = name;
        }
        int rc = bse_force(v, at, s->env, s, &a->v[k]);
        if (rc)
            return rc;
    }
    *out = a->v[k];
    return 0;
}

int bse_arr_force(struct ev *v, const struct bs_node *at, const struct bv *x)
{
    if (x->k != BV_ARR || !x->arr->lazy)
        return 0;
    for (size_t k = 0; k < x->arr->n; k++) {
        struct bv el;
        int rc = bse_arr_at(v, at, x->arr, k, &el);
        if (rc)
            return rc;
    }
    return 0;
}

/* NAME[i:first..last] = expr: an array of first..last whose elements are expr with i bound
 * to their index, each evaluated when first used (CNTK's array definition). */
int bse_eval_for(struct ev *v, const struct bs_node *x, struct benv *env, struct bv *out)
{
    struct bv lim[2];
    const struct bs_node *at[2] = {x->a, x->b};
    for (int i = 0; i < 2; i++) {
        int rc = bse_eval(v, at[i], env, &lim[i]);
        if (rc)
            return rc;
        if (lim[i].k != BV_NUM)
            return bse_type_error(v, at[i], i ? "the last index" : "the first index",
                                  "a whole number", &lim[i]);
        if (lim[i].num != floor(lim[i].num) || fabs(lim[i].num) > 1e6)
            return bs_error(v->e, at[i], "%s: expected a whole number in [-1e6, 1e6], got %g",
                            i ? "the last index" : "the first index", lim[i].num);
    }
    if (lim[1].num < lim[0].num - 1 || lim[1].num - lim[0].num >= 65536)
        return bs_error(v->e, x,
                        "array definition %s:%g..%g: expected first <= last + 1 and at most "
                        "65536 elements",
                        x->str, lim[0].num, lim[1].num);
    size_t n = (size_t)(lim[1].num - lim[0].num + 1);
    struct barr *arr = bse_alloc(v, sizeof *arr);
    if (!arr || !(arr->v = bse_alloc(v, (n ? n : 1) * sizeof *arr->v)) ||
        !(arr->lazy = bse_alloc(v, (n ? n : 1) * sizeof *arr->lazy)))
        return v->e->code;
    arr->n = n;
    arr->first = (long)lim[0].num;
    for (size_t k = 0; k < n; k++) {
        struct benv *e = bse_new_env(v, env, 1, env ? env->path : "");
        if (!e)
            return v->e->code;
        e->slots[0] = (struct bslot){
            .name = x->str,
            .state = SLOT_DONE,
            .val = {.k = BV_NUM, .num = (double)(arr->first + (long)k)},
        };
        arr->lazy[k] = (struct bslot){.expr = x->c, .env = e, .state = SLOT_TODO};
        arr->v[k] = (struct bv){.k = BV_THUNK};
    }
    *out = (struct bv){.k = BV_ARR, .arr = arr};
    return 0;
}

int bse_eval_array(struct ev *v, const struct bs_node *x, struct benv *env, struct bv *out)
{
    struct barr *arr = bse_alloc(v, sizeof *arr);
    size_t cap = x->nitems; /* [| |]: none */
    if (!arr || !(arr->v = bse_alloc(v, (cap ? cap : 1) * sizeof *arr->v)))
        return v->e->code;
    for (size_t i = 0; i < x->nitems; i++) {
        struct bv el;
        int rc = bse_eval(v, x->items[i], env, &el);
        if (rc)
            return rc;
        if (el.k != BV_ARR) {
            arr->v[arr->n++] = el;
            continue;
        }
        if ((rc = bse_arr_force(v, x->items[i], &el)) != 0)
            return rc;
        struct bv *grown = bse_alloc(v, (cap + el.arr->n) * sizeof *grown); /* a : (b : c) */
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

int bse_eval_index(struct ev *v, const struct bs_node *x, struct benv *env, struct bv *out)
{
    struct bv a, i;
    int rc = bse_eval(v, x->a, env, &a);
    if (rc == 0)
        rc = bse_eval(v, x->b, env, &i);
    if (rc)
        return rc;
    if (a.k != BV_ARR)
        return bse_type_error(v, x, "'[ ]' indexing", "an array", &a);
    double k = i.k == BV_NUM ? i.num - (double)a.arr->first : -1;
    if (k < 0 || k >= (double)a.arr->n || k != floor(k)) {
        if (a.arr->first)
            return bs_error(v->e, x->b, "index out of range: the array's indices are %ld..%ld",
                            a.arr->first, a.arr->first + (long)a.arr->n - 1);
        return bs_error(v->e, x->b, "index out of range: the array has %zu elements", a.arr->n);
    }
    return bse_arr_at(v, x, a.arr, (size_t)k, out);
}
