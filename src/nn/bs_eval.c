/* BrainScript evaluation: syntax tree -> node graph (see bs_eval.h). This file: the
 * arena, records and their lazy members, expressions and the roots; arrays are in
 * bs_array.c, calls in bs_call.c, the built-ins in bs_builtins.c (map in
 * bs_eval_internal.h).
 *
 * Values are numbers, booleans, strings, nodes (graph indices), records, arrays and
 * functions. Everything the evaluation allocates comes from one arena freed at the end;
 * only the graph survives. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/bs_eval_internal.h"

void *bse_alloc(struct ev *v, size_t size)
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

const char *bse_kind_name(enum bv_kind k)
{
    static const char *names[] = {"None",     "a number", "a boolean",  "a string",   "a node",
                                  "a record", "an array", "a function", "an argument"};
    return names[k];
}

int bse_type_error(struct ev *v, const struct bs_node *at, const char *what, const char *want,
                   const struct bv *got)
{
    return bs_error(v->e, at, "%s: expected %s, got %s", what, want, bse_kind_name(got->k));
}

/* ------------------------------------------------------------------ records */

struct benv *bse_new_env(struct ev *v, struct benv *parent, size_t n, const char *path)
{
    struct benv *r = bse_alloc(v, sizeof *r);
    if (!r || !(r->slots = bse_alloc(v, (n ? n : 1) * sizeof *r->slots)))
        return NULL;
    r->parent = parent;
    r->n = n;
    snprintf(r->path, sizeof r->path, "%s", path ? path : "");
    return r;
}

struct benv *bse_record_env(struct ev *v, const struct bs_node *rec, struct benv *parent,
                            const char *path)
{
    struct benv *r = bse_new_env(v, parent, rec->nitems, path);
    if (!r)
        return NULL;
    for (size_t i = 0; i < rec->nitems; i++) {
        r->slots[i].name = rec->items[i]->str;
        r->slots[i].expr = rec->items[i]->a;
    }
    return r;
}

struct bslot *bse_find_local(struct benv *r, const char *name)
{
    for (size_t i = r->n; i-- > 0;) /* a later definition of a name wins */
        if (!strcmp(r->slots[i].name, name))
            return &r->slots[i];
    return NULL;
}

/* dst = "path.member", or "member" when path is "", cut to size - 1 bytes. */
void bse_path_join(char *dst, size_t size, const char *path, const char *member)
{
    size_t k = 0;
    for (const char *s = path; *s && k + 1 < size; s++)
        dst[k++] = *s;
    if (path[0] && k + 1 < size)
        dst[k++] = '.';
    for (const char *s = member; *s && k + 1 < size; s++)
        dst[k++] = *s;
    dst[k] = '\0';
}

void bse_name_new(struct ev *v, int node, const char *member)
{
    struct g_node *n = &v->g->nodes[node];
    if (!n->name[0])
        bse_path_join(n->name, sizeof n->name, v->path, member);
}

int bse_force(struct ev *v, const struct bs_node *at, struct benv *r, struct bslot *s,
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
    /* the path of what is made meanwhile: the member's, inside its record's */
    char outer[sizeof v->path];
    memcpy(outer, v->path, sizeof outer);
    bse_path_join(v->path, sizeof v->path, r->path, s->name);
    int rc = bse_eval(v, s->expr, s->env ? s->env : r, &s->val);
    if (rc == 0 && s->val.k == BV_NODE && !v->g->nodes[s->val.node].name[0]) /* a new node */
        bse_path_join(v->g->nodes[s->val.node].name, sizeof v->g->nodes[0].name, "", v->path);
    memcpy(v->path, outer, sizeof outer);
    if (rc)
        return rc;
    if (s->val.k == BV_ARR && s->val.arr->lazy && !s->val.arr->name)
        s->val.arr->name = s->name;
    s->state = SLOT_DONE;
    *out = s->val;
    return 0;
}

