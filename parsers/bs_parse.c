/* BrainScript tokens -> syntax tree: a recursive-descent parser for the grammar in bs.h.
 *
 * Nodes and their strings live in an arena of chunks owned by the tree, so bs_tree_free
 * frees everything at once and a failed parse leaks nothing. Every error names FILE:LINE:COL,
 * what was expected and what was found. Nesting deeper than MAX_DEPTH levels and trees
 * taller than MAX_HEIGHT nodes are refused, so neither this parser nor a recursive walk of
 * its trees can run out of stack on hostile text. */
#include "parsers/bs.h"

#include <stdalign.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parsers/bs_internal.h"
#include "parsers/bs_parse_internal.h"

static struct bs_node *expr(struct parser *p);

/* ------------------------------------------------------------------ expressions */

/* name = value (a member, a named argument or a parameter's default) */
static struct bs_node *def(struct parser *p, const struct bs_tok *name, struct bs_node *value)
{
    struct bs_node *n = bsp_named(p, BS_DEF, name, name->s, name->len);
    if (!n)
        return NULL;
    n->a = value;
    return bsp_seal(p, n);
}

/* A comma-separated list up to the closer of `open` (taken), each item read by `item`. */
static int list(struct parser *p, const struct bs_tok *open, struct vec *v,
                struct bs_node *(*item)(struct parser *p))
{
    if (bsp_is(p, bsp_closer_of(open->kind))) {
        bsp_next(p);
        return 0;
    }
    for (;;) {
        struct bs_node *x = item(p);
        if (!x || bsp_push(p, v, x))
            return -1;
        if (!bsp_is(p, TK_COMMA))
            return bsp_expect_closer(p, open, "',' or ");
        bsp_next(p);
    }
}

/* arg := expr | NAME '=' expr */
static struct bs_node *arg(struct parser *p)
{
    const struct bs_tok *t = bsp_cur(p);
    if (t->kind != TK_NAME || bsp_ahead(p, 1)->kind != TK_ASSIGN)
        return expr(p);
    bsp_next(p);
    bsp_next(p);
    struct bs_node *v = expr(p);
    return v ? def(p, t, v) : NULL;
}

/* param := NAME | NAME '=' expr */
static struct bs_node *param(struct parser *p)
{
    const struct bs_tok *t = bsp_cur(p);
    if (t->kind != TK_NAME)
        return bsp_expected(p, "a parameter name");
    bsp_next(p);
    if (!bsp_is(p, TK_ASSIGN))
        return bsp_named(p, BS_ID, t, t->s, t->len);
    bsp_next(p);
    struct bs_node *v = expr(p);
    return v ? def(p, t, v) : NULL;
}

/* NDL's arrays, (a, b, c) and {a, b, c}: the items after the first, x, up to the closer */
static struct bs_node *ndl_array(struct parser *p, const struct bs_tok *open, struct bs_node *x)
{
    struct bs_node *n = bsp_mk_at(p, BS_ARRAY, open);
    struct vec v = {0};
    if (!n || bsp_push(p, &v, x))
        return NULL;
    while (bsp_is(p, TK_COMMA)) {
        bsp_next(p);
        if (!(x = expr(p)) || bsp_push(p, &v, x))
            return NULL;
    }
    if (bsp_expect_closer(p, open, "',' or "))
        return NULL;
    n->items = v.v;
    n->nitems = v.n;
    return bsp_seal(p, n);
}

static struct bs_node *parens(struct parser *p)
{
    const struct bs_tok *open = bsp_next(p);
    struct bs_node *x = expr(p);
    if (x && p->ndl && bsp_is(p, TK_COMMA))
        return ndl_array(p, open, x);
    if (x && p->ndl && x->kind == BS_ID) /* NDL's (a): an array of one, not a rename */
        x->op = "()";
    return x && bsp_expect_closer(p, open, "") == 0 ? x : NULL;
}

static struct bs_node *body(struct parser *p, const struct bs_tok *open);

/* '[' body ']' or '{' body '}' */
static struct bs_node *record(struct parser *p)
{
    const struct bs_tok *open = bsp_next(p);
    struct bs_node *r = body(p, open);
    if (r)
        bsp_next(p); /* body() stopped at the closer */
    return r;
}

