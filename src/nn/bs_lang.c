/* BrainScript's functions of plain values (CNTK's NumericFunction, CompareFunction and
 * StringFunction in CNTK.core.bs): Mod and IntDiv of whole numbers, the type tests IsArray,
 * IsBool, IsDouble and IsSameObject, and the string functions Chr, Substr, Replace and
 * Format. Each is a row of builtins[] (bs_builtins.c); errors name the call's place. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nn/bs_eval_internal.h"

/* A's number as a whole number that fits an int (CNTK casts to int), or an error. */
static int whole(struct ev *v, const struct bs_node *at, const char *name, const struct bv *a,
                 long *out)
{
    if (a->k != BV_NUM)
        return bse_type_error(v, at, name, "a number", a);
    if (!(fabs(a->num) <= (double)INT_MAX))
        return bs_error(v->e, at, "%s: %g is out of the range of a whole number", name, a->num);
    *out = (long)a->num; /* toward zero, as CNTK's (int) */
    return 0;
}

/* Mod (x, y) and IntDiv (x, y): C's % and / of the two as whole numbers (the remainder
 * takes x's sign; the quotient rounds toward zero). */
int bse_int_op(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
               struct bv *out)
{
    long x = 0, y = 0;
    int rc = whole(v, at, name, &a[0], &x);
    if (rc || (rc = whole(v, at, name, &a[1], &y)) != 0)
        return rc;
    if (y == 0)
        return bs_error(v->e, at, "%s: division by zero (%ld by 0)", name, x);
    *out = (struct bv){.k = BV_NUM, .num = (double)(!strcmp(name, "Mod") ? x % y : x / y)};
    return 0;
}

/* IsArray (x), IsBool (x), IsDouble (x): x's type (a single value is not an array). */
int bse_is_type(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                struct bv *out)
{
    (void)v, (void)at;
    enum bv_kind want = !strcmp(name, "IsArray")  ? BV_ARR
                        : !strcmp(name, "IsBool") ? BV_BOOL
                                                  : BV_NUM;
    *out = (struct bv){.k = BV_BOOL, .num = a[0].k == want};
    return 0;
}

/* IsSameObject (a, b): whether a and b are one object: the same node, record, array or
 * function, or both None. Numbers, booleans and strings are values, not objects: CNTK
 * boxes each one anew, so two of them are never the same object. */
int bse_is_same(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                struct bv *out)
{
    (void)v, (void)at, (void)name;
    const struct bv *x = &a[0], *y = &a[1];
    int same =
        x->k == y->k && (x->k == BV_NONE || (x->k == BV_NODE && x->node == y->node) ||
                         (x->k == BV_REC && x->rec == y->rec) ||
                         (x->k == BV_ARR && x->arr == y->arr) || (x->k == BV_FN && x->fn == y->fn));
    *out = (struct bv){.k = BV_BOOL, .num = same};
    return 0;
}

static int str_arg(struct ev *v, const struct bs_node *at, const char *name, const struct bv *a,
                   const char **out)
{
    if (a->k != BV_STR)
        return bse_type_error(v, at, name, "a string", a);
    *out = a->str;
    return 0;
}

static int make_str(struct ev *v, const char *s, size_t n, struct bv *out)
{
    char *p = bse_alloc(v, n + 1);
    if (!p)
        return v->e->code;
    memcpy(p, s, n);
    *out = (struct bv){.k = BV_STR, .str = p};
    return 0;
}

/* Chr (c): the string of the one character with code c (1..127: partrain's strings are
 * bytes). */
int bse_chr(struct ev *v, const struct bs_node *at, const char *name, struct bv *a, struct bv *out)
{
    long c = 0;
    int rc = whole(v, at, name, &a[0], &c);
    if (rc)
        return rc;
    if (c < 1 || c > 127)
        return bs_error(v->e, at, "%s: %ld is not the code of an ASCII character (1..127)", name,
                        c);
    char s = (char)c;
    return make_str(v, &s, 1, out);
}

