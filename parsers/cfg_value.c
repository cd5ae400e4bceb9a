/* Typed views of scalar text: booleans, integers, reals (with CNTK's #INF), arrays. */
#include "parsers/cfg_internal.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const struct cfg_origin *where(const struct cfg_node *n)
{
    static const struct cfg_origin none = {.file = "<value>"};
    return n ? &n->vorigin : &none;
}

static const char *name_of(const struct cfg_node *n, char *buf, size_t size)
{
    if (!n)
        return "value";
    return cfg_path(n, buf, size);
}

int cfg_to_bool(const struct cfg_node *n, const char *s, int *out, struct pt_err *e)
{
    static const char *yes[] = {"true", "t", "1"}, *no[] = {"false", "f", "0"};
    for (int i = 0; i < 3; i++) {
        if (strcasecmp(s, yes[i]) == 0) {
            *out = 1;
            return 0;
        }
        if (strcasecmp(s, no[i]) == 0) {
            *out = 0;
            return 0;
        }
    }
    char ex[128], path[256];
    return cfg_error(e, where(n), "%s: expected a boolean (true/false/t/f/1/0), got \"%s\"",
                     name_of(n, path, sizeof path), pt_excerpt(ex, sizeof ex, s, strlen(s), 60));
}

int cfg_get_bool(struct cfg_node *block, const char *key, int local, int *out,
                 struct cfg_node **found, struct pt_err *e)
{
    struct cfg_node *n = NULL;
    const char *v = NULL;
    int rc = local ? cfg_find_local(block, key, &n, e) : cfg_find(block, key, &n, e);
    if (found)
        *found = rc == 0 ? n : NULL;
    if (rc == 0 && n && (rc = cfg_value(n, &v, e)) == 0)
        rc = cfg_to_bool(n, v, out, e);
    return rc;
}

int cfg_to_int(const struct cfg_node *n, const char *s, long long *out, struct pt_err *e)
{
    char ex[128], path[256];
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (s[0] == '\0' || isspace((unsigned char)s[0]) || *end != '\0')
        return cfg_error(e, where(n), "%s: expected an integer, got \"%s\"",
                         name_of(n, path, sizeof path),
                         pt_excerpt(ex, sizeof ex, s, strlen(s), 60));
    if (errno == ERANGE)
        return cfg_error(e, where(n), "%s: integer out of range: \"%s\"",
                         name_of(n, path, sizeof path),
                         pt_excerpt(ex, sizeof ex, s, strlen(s), 60));
    *out = v;
    return 0;
}

int cfg_to_double(const struct cfg_node *n, const char *s, double *out, struct pt_err *e)
{
    char ex[128], path[256];
    size_t len = strlen(s);
    char *end = NULL;
    double v = 0;
    int ok = len > 0 && !isspace((unsigned char)s[0]);
    if (ok) {
        errno = 0;
        v = strtod(s, &end);
        if (end == s)
            ok = 0;
        else if (*end == '#') {
            /* CNTK writes infinity as 1#INF (the MSVC spelling) */
            if (strcasecmp(end, "#INF") != 0 || v == 0)
                ok = 0;
            else
                v = v > 0 ? INFINITY : -INFINITY;
        } else if (*end != '\0') {
            ok = 0;
        }
    }
    if (ok && isnan(v))
        return cfg_error(e, where(n), "%s: NaN is not a valid number here",
                         name_of(n, path, sizeof path));
    if (!ok)
        return cfg_error(e, where(n), "%s: expected a number, got \"%s\"",
                         name_of(n, path, sizeof path),
                         pt_excerpt(ex, sizeof ex, s, strlen(s), 60));
    *out = v;
    return 0;
}

void cfg_list_free(struct cfg_list *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++)
        free(l->items[i]);
    free(l->items);
    l->items = NULL;
    l->n = 0;
}

