/* BrainScript text -> tokens: names and keywords, numbers, strings, $variables$ and operators,
 * each with where it starts and ends and whether a newline came before it (the bracket rule
 * of bs.h). Blanks and comments ('#', '//', '/' '*' ... '*' '/') are skipped. The first
 * lexical error ends the array as a TK_ERROR token that holds its message; see
 * bs_internal.h. Never reads past len; a NUL byte anywhere is an error. */
#include "parsers/bs_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct lexer {
    const char *s;
    size_t n, i;
    int line, col; /* the position of s[i] */
    int nl;        /* a newline since the last token */
    struct bs_toks *out;
    struct pt_err *e;
    int file; /* bs_toks.files index of the text at s[i] (0: the text's own) */
    int pend_file, pend_line, pend_col; /* a marker's position for the next line */
};

/* What each scanning step returns: go on, stop (the error token is pushed), out of memory. */
enum { GO = 0, STOP = 1, NOMEM = -1 };

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static int is_alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int is_name_char(char c)
{
    return is_alpha(c) || is_digit(c);
}

/* The byte k places after the cursor, or ' ' past the end. */
static char at(const struct lexer *lx, size_t k)
{
    return lx->i + k < lx->n ? lx->s[lx->i + k] : ' ';
}

static void adv(struct lexer *lx)
{
    if (lx->s[lx->i] == '\n') {
        lx->line++;
        lx->col = 1;
    } else {
        lx->col++;
    }
    lx->i++;
}

/* Append a token of kind made of s[start..i) that starts at line:col. */
static int push(struct lexer *lx, enum bs_tk kind, size_t start, int line, int col)
{
    struct bs_toks *t = lx->out;
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 256;
        struct bs_tok *v = pt_realloc(t->v, cap * sizeof *v, lx->e);
        if (!v)
            return NOMEM;
        t->v = v;
        t->cap = cap;
    }
    struct bs_tok *k = &t->v[t->n++];
    memset(k, 0, sizeof *k);
    k->kind = kind;
    k->s = lx->s + start;
    k->len = lx->i - start;
    k->line = lx->file * BS_FILE_LINES + line;
    k->col = col;
    k->end_line = lx->file * BS_FILE_LINES + lx->line;
    k->end_col = lx->col;
    k->nl = lx->nl;
    lx->nl = 0;
    return GO;
}

/* End the tokens with an error at line:col. */
__attribute__((format(printf, 4, 5))) static int fail(struct lexer *lx, int line, int col,
                                                      const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(lx->out->msg, sizeof lx->out->msg, fmt, ap);
    va_end(ap);
    int rc = push(lx, TK_ERROR, lx->i, line, col);
    return rc ? rc : STOP;
}

static int fail_nul(struct lexer *lx)
{
    return fail(lx, lx->line, lx->col, "unexpected NUL byte");
}

/* s[start..end) for a message: odd bytes as \xNN, long text cut. */
static const char *excerpt(const struct lexer *lx, size_t start, size_t end, char *buf, size_t size)
{
    return pt_excerpt(buf, size, lx->s + start, end - start, 24);
}

/* "#@at LINE COL FILE" (bs_internal.h): where the next line starts; 0 when it is no such
 * marker (a comment like any other). */
