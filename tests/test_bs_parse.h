/* Shared by tests/test_bs_parse.c and tests/test_bs_parse_errors.c: parse BrainScript
 * text, dump a tree as one line of text, and expect an exact error message. */
#ifndef PT_TESTS_TEST_BS_PARSE_H
#define PT_TESTS_TEST_BS_PARSE_H

#include <stdarg.h>

#include "parsers/bs.h"
#include "testutil.h"

/* ------------------------------------------------------------------ helpers */

struct sbuf {
    char s[8192];
    size_t n;
};

__attribute__((format(printf, 2, 3))) static inline void put(struct sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(b->s + b->n, sizeof b->s - b->n, fmt, ap);
    va_end(ap);
    if (k > 0)
        b->n = b->n + (size_t)k < sizeof b->s ? b->n + (size_t)k : sizeof b->s - 1;
}

static inline void dump_node(struct sbuf *b, const struct bs_node *n);

static inline void dump_items(struct sbuf *b, const struct bs_node *n, const char *sep)
{
    for (size_t k = 0; k < n->nitems; k++) {
        put(b, "%s", k ? sep : "");
        dump_node(b, n->items[k]);
    }
}

/* "(HEAD a b c)" with those of a, b and c that n has. */
static inline void dump_kids(struct sbuf *b, const char *head, const struct bs_node *n)
{
    const struct bs_node *kids[] = {n->a, n->b, n->c};
    put(b, "(%s", head);
    for (int k = 0; k < 3; k++)
        if (kids[k]) {
            put(b, " ");
            dump_node(b, kids[k]);
        }
    put(b, ")");
}

/* An s-expression: (op a b), (call f args), (call{} F args), (fn (params) body), (: items),
 * (index a b), (. a name), (if a b c), (for i first last element), [members] or
 * Name[members], $var$, "str". */
static inline void dump_node(struct sbuf *b, const struct bs_node *n)
{
    switch (n->kind) {
    case BS_NUM: put(b, "%g", n->num); break;
    case BS_STR: put(b, "\"%s\"", n->str); break;
    case BS_BOOL: put(b, "%s", n->num ? "true" : "false"); break;
    case BS_ID: put(b, "%s", n->str); break;
    case BS_VAR: put(b, "$%s$", n->str); break;
    case BS_RECORD:
        put(b, "%s[", n->str ? n->str : "");
        dump_items(b, n, " ");
        put(b, "]");
        break;
    case BS_DEF:
        put(b, "%s=", n->str);
        dump_node(b, n->a);
        break;
    case BS_LAMBDA:
        put(b, "(fn (");
        dump_items(b, n, " ");
        put(b, ") ");
        dump_node(b, n->a);
        put(b, ")");
        break;
    case BS_ARRAY:
        put(b, "(: ");
        dump_items(b, n, " ");
        put(b, ")");
        break;
    case BS_CALL:
        put(b, "(call%s ", n->num ? "{}" : "");
        dump_node(b, n->a);
        put(b, "%s", n->nitems ? " " : "");
        dump_items(b, n, " ");
        put(b, ")");
        break;
    case BS_INDEX:
        put(b, "(index ");
        dump_node(b, n->a);
        put(b, " ");
        dump_node(b, n->b);
        put(b, ")");
        break;
    case BS_DOT:
        put(b, "(. ");
        dump_node(b, n->a);
        put(b, " %s)", n->str);
        break;
    case BS_IF: dump_kids(b, "if", n); break;
    case BS_BINOP:
    case BS_UNOP: dump_kids(b, n->op, n); break;
    case BS_FOR: {
        char head[96];
        snprintf(head, sizeof head, "for %s", n->str);
        dump_kids(b, head, n);
        break;
    }
    }
}

static inline const char *dump(const struct bs_node *n)
{
    static struct sbuf b;
    b.n = 0;
    b.s[0] = '\0';
    dump_node(&b, n);
    return b.s;
}

/* Parse text (copied into a buffer of exactly len bytes, so that reading past it is caught)
 * as file name at line:col. */
static inline int parse_at(const char *name, const char *text, size_t len, int line, int col,
                           struct bs_tree **t, struct pt_err *e)
{
    char *copy = malloc(len ? len : 1);
    ck_assert_ptr_nonnull(copy);
    memcpy(copy, text, len);
    pt_err_clear(e);
    int rc = bs_parse(copy, len, name, line, col, t, e);
    free(copy);
    return rc;
}

static inline struct bs_tree *parse_ok_at(const char *text, int line, int col)
{
    struct pt_err e;
    struct bs_tree *t = NULL;
    int rc = parse_at("t.bs", text, strlen(text), line, col, &t, &e);
    ck_assert_msg(rc == 0, "unexpected error: %s", e.msg);
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(bs_tree_root(t)->kind, BS_RECORD);
    return t;
}

static inline struct bs_tree *parse_ok(const char *text)
{
    return parse_ok_at(text, 1, 1);
}

/* The member `name` (a BS_DEF) of a record; fails the test when there is none. */
static inline const struct bs_node *member(const struct bs_node *rec, const char *name)
{
    ck_assert_int_eq(rec->kind, BS_RECORD);
    for (size_t k = 0; k < rec->nitems; k++) {
        ck_assert_int_eq(rec->items[k]->kind, BS_DEF);
        if (strcmp(rec->items[k]->str, name) == 0)
            return rec->items[k];
    }
    ck_abort_msg("no member %s", name);
    return NULL;
}

/* The value of member `name` of the root, as an s-expression. */
static inline const char *shape(struct bs_tree *t, const char *name)
{
    return dump(member(bs_tree_root(t), name)->a);
}

#define AT(n, l, c)                                                                                \
    do {                                                                                           \
        ck_assert_int_eq((n)->line, l);                                                            \
        ck_assert_int_eq((n)->col, c);                                                             \
    } while (0)

static inline void err_is_n(const char *text, size_t len, const char *expected)
{
    struct pt_err e;
    struct bs_tree *t = (struct bs_tree *)1;
    int rc = parse_at("t.bs", text, len, 1, 1, &t, &e);
    ck_assert_int_eq(rc, PT_EUSER);
    ck_assert_int_eq(e.code, PT_EUSER);
    ck_assert_ptr_null(t);
    ck_assert_str_eq(e.msg, expected);
}

static inline void err_is(const char *text, const char *expected)
{
    err_is_n(text, strlen(text), expected);
}

/* ------------------------------------------------------------------ CNTK's examples */

/* test_bs_parse_errors.c: the error messages, one test case. */
TCase *bs_parse_error_tcase(void);

#endif
