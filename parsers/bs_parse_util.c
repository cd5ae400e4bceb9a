/* The BrainScript parser's helpers (see bs_parse_internal.h): the arena of node chunks,
 * node constructors, the token cursor, error messages, and the nesting limits that keep
 * hostile text from exhausting the stack. */
#include <stdalign.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parsers/bs_parse_internal.h"

/* ------------------------------------------------------------------ arena and nodes */

void *bsp_arena_alloc(struct bs_tree *t, size_t size, struct pt_err *e)
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

char *bsp_copy(struct parser *p, const char *s, size_t len)
{
    char *d = bsp_arena_alloc(p->tree, len + 1, p->e);
    if (d) {
        memcpy(d, s, len);
        d[len] = '\0';
    }
    return d;
}

int bsp_push(struct parser *p, struct vec *v, struct bs_node *x)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? 2 * v->cap : 4;
        struct bs_node **nv = bsp_arena_alloc(p->tree, cap * sizeof *nv, p->e);
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

struct bs_node *bsp_mk(struct parser *p, enum bs_kind kind, int line, int col)
{
    struct xnode *x = bsp_arena_alloc(p->tree, sizeof *x, p->e);
    if (!x)
        return NULL;
    memset(x, 0, sizeof *x);
    x->node.kind = kind;
    x->node.file = bsp_file_of(p, line);
    x->node.line = bsp_line_of(line);
    x->node.col = col;
    x->height = 1;
    return &x->node;
}

const char *bsp_file_of(const struct parser *p, int line)
{
    int f = line / BS_FILE_LINES;
    return f > 0 && f <= p->nfiles && p->files[f] ? p->files[f] : p->file;
}

int bsp_line_of(int line)
{
    return line % BS_FILE_LINES;
}

struct bs_node *bsp_mk_at(struct parser *p, enum bs_kind kind, const struct bs_tok *t)
{
    return bsp_mk(p, kind, t->line, t->col);
}

/* A node whose str is a copy of s[0..len). */
struct bs_node *bsp_named(struct parser *p, enum bs_kind kind, const struct bs_tok *at,
                          const char *s, size_t len)
{
    struct bs_node *n = bsp_mk_at(p, kind, at);
    if (n && !(n->str = bsp_copy(p, s, len)))
        return NULL;
    return n;
}

int bsp_height(const struct bs_node *n)
{
    return n ? ((const struct xnode *)n)->height : 0;
}

/* ------------------------------------------------------------------ tokens and errors */

const struct bs_tok *bsp_cur(const struct parser *p)
{
    return &p->tok[p->i];
}

const struct bs_tok *bsp_ahead(const struct parser *p, size_t k)
{
    size_t j = p->i + k;
    return &p->tok[j < p->ntok ? j : p->ntok - 1];
}

int bsp_is(const struct parser *p, enum bs_tk kind)
{
    return p->tok[p->i].kind == kind;
}

/* Take the current token (the final TK_EOF or TK_ERROR stays current). */
const struct bs_tok *bsp_next(struct parser *p)
{
    const struct bs_tok *t = bsp_cur(p);
    if (p->i + 1 < p->ntok)
        p->i++;
    return t;
}

const char *bsp_tok_text(const struct bs_tok *t, char *buf, size_t size)
{
    return pt_excerpt(buf, size, t->s, t->len, 24);
}

__attribute__((format(printf, 4, 5))) void *bsp_fail_at(struct parser *p, int line, int col,
                                                        const char *fmt, ...)
{
    char text[PT_ERR_MSG];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    pt_err_set(p->e, PT_EUSER, "%s:%d:%d: error: %s", bsp_file_of(p, line), bsp_line_of(line), col,
               text);
    return NULL;
}

/* "expected WHAT, found X" about the current token. With eol, a token that starts a new
 * line is reported as "end of line" just past the token before it; the end of the text is
 * always reported there. A TK_ERROR token reports its own lexical error instead. */
__attribute__((format(printf, 3, 0))) static void *vexpected(struct parser *p, int eol,
                                                             const char *fmt, va_list ap)
{
    const struct bs_tok *t = bsp_cur(p), *prev = p->i > 0 ? t - 1 : NULL;
    if (t->kind == TK_ERROR)
        return bsp_fail_at(p, t->line, t->col, "%s", p->lexmsg);
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
        snprintf(found, sizeof found, "the string %s", bsp_tok_text(t, ex, sizeof ex));
    } else {
        snprintf(found, sizeof found, "'%s'", bsp_tok_text(t, ex, sizeof ex));
    }
    return bsp_fail_at(p, line, col, "expected %s, found %s", what, found);
}

__attribute__((format(printf, 2, 3))) void *bsp_expected(struct parser *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vexpected(p, 1, fmt, ap);
    va_end(ap);
    return NULL;
}

/* The same, naming the token even when it starts a line. */
__attribute__((format(printf, 2, 3))) void *bsp_expected_tok(struct parser *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vexpected(p, 0, fmt, ap);
    va_end(ap);
    return NULL;
}

/* One level deeper; an error past MAX_DEPTH. */
int bsp_enter(struct parser *p)
{
    if (++p->depth <= MAX_DEPTH)
        return 0;
    bsp_fail_at(p, bsp_cur(p)->line, bsp_cur(p)->col, "nesting deeper than %d levels", MAX_DEPTH);
    return -1;
}

/* Record n's height from its children; an error past MAX_HEIGHT. Returns n or NULL. */
struct bs_node *bsp_seal(struct parser *p, struct bs_node *n)
{
    int h = bsp_height(n->a);
    if (bsp_height(n->b) > h)
        h = bsp_height(n->b);
    if (bsp_height(n->c) > h)
        h = bsp_height(n->c);
    for (size_t k = 0; k < n->nitems; k++)
        if (bsp_height(n->items[k]) > h)
            h = bsp_height(n->items[k]);
    if (h >= MAX_HEIGHT)
        return bsp_fail_at(p, n->line, n->col, "expression too deep (more than %d levels)",
                           MAX_HEIGHT);
    ((struct xnode *)n)->height = h + 1;
    return n;
}

enum bs_tk bsp_closer_of(enum bs_tk open)
{
    return open == TK_LPAREN   ? TK_RPAREN
           : open == TK_LBRACK ? TK_RBRACK
           : open == TK_LARRAY ? TK_RARRAY
                               : TK_RBRACE;
}

const char *bsp_closer_text(enum bs_tk open)
{
    return open == TK_LPAREN ? ")" : open == TK_LBRACK ? "]" : open == TK_LARRAY ? "|]" : "}";
}

const char *bsp_opener_text(enum bs_tk open)
{
    return open == TK_LPAREN ? "(" : open == TK_LBRACK ? "[" : open == TK_LARRAY ? "[|" : "{";
}

/* Expect the closer of `open` (an error names both). */
int bsp_expect_closer(struct parser *p, const struct bs_tok *open, const char *also)
{
    if (bsp_is(p, bsp_closer_of(open->kind))) {
        bsp_next(p);
        return 0;
    }
    bsp_expected(p, "%s'%s' to close the '%s' at %d:%d", also, bsp_closer_text(open->kind),
                 bsp_opener_text(open->kind), bsp_line_of(open->line), open->col);
    return -1;
}