static int marker(struct lexer *lx, size_t end)
{
    const char *p = lx->s + lx->i, *q = lx->s + end;
    if (q - p < 5 || memcmp(p, "#@at ", 5) != 0)
        return 0;
    long v[2];
    p += 5;
    for (int k = 0; k < 2; k++) {
        v[k] = 0;
        if (p >= q || !is_digit(*p))
            return 0;
        while (p < q && is_digit(*p) && v[k] < BS_FILE_LINES)
            v[k] = v[k] * 10 + (*p++ - '0');
        if (p >= q || *p++ != ' ' || v[k] < 1 || v[k] >= BS_FILE_LINES)
            return 0;
    }
    while (q > p && (q[-1] == '\r' || q[-1] == ' '))
        q--;
    if (q == p)
        return 0;
    struct bs_toks *t = lx->out; /* files[1 .. nfiles]: files[0] is the text's own */
    int f = 1;
    while (f <= t->nfiles &&
           !((size_t)(q - p) == t->files[f].len && memcmp(t->files[f].s, p, t->files[f].len) == 0))
        f++;
    if (f > t->nfiles) {
        if (f == BS_MAX_FILES)
            return 0;
        t->files[f].s = p;
        t->files[f].len = (size_t)(q - p);
        t->nfiles = f;
    }
    lx->pend_file = f;
    lx->pend_line = (int)v[0];
    lx->pend_col = (int)v[1];
    return 1;
}

static int skip_line_comment(struct lexer *lx)
{
    size_t end = lx->i;
    while (end < lx->n && lx->s[end] != '\n')
        end++;
    int moved = marker(lx, end);
    while (lx->i < lx->n && lx->s[lx->i] != '\n') {
        if (lx->s[lx->i] == '\0')
            return fail_nul(lx);
        adv(lx);
    }
    if (moved && lx->i < lx->n) { /* past the newline: the marker's position */
        adv(lx);
        lx->nl = 1;
        lx->file = lx->pend_file;
        lx->line = lx->pend_line;
        lx->col = lx->pend_col;
    }
    return GO;
}

static int skip_block_comment(struct lexer *lx)
{
    int line = lx->line, col = lx->col;
    adv(lx);
    adv(lx);
    while (lx->i < lx->n) {
        char c = lx->s[lx->i];
        if (c == '*' && at(lx, 1) == '/') {
            adv(lx);
            adv(lx);
            return GO;
        }
        if (c == '\0')
            return fail_nul(lx);
        if (c == '\n')
            lx->nl = 1;
        adv(lx);
    }
    return fail(lx, line, col, "unterminated comment (no closing '*/')");
}

/* Step over blanks, newlines and comments. */
static int skip_space(struct lexer *lx)
{
    while (lx->i < lx->n) {
        char c = lx->s[lx->i];
        int rc = GO;
        if (c == '\n') {
            lx->nl = 1;
            adv(lx);
        } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
            adv(lx);
        } else if (c == '#' || (c == '/' && at(lx, 1) == '/')) {
            rc = skip_line_comment(lx);
        } else if (c == '/' && at(lx, 1) == '*') {
            rc = skip_block_comment(lx);
        } else {
            break;
        }
        if (rc)
            return rc;
    }
    return GO;
}

static enum bs_tk keyword(const char *s, size_t len)
{
    static const struct {
        const char *word;
        enum bs_tk kind;
    } words[] = {{"if", TK_IF},     {"then", TK_THEN},   {"else", TK_ELSE},
                 {"true", TK_TRUE}, {"false", TK_FALSE}, {"new", TK_NEW}};
    for (size_t k = 0; k < sizeof words / sizeof words[0]; k++)
        if (strlen(words[k].word) == len && memcmp(words[k].word, s, len) == 0)
            return words[k].kind;
    return TK_NAME;
}

static int scan_name(struct lexer *lx)
{
    size_t start = lx->i;
    int line = lx->line, col = lx->col;
    while (lx->i < lx->n && is_name_char(lx->s[lx->i]))
        adv(lx);
    return push(lx, keyword(lx->s + start, lx->i - start), start, line, col);
}

static size_t skip_digits(const struct lexer *lx, size_t j)
{
    while (j < lx->n && is_digit(lx->s[j]))
        j++;
    return j;
}

/* j at 'e' or 'E': the end of a well-formed exponent (e, optional sign, digits), else j. */
static size_t exponent_end(const struct lexer *lx, size_t j)
{
    size_t k = j + 1;
    if (k < lx->n && (lx->s[k] == '+' || lx->s[k] == '-'))
        k++;
    return k < lx->n && is_digit(lx->s[k]) ? skip_digits(lx, k) : j;
}

