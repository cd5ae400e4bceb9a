/* Private to parsers/cfg_*.c: the characters of legacy config text (see the map in
 * cfg_internal.h). A cursor over one piece of text that counts lines and columns, the
 * character classes of the grammar, and the skips that step over strings, comments and
 * balanced brackets. Knows nothing of nodes or blocks; errors name cursor positions. */
#ifndef PT_PARSERS_CFG_LEX_H
#define PT_PARSERS_CFG_LEX_H

#include "parsers/cfg.h"

/* A cursor over s[0..n): i is the byte offset, line:col the position of s[i]. */
struct cfg_lex {
    const char *s;
    size_t n, i;
    int line, col;
    struct cfg_origin base; /* file and arg of this text; line/col apply when arg == 0 */
};

static inline int cfg_lex_at_end(const struct cfg_lex *lx)
{
    return lx->i >= lx->n;
}

/* The character at the cursor ('\0' at the end). */
static inline char cfg_lex_cur(const struct cfg_lex *lx)
{
    return lx->i < lx->n ? lx->s[lx->i] : '\0';
}

/* The character k places after the cursor ('\0' past the end). */
static inline char cfg_lex_peek(const struct cfg_lex *lx, size_t k)
{
    return lx->i + k < lx->n ? lx->s[lx->i + k] : '\0';
}

/* Move one byte on, keeping line:col (columns count characters, not UTF-8 continuation
 * bytes). */
static inline void cfg_lex_adv(struct cfg_lex *lx)
{
    if (lx->i >= lx->n)
        return;
    char ch = lx->s[lx->i++];
    if (ch == '\n') {
        lx->line++;
        lx->col = 1;
    } else if (lx->i >= lx->n || (lx->s[lx->i] & 0xC0) != 0x80) {
        lx->col++;
    }
}

/* The origin of the cursor (a command-line argument has no line:col). */
static inline struct cfg_origin cfg_lex_here(const struct cfg_lex *lx)
{
    struct cfg_origin o = lx->base;
    if (o.arg == 0) {
        o.line = lx->line;
        o.col = lx->col;
    }
    return o;
}

static inline int cfg_lex_is_blank(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\f' || ch == '\v';
}

/* Entry separators. */
static inline int cfg_lex_is_sep(char ch)
{
    return ch == '\n' || ch == ';' || ch == ',';
}

static inline int cfg_lex_is_opener(char ch)
{
    return ch == '[' || ch == '{' || ch == '(';
}

static inline int cfg_lex_is_closer(char ch)
{
    return ch == ']' || ch == '}' || ch == ')';
}

/* The closer matching an opener. */
static inline char cfg_lex_closer_of(char open)
{
    return open == '[' ? ']' : open == '{' ? '}' : ')';
}

/* May ch be part of a key? (printable, not a blank and not one of the grammar's marks) */
int cfg_lex_key_char(char ch);

/* Does a comment ('#' or '//') start at the cursor? Only after a blank, separator or
 * opener, or at the start of the text, so "1#INF" stays a value. */
int cfg_lex_comment_here(const struct cfg_lex *lx);
/* Move to the next '\n' (or the end). */
void cfg_lex_skip_to_eol(struct cfg_lex *lx);
/* At '"': move past the closing quote. Error (naming the opening quote) when there is none. */
int cfg_lex_skip_string(struct cfg_lex *lx, struct pt_err *e);
/* At an opener: move past its matching closer, skipping strings and comments inside.
 * Errors for an unterminated or mismatched bracket and for nesting deeper than
 * CFG_MAX_DEPTH. */
int cfg_lex_skim(struct cfg_lex *lx, struct pt_err *e);

/* Check text for NUL bytes and invalid UTF-8 before any of it is read; the error names
 * name:line:col. */
int cfg_check_text(const char *name, const char *text, size_t len, struct pt_err *e);

#endif
