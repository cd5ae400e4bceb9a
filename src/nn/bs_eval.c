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
static void path_join(char *dst, size_t size, const char *path, const char *member)
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
        path_join(n->name, sizeof n->name, v->path, member);
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
    path_join(v->path, sizeof v->path, r->path, s->name);
    int rc = bse_eval(v, s->expr, s->env ? s->env : r, &s->val);
    if (rc == 0 && s->val.k == BV_NODE && !v->g->nodes[s->val.node].name[0]) /* a new node */
        path_join(v->g->nodes[s->val.node].name, sizeof v->g->nodes[0].name, "", v->path);
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
        const char *kind = scale               ? "ElementTimes"
                           : !strcmp(op, "*")  ? "Times"
                           : !strcmp(op, "+")  ? "Plus"
                           : !strcmp(op, "-")  ? "Minus"
                           : !strcmp(op, ".*") ? "ElementTimes"
                                               : NULL;
        if (!kind)
            return bs_error(v->e, x, "'%s' on nodes is not supported (use +, -, *, / or .*)", op);
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
    if (++v->depth > MAX_DEPTH) {
        v->depth--;
        return bs_error(v->e, x, "expressions nested deeper than %d", MAX_DEPTH);
    }
    int rc = eval_inner(v, x, env, out);
    v->depth--;
    return rc;
}

/* ------------------------------------------------------------------ the roots */

/* The nodes of root list `key` (a node or an array of nodes) into out[0 .. *n), at most
 * max of them (evaluationNodes: NN_EVAL_MAX; criterionNodes: one; featureNodes,
 * labelNodes and outputNodes: the first is the one used); *n = 0 when absent. */
static int root_nodes(struct ev *v, struct benv *root, const char *key, int *out, int max, int *n)
{
    *n = 0;
    struct bslot *s = bse_find_local(root, key);
    if (!s)
        return 0;
    struct bv val;
    int rc = bse_force(v, s->expr, root, s, &val);
    if (rc)
        return rc;
    if (val.k != BV_ARR) {
        if (val.k != BV_NODE)
            return bse_type_error(v, s->expr, key, "a node or an array of nodes", &val);
        out[(*n)++] = val.node;
        return 0;
    }
    if ((rc = bse_arr_force(v, s->expr, &val)) != 0)
        return rc;
    for (size_t i = 0; i < val.arr->n; i++)
        if (val.arr->v[i].k != BV_NODE)
            return bse_type_error(v, s->expr, key, "nodes", &val.arr->v[i]);
    int first_only =
        !strcmp(key, "featureNodes") || !strcmp(key, "labelNodes") || !strcmp(key, "outputNodes");
    if (val.arr->n > (size_t)max && !first_only)
        return max == 1
                   ? bs_error(v->e, s->expr, "%s: more than one node is not supported yet", key)
                   : bs_error(v->e, s->expr, "%s: %zu nodes; at most %d are supported", key,
                              val.arr->n, max);
    for (size_t i = 0; i < val.arr->n && *n < max; i++)
        out[(*n)++] = val.arr->v[i].node;
    return 0;
}

/* The groups that no criterionNodes, evaluationNodes or outputNodes names, from the nodes'
 * tags, as CNTK makes them: the nodes tagged 'criterion' (one at most), 'evaluation' (up to
 * NN_EVAL_MAX, in the order made) and 'output' (the first) fill the groups not named.
 * Without criterionNodes (`all`), every top-level member is evaluated first, as each is a
 * root of CNTK's network; with it, the tagged nodes are those its nodes reach (a network
 * that names its criterion keeps the nodes, and the order they are made in, that it always
 * had). */
static int tagged_roots(struct ev *v, struct benv *root, int all, int roots[5], int *evals,
                        int *nev)
{
    for (size_t i = 0; all && i < root->n; i++) {
        struct bv val;
        int rc = bse_force(v, root->slots[i].expr, root, &root->slots[i], &val);
        if (rc)
            return rc;
    }
    static const struct {
        int root;
        enum g_tag tag;
        const char *name;
    } groups[] = {{2, G_TAG_CRITERION, "criterion"},
                  {3, G_TAG_EVALUATION, "evaluation"},
                  {4, G_TAG_OUTPUT, "output"}};
    for (size_t k = 0; k < sizeof groups / sizeof *groups; k++) {
        int ev = groups[k].tag == G_TAG_EVALUATION;
        if (ev ? *nev > 0 : roots[groups[k].root] >= 0)
            continue;
        for (int i = 0; i < v->g->n; i++) {
            const struct g_node *n = &v->g->nodes[i];
            if (n->tag != groups[k].tag)
                continue;
            if (ev && *nev == NN_EVAL_MAX)
                return pt_err_set(v->e, PT_EUSER,
                                  "%s: error: '%s' is tagged 'evaluation': more than %d "
                                  "evaluation nodes are not supported",
                                  n->where, n->name[0] ? n->name : n->kind->name, NN_EVAL_MAX);
            if (ev) {
                evals[(*nev)++] = i;
                continue;
            }
            int first = roots[groups[k].root];
            if (first >= 0 && groups[k].tag != G_TAG_OUTPUT)
                return pt_err_set(v->e, PT_EUSER,
                                  "%s: error: '%s' is tagged '%s' as '%s' is (%s): more than one "
                                  "%s node is not supported yet",
                                  n->where, n->name[0] ? n->name : n->kind->name, groups[k].name,
                                  v->g->nodes[first].name[0] ? v->g->nodes[first].name
                                                             : v->g->nodes[first].kind->name,
                                  v->g->nodes[first].where, groups[k].name);
            if (first < 0)
                roots[groups[k].root] = i;
        }
    }
    return 0;
}

