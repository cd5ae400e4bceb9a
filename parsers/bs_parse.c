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

#define MAX_DEPTH  200   /* nested expressions and prefix operators */
#define MAX_HEIGHT 1000  /* nodes from the root to the deepest leaf of one expression */
#define CHUNK      65536 /* arena chunk size; larger requests get a chunk of their own */

struct chunk {
    struct chunk *next;
    size_t used, cap;
    max_align_t data[];
};

struct bs_tree {
    struct chunk *chunks; /* the first is the one being filled */
    struct bs_node *root;
};

/* A node and the height of its subtree (the parser's bookkeeping; users see the node). */
struct xnode {
    struct bs_node node;
    int height;
};

struct parser {
    const struct bs_tok *tok; /* the tokens; the last is TK_EOF or TK_ERROR */
    size_t ntok, i;           /* tok[i] is the current token */
    const char *file;
    int line, col;      /* where the text starts */
    const char *lexmsg; /* the message of the TK_ERROR token */
    struct bs_tree *tree;
    int depth;
    struct pt_err *e;
};

/* A list of nodes growing in the arena (the old arrays are left behind: at most 2x). */
struct vec {
    struct bs_node **v;
    size_t n, cap;
};

static struct bs_node *expr(struct parser *p);

/* ------------------------------------------------------------------ arena and nodes */

static void *arena_alloc(struct bs_tree *t, size_t size, struct pt_err *e)
{
    size_t align = alignof(max_align_t);
    if (size > ((size_t)-1) / 2)
        return pt_malloc((size_t)-1, e);
    size = (size + align - 1) / align * align;
    struct chunk *c = t->chunks;
    if (!c || c->cap - c->used < size) {
        int own = size > CHUNK / 4; /* a chunk of its own, behind the current one */
        size_t cap = own ? size : CHUNK;
        c = pt_malloc(sizeof *c + cap, e);
        if (!c)
            return NULL;
        c->cap = cap;
        c->used = 0;
        if (own && t->chunks) {
            c->next = t->chunks->next;
            t->chunks->next = c;
        } else {
            c->next = t->chunks;
            t->chunks = c;
        }
    }
    void *mem = (char *)c->data + c->used;
    c->used += size;
    return mem;
}

static char *copy(struct parser *p, const char *s, size_t len)
{
    char *d = arena_alloc(p->tree, len + 1, p->e);
    if (d) {
        memcpy(d, s, len);
        d[len] = '\0';
    }
    return d;
}

static int push(struct parser *p, struct vec *v, struct bs_node *x)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? 2 * v->cap : 4;
        struct bs_node **nv = arena_alloc(p->tree, cap * sizeof *nv, p->e);
        if (!nv)
            return -1;
        if (v->n)
            memcpy(nv, v->v, v->n * sizeof *nv);
        v->v = nv;
        v->cap = cap;
    }
    v->v[v->n++] = x;
    return 0;
}

static struct bs_node *mk(struct parser *p, enum bs_kind kind, int line, int col)
{
    struct xnode *x = arena_alloc(p->tree, sizeof *x, p->e);
    if (!x)
        return NULL;
    memset(x, 0, sizeof *x);
    x->node.kind = kind;
    x->node.file = p->file;
    x->node.line = line;
    x->node.col = col;
    x->height = 1;
    return &x->node;
}

static struct bs_node *mk_at(struct parser *p, enum bs_kind kind, const struct bs_tok *t)
{
    return mk(p, kind, t->line, t->col);
}

/* A node whose str is a copy of s[0..len). */
static struct bs_node *named(struct parser *p, enum bs_kind kind, const struct bs_tok *at,
                             const char *s, size_t len)
{
    struct bs_node *n = mk_at(p, kind, at);
    if (n && !(n->str = copy(p, s, len)))
        return NULL;
    return n;
}

static int height(const struct bs_node *n)
{
    return n ? ((const struct xnode *)n)->height : 0;
}

/* ------------------------------------------------------------------ tokens and errors */

static const struct bs_tok *cur(const struct parser *p)
{
    return &p->tok[p->i];
}