/* The end of the digits, fraction and exponent from the cursor; *bad_exp when an 'e' has no
 * digits. "1." is a number unless a name, '*' or '.' follows the dot (1.x, 1.*x, 1..n). */
static size_t number_end(const struct lexer *lx, int *bad_exp)
{
    const char *s = lx->s;
    size_t j = skip_digits(lx, lx->i);
    *bad_exp = 0;
    if (j < lx->n && s[j] == '.') {
        char d = j + 1 < lx->n ? s[j + 1] : ' ';
        if (is_digit(d))
            j = skip_digits(lx, j + 1);
        else if ((d == 'e' || d == 'E') && exponent_end(lx, j + 1) > j + 1)
            j++;
        else if (!is_name_char(d) && d != '*' && d != '.')
            j++;
    }
    if (j < lx->n && (s[j] == 'e' || s[j] == 'E')) {
        size_t k = exponent_end(lx, j);
        if (k == j) {
            *bad_exp = 1;
            j++;
            if (j < lx->n && (s[j] == '+' || s[j] == '-'))
                j++;
        }
        j = k > j ? k : j;
    }
    return j;
}

static int scan_number(struct lexer *lx)
{
    size_t start = lx->i;
    int line = lx->line, col = lx->col, bad_exp;
    size_t j = number_end(lx, &bad_exp);
    char ex[128];
    if (bad_exp || (j < lx->n && is_name_char(lx->s[j]))) {
        char e = 'e';
        for (size_t k = start; k < j; k++)
            if (lx->s[k] == 'e' || lx->s[k] == 'E')
                e = lx->s[k];
        while (j < lx->n && is_name_char(lx->s[j]))
            j++;
        if (bad_exp)
            return fail(lx, line, col, "bad number '%s' (no digits after '%c')",
                        excerpt(lx, start, j, ex, sizeof ex), e);
        return fail(lx, line, col, "bad number '%s'", excerpt(lx, start, j, ex, sizeof ex));
    }
    char small[64], *buf = small;
    size_t len = j - start;
    if (len >= sizeof small && !(buf = pt_malloc(len + 1, lx->e)))
        return NOMEM;
    memcpy(buf, lx->s + start, len);
    buf[len] = '\0';
    double v = strtod(buf, NULL);
    if (buf != small)
        free(buf);
    if (isinf(v))
        return fail(lx, line, col, "number '%s' is out of range", excerpt(lx, start, j, ex, 64));
    while (lx->i < j)
        adv(lx);
    int rc = push(lx, TK_NUM, start, line, col);
    if (rc == GO)
        lx->out->v[lx->out->n - 1].num = v;
    return rc;
}

/* '...' or "...", on one line, no escapes. */
static int scan_string(struct lexer *lx)
{
    size_t start = lx->i;
    int line = lx->line, col = lx->col;
    char q = lx->s[lx->i];
    adv(lx);
    while (lx->i < lx->n && lx->s[lx->i] != q && lx->s[lx->i] != '\n') {
        if (lx->s[lx->i] == '\0')
            return fail_nul(lx);
        adv(lx);
    }
    if (lx->i >= lx->n || lx->s[lx->i] != q)
        return fail(lx, line, col, "unterminated string (no closing %c on its line)", q);
    adv(lx);
    return push(lx, TK_STR, start, line, col);
}

/* $NAME$ */
static int scan_var(struct lexer *lx)
{
    size_t start = lx->i;
    int line = lx->line, col = lx->col;
    adv(lx);
    if (lx->i >= lx->n || !is_alpha(lx->s[lx->i]))
        return fail(lx, line, col, "expected a name after '$' (a variable is written $NAME$)");
    while (lx->i < lx->n && is_name_char(lx->s[lx->i]))
        adv(lx);
    if (lx->i >= lx->n || lx->s[lx->i] != '$') {
        char ex[64];
        return fail(lx, line, col, "unterminated variable '%s' (no closing '$')",
                    excerpt(lx, start, lx->i, ex, sizeof ex));
    }
    adv(lx);
    return push(lx, TK_VAR, start, line, col);
}

