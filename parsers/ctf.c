/* CTF line parser; see ctf.h. */
#include "parsers/ctf.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double pow10_exact[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                       1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                       1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static int is_ws(char c)
{
    return c == ' ' || c == '\t';
}

/* Slow but exact path for the rare numbers the fast path cannot do exactly. */
static const char *slow_float(const char *start, const char *stop, float *out)
{
    char buf[80];
    size_t n = (size_t)(stop - start);
    if (n >= sizeof buf)
        return NULL;
    memcpy(buf, start, n);
    buf[n] = '\0';
    char *end = NULL;
    double v = strtod(buf, &end);
    if (end != buf + n || !isfinite(v) || fabs(v) > 3.4028234663852886e38)
        return NULL;
    *out = (float)v;
    return stop;
}

const char *ctf_parse_float(const char *p, const char *end, float *out)
{
    const char *start = p;
    int neg = 0, any = 0, inexact = 0, exp10 = 0, digits = 0;
    uint64_t mant = 0;
    if (p < end && (*p == '-' || *p == '+'))
        neg = *p++ == '-';
    for (; p < end && (unsigned)(*p - '0') < 10; p++) {
        any = 1;
        if (mant == 0 && *p == '0')
            continue;
        if (digits < 19) {
            mant = mant * 10 + (uint64_t)(*p - '0');
            digits++;
        } else {
            exp10++;
            inexact = 1;
        }
    }
    if (p < end && *p == '.') {
        for (p++; p < end && (unsigned)(*p - '0') < 10; p++) {
            any = 1;
            if (mant == 0 && *p == '0') {
                exp10--;
                continue;
            }
            if (digits < 19) {
                mant = mant * 10 + (uint64_t)(*p - '0');
                digits++;
                exp10--;
            } else {
                inexact = 1;
            }
        }
    }
    if (!any)
        return NULL;
    if (p < end && (*p == 'e' || *p == 'E')) {
        const char *q = p + 1;
        int eneg = 0, e = 0, edig = 0;
        if (q < end && (*q == '-' || *q == '+'))
            eneg = *q++ == '-';
        for (; q < end && (unsigned)(*q - '0') < 10; q++, edig++)
            if (e < 100000)
                e = e * 10 + (*q - '0');
        if (edig == 0)
            return NULL;
        exp10 += eneg ? -e : e;
        p = q;
    }
    if (mant == 0) {
        *out = neg ? -0.0f : 0.0f;
        return p;
    }
    if (inexact || mant > (UINT64_C(1) << 53) || exp10 < -22 || exp10 > 22)
        return slow_float(start, p, out);
    /* mant and 10^|exp10| are exact doubles: one correctly rounded operation */
    double v = exp10 >= 0 ? (double)mant * pow10_exact[exp10] : (double)mant / pow10_exact[-exp10];
    if (v > 3.4028234663852886e38)
        return NULL;
    *out = (float)(neg ? -v : v);
    return p;
}

/* ------------------------------------------------------------------ columns */

void ctf_column_free(struct ctf_column *c)
{
    if (!c)
        return;
    free(c->val);
    free(c->idx);
    free(c->row_end);
    memset(c, 0, sizeof *c);
}

void ctf_column_clear(struct ctf_column *c)
{
    c->rows = c->nnz = 0;
}

static void shrink_one(void **p, size_t *cap, size_t need, size_t elem)
{
    if (!*p || need >= *cap)
        return;
    void *q = realloc(*p, (need ? need : 1) * elem);
    if (q) {
        *p = q;
        *cap = need ? need : 1;
    }
}

void ctf_column_shrink(struct ctf_column *c, int dim, int sparse)
{
    size_t vals = sparse ? c->nnz : c->rows * (size_t)dim;
    shrink_one((void **)&c->val, &c->cap_val, vals, sizeof *c->val);
    if (sparse) {
        shrink_one((void **)&c->idx, &c->cap_idx, c->nnz, sizeof *c->idx);
        shrink_one((void **)&c->row_end, &c->cap_rows, c->rows, sizeof *c->row_end);
    }
}

static int grow(void **p, size_t *cap, size_t need, size_t elem, struct pt_err *e)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 1024;
    while (n < need)
        n *= 2;
    void *q = realloc(*p, n * elem);
    if (!q)
        return pt_err_set(e, PT_ENOMEM, "error: out of memory (CTF buffer of %zu values)", n);
    *p = q;
    *cap = n;
    return 0;
}