static const struct bs_tok *ahead(const struct parser *p, size_t k)
{
    size_t j = p->i + k;
    return &p->tok[j < p->ntok ? j : p->ntok - 1];
}

static int is(const struct parser *p, enum bs_tk kind)
{
    return p->tok[p->i].kind == kind;
}

/* Take the current token (the final TK_EOF or TK_ERROR stays current). */
static const struct bs_tok *next(struct parser *p)
{
    const struct bs_tok *t = cur(p);
    if (p->i + 1 < p->ntok)
        p->i++;
    return t;
}

static const char *tok_text(const struct bs_tok *t, char *buf, size_t size)
{
    return pt_excerpt(buf, size, t->s, t->len, 24);
}

__attribute__((format(printf, 4, 5))) static void *fail_at(struct parser *p, int line, int col,
                                                           const char *fmt, ...)
{
    char text[PT_ERR_MSG];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    pt_err_set(p->e, PT_EUSER, "%s:%d:%d: error: %s", p->file, line, col, text);
    return NULL;
}

/* "expected WHAT, found X" about the current token. With eol, a token that starts a new
 * line is reported as "end of line" just past the token before it; the end of the text is
 * always reported there. A TK_ERROR token reports its own lexical error instead. */
__attribute__((format(printf, 3, 0))) static void *vexpected(struct parser *p, int eol,
                                                             const char *fmt, va_list ap)
{
    const struct bs_tok *t = cur(p), *prev = p->i > 0 ? t - 1 : NULL;
    if (t->kind == TK_ERROR)
        return fail_at(p, t->line, t->col, "%s", p->lexmsg);
    char what[512], found[128], ex[96];
    vsnprintf(what, sizeof what, fmt, ap);
    int line = t->line, col = t->col;
    if (t->kind == TK_EOF || (eol && t->nl)) {
        if (prev) {
            line = prev->end_line;
            col = prev->end_col;
        }
        snprintf(found, sizeof found, "end of %s", t->kind == TK_EOF ? "text" : "line");
    } else if (t->kind == TK_STR) {
        snprintf(found, sizeof found, "the string %s", tok_text(t, ex, sizeof ex));
    } else {
        snprintf(found, sizeof found, "'%s'", tok_text(t, ex, sizeof ex));
    }
    return fail_at(p, line, col, "expected %s, found %s", what, found);
}

__attribute__((format(printf, 2, 3))) static void *expected(struct parser *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vexpected(p, 1, fmt, ap);
    va_end(ap);
    return NULL;
}

/* The same, naming the token even when it starts a line. */
__attribute__((format(printf, 2, 3))) static void *expected_tok(struct parser *p, const char *fmt,
                                                                ...)
{
    va_list ap;
    va_start(ap, fmt);
    vexpected(p, 0, fmt, ap);
    va_end(ap);
    return NULL;
}

/* One level deeper; an error past MAX_DEPTH. */
static int enter(struct parser *p)
{
    if (++p->depth <= MAX_DEPTH)
        return 0;
    fail_at(p, cur(p)->line, cur(p)->col, "nesting deeper than %d levels", MAX_DEPTH);
    return -1;
}

/* Record n's height from its children; an error past MAX_HEIGHT. Returns n or NULL. */
static struct bs_node *seal(struct parser *p, struct bs_node *n)
{
    int h = height(n->a);
    if (height(n->b) > h)
        h = height(n->b);
    if (height(n->c) > h)
        h = height(n->c);
    for (size_t k = 0; k < n->nitems; k++)
        if (height(n->items[k]) > h)
            h = height(n->items[k]);
    if (h >= MAX_HEIGHT)
        return fail_at(p, n->line, n->col, "expression too deep (more than %d levels)", MAX_HEIGHT);
    ((struct xnode *)n)->height = h + 1;
    return n;
}

static enum bs_tk closer_of(enum bs_tk open)
{
    return open == TK_LPAREN ? TK_RPAREN : open == TK_LBRACK ? TK_RBRACK : TK_RBRACE;
}