/* ------------------------------------------------------------------ expressions */

static int lookup(struct ev *v, const struct bs_node *x, struct benv *env, struct bv *out)
{
    for (struct benv *r = env; r; r = r->parent) {
        struct bslot *s = bse_find_local(r, x->str);
        if (s)
            return bse_force(v, x, r, s, out);
    }
    int found = 0, rc = bse_builtin_lookup(v, x->str, out, &found);
    if (rc || found)
        return rc;
    if (!strcmp(x->str, "Inferred")) {
        *out = (struct bv){.k = BV_NUM, .num = 0};
        return 0;
    }
    if (!strcmp(x->str, "None")) {
        *out = (struct bv){.k = BV_NONE};
        return 0;
    }
    if (bse_not_yet(x->str))
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
        user_bs |= bse_find_local(r, base->str) != NULL;
    if (base->kind == BS_ID && !strcmp(base->str, "BS") && !user_bs) {
        struct bs_node id = *x;
        id.kind = BS_ID;
        char qualified[128]; /* BS.Sequences.Last: the built-in "Sequences.Last" */
        if (x->a->kind == BS_DOT) {
            snprintf(qualified, sizeof qualified, "%s.%s", x->a->str, x->str);
            if (bse_find_builtin(qualified))
                id.str = qualified;
        }
        int rc = lookup(v, &id, v->prelude, out);
        if (rc && v->e->code == PT_EUSER && !bse_find_builtin(x->str)) {
            pt_err_clear(v->e);
            return bs_error(v->e, x, "BS.%s%s%s is not supported yet by partrain's BrainScript",
                            x->a->kind == BS_DOT ? x->a->str : "", x->a->kind == BS_DOT ? "." : "",
                            x->str);
        }
        return rc;
    }
    struct bv rec;
    int rc = bse_eval(v, x->a, env, &rec);
    if (rc)
        return rc;
    if (rec.k != BV_REC && rec.members) /* an NDL macro's result: its lines (L1.W) */
        rec = (struct bv){.k = BV_REC, .rec = rec.members};
    if (rec.k != BV_REC)
        return bse_type_error(v, x, "'.' member access", "a record", &rec);
    struct bslot *s = bse_find_local(rec.rec, x->str);
    if (!s)
        return bs_error(v->e, x, "the record has no member '%s'", x->str);
    return bse_force(v, x, rec.rec, s, out);
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
        } else if (!strcmp(op, "%")) { /* CNTK's: fmod, the sign of a */
            if (b == 0)
                return bs_error(v->e, x, "'%%' by zero");
            r = fmod(a, b);
        } else if (!strcmp(op, "**")) {
            r = pow(a, b);
            if (!isfinite(r))
                return bs_error(v->e, x, "'**': %g ** %g is not a finite number", a, b);
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
    int rc = bse_eval(v, x->a, env, &a);
    if (rc)
        return rc;
    if (!strcmp(op, "&&") && a.k == BV_NODE) { /* of two nodes: their product, as CNTK's */
        if ((rc = bse_eval(v, x->b, env, &b)) != 0)
            return rc;
        if (b.k != BV_NODE)
            return bse_type_error(v, x->b, op, "a node (beside a node)", &b);
        struct bv args[2] = {a, b};
        return bse_node_op(v, x, "ElementTimes", args, out);
    }
    if (!strcmp(op, "&&") || !strcmp(op, "||")) { /* short-circuit, as in CNTK */
        if (a.k != BV_BOOL)
            return bse_type_error(v, x->a, op, "a boolean", &a);
        if ((a.num != 0) == (op[0] == '|')) {
            *out = a;
            return 0;
        }
        if ((rc = bse_eval(v, x->b, env, &b)) != 0)
            return rc;
        if (b.k != BV_BOOL)
            return bse_type_error(v, x->b, op, "a boolean", &b);
        *out = b;
        return 0;
    }
    if ((rc = bse_eval(v, x->b, env, &b)) != 0)
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
        char *s = bse_alloc(v, la + lb + 1);
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
        /* as CNTK: a number times a node scales it (x * 1/256); a node over a number is
         * the node times the number's reciprocal; over a node, ElementDivide: times the
         * node's Reciprocal */
        int scale = !strcmp(op, "*") && (a.k == BV_NUM || b.k == BV_NUM);
        if (!strcmp(op, "/") && b.k == BV_NUM) {
            if (b.num == 0)
                return bs_error(v->e, x, "division by zero");
            b.num = 1.0 / b.num;
            scale = 1;
        } else if (!strcmp(op, "/")) {
            if ((rc = bse_node_op(v, x, "Reciprocal", &b, &b)) != 0)
                return rc;
            scale = 1;
        }
        /* the comparisons make CNTK's comparison nodes (x > 0: Greater (x, 0)) */
        const char *kind = scale               ? "ElementTimes"
                           : !strcmp(op, "*")  ? "Times"
                           : !strcmp(op, "+")  ? "Plus"
                           : !strcmp(op, "-")  ? "Minus"
                           : !strcmp(op, ".*") ? "ElementTimes"
                           : !strcmp(op, "<")  ? "Less"
                           : !strcmp(op, "<=") ? "LessEqual"
                           : !strcmp(op, ">")  ? "Greater"
                           : !strcmp(op, ">=") ? "GreaterEqual"
                           : !strcmp(op, "==") ? "Equal"
                           : !strcmp(op, "!=") ? "NotEqual"
                                               : NULL;
        if (!kind)
            return bs_error(
                v->e, x, "'%s' on nodes is not supported (use +, -, *, /, .* or a comparison)", op);
        struct bv args[2] = {a, b};
        return bse_node_op(v, x, kind, args, out);
    }
    return bs_error(v->e, x, "'%s' cannot combine %s and %s", op, bse_kind_name(a.k),
                    bse_kind_name(b.k));
}