/* Substr (s, begin, num): num characters of s from begin (a negative begin counts from
 * the end; either may run past the end; a negative num: to the end), as CNTK's. */
int bse_substr(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
               struct bv *out)
{
    const char *s = NULL;
    long b = 0, n = 0;
    int rc = str_arg(v, at, name, &a[0], &s);
    if (rc || (rc = whole(v, at, name, &a[1], &b)) != 0 || (rc = whole(v, at, name, &a[2], &n)))
        return rc;
    size_t len = strlen(s);
    size_t from = b < 0 ? (size_t)-b > len ? 0 : len - (size_t)-b : (size_t)b;
    from = from > len ? len : from;
    size_t take = n < 0 || (size_t)n > len - from ? len - from : (size_t)n;
    return make_str(v, s + from, take, out);
}

/* Replace (s, from, to): every occurrence of from in s, left to right, replaced by to. */
int bse_replace(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                struct bv *out)
{
    const char *s = NULL, *from = NULL, *to = NULL;
    int rc = str_arg(v, at, name, &a[0], &s);
    if (rc || (rc = str_arg(v, at, name, &a[1], &from)) != 0 ||
        (rc = str_arg(v, at, name, &a[2], &to)) != 0)
        return rc;
    size_t lf = strlen(from), lt = strlen(to), n = 0;
    if (lf == 0)
        return bs_error(v->e, at, "%s: the string to replace is empty", name);
    for (const char *p = strstr(s, from); p; p = strstr(p + lf, from))
        n++;
    size_t len = strlen(s) + n * lt - n * lf;
    char *d = bse_alloc(v, len + 1);
    if (!d)
        return v->e->code;
    char *w = d;
    for (const char *p = s, *q; *p; p = q + lf) {
        if (!(q = strstr(p, from))) {
            strcpy(w, p);
            break;
        }
        memcpy(w, p, (size_t)(q - p));
        w += q - p;
        memcpy(w, to, lt);
        w += lt;
    }
    *out = (struct bv){.k = BV_STR, .str = d};
    return 0;
}

/* Format (value, format): a number or string through printf with format as the part
 * between '%' and the conversion (".2": "%.2f"; a whole number as %d, else %f; a string
 * as %s), as CNTK's FormatConfigValue; only flags, a width and a precision are taken. */
int bse_format(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
               struct bv *out)
{
    const char *how = NULL;
    int rc = str_arg(v, at, name, &a[1], &how);
    if (rc)
        return rc;
    if (strlen(how) > 16 || strspn(how, "-+ #0123456789.") != strlen(how))
        return bs_error(v->e, at,
                        "%s: format '%s': expected flags, a width and a precision (as \".2\" "
                        "for %%.2f), without '%%' or a conversion",
                        name, how);
    char fmt[24], buf[512];
    int n;
/* the format is built from `how`, checked above to be only flags, digits and '.' */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    if (a[0].k == BV_STR) {
        snprintf(fmt, sizeof fmt, "%%%ss", how);
        n = snprintf(buf, sizeof buf, fmt, a[0].str);
    } else if (a[0].k == BV_NUM && fabs(a[0].num) <= INT_MAX && a[0].num == floor(a[0].num)) {
        snprintf(fmt, sizeof fmt, "%%%sd", how);
        n = snprintf(buf, sizeof buf, fmt, (int)a[0].num);
    } else if (a[0].k == BV_NUM) {
        snprintf(fmt, sizeof fmt, "%%%sf", how);
        n = snprintf(buf, sizeof buf, fmt, a[0].num);
    } else
        return bse_type_error(v, at, name, "a number or a string", &a[0]);
#pragma GCC diagnostic pop
    if (n < 0 || (size_t)n >= sizeof buf)
        return bs_error(v->e, at, "%s: the result is longer than %zu characters", name,
                        sizeof buf - 1);
    return make_str(v, buf, (size_t)n, out);
}