/* 'new' NAME '[' body ']' */
static struct bs_node *new_record(struct parser *p)
{
    const struct bs_tok *kw = bsp_next(p), *name = bsp_cur(p);
    char ex[64];
    if (name->kind != TK_NAME)
        return bsp_expected(p, "a type name after 'new'");
    bsp_next(p);
    if (!bsp_is(p, TK_LBRACK))
        return bsp_expected(p, "'[' after 'new %s'", bsp_tok_text(name, ex, sizeof ex));
    struct bs_node *r = record(p);
    if (!r || !(r->str = bsp_copy(p, name->s, name->len)))
        return NULL;
    r->file = bsp_file_of(p, kw->line);
    r->line = bsp_line_of(kw->line);
    r->col = kw->col;
    return r;
}

static struct bs_node *array_of(struct parser *p);

/* '[|' [ expr { ';' expr } ] '|]': CNTK's array literal (F#'s), a : b : c that may also
 * hold one element or none */
static struct bs_node *array_literal(struct parser *p)
{
    const struct bs_tok *open = bsp_next(p);
    struct bs_node *n = bsp_mk_at(p, BS_ARRAY, open);
    struct vec v = {0};
    if (!n)
        return NULL;
    while (!bsp_is(p, TK_RARRAY)) {
        struct bs_node *x = expr(p);
        if (!x || bsp_push(p, &v, x))
            return NULL;
        if (!bsp_is(p, TK_SEMI))
            break;
        bsp_next(p);
    }
    if (bsp_expect_closer(p, open, "';' or "))
        return NULL;
    n->items = v.v;
    n->nitems = v.n;
    return bsp_seal(p, n);
}

static struct bs_node *primary(struct parser *p)
{
    const struct bs_tok *t = bsp_cur(p);
    struct bs_node *n;
    char ex[64];
    switch (t->kind) {
    case TK_NUM:
    case TK_TRUE:
    case TK_FALSE:
        bsp_next(p);
        n = bsp_mk_at(p, t->kind == TK_NUM ? BS_NUM : BS_BOOL, t);
        if (n)
            n->num = t->kind == TK_NUM ? t->num : t->kind == TK_TRUE;
        return n;
    case TK_NAME:
        if (t->len == 5 && !memcmp(t->s, "array", 5) && bsp_ahead(p, 1)->kind == TK_LBRACK)
            return array_of(p);
        bsp_next(p);
        return bsp_named(p, BS_ID, t, t->s, t->len);
    case TK_STR:
    case TK_VAR:
        bsp_next(p);
        return bsp_named(p, t->kind == TK_STR ? BS_STR : BS_VAR, t, t->s + 1, t->len - 2);
    case TK_LPAREN: return parens(p);
    case TK_LARRAY: return array_literal(p);
    case TK_LBRACE: /* NDL: {a, b, c} is an array (a record's members are NAME = ...) */
        if (p->ndl && !(bsp_ahead(p, 1)->kind == TK_NAME && bsp_ahead(p, 2)->kind == TK_ASSIGN)) {
            const struct bs_tok *open = bsp_next(p);
            struct bs_node *x = expr(p);
            return x ? ndl_array(p, open, x) : NULL;
        }
        return record(p);
    case TK_LBRACK: return record(p);
    case TK_NEW: return new_record(p);
    default:
        if (p->i == 0)
            return bsp_expected(p, "an expression");
        return bsp_expected(p, "an expression after '%s'", bsp_tok_text(t - 1, ex, sizeof ex));
    }
}

/* callee '(' args ')' or callee '{' args '}' */
static struct bs_node *call(struct parser *p, const struct bs_tok *first, struct bs_node *callee)
{
    const struct bs_tok *open = bsp_next(p);
    struct bs_node *n = bsp_mk_at(p, BS_CALL, first);
    struct vec v = {0};
    if (!n || list(p, open, &v, arg))
        return NULL;
    n->a = callee;
    n->num = open->kind == TK_LBRACE;
    n->items = v.v;
    n->nitems = v.n;
    return bsp_seal(p, n);
}

static struct bs_node *index_of(struct parser *p, const struct bs_tok *first, struct bs_node *x)
{
    const struct bs_tok *open = bsp_next(p);
    struct bs_node *n = bsp_mk_at(p, BS_INDEX, first);
    if (!n || !(n->b = expr(p)) || bsp_expect_closer(p, open, ""))
        return NULL;
    n->a = x;
    return bsp_seal(p, n);
}