/* Names as CNTK gives them: a top-level member's node is called by the member's name (not
 * featureNodes and the other groups), unless it has a top-level name already (the first
 * member that made or named it, in the order written: `x = features` leaves the Input
 * called features, which is how the reader's inputs find it); a name that two nodes would
 * share gets a '_' in front on the later one until it is the only one (CNTK's
 * makeUniqueName). */
static void name_roots(struct ev *v, struct benv *root)
{
    struct nn_graph *g = v->g;
    for (size_t i = 0; i < root->n; i++) {
        const struct bslot *s = &root->slots[i];
        size_t len = strlen(s->name); /* not featureNodes, criterionNodes, ... */
        int group = len > 5 && !strcmp(s->name + len - 5, "Nodes");
        if (s->state != SLOT_DONE || s->val.k != BV_NODE || group)
            continue;
        char *name = g->nodes[s->val.node].name;
        if (!name[0] || strpbrk(name, ".["))
            path_join(name, sizeof g->nodes[0].name, "", s->name);
    }
    for (int i = 0; i < g->n; i++) {
        char *name = g->nodes[i].name;
        for (int tries = 0; name[0];) {
            int j = 0;
            while (j < g->n && (j == i || strcmp(g->nodes[j].name, name)))
                j++;
            if (j == g->n)
                break;
            if (j > i) /* the later node gets the '_' */
                break;
            if (++tries > 8) { /* too long to grow: its index makes it unique */
                snprintf(name, sizeof g->nodes[0].name, "_%d", i);
                break;
            }
            memmove(name + 1, name, sizeof g->nodes[0].name - 2);
            name[0] = '_';
            name[sizeof g->nodes[0].name - 1] = '\0';
        }
    }
}

/* CNTK's network is what its roots reach: the groups' nodes and every top-level member
 * that is a node. The rest was made on the way and is not part of it (a layer function
 * never applied, its parameters): dead, neither a parameter nor a constant. */
static int drop_unreached(struct ev *v, struct benv *root)
{
    struct nn_graph *g = v->g;
    int *stack = pt_calloc((size_t)g->n + 1, sizeof *stack, v->e);
    char *seen = pt_calloc((size_t)g->n + 1, 1, v->e);
    int top = 0, rc = stack && seen ? 0 : v->e->code;
    for (size_t i = 0; rc == 0 && i < root->n; i++)
        if (root->slots[i].state == SLOT_DONE && root->slots[i].val.k == BV_NODE &&
            !seen[root->slots[i].val.node]) {
            seen[root->slots[i].val.node] = 1;
            stack[top++] = root->slots[i].val.node;
        }
    int groups[3 + NN_EVAL_MAX] = {g->crit, g->eval, g->out};
    for (int k = 0; k < g->n_eval_more; k++)
        groups[3 + k] = g->eval_more[k];
    for (int k = 0; rc == 0 && k < 3 + g->n_eval_more; k++)
        if (!seen[groups[k]]) {
            seen[groups[k]] = 1;
            stack[top++] = groups[k];
        }
    while (rc == 0 && top > 0) {
        const struct g_node *n = &g->nodes[stack[--top]];
        for (int k = 0; k < n->kind->nin; k++)
            if (!seen[n->in[k]]) {
                seen[n->in[k]] = 1;
                stack[top++] = n->in[k];
            }
    }
    for (int i = 0; rc == 0 && i < g->n; i++)
        if (!seen[i]) {
            g->nodes[i].dead = 1;
            g->nodes[i].learnable = g->nodes[i].is_const = 0;
        }
    free(stack);
    free(seen);
    return rc;
}

