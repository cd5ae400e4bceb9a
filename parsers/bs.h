/* BrainScript, the network description language of CNTK's BrainScriptNetworkBuilder:
 * text -> a syntax tree that remembers where each piece was written.
 *
 * This file only parses; src/nn/bs_eval.c gives the tree its meaning (definitions,
 * functions, the node graph). The grammar, lowest precedence first:
 *
 *   body     := { member (NEWLINE | ';' | ',')* }            a record's inside
 *   member   := NAME '=' expr
 *             | NAME '(' params ')' '=' expr                 a function definition
 *             | NAME '{' params '}' '=' expr                 (the same, braces)
 *             | NAME '[' NAME ':' or '..' or ']' '=' expr    an array definition
 *   params   := [ param { ',' param } ]   param := NAME | NAME '=' expr (a default)
 *   expr     := lambda | 'if' expr 'then' expr 'else' expr | array
 *   lambda   := NAME '=>' expr | '(' [NAME {',' NAME}] ')' '=>' expr
 *   array    := or { ':' or }                                 a : b : c  (BS_ARRAY)
 *   or       := and { '||' and }        and := cmp { '&&' cmp }
 *   cmp      := sum [ ('==' | '!=' | '<' | '<=' | '>' | '>=') sum ]
 *   sum      := prod { ('+' | '-') prod }
 *   prod     := unary { ('*' | '/' | '.*') unary }
 *   unary    := ('-' | '+' | '!') unary | postfix
 *   postfix  := primary { '(' args ')' | '{' args '}' | '[' expr ']' | '.' NAME }
 *   args     := [ arg { ',' arg } ]     arg := expr | NAME '=' expr (named)
 *   primary  := NUMBER | STRING | 'true' | 'false' | NAME | '$' NAME '$'
 *             | '(' expr ')' | '[' body ']' | '{' body '}'     records
 *             | '[|' [ expr { ';' expr } ] '|]'                an array (BS_ARRAY, 0+ items)
 *             | 'new' NAME '[' body ']'                        (a record; the NAME is kept)
 *
 * Newlines are spaces, as in CNTK's parser: a '(', '{' or '[' that starts a line calls or
 * indexes what ended the line before (model = Sequential NEWLINE ( ... )). A member ends
 * where the next token cannot continue its expression (a NAME after a complete expression
 * starts the next member); ';' or ',' may separate members. Comments: '#' and
 * '//' to the end of the line, '/' '*' ... '*' '/'. Strings: '...' or "..." (no escapes,
 * on one line). Numbers: decimal with optional fraction and exponent (1, 0.5, 1e-3, .5, 2.);
 * a number that runs into a letter (2x, 1e) is an error, and 2.*x is 2 .* x. NAME: a letter
 * or '_', then letters, digits, '_'; if then else true false new are keywords, not names.
 * $NAME$ has no blanks inside. Outside strings and comments only ASCII is allowed; a NUL
 * byte is an error anywhere. In args and params a single '=' after a NAME makes a named
 * argument or a default; a trailing ',' is an error.
 *
 * Positions: a node's line:col is its first token; a binary operator, array, call, index or
 * member access starts with its left operand (at the '(' when that is parenthesised), a
 * function definition's BS_LAMBDA at the '(' or '{' of its parameters, a 'new' record at
 * 'new', the root at (line, col) of bs_parse. Comparisons do not chain (a < b < c is an
 * error). Expressions nested deeper than 200 levels (in brackets, arguments, branches,
 * lambda bodies, prefix operators) and trees taller than 1000 nodes are errors, so code that
 * walks a tree may recurse. Duplicate member or parameter names are not checked here.
 *
 * Errors are PT_EUSER with "FILE:LINE:COL: error: ..." naming what was expected and what
 * was found (the cfg_error format), positions counted in the whole file. A missing token
 * whose place is taken by the first token of the next line is reported just past the end of
 * the line ("..., found end of line"); a lexical error (bad number, unterminated string or
 * comment) is reported when the parser reaches it, so the first error in the text wins.
 */