static struct bs_node *dot(struct parser *p, const struct bs_tok *first, struct bs_node *x)
{
    bsp_next(p);
    const struct bs_tok *name = bsp_cur(p);
    if (name->kind != TK_NAME)
        return bsp_expected(p, "a member name after '.'");
    bsp_next(p);
    struct bs_node *n = bsp_named(p, BS_DOT, first, name->s, name->len);
    if (!n)
        return NULL;
    n->a = x;
    return bsp_seal(p, n);
}

/* postfix := primary { '(' args ')' | '{' args '}' | '[' expr ']' | '.' NAME }; a bracket
 * on the next line continues too, as in CNTK (Sequential NEWLINE ( ... )). */
static struct bs_node *postfix(struct parser *p)
{
    const struct bs_tok *first = bsp_cur(p);
    struct bs_node *x = primary(p);
    while (x) {
        const struct bs_tok *t = bsp_cur(p);
        if (t->kind == TK_LPAREN || t->kind == TK_LBRACE)
            x = call(p, first, x);
        else if (t->kind == TK_LBRACK)
            x = index_of(p, first, x);
        else if (t->kind == TK_DOT)
            x = dot(p, first, x);
        else
            break;
    }
    return x;
}

static struct bs_node *unary(struct parser *p)
{
    const struct bs_tok *t = bsp_cur(p);
    if (t->kind != TK_MINUS && t->kind != TK_PLUS && t->kind != TK_NOT)
        return postfix(p);
    if (bsp_enter(p))
        return NULL;
    bsp_next(p);
    struct bs_node *x = unary(p);
    p->depth--;
    struct bs_node *n = x ? bsp_mk_at(p, BS_UNOP, t) : NULL;
    if (!n)
        return NULL;
    n->op = t->kind == TK_MINUS ? "-" : t->kind == TK_PLUS ? "+" : "!";
    n->a = x;
    return bsp_seal(p, n);
}

/* The binary operators, loosest first; comparisons (level CMP) do not chain. */
enum { OR, AND, CMP, SUM, PROD, NLEVELS };

static const char *binop(int level, enum bs_tk kind)
{
    static const struct {
        int level;
        enum bs_tk kind;
        const char *op;
    } ops[] = {{OR, TK_OR, "||"},        {AND, TK_AND, "&&"},  {CMP, TK_EQ, "=="},
               {CMP, TK_NE, "!="},       {CMP, TK_LT, "<"},    {CMP, TK_LE, "<="},
               {CMP, TK_GT, ">"},        {CMP, TK_GE, ">="},   {SUM, TK_PLUS, "+"},
               {SUM, TK_MINUS, "-"},     {PROD, TK_STAR, "*"}, {PROD, TK_SLASH, "/"},
               {PROD, TK_DOTSTAR, ".*"}, {PROD, TK_POW, "**"}, {PROD, TK_MOD, "%"}};
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
        if (ops[k].level == level && ops[k].kind == kind)
            return ops[k].op;
    return NULL;
}

static struct bs_node *binary(struct parser *p, int level)
{
    if (level == NLEVELS)
        return unary(p);
    const struct bs_tok *first = bsp_cur(p);
    struct bs_node *l = binary(p, level + 1);
    const char *op;
    int count = 0;
    while (l && (op = binop(level, bsp_cur(p)->kind))) {
        const struct bs_tok *t = bsp_next(p);
        if (level == CMP && count++ > 0)
            return bsp_fail_at(
                p, t->line, t->col,
                "'%s' cannot follow a comparison (comparisons do not chain; use '&&')", op);
        struct bs_node *r = binary(p, level + 1);
        struct bs_node *n = r ? bsp_mk_at(p, BS_BINOP, first) : NULL;
        if (!n)
            return NULL;
        n->op = op;
        n->a = l;
        n->b = r;
        l = bsp_seal(p, n);
    }
    return l;
}

/* array := or { ':' or } */
static struct bs_node *array(struct parser *p)
{
    const struct bs_tok *first = bsp_cur(p);
    struct bs_node *x = binary(p, OR);
    if (!x || !bsp_is(p, TK_COLON))
        return x;
    struct bs_node *n = bsp_mk_at(p, BS_ARRAY, first);
    struct vec v = {0};
    if (!n || bsp_push(p, &v, x))
        return NULL;
    while (bsp_is(p, TK_COLON)) {
        bsp_next(p);
        x = binary(p, OR);
        if (!x || bsp_push(p, &v, x))
            return NULL;
    }
    n->items = v.v;
    n->nitems = v.n;
    return bsp_seal(p, n);
}