static char closer_char(enum bs_tk open)
{
    return open == TK_LPAREN ? ')' : open == TK_LBRACK ? ']' : '}';
}

static char opener_char(enum bs_tk open)
{
    return open == TK_LPAREN ? '(' : open == TK_LBRACK ? '[' : '{';
}

/* Expect the closer of `open` (an error names both). */
static int expect_closer(struct parser *p, const struct bs_tok *open, const char *also)
{
    if (is(p, closer_of(open->kind))) {
        next(p);
        return 0;
    }
    expected(p, "%s'%c' to close the '%c' at %d:%d", also, closer_char(open->kind),
             opener_char(open->kind), open->line, open->col);
    return -1;
}

/* ------------------------------------------------------------------ expressions */

/* name = value (a member, a named argument or a parameter's default) */
static struct bs_node *def(struct parser *p, const struct bs_tok *name, struct bs_node *value)
{
    struct bs_node *n = named(p, BS_DEF, name, name->s, name->len);
    if (!n)
        return NULL;
    n->a = value;
    return seal(p, n);
}

/* A comma-separated list up to the closer of `open` (taken), each item read by `item`. */
static int list(struct parser *p, const struct bs_tok *open, struct vec *v,
                struct bs_node *(*item)(struct parser *p))
{
    if (is(p, closer_of(open->kind))) {
        next(p);
        return 0;
    }
    for (;;) {
        struct bs_node *x = item(p);
        if (!x || push(p, v, x))
            return -1;
        if (!is(p, TK_COMMA))
            return expect_closer(p, open, "',' or ");
        next(p);
    }
}

/* arg := expr | NAME '=' expr */
static struct bs_node *arg(struct parser *p)
{
    const struct bs_tok *t = cur(p);
    if (t->kind != TK_NAME || ahead(p, 1)->kind != TK_ASSIGN)
        return expr(p);
    next(p);
    next(p);
    struct bs_node *v = expr(p);
    return v ? def(p, t, v) : NULL;
}

/* param := NAME | NAME '=' expr */
static struct bs_node *param(struct parser *p)
{
    const struct bs_tok *t = cur(p);
    if (t->kind != TK_NAME)
        return expected(p, "a parameter name");
    next(p);
    if (!is(p, TK_ASSIGN))
        return named(p, BS_ID, t, t->s, t->len);
    next(p);
    struct bs_node *v = expr(p);
    return v ? def(p, t, v) : NULL;
}

static struct bs_node *parens(struct parser *p)
{
    const struct bs_tok *open = next(p);
    struct bs_node *x = expr(p);
    return x && expect_closer(p, open, "") == 0 ? x : NULL;
}

static struct bs_node *body(struct parser *p, const struct bs_tok *open);

/* '[' body ']' or '{' body '}' */
static struct bs_node *record(struct parser *p)
{
    const struct bs_tok *open = next(p);
    struct bs_node *r = body(p, open);
    if (r)
        next(p); /* body() stopped at the closer */
    return r;
}

/* 'new' NAME '[' body ']' */
static struct bs_node *new_record(struct parser *p)
{
    const struct bs_tok *kw = next(p), *name = cur(p);
    char ex[64];
    if (name->kind != TK_NAME)
        return expected(p, "a type name after 'new'");
    next(p);
    if (!is(p, TK_LBRACK))
        return expected(p, "'[' after 'new %s'", tok_text(name, ex, sizeof ex));
    struct bs_node *r = record(p);
    if (!r || !(r->str = copy(p, name->s, name->len)))
        return NULL;
    r->line = kw->line;
    r->col = kw->col;
    return r;
}