int bs_build_graph(struct bs_tree *tree, struct nn_graph *g, struct pt_err *e)
{
    struct ev v = {.g = g, .e = e, .root = bs_tree_root(tree)};
    struct bs_tree *pre = NULL; /* the outer scope: bs_prelude.c */
    int rc = bs_parse(bs_prelude, strlen(bs_prelude), bs_prelude_file, 1, 1, &pre, e);
    struct benv *outer = rc == 0 ? bse_record_env(&v, bs_tree_root(pre), NULL, "") : NULL;
    struct benv *root = outer ? bse_record_env(&v, v.root, outer, "") : NULL;
    v.prelude = outer;
    rc = rc ? rc : root ? 0 : e->code;
    const char *keys[] = {"featureNodes", "labelNodes", "criterionNodes", "evaluationNodes",
                          "outputNodes"};
    int roots[5] = {-1, -1, -1, -1, -1}, evals[NN_EVAL_MAX], nev = 0;
    for (int i = 0; rc == 0 && i < 5; i++) {
        int got[NN_EVAL_MAX], n = 0;
        rc = root_nodes(&v, root, keys[i], got, i == 3 ? NN_EVAL_MAX : 1, &n);
        if (rc == 0 && i == 3)
            memcpy(evals, got, (size_t)(nev = n) * sizeof *got);
        else if (rc == 0 && n)
            roots[i] = got[0];
    }
    if (rc == 0 && (roots[2] < 0 || nev == 0 || roots[4] < 0))
        rc = tagged_roots(&v, root, roots[2] < 0, roots, evals, &nev);
    /* the delays' inputs, now that the definitions they close a loop over exist (an input
     * may make more delays: the list grows while it is walked) */
    for (size_t i = 0; rc == 0 && i < v.nfix; i++) {
        struct fixup f = v.fix[i];
        struct bv x;
        rc = bse_eval(&v, f.expr, f.env, &x);
        if (rc == 0)
            rc = bse_as_node(&v, f.expr, g->nodes[f.node].kind->name, &x);
        if (rc == 0)
            g->nodes[f.node].in[0] = x.node;
    }
    free(v.fix);
    if (rc == 0 && roots[2] < 0)
        rc = bs_error(e, v.root,
                      "the network has no criterionNodes and no node tagged 'criterion' (say "
                      "criterionNodes = (ce) in the BrainScriptNetworkBuilder block)");
    /* the criterion, then the evaluation nodes; a node of the network's own among them is
     * summed over the samples by a criterion node made for it (one for all the groups that
     * name the same node) */
    int all[1 + NN_EVAL_MAX], own[1 + NN_EVAL_MAX], nall = 1 + nev;
    all[0] = roots[2];
    memcpy(all + 1, evals, (size_t)nev * sizeof *evals);
    for (int i = 0; rc == 0 && i < nall; i++) {
        own[i] = -1;
        if (g->nodes[all[i]].kind->crit)
            continue;
        int j = 0;
        while (j < i && own[j] != all[i])
            j++;
        if (j < i) { /* the criterion node made for an earlier group */
            own[i] = own[j];
            all[i] = all[j];
            continue;
        }
        char where[sizeof g->nodes[0].where]; /* g_add may move the nodes */
        memcpy(where, g->nodes[all[i]].where, sizeof where);
        int in[2] = {all[i], all[i]};
        int id = g_add(g, &g_kind_own_crit, in, 2, where, e);
        if (id < 0)
            rc = e->code;
        own[i] = all[i];
        all[i] = id;
    }
    if (rc == 0 && g->nodes[all[0]].kind->crit == BK_CRIT_CLASS_ERR + 1)
        rc = bs_error(e, v.root,
                      "criterionNodes: '%s' (ClassificationError) has no gradient to train with; "
                      "make it an evaluationNodes",
                      g->nodes[all[0]].name);
    if (rc == 0) { /* CNTK reports a node once: the further ones that repeat one are left out */
        g->crit = all[0];
        g->eval = nall > 1 ? all[1] : all[0];
        g->n_eval_more = 0;
        for (int i = 2; i < nall; i++) {
            int dup = 0;
            for (int j = 0; j < i; j++)
                dup |= all[j] == all[i];
            if (!dup)
                g->eval_more[g->n_eval_more++] = all[i];
        }
        g->out = roots[4] >= 0 ? roots[4] : g->nodes[g->crit].in[1];
    }
    for (int i = 0; rc == 0 && i < nall; i++) { /* before g_finish fuses nodes */
        const struct g_node *c = &g->nodes[all[i]], *y = &g->nodes[c->in[0]];
        if (!y->is_input && c->kind != &g_kind_own_crit)
            rc = pt_err_set(e, PT_EUSER,
                            "%s: error: %s: the first operand (labels) must be an Input node, "
                            "got %s",
                            c->where, c->kind->name, y->kind->name);
    }
    if (rc == 0)
        name_roots(&v, root);
    for (int i = 0; rc == 0 && i < nall; i++) /* an own criterion goes by its node's name */
        if (own[i] >= 0)
            memcpy(g->nodes[all[i]].name, g->nodes[own[i]].name, sizeof g->nodes[0].name);
    if (rc == 0)
        rc = drop_unreached(&v, root);
    if (rc == 0)
        rc = g_finish(g, e);
    while (v.mem) {
        struct chunk *next = v.mem->next;
        free(v.mem);
        v.mem = next;
    }
    bs_tree_free(pre);
    return rc;
}