static int eval_unop(struct ev *v, const struct bs_node *x, struct benv *env, struct bv *out)
{
    struct bv a;
    int rc = bse_eval(v, x->a, env, &a);
    if (rc)
        return rc;
    if (!strcmp(x->op, "!")) {
        if (a.k != BV_BOOL)
            return bse_type_error(v, x, "'!'", "a boolean", &a);
        *out = (struct bv){.k = BV_BOOL, .num = a.num == 0};
        return 0;
    }
    if (a.k == BV_NUM) {
        *out = (struct bv){.k = BV_NUM, .num = x->op[0] == '-' ? -a.num : a.num};
        return 0;
    }
    if (a.k != BV_NODE)
        return bse_type_error(v, x, x->op, "a number or a node", &a);
    if (x->op[0] == '+') {
        *out = a;
        return 0;
    }
    return bse_node_op(v, x, "Negate", &a, out);
}

/* new ComputationNode [ operation = 'NAME' ; inputs = ... ; ... ] (CNTK.core.bs's own form):
 * the function NAME as BrainScript names it (partrain's built-in or CNTK.core.bs definition),
 * called with the inputs (a value or an array of them) as its positional arguments and the
 * record's other members as named ones, tag included; an operation partrain lacks is
 * refused by name, and a member the function does not take by its own error. */