/* Does a lambda start here: NAME '=>' or '(' [NAME {',' NAME}] ')' '=>'? */
static int lambda_ahead(const struct parser *p)
{
    enum bs_tk k0 = bsp_cur(p)->kind;
    if (k0 == TK_NAME)
        return bsp_ahead(p, 1)->kind == TK_ARROW;
    if (k0 != TK_LPAREN)
        return 0;
    size_t k = 1;
    if (bsp_ahead(p, k)->kind != TK_RPAREN) {
        for (;;) {
            if (bsp_ahead(p, k++)->kind != TK_NAME)
                return 0;
            if (bsp_ahead(p, k)->kind == TK_RPAREN)
                break;
            if (bsp_ahead(p, k++)->kind != TK_COMMA)
                return 0;
        }
    }
    return bsp_ahead(p, k + 1)->kind == TK_ARROW;
}

/* After lambda_ahead(): the parameters, '=>' and the body. */
static struct bs_node *lambda(struct parser *p)
{
    const struct bs_tok *t = bsp_cur(p);
    struct bs_node *n = bsp_mk_at(p, BS_LAMBDA, t);
    struct vec v = {0};
    if (!n)
        return NULL;
    if (t->kind == TK_LPAREN)
        bsp_next(p);
    while (bsp_is(p, TK_NAME)) {
        const struct bs_tok *name = bsp_next(p);
        struct bs_node *x = bsp_named(p, BS_ID, name, name->s, name->len);
        if (!x || bsp_push(p, &v, x))
            return NULL;
        if (bsp_is(p, TK_COMMA))
            bsp_next(p);
    }
    if (t->kind == TK_LPAREN)
        bsp_next(p); /* ')' */
    bsp_next(p);     /* '=>' */
    n->items = v.v;
    n->nitems = v.n;
    if (!(n->a = expr(p)))
        return NULL;
    return bsp_seal(p, n);
}

static struct bs_node *if_expr(struct parser *p)
{
    const struct bs_tok *kw = bsp_next(p);
    struct bs_node *n = bsp_mk_at(p, BS_IF, kw);
    if (!n || !(n->a = expr(p)))
        return NULL;
    if (!bsp_is(p, TK_THEN))
        return bsp_expected(p, "'then' after the condition of the 'if' at %d:%d",
                            bsp_line_of(kw->line), kw->col);
    bsp_next(p);
    if (!(n->b = expr(p)))
        return NULL;
    if (!bsp_is(p, TK_ELSE))
        return bsp_expected(p, "'else' to complete the 'if' at %d:%d", bsp_line_of(kw->line),
                            kw->col);
    bsp_next(p);
    if (!(n->c = expr(p)))
        return NULL;
    return bsp_seal(p, n);
}

static struct bs_node *expr(struct parser *p)
{
    if (bsp_enter(p))
        return NULL;
    struct bs_node *x;
    if (bsp_is(p, TK_IF))
        x = if_expr(p);
    else if (lambda_ahead(p))
        x = lambda(p);
    else
        x = array(p);
    p->depth--;
    return x;
}

/* ------------------------------------------------------------------ records */

/* NAME ('(' params ')' | '{' params '}') '=' expr: the lambda of a function definition. */
static struct bs_node *function(struct parser *p, const struct bs_tok *name)
{
    const struct bs_tok *open = bsp_next(p);
    struct bs_node *n = bsp_mk_at(p, BS_LAMBDA, open);
    struct vec v = {0};
    char ex[64];
    if (!n || list(p, open, &v, param))
        return NULL;
    /* NDL's macros may also be written NAME (params) [ ... ], without the '=' */
    int ndl_body = p->ndl && (bsp_is(p, TK_LBRACK) || bsp_is(p, TK_LBRACE));
    if (!bsp_is(p, TK_ASSIGN) && !ndl_body)
        return bsp_expected(p, "'=' after the parameters of '%s'",
                            bsp_tok_text(name, ex, sizeof ex));
    if (!ndl_body)
        bsp_next(p);
    n->items = v.v;
    n->nitems = v.n;
    if (!(n->a = expr(p)))
        return NULL;
    return bsp_seal(p, n);
}

/* CNTK's array constructor 'array' '[' first '..' last ']' '(' f ')': element i is f (i),
 * made when first used. A BS_FOR whose element calls f with the index, named so that no
 * BrainScript name can see it. */