static struct bs_node *primary(struct parser *p)
{
    const struct bs_tok *t = cur(p);
    struct bs_node *n;
    char ex[64];
    switch (t->kind) {
    case TK_NUM:
    case TK_TRUE:
    case TK_FALSE:
        next(p);
        n = mk_at(p, t->kind == TK_NUM ? BS_NUM : BS_BOOL, t);
        if (n)
            n->num = t->kind == TK_NUM ? t->num : t->kind == TK_TRUE;
        return n;
    case TK_NAME: next(p); return named(p, BS_ID, t, t->s, t->len);
    case TK_STR:
    case TK_VAR:
        next(p);
        return named(p, t->kind == TK_STR ? BS_STR : BS_VAR, t, t->s + 1, t->len - 2);
    case TK_LPAREN: return parens(p);
    case TK_LBRACK:
    case TK_LBRACE: return record(p);
    case TK_NEW: return new_record(p);
    default:
        if (p->i == 0)
            return expected(p, "an expression");
        return expected(p, "an expression after '%s'", tok_text(t - 1, ex, sizeof ex));
    }
}

/* callee '(' args ')' or callee '{' args '}' */
static struct bs_node *call(struct parser *p, const struct bs_tok *first, struct bs_node *callee)
{
    const struct bs_tok *open = next(p);
    struct bs_node *n = mk_at(p, BS_CALL, first);
    struct vec v = {0};
    if (!n || list(p, open, &v, arg))
        return NULL;
    n->a = callee;
    n->num = open->kind == TK_LBRACE;
    n->items = v.v;
    n->nitems = v.n;
    return seal(p, n);
}

static struct bs_node *index_of(struct parser *p, const struct bs_tok *first, struct bs_node *x)
{
    const struct bs_tok *open = next(p);
    struct bs_node *n = mk_at(p, BS_INDEX, first);
    if (!n || !(n->b = expr(p)) || expect_closer(p, open, ""))
        return NULL;
    n->a = x;
    return seal(p, n);
}

static struct bs_node *dot(struct parser *p, const struct bs_tok *first, struct bs_node *x)
{
    next(p);
    const struct bs_tok *name = cur(p);
    if (name->kind != TK_NAME)
        return expected(p, "a member name after '.'");
    next(p);
    struct bs_node *n = named(p, BS_DOT, first, name->s, name->len);
    if (!n)
        return NULL;
    n->a = x;
    return seal(p, n);
}

/* postfix := primary { '(' args ')' | '{' args '}' | '[' expr ']' | '.' NAME }; a bracket
 * that starts a line does not continue. */
