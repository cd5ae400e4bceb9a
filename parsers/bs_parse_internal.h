/* Private to parsers/bs_parse*.c: the parser's state and the helpers its grammar is built
 * from (bs_parse_util.c): the arena the nodes live in, node constructors, the token cursor,
 * errors with FILE:LINE:COL, and the nesting limits. */
#ifndef PT_PARSERS_BS_PARSE_INTERNAL_H
#define PT_PARSERS_BS_PARSE_INTERNAL_H

#include <stddef.h>

#include "parsers/bs.h"
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
    const char *files[BS_MAX_FILES]; /* by a token line's file index (files[0] = file) */
    int nfiles;
    int line, col;      /* where the text starts */
    const char *lexmsg; /* the message of the TK_ERROR token */
    struct bs_tree *tree;
    int depth;
    int ndl; /* CNTK's NDL: (a, b) and {a, b} are arrays (bs_parse_ndl) */
    struct pt_err *e;
};

/* A list of nodes growing in the arena (the old arrays are left behind: at most 2x). */
struct vec {
    struct bs_node **v;
    size_t n, cap;
};

void *bsp_arena_alloc(struct bs_tree *t, size_t size, struct pt_err *e);
char *bsp_copy(struct parser *p, const char *s, size_t len);
int bsp_push(struct parser *p, struct vec *v, struct bs_node *x);
struct bs_node *bsp_mk(struct parser *p, enum bs_kind kind, int line, int col);
struct bs_node *bsp_mk_at(struct parser *p, enum bs_kind kind, const struct bs_tok *t);
struct bs_node *bsp_named(struct parser *p, enum bs_kind kind, const struct bs_tok *at,
                          const char *s, size_t len);
int bsp_height(const struct bs_node *n);
/* A token line's file (bs_internal.h's BS_FILE_LINES) and its line in that file. */
const char *bsp_file_of(const struct parser *p, int line);
int bsp_line_of(int line);
const struct bs_tok *bsp_cur(const struct parser *p);
const struct bs_tok *bsp_ahead(const struct parser *p, size_t k);
int bsp_is(const struct parser *p, enum bs_tk kind);
const struct bs_tok *bsp_next(struct parser *p);
const char *bsp_tok_text(const struct bs_tok *t, char *buf, size_t size);
__attribute__((format(printf, 4, 5))) void *bsp_fail_at(struct parser *p, int line, int col,
                                                        const char *fmt, ...);
__attribute__((format(printf, 2, 3))) void *bsp_expected(struct parser *p, const char *fmt, ...);
__attribute__((format(printf, 2, 3))) void *bsp_expected_tok(struct parser *p, const char *fmt,
                                                             ...);
int bsp_enter(struct parser *p);
struct bs_node *bsp_seal(struct parser *p, struct bs_node *n);
enum bs_tk bsp_closer_of(enum bs_tk open);
/* The closer and opener of `open` as written ("]", "|]"), for messages. */
const char *bsp_closer_text(enum bs_tk open);
const char *bsp_opener_text(enum bs_tk open);
int bsp_expect_closer(struct parser *p, const struct bs_tok *open, const char *also);

#endif