static int scan_punct(struct lexer *lx)
{
    static const struct {
        const char *text;
        enum bs_tk kind;
    } puncts[] = {{"[|", TK_LARRAY}, {"|]", TK_RARRAY},  {"==", TK_EQ},    {"!=", TK_NE},
                  {"<=", TK_LE},     {">=", TK_GE},      {"&&", TK_AND},   {"||", TK_OR},
                  {"=>", TK_ARROW},  {".*", TK_DOTSTAR}, {"**", TK_POW},   {"%", TK_MOD},
                  {"..", TK_DOTDOT}, {"(", TK_LPAREN},   {")", TK_RPAREN}, {"[", TK_LBRACK},
                  {"]", TK_RBRACK},  {"{", TK_LBRACE},   {"}", TK_RBRACE}, {",", TK_COMMA},
                  {";", TK_SEMI},    {":", TK_COLON},    {"=", TK_ASSIGN}, {"<", TK_LT},
                  {">", TK_GT},      {"+", TK_PLUS},     {"-", TK_MINUS},  {"*", TK_STAR},
                  {"/", TK_SLASH},   {".", TK_DOT},      {"!", TK_NOT}};
    size_t start = lx->i;
    int line = lx->line, col = lx->col;
    for (size_t k = 0; k < sizeof puncts / sizeof puncts[0]; k++) {
        size_t len = strlen(puncts[k].text);
        if (lx->n - lx->i >= len && memcmp(lx->s + lx->i, puncts[k].text, len) == 0) {
            for (size_t m = 0; m < len; m++)
                adv(lx);
            return push(lx, puncts[k].kind, start, line, col);
        }
    }
    char c = lx->s[lx->i];
    if (c == '\0')
        return fail_nul(lx);
    size_t seq = 1; /* a whole UTF-8 sequence, for the message */
    if ((unsigned char)c >= 0xC0)
        while (seq < 4 && lx->i + seq < lx->n && (lx->s[lx->i + seq] & 0xC0) == 0x80)
            seq++;
    char ex[64];
    return fail(lx, line, col, "unexpected character '%s'%s",
                pt_excerpt(ex, sizeof ex, lx->s + lx->i, seq, 4),
                c == '&'   ? " (did you mean '&&'?)"
                : c == '|' ? " (did you mean '||'?)"
                           : "");
}

static int scan_token(struct lexer *lx)
{
    char c = lx->s[lx->i];
    if (is_alpha(c))
        return scan_name(lx);
    if (is_digit(c) || (c == '.' && is_digit(at(lx, 1))))
        return scan_number(lx);
    if (c == '"' || c == '\'')
        return scan_string(lx);
    if (c == '$')
        return scan_var(lx);
    return scan_punct(lx);
}

int bs_lex(const char *text, size_t len, int line, int col, struct bs_toks *out, struct pt_err *e)
{
    memset(out, 0, sizeof *out);
    struct lexer lx = {
        .s = text ? text : "", .n = text ? len : 0, .line = line, .col = col, .out = out, .e = e};
    for (;;) {
        int rc = skip_space(&lx);
        if (rc == GO && lx.i >= lx.n) {
            rc = push(&lx, TK_EOF, lx.i, lx.line, lx.col);
            if (rc == GO)
                return 0;
        } else if (rc == GO) {
            rc = scan_token(&lx);
        }
        if (rc == STOP)
            return 0;
        if (rc == NOMEM)
            return PT_ENOMEM;
    }
}

void bs_toks_free(struct bs_toks *t)
{
    free(t->v);
    t->v = NULL;
    t->n = t->cap = 0;
}