static int new_node(struct ev *v, const struct bs_node *x, struct benv *env, struct bv *out)
{
    struct benv *r = bse_record_env(v, x, env, v->path);
    if (!r)
        return v->e->code;
    struct bslot *op = bse_find_local(r, "operation"), *in = bse_find_local(r, "inputs");
    struct bv name, ins = {.k = BV_NONE}, fn;
    int rc =
        op ? bse_force(v, x, r, op, &name) : bs_error(v->e, x, "new ComputationNode: no operation");
    if (rc == 0 && name.k != BV_STR)
        rc = bse_type_error(v, x, "new ComputationNode's operation", "a string", &name);
    if (rc == 0 && in)
        rc = bse_force(v, x, r, in, &ins);
    if (rc == 0 && ins.k == BV_ARR)
        rc = bse_arr_force(v, x, &ins);
    if (rc)
        return rc;
    struct bs_node id = *x;
    id.kind = BS_ID;
    id.str = name.str;
    if ((rc = lookup(v, &id, v->prelude, &fn)) != 0) {
        if (rc != PT_EUSER || !strstr(v->e->msg, "unknown name"))
            return rc;
        pt_err_clear(v->e);
        return bs_error(v->e, x, "new ComputationNode: operation '%s' is not supported by partrain",
                        name.str);
    }
    size_t npos = ins.k == BV_ARR ? ins.arr->n : ins.k == BV_NONE ? 0 : 1, nnamed = 0;
    struct bv *pos = ins.k == BV_ARR ? ins.arr->v : &ins;
    const struct bs_node **names = bse_alloc(v, (r->n + 1) * sizeof *names);
    struct bs_node *ids = bse_alloc(v, (r->n + 1) * sizeof *ids);
    struct bv *vals = bse_alloc(v, (r->n + 1) * sizeof *vals);
    if (!names || !ids || !vals)
        return v->e->code;
    for (size_t i = 0; i < r->n; i++) {
        struct bslot *s = &r->slots[i];
        if (s == op || s == in)
            continue;
        ids[nnamed] = s->expr ? *s->expr : *x;
        ids[nnamed].kind = BS_ID;
        ids[nnamed].str = s->name;
        names[nnamed] = &ids[nnamed];
        if ((rc = bse_force(v, x, r, s, &vals[nnamed++])) != 0)
            return rc;
    }
    return bse_call(v, x, &fn, pos, npos, names, vals, nnamed, out);
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
        if (x->str && !strcmp(x->str, "ComputationNode"))
            return new_node(v, x, env, out);
        if (x->str)
            return bs_error(v->e, x, "'new %s [...]' is CNTK's internal form; not supported",
                            x->str);
        struct benv *r = bse_record_env(v, x, env, v->path);
        if (!r)
            return v->e->code;
        *out = (struct bv){.k = BV_REC, .rec = r};
        return 0;
    }
    case BS_LAMBDA: {
        struct bfn *f = bse_alloc(v, sizeof *f);
        if (!f)
            return v->e->code;
        f->k = FN_LAMBDA;
        f->lam = x;
        f->env = env;
        *out = (struct bv){.k = BV_FN, .fn = f};
        return 0;
    }
    case BS_ARRAY: return bse_eval_array(v, x, env, out);
    case BS_CALL: return bse_eval_call(v, x, env, out);
    case BS_DOT: return eval_dot(v, x, env, out);
    case BS_INDEX: return bse_eval_index(v, x, env, out);
    case BS_IF: {
        struct bv c;
        int rc = bse_eval(v, x->a, env, &c);
        if (rc)
            return rc;
        if (c.k != BV_BOOL)
            return bse_type_error(v, x->a, "if", "a boolean condition", &c);
        return bse_eval(v, c.num != 0 ? x->b : x->c, env, out);
    }
    case BS_BINOP: return eval_binop(v, x, env, out);
    case BS_UNOP: return eval_unop(v, x, env, out);
    case BS_FOR: return bse_eval_for(v, x, env, out);
    case BS_DEF: break;
    }
    return bs_error(v->e, x, "unexpected definition here");
}

int bse_eval(struct ev *v, const struct bs_node *x, struct benv *env, struct bv *out)
{
    if (++v->depth > v->max_depth) {
        v->depth--;
        return bs_error(v->e, x, "expressions nested deeper than %d", v->max_depth);
    }
    int rc = eval_inner(v, x, env, out);
    v->depth--;
    return rc;
}