static struct bs_node *array_of(struct parser *p)
{
    const struct bs_tok *kw = bsp_next(p), *open = bsp_next(p);
    static const char idx[] = "array index";
    struct bs_node *n = bsp_named(p, BS_FOR, kw, idx, sizeof idx - 1);
    if (!n || !(n->a = binary(p, OR)))
        return NULL;
    if (!bsp_is(p, TK_DOTDOT))
        return bsp_expected(p, "'..' between the first and the last index of 'array[first..last] "
                               "(f)'");
    bsp_next(p);
    if (!(n->b = binary(p, OR)) || bsp_expect_closer(p, open, ""))
        return NULL;
    if (!bsp_is(p, TK_LPAREN))
        return bsp_expected(p, "'(' and the function of each index after 'array[first..last]'");
    const struct bs_tok *lp = bsp_next(p);
    struct bs_node *f = expr(p), *c = bsp_mk_at(p, BS_CALL, lp),
                   *i = bsp_named(p, BS_ID, lp, idx, sizeof idx - 1);
    if (!f || !c || !i || bsp_expect_closer(p, lp, ""))
        return NULL;
    struct vec v = {0};
    if (bsp_push(p, &v, i))
        return NULL;
    c->a = f;
    c->items = v.v;
    c->nitems = v.n;
    n->c = bsp_seal(p, c);
    return n ? bsp_seal(p, n) : NULL;
}

/* NAME '[' NAME ':' or '..' or ']' '=' expr, at the '[': the array definition's BS_FOR. */
static struct bs_node *array_def(struct parser *p, const struct bs_tok *name)
{
    const struct bs_tok *open = bsp_next(p);
    char ex[64];
    if (!bsp_is(p, TK_NAME))
        return bsp_expected(p, "the index's name in the array definition '%s[i:first..last]'",
                            bsp_tok_text(name, ex, sizeof ex));
    const struct bs_tok *index = bsp_next(p);
    struct bs_node *n = bsp_named(p, BS_FOR, index, index->s, index->len);
    if (!n)
        return NULL;
    if (!bsp_is(p, TK_COLON))
        return bsp_expected(p, "':' after the index '%s' (NAME[i:first..last] = ...)",
                            bsp_tok_text(index, ex, sizeof ex));
    bsp_next(p);
    if (!(n->a = binary(p, OR)))
        return NULL;
    if (!bsp_is(p, TK_DOTDOT))
        return bsp_expected(p, "'..' between the first and the last index");
    bsp_next(p);
    if (!(n->b = binary(p, OR)) || bsp_expect_closer(p, open, ""))
        return NULL;
    if (!bsp_is(p, TK_ASSIGN))
        return bsp_expected(p, "'=' after the array definition '%s[...]'",
                            bsp_tok_text(name, ex, sizeof ex));
    bsp_next(p);
    if (!(n->c = expr(p)))
        return NULL;
    return bsp_seal(p, n);
}

/* member := NAME '=' expr | NAME '(' params ')' '=' expr | NAME '{' params '}' '=' expr
 *         | NAME '[' NAME ':' or '..' or ']' '=' expr */
static struct bs_node *member(struct parser *p)
{
    const struct bs_tok *name = bsp_next(p);
    struct bs_node *v;
    char ex[64];
    if (bsp_is(p, TK_ASSIGN)) {
        bsp_next(p);
        v = expr(p);
    } else if (bsp_is(p, TK_LPAREN) || bsp_is(p, TK_LBRACE)) {
        v = function(p, name);
    } else if (bsp_is(p, TK_LBRACK)) {
        v = array_def(p, name);
    } else {
        return bsp_expected(p, "'=' after '%s'", bsp_tok_text(name, ex, sizeof ex));
    }
    return v ? def(p, name, v) : NULL;
}

/* Where a member may start: 1 when the body ends here (at the closer of `open`, or at the
 * end of the text for the outermost body), 0 at a NAME, -1 (an error) otherwise. */
static int body_end(struct parser *p, const struct bs_tok *open)
{
    const struct bs_tok *t = bsp_cur(p);
    enum bs_tk k = t->kind;
    int closer = k == TK_RPAREN || k == TK_RBRACK || k == TK_RBRACE;
    if (open ? k == bsp_closer_of(open->kind) : k == TK_EOF)
        return 1;
    if (open && (closer || k == TK_EOF))
        return bsp_expect_closer(p, open, "");
    if (closer) {
        bsp_fail_at(p, t->line, t->col, "unexpected '%c' (nothing to close)", t->s[0]);
        return -1;
    }
    if (k == TK_NAME)
        return 0;
    bsp_expected_tok(p, "a member name");
    return -1;
}

