/* Private to parsers/bs_*.c: the tokens of BrainScript text (grammar in bs.h).
 *
 * bs_lex() turns the whole text into an array of tokens that ends in TK_EOF, or in TK_ERROR
 * at the first lexical problem (a bad number, an unterminated string or comment, a NUL byte,
 * a stray character). The error token keeps its message and its position, and the parser
 * reports it only when it gets there, so that errors come out in the order of the text. */
#ifndef PT_PARSERS_BS_INTERNAL_H
#define PT_PARSERS_BS_INTERNAL_H

#include <stddef.h>

#include "core/err.h"

enum bs_tk {
    TK_EOF,
    TK_ERROR, /* the message is in bs_toks.msg */
    TK_NAME,
    TK_NUM, /* num: the value */
    TK_STR, /* s: with its quotes */
    TK_VAR, /* s: $NAME$ */
    TK_IF,  /* keywords: if then else true false new */
    TK_THEN,
    TK_ELSE,
    TK_TRUE,
    TK_FALSE,
    TK_NEW,
    TK_LARRAY, /* [| |]: an array literal, [| a ; b ; c |] */
    TK_RARRAY,
    TK_LPAREN, /* ( ) [ ] { } , ; : = => */
    TK_RPAREN,
    TK_LBRACK,
    TK_RBRACK,
    TK_LBRACE,
    TK_RBRACE,
    TK_COMMA,
    TK_SEMI,
    TK_COLON,
    TK_ASSIGN,
    TK_ARROW,
    TK_EQ, /* operators: == != < <= > >= && || + - * / .* ** % . ! */
    TK_NE,
    TK_LT,
    TK_LE,
    TK_GT,
    TK_GE,
    TK_AND,
    TK_OR,
    TK_PLUS,
    TK_MINUS,
    TK_STAR,
    TK_SLASH,
    TK_DOTSTAR,
    TK_POW, /* ** (a power of numbers) */
    TK_MOD, /* % (fmod of numbers) */
    TK_DOT,
    TK_DOTDOT, /* .. (an array definition's index range) */
    TK_NOT
};

struct bs_tok {
    enum bs_tk kind;
    const char *s; /* the token's text s[0..len) inside the parsed text */
    size_t len;
    int line, col;         /* where it starts */
    int end_line, end_col; /* just past its last byte */
    int nl;                /* a newline came between the previous token and this one */
    double num;            /* TK_NUM: the value */
};

/* Positions in several files: the text of an include (bs_expand_includes) is set off by
 * comment lines "#@at LINE COL FILE" (the next line starts at LINE:COL of FILE). A token's
 * line is then file * BS_FILE_LINES + its line in that file, where file indexes
 * bs_toks.files (0: the text's own file, which bs_lex does not know). */
#define BS_FILE_LINES 1000000
#define BS_MAX_FILES  64

struct bs_toks {
    struct bs_tok *v;
    size_t n, cap;
    char msg[256]; /* the message of the TK_ERROR token, without "FILE:LINE:COL: error: " */
    struct {
        const char *s; /* the name inside the text (not terminated) */
        size_t len;
    } files[BS_MAX_FILES]; /* files[1 .. nfiles] (files[0], the text's own, is not set) */
    int nfiles;
};

/* Tokenize text[0..len) that starts at (line, col) into *out (which the caller frees with
 * bs_toks_free, also after a failure). Lexical errors become the final TK_ERROR token and
 * still return 0; only running out of memory fails (PT_ENOMEM, recorded in e). */
int bs_lex(const char *text, size_t len, int line, int col, struct bs_toks *out, struct pt_err *e);
void bs_toks_free(struct bs_toks *t);

#endif