int ctf_column_append(struct ctf_column *dst, const struct ctf_column *src, int dim, int sparse,
                      struct pt_err *e)
{
    size_t vals = sparse ? src->nnz : src->rows * (size_t)dim;
    size_t at = sparse ? dst->nnz : dst->rows * (size_t)dim;
    if (grow((void **)&dst->val, &dst->cap_val, at + vals, sizeof *dst->val, e))
        return PT_ENOMEM;
    if (sparse && (grow((void **)&dst->idx, &dst->cap_idx, at + vals, sizeof *dst->idx, e) ||
                   grow((void **)&dst->row_end, &dst->cap_rows, dst->rows + src->rows,
                        sizeof *dst->row_end, e)))
        return PT_ENOMEM;
    if (vals)
        memcpy(dst->val + at, src->val, vals * sizeof *dst->val);
    if (sparse) {
        if (vals)
            memcpy(dst->idx + at, src->idx, vals * sizeof *dst->idx);
        for (size_t r = 0; r < src->rows; r++)
            dst->row_end[dst->rows + r] = (uint32_t)(at + src->row_end[r]);
        dst->nnz += vals;
    }
    dst->rows += src->rows;
    return 0;
}

/* ------------------------------------------------------------------ lines */

struct cursor {
    const char *s, *p, *end;
    const struct ctf_where *at;
    struct pt_err *e;
};

static int col_of(const struct cursor *c)
{
    int col = 1;
    for (const char *q = c->s; q < c->p; q++)
        if ((*q & 0xC0) != 0x80)
            col++;
    return col;
}

/* Error at the cursor; the token there is quoted (cut at blanks, '|' and 30 chars). */
static int fail(const struct cursor *c, const char *what, const char *alias)
{
    const char *t = c->p;
    if (t < c->end && *t == '|')
        t++; /* quote "|name", not an empty token */
    while (t < c->end && !is_ws(*t) && *t != '|' && t - c->p < 40)
        t++;
    char tok[128];
    pt_excerpt(tok, sizeof tok, c->p, (size_t)(t - c->p), 30);
    if (alias)
        return pt_err_set(c->e, PT_EUSER, "%s:%zu:%d: error: input '%s': %s, got \"%s\"",
                          c->at->file, c->at->line, col_of(c), alias, what, tok);
    return pt_err_set(c->e, PT_EUSER, "%s:%zu:%d: error: %s, got \"%s\"", c->at->file, c->at->line,
                      col_of(c), what, tok);
}

static void skip_ws(struct cursor *c)
{
    while (c->p < c->end && is_ws(*c->p))
        c->p++;
}

static int at_value_end(const struct cursor *c, const char *q)
{
    return q == c->end || is_ws(*q) || *q == '|';
}

static int dense_row(struct cursor *c, const struct ctf_input *in, struct ctf_column *col,
                     int *padded)
{
    size_t base = col->rows * (size_t)in->dim;
    if (grow((void **)&col->val, &col->cap_val, base + (size_t)in->dim, sizeof(float), c->e))
        return c->e->code;
    float *v = col->val + base;
    int k = 0;
    for (;;) {
        skip_ws(c);
        if (c->p == c->end || *c->p == '|')
            break;
        if (k == in->dim)
            return fail(c, "more values than its dim", in->alias);
        const char *q = ctf_parse_float(c->p, c->end, &v[k]);
        if (!q || !at_value_end(c, q))
            return fail(c, "expected a number", in->alias);
        k++;
        c->p = q;
    }
    *padded = k < in->dim;
    for (; k < in->dim; k++)
        v[k] = 0.0f;
    col->rows++;
    return 0;
}

static int sparse_row(struct cursor *c, const struct ctf_input *in, struct ctf_column *col)
{
    if (grow((void **)&col->row_end, &col->cap_rows, col->rows + 1, sizeof(uint32_t), c->e))
        return c->e->code;
    for (;;) {
        skip_ws(c);
        if (c->p == c->end || *c->p == '|')
            break;
        const char *q = c->p;
        uint64_t index = 0;
        while (q < c->end && (unsigned)(*q - '0') < 10 && index <= UINT32_MAX)
            index = index * 10 + (uint64_t)(*q++ - '0');
        if (q == c->p || q == c->end || *q != ':')
            return fail(c, "expected index:value", in->alias);
        if (index >= (uint64_t)in->dim)
            return fail(c, "sparse index not below its dim", in->alias);
        if (grow((void **)&col->val, &col->cap_val, col->nnz + 1, sizeof(float), c->e) ||
            grow((void **)&col->idx, &col->cap_idx, col->nnz + 1, sizeof(int32_t), c->e))
            return c->e->code;
        const char *r = ctf_parse_float(q + 1, c->end, &col->val[col->nnz]);
        if (!r || !at_value_end(c, r)) {
            c->p = q + 1;
            return fail(c, "expected a number after ':'", in->alias);
        }
        col->idx[col->nnz++] = (int32_t)index;
        c->p = r;
    }
    col->row_end[col->rows++] = (uint32_t)col->nnz;
    return 0;
}