/* After a member: what may follow its value. */
static int member_end(struct parser *p, const struct bs_node *m)
{
    const struct bs_tok *t = bsp_cur(p);
    char ex[64];
    switch (t->kind) {
    case TK_SEMI:
    case TK_COMMA:
    case TK_RPAREN:
    case TK_RBRACK:
    case TK_RBRACE:
    case TK_EOF:
    case TK_NAME: return 0;
    default:
        if (t->nl)
            return 0; /* body_end() names it */
        bsp_expected_tok(p, "an operator, ';' or a new line after the value of '%s'",
                         pt_excerpt(ex, sizeof ex, m->str, strlen(m->str), 24));
        return -1;
    }
}

/* body := { member (NEWLINE | ';' | ',')* }, up to (not taking) the closer of `open`, or to
 * the end of the text when open is NULL. */
static struct bs_node *body(struct parser *p, const struct bs_tok *open)
{
    struct bs_node *r =
        open ? bsp_mk_at(p, BS_RECORD, open) : bsp_mk(p, BS_RECORD, p->line, p->col);
    struct vec v = {0};
    if (!r)
        return NULL;
    for (;;) {
        while (bsp_is(p, TK_SEMI) || bsp_is(p, TK_COMMA))
            bsp_next(p);
        int end = body_end(p, open);
        if (end < 0)
            return NULL;
        if (end > 0)
            break;
        struct bs_node *m = member(p);
        if (!m || bsp_push(p, &v, m) || member_end(p, m))
            return NULL;
    }
    r->items = v.v;
    r->nitems = v.n;
    return bsp_seal(p, r);
}

/* ------------------------------------------------------------------ interface */

static int parse(const char *text, size_t len, const char *file, int line, int col, int ndl,
                 struct bs_tree **out, struct pt_err *e)
{
    struct pt_err err;
    struct bs_toks toks;
    struct bs_tree *tree = NULL;
    struct bs_node *root = NULL;
    pt_err_clear(&err);
    *out = NULL;
    if (bs_lex(text, len, line, col, &toks, &err) == 0 &&
        (tree = pt_calloc(1, sizeof *tree, &err))) {
        struct parser p = {.tok = toks.v,
                           .ntok = toks.n,
                           .file = file ? file : "<text>",
                           .nfiles = toks.nfiles,
                           .line = line,
                           .col = col,
                           .lexmsg = toks.msg,
                           .tree = tree,
                           .ndl = ndl,
                           .e = &err};
        p.files[0] = p.file;
        int ok = 1; /* the included files' names, kept with the tree */
        for (int k = 1; ok && k <= toks.nfiles; k++)
            ok = (p.files[k] = bsp_copy(&p, toks.files[k].s, toks.files[k].len)) != NULL;
        root = ok ? body(&p, NULL) : NULL;
    }
    bs_toks_free(&toks);
    if (!root) {
        bs_tree_free(tree);
        return pt_err_set(e, err.code, "%s", err.msg);
    }
    tree->root = root;
    *out = tree;
    return 0;
}

int bs_parse(const char *text, size_t len, const char *file, int line, int col,
             struct bs_tree **out, struct pt_err *e)
{
    return parse(text, len, file, line, col, 0, out, e);
}

int bs_parse_ndl(const char *text, size_t len, const char *file, int line, int col,
                 struct bs_tree **out, struct pt_err *e)
{
    return parse(text, len, file, line, col, 1, out, e);
}

struct bs_node *bs_tree_root(struct bs_tree *t)
{
    return t ? t->root : NULL;
}

void bs_tree_free(struct bs_tree *t)
{
    if (!t)
        return;
    for (struct chunk *c = t->chunks, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    free(t);
}

int bs_error(struct pt_err *e, const struct bs_node *at, const char *fmt, ...)
{
    char text[PT_ERR_MSG];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (!at)
        return pt_err_set(e, PT_EUSER, "error: %s", text);
    return pt_err_set(e, PT_EUSER, "%s:%d:%d: error: %s", at->file ? at->file : "<text>", at->line,
                      at->col, text);
}