static struct bs_node *postfix(struct parser *p)
{
    const struct bs_tok *first = cur(p);
    struct bs_node *x = primary(p);
    while (x) {
        const struct bs_tok *t = cur(p);
        if ((t->kind == TK_LPAREN || t->kind == TK_LBRACE) && !t->nl)
            x = call(p, first, x);
        else if (t->kind == TK_LBRACK && !t->nl)
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
    const struct bs_tok *t = cur(p);
    if (t->kind != TK_MINUS && t->kind != TK_PLUS && t->kind != TK_NOT)
        return postfix(p);
    if (enter(p))
        return NULL;
    next(p);
    struct bs_node *x = unary(p);
    p->depth--;
    struct bs_node *n = x ? mk_at(p, BS_UNOP, t) : NULL;
    if (!n)
        return NULL;
    n->op = t->kind == TK_MINUS ? "-" : t->kind == TK_PLUS ? "+" : "!";
    n->a = x;
    return seal(p, n);
}

/* The binary operators, loosest first; comparisons (level CMP) do not chain. */
enum { OR, AND, CMP, SUM, PROD, NLEVELS };

static const char *binop(int level, enum bs_tk kind)
{
    static const struct {
        int level;
        enum bs_tk kind;
        const char *op;
    } ops[] = {{OR, TK_OR, "||"},       {AND, TK_AND, "&&"},  {CMP, TK_EQ, "=="},
               {CMP, TK_NE, "!="},      {CMP, TK_LT, "<"},    {CMP, TK_LE, "<="},
               {CMP, TK_GT, ">"},       {CMP, TK_GE, ">="},   {SUM, TK_PLUS, "+"},
               {SUM, TK_MINUS, "-"},    {PROD, TK_STAR, "*"}, {PROD, TK_SLASH, "/"},
               {PROD, TK_DOTSTAR, ".*"}};
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
        if (ops[k].level == level && ops[k].kind == kind)
            return ops[k].op;
    return NULL;
}

static struct bs_node *binary(struct parser *p, int level)
{
    if (level == NLEVELS)
        return unary(p);
    const struct bs_tok *first = cur(p);
    struct bs_node *l = binary(p, level + 1);
    const char *op;
    int count = 0;
    while (l && (op = binop(level, cur(p)->kind))) {
        const struct bs_tok *t = next(p);
        if (level == CMP && count++ > 0)
            return fail_at(p, t->line, t->col,
                           "'%s' cannot follow a comparison (comparisons do not chain; use '&&')",
                           op);
        struct bs_node *r = binary(p, level + 1);
        struct bs_node *n = r ? mk_at(p, BS_BINOP, first) : NULL;
        if (!n)
            return NULL;
        n->op = op;
        n->a = l;
        n->b = r;
        l = seal(p, n);
    }
    return l;
}

/* array := or { ':' or } */
static struct bs_node *array(struct parser *p)
{
    const struct bs_tok *first = cur(p);
    struct bs_node *x = binary(p, OR);
    if (!x || !is(p, TK_COLON))
        return x;
    struct bs_node *n = mk_at(p, BS_ARRAY, first);
    struct vec v = {0};
    if (!n || push(p, &v, x))
        return NULL;
    while (is(p, TK_COLON)) {
        next(p);
        x = binary(p, OR);
        if (!x || push(p, &v, x))
            return NULL;
    }
    n->items = v.v;
    n->nitems = v.n;
    return seal(p, n);
}

/* Does a lambda start here: NAME '=>' or '(' [NAME {',' NAME}] ')' '=>'? */
static int lambda_ahead(const struct parser *p)
{
    enum bs_tk k0 = cur(p)->kind;
    if (k0 == TK_NAME)
        return ahead(p, 1)->kind == TK_ARROW;
    if (k0 != TK_LPAREN)
        return 0;
    size_t k = 1;
    if (ahead(p, k)->kind != TK_RPAREN) {
        for (;;) {
            if (ahead(p, k++)->kind != TK_NAME)
                return 0;
            if (ahead(p, k)->kind == TK_RPAREN)
                break;
            if (ahead(p, k++)->kind != TK_COMMA)
                return 0;
        }
    }
    return ahead(p, k + 1)->kind == TK_ARROW;
}

/* After lambda_ahead(): the parameters, '=>' and the body. */
static struct bs_node *lambda(struct parser *p)
{
    const struct bs_tok *t = cur(p);
    struct bs_node *n = mk_at(p, BS_LAMBDA, t);
    struct vec v = {0};
    if (!n)
        return NULL;
    if (t->kind == TK_LPAREN)
        next(p);
    while (is(p, TK_NAME)) {
        const struct bs_tok *name = next(p);
        struct bs_node *x = named(p, BS_ID, name, name->s, name->len);
        if (!x || push(p, &v, x))
            return NULL;
        if (is(p, TK_COMMA))
            next(p);
    }
    if (t->kind == TK_LPAREN)
        next(p); /* ')' */
    next(p);     /* '=>' */
    n->items = v.v;
    n->nitems = v.n;
    if (!(n->a = expr(p)))
        return NULL;
    return seal(p, n);
}

static struct bs_node *if_expr(struct parser *p)
{
    const struct bs_tok *kw = next(p);
    struct bs_node *n = mk_at(p, BS_IF, kw);
    if (!n || !(n->a = expr(p)))
        return NULL;
    if (!is(p, TK_THEN))
        return expected(p, "'then' after the condition of the 'if' at %d:%d", kw->line, kw->col);
    next(p);
    if (!(n->b = expr(p)))
        return NULL;
    if (!is(p, TK_ELSE))
        return expected(p, "'else' to complete the 'if' at %d:%d", kw->line, kw->col);
    next(p);
    if (!(n->c = expr(p)))
        return NULL;
    return seal(p, n);
}

static struct bs_node *expr(struct parser *p)
{
    if (enter(p))
        return NULL;
    struct bs_node *x;
    if (is(p, TK_IF))
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
    const struct bs_tok *open = next(p);
    struct bs_node *n = mk_at(p, BS_LAMBDA, open);
    struct vec v = {0};
    char ex[64];
    if (!n || list(p, open, &v, param))
        return NULL;
    if (!is(p, TK_ASSIGN))
        return expected(p, "'=' after the parameters of '%s'", tok_text(name, ex, sizeof ex));
    next(p);
    n->items = v.v;
    n->nitems = v.n;
    if (!(n->a = expr(p)))
        return NULL;
    return seal(p, n);
}

/* member := NAME '=' expr | NAME '(' params ')' '=' expr | NAME '{' params '}' '=' expr */
static struct bs_node *member(struct parser *p)
{
    const struct bs_tok *name = next(p);
    struct bs_node *v;
    char ex[64];
    if (is(p, TK_ASSIGN)) {
        next(p);
        v = expr(p);
    } else if (is(p, TK_LPAREN) || is(p, TK_LBRACE)) {
        v = function(p, name);
    } else {
        return expected(p, "'=' after '%s'", tok_text(name, ex, sizeof ex));
    }
    return v ? def(p, name, v) : NULL;
}

/* Where a member may start: 1 when the body ends here (at the closer of `open`, or at the
 * end of the text for the outermost body), 0 at a NAME, -1 (an error) otherwise. */
static int body_end(struct parser *p, const struct bs_tok *open)
{
    const struct bs_tok *t = cur(p), *prev = p->i > 0 ? t - 1 : NULL;
    enum bs_tk k = t->kind;
    int closer = k == TK_RPAREN || k == TK_RBRACK || k == TK_RBRACE;
    if (open ? k == closer_of(open->kind) : k == TK_EOF)
        return 1;
    if (open && (closer || k == TK_EOF))
        return expect_closer(p, open, "");
    if (closer) {
        fail_at(p, t->line, t->col, "unexpected '%c' (nothing to close)", t->s[0]);
        return -1;
    }
    if (k == TK_NAME)
        return 0;
    if ((k == TK_LPAREN || k == TK_LBRACK || k == TK_LBRACE) && t->nl && prev &&
        prev->kind != TK_SEMI && prev->kind != TK_COMMA && prev->kind != TK_LBRACK &&
        prev->kind != TK_LBRACE)
        fail_at(p, t->line, t->col,
                "expected a member name, found '%c' (a '%c' that starts a line does not "
                "continue the line before)",
                t->s[0], t->s[0]);
    else
        expected_tok(p, "a member name");
    return -1;
}

/* After a member: what may follow its value. */
static int member_end(struct parser *p, const struct bs_node *m)
{
    const struct bs_tok *t = cur(p);
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
        expected_tok(p, "an operator, ';' or a new line after the value of '%s'",
                     pt_excerpt(ex, sizeof ex, m->str, strlen(m->str), 24));
        return -1;
    }
}

/* body := { member (NEWLINE | ';' | ',')* }, up to (not taking) the closer of `open`, or to
 * the end of the text when open is NULL. */
static struct bs_node *body(struct parser *p, const struct bs_tok *open)
{
    struct bs_node *r = open ? mk_at(p, BS_RECORD, open) : mk(p, BS_RECORD, p->line, p->col);
    struct vec v = {0};
    if (!r)
        return NULL;
    for (;;) {
        while (is(p, TK_SEMI) || is(p, TK_COMMA))
            next(p);
        int end = body_end(p, open);
        if (end < 0)
            return NULL;
        if (end > 0)
            break;
        struct bs_node *m = member(p);
        if (!m || push(p, &v, m) || member_end(p, m))
            return NULL;
    }
    r->items = v.v;
    r->nitems = v.n;
    return seal(p, r);
}

/* ------------------------------------------------------------------ interface */

int bs_parse(const char *text, size_t len, const char *file, int line, int col,
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
                           .line = line,
                           .col = col,
                           .lexmsg = toks.msg,
                           .tree = tree,
                           .e = &err};
        root = body(&p, NULL);
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