static int find_input(const struct ctf_input *inputs, int n, const char *a, size_t len)
{
    for (int i = 0; i < n; i++)
        if (strlen(inputs[i].alias) == len && memcmp(inputs[i].alias, a, len) == 0)
            return i;
    return -1;
}

static int parse_body(struct cursor *c, const struct ctf_input *inputs, int n,
                      struct ctf_column *cols, struct ctf_line *out)
{
    for (;;) {
        skip_ws(c);
        if (c->p == c->end)
            return 0;
        if (*c->p != '|')
            return fail(c, "expected '|' and an input name", NULL);
        c->p++;
        if (c->p < c->end && *c->p == '#') {
            while (c->p < c->end && *c->p != '|')
                c->p++;
            continue;
        }
        const char *a = c->p;
        while (c->p < c->end && !is_ws(*c->p) && *c->p != '|')
            c->p++;
        if (c->p == a)
            return fail(c, "'|' must be followed by an input name", NULL);
        int i = find_input(inputs, n, a, (size_t)(c->p - a));
        if (i < 0) {
            while (c->p < c->end && *c->p != '|')
                c->p++;
            continue;
        }
        if (out->rows & (1u << i)) {
            c->p = a;
            return fail(c, "input appears twice on one line", inputs[i].alias);
        }
        out->rows |= 1u << i;
        int padded = 0;
        int rc = inputs[i].sparse ? sparse_row(c, &inputs[i], &cols[i])
                                  : dense_row(c, &inputs[i], &cols[i], &padded);
        if (rc)
            return rc;
        if (padded)
            out->padded |= 1u << i;
    }
}

int ctf_parse_line(const struct ctf_input *inputs, int ninputs, struct ctf_column *cols,
                   const char *s, size_t len, int ids, const struct ctf_where *at,
                   struct ctf_line *out, struct pt_err *e)
{
    size_t rows[CTF_MAX_INPUTS], nnz[CTF_MAX_INPUTS];
    memset(out, 0, sizeof *out);
    if (ninputs > CTF_MAX_INPUTS)
        return pt_err_set(e, PT_EUSER, "error: more than %d reader inputs", CTF_MAX_INPUTS);
    while (len > 0 && (s[len - 1] == '\r' || is_ws(s[len - 1])))
        len--;
    for (int i = 0; i < ninputs; i++) {
        rows[i] = cols[i].rows;
        nnz[i] = cols[i].nnz;
    }
    struct cursor c = {.s = s, .p = s, .end = s + len, .at = at, .e = e};
    skip_ws(&c);
    int rc = 0;
    if (c.p < c.end && (unsigned)(*c.p - '0') < 10) {
        if (!ids)
            rc = fail(&c,
                      "unexpected sequence id (this file has none: its first line starts "
                      "with '|')",
                      NULL);
        const char *q = c.p;
        uint64_t id = 0;
        while (rc == 0 && q < c.end && (unsigned)(*q - '0') < 10) {
            if (id > (UINT64_MAX - 9) / 10)
                rc = fail(&c, "sequence id too large", NULL);
            id = id * 10 + (uint64_t)(*q++ - '0');
        }
        if (rc == 0 && q < c.end && !is_ws(*q) && *q != '|')
            rc = fail(&c, "expected a sequence id (digits)", NULL);
        out->has_id = 1;
        out->id = id;
        c.p = q;
    }
    if (rc == 0)
        rc = parse_body(&c, inputs, ninputs, cols, out);
    if (rc == 0 && ids && !out->has_id && out->rows) {
        c.p = s;
        skip_ws(&c);
        rc = fail(&c, "expected a sequence id at the start of the line", NULL);
    }
    if (rc) {
        for (int i = 0; i < ninputs; i++) {
            cols[i].rows = rows[i];
            cols[i].nnz = nnz[i];
        }
        memset(out, 0, sizeof *out);
        return rc;
    }
    out->empty = out->rows == 0;
    return 0;
}