static int list_push(struct cfg_list *l, size_t *cap, const char *s, size_t len, struct pt_err *e)
{
    if (l->n == *cap) {
        size_t nc = *cap ? *cap * 2 : 8;
        char **g = pt_realloc(l->items, nc * sizeof *g, e);
        if (!g)
            return e ? e->code : PT_ENOMEM;
        l->items = g;
        *cap = nc;
    }
    char *copy = pt_strndup(s, len, e);
    if (!copy)
        return e ? e->code : PT_ENOMEM;
    l->items[l->n++] = copy;
    return 0;
}

int cfg_to_list(const struct cfg_node *n, const char *s, struct cfg_list *out, struct pt_err *e)
{
    char ex[128], path[256];
    size_t cap = 0;
    out->n = 0;
    out->items = NULL;
    const char *p = s, *stop = s + strlen(s);
    /* CNTK's arrays: elements separated by ':' or ',' (or a newline), the whole array
     * optionally in parentheses: a:b, (a : b), (a, b) */
    while (p < stop && isspace((unsigned char)*p))
        p++;
    while (stop > p && isspace((unsigned char)stop[-1]))
        stop--;
    if (stop - p >= 2 && *p == '(' && stop[-1] == ')') {
        p++;
        stop--;
    }
    for (;;) {
        /* one element: text up to a separator outside quotes */
        const char *q = p;
        int inq = 0;
        while (q < stop && (inq || (*q != ':' && *q != ',' && *q != '\n'))) {
            if (*q == '"')
                inq = !inq;
            q++;
        }
        const char *a = p, *b = q;
        while (a < b && isspace((unsigned char)*a))
            a++;
        while (b > a && isspace((unsigned char)b[-1]))
            b--;
        /* optional repeat count: elem*N (outside quotes) */
        long long reps = 1;
        const char *star = NULL;
        int inq2 = 0;
        for (const char *t = a; t < b; t++) {
            if (*t == '"')
                inq2 = !inq2;
            else if (*t == '*' && !inq2)
                star = t;
        }
        if (star) {
            char num[32];
            const char *r = star + 1;
            while (r < b && isspace((unsigned char)*r))
                r++;
            size_t nl = (size_t)(b - r);
            char *end = NULL;
            if (nl == 0 || nl >= sizeof num) {
                cfg_list_free(out);
                return cfg_error(e, where(n), "%s: expected a repeat count after '*' in \"%s\"",
                                 name_of(n, path, sizeof path),
                                 pt_excerpt(ex, sizeof ex, s, strlen(s), 60));
            }
            memcpy(num, r, nl);
            num[nl] = '\0';
            reps = strtoll(num, &end, 10);
            if (*end != '\0' || reps < 1) {
                cfg_list_free(out);
                return cfg_error(
                    e, where(n), "%s: repeat count must be a positive integer, got \"%s\"",
                    name_of(n, path, sizeof path), pt_excerpt(ex, sizeof ex, num, nl, 30));
            }
            b = star;
            while (b > a && isspace((unsigned char)b[-1]))
                b--;
        }
        if (b - a >= 2 && a[0] == '"' && b[-1] == '"') {
            a++;
            b--;
        } else if (a == b && star) { /* "*3": a count of nothing */
            cfg_list_free(out);
            return cfg_error(e, where(n), "%s: empty element in \"%s\"",
                             name_of(n, path, sizeof path),
                             pt_excerpt(ex, sizeof ex, s, strlen(s), 60));
        } else if (a == b) { /* CNTK skips empty elements: "64:256:" is 64:256 */
            reps = 0;
        }
        if ((unsigned long long)reps > CFG_MAX_LIST - out->n) {
            cfg_list_free(out);
            return cfg_error(e, where(n), "%s: array longer than %d elements",
                             name_of(n, path, sizeof path), CFG_MAX_LIST);
        }
        for (long long k = 0; k < reps; k++) {
            int rc = list_push(out, &cap, a, (size_t)(b - a), e);
            if (rc) {
                cfg_list_free(out);
                return rc;
            }
        }
        if (q >= stop)
            break;
        p = q + 1;
    }
    if (out->n == 0)
        return cfg_error(e, where(n), "%s: expected at least one element, got \"%s\"",
                         name_of(n, path, sizeof path),
                         pt_excerpt(ex, sizeof ex, s, strlen(s), 60));
    return 0;
}