#ifndef PT_PARSERS_BS_H
#define PT_PARSERS_BS_H

#include <stddef.h>

#include "core/err.h"

enum bs_kind {
    BS_NUM,    /* num */
    BS_STR,    /* str: the text between the quotes */
    BS_BOOL,   /* num: 1 (true) or 0 (false) */
    BS_ID,     /* str: the name */
    BS_VAR,    /* str: NAME of $NAME$ (a variable of the enclosing config) */
    BS_RECORD, /* items: BS_DEF members in written order; str: the NAME after 'new' or NULL */
    BS_DEF,    /* str: name; a: the value (a function definition's value is a BS_LAMBDA) */
    BS_LAMBDA, /* items: parameters (BS_ID, or BS_DEF with a default); a: the body */
    BS_ARRAY,  /* items: the elements of a : b : c (two or more), or of [| a ; b |] (any) */
    BS_CALL,   /* a: the callee; items: arguments (expressions, or BS_DEF for name = value);
                * num: 0 for f (...), 1 for F {...} */
    BS_INDEX,  /* a[b] */
    BS_DOT,    /* a.str */
    BS_IF,     /* if a then b else c */
    BS_BINOP,  /* a op b; op: "+", "-", "*", "/", ".*", "==", "!=", "<", "<=", ">", ">=",
                * "&&", "||" */
    BS_UNOP,   /* op a; op: "-", "+", "!" */
    BS_FOR     /* an array definition's value, NAME[i:a..b] = c: str: the index's name i; a and
                * b: the first and last index; c: each element's expression (it sees i) */
};

struct bs_node {
    enum bs_kind kind;
    const char *file; /* the file name given to bs_parse (not copied), or an included file's
                       * (bs_expand_includes; owned by the tree) */
    int line, col;    /* where the node starts: 1-based, columns count bytes */
    double num;
    const char *str; /* owned by the tree */
    const char *op;  /* a static string (BS_BINOP, BS_UNOP; "()" on a BS_ID that NDL wrote
                      * in parentheses, its array of one) */
    struct bs_node *a, *b, *c;
    struct bs_node **items;
    size_t nitems;
};

struct bs_tree;

/* Parse text[0..len) as a record's body (the inside of BrainScriptNetworkBuilder = [...])
 * that starts in `file` at (line, col). On success *out owns every node and string;
 * bs_tree_root() is a BS_RECORD. On failure *out is NULL and e holds the message. */
int bs_parse(const char *text, size_t len, const char *file, int line, int col,
             struct bs_tree **out, struct pt_err *e);
/* The same for CNTK's NDL (NDLNetworkBuilder's files, src/nn/ndl.c), whose grammar is
 * BrainScript's but for its arrays: (a, b, c) and {a, b, c} (two or more items in
 * parentheses, one or more in braces that do not start with NAME =) are BS_ARRAYs. */
int bs_parse_ndl(const char *text, size_t len, const char *file, int line, int col,
                 struct bs_tree **out, struct pt_err *e);
struct bs_node *bs_tree_root(struct bs_tree *t);
void bs_tree_free(struct bs_tree *t); /* NULL is a no-op */

/* CNTK's include "PATH": text[0..len) (starting in `file` at line:col) with every include
 * replaced by the file's text, expanded the same way, set off by "#@at LINE COL FILE"
 * comment lines that bs_parse follows, so that positions name the included file. PATH is
 * taken as written (from the working directory), else its file name in the directory of
 * the file that holds the include. Without `allowed` (a model file's description) an
 * include is an error; nested more than 8 deep, or longer than max - 1 bytes in all, too.
 * *out (malloc'd, NUL-terminated) is the result. */
int bs_expand_includes(const char *text, size_t len, const char *file, int line, int col,
                       int allowed, size_t max, char **out, struct pt_err *e);

/* "FILE:LINE:COL: error: " + the message, as cfg_error does; returns PT_EUSER. */
int bs_error(struct pt_err *e, const struct bs_node *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
