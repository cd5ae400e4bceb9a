/* The characters of legacy config text: comments, strings, balanced brackets, and the check
 * that text is UTF-8 without NUL bytes. See cfg_lex.h. */
#include "parsers/cfg_lex.h"

#include <string.h>

int cfg_lex_key_char(char ch)
{
    unsigned char u = (unsigned char)ch;
    if (u < 0x20 || u == 0x7F || ch == ' ')
        return 0;
    return !strchr("=;,[]{}()\"#", ch);
}

int cfg_lex_comment_here(const struct cfg_lex *lx)
{
    char ch = cfg_lex_cur(lx);
    if (!(ch == '#' || (ch == '/' && cfg_lex_peek(lx, 1) == '/')))
        return 0;
    if (lx->i == 0)
        return 1;
    char prev = lx->s[lx->i - 1];
    return cfg_lex_is_blank(prev) || cfg_lex_is_sep(prev) || prev == '[' || prev == '{';
}

void cfg_lex_skip_to_eol(struct cfg_lex *lx)
{
    while (!cfg_lex_at_end(lx) && cfg_lex_cur(lx) != '\n')
        cfg_lex_adv(lx);
}

int cfg_lex_skip_string(struct cfg_lex *lx, struct pt_err *e)
{
    struct cfg_origin start = cfg_lex_here(lx);
    cfg_lex_adv(lx);
    while (!cfg_lex_at_end(lx) && cfg_lex_cur(lx) != '"')
        cfg_lex_adv(lx);
    if (cfg_lex_at_end(lx))
        return cfg_error(e, &start, "unterminated string (no closing '\"')");
    cfg_lex_adv(lx);
    return 0;
}

int cfg_lex_skim(struct cfg_lex *lx, struct pt_err *e)
{
    struct open_br {
        char ch;
        struct cfg_origin at;
    } stack[CFG_MAX_DEPTH];
    int top = 0;
    stack[top].ch = cfg_lex_cur(lx);
    stack[top++].at = cfg_lex_here(lx);
    cfg_lex_adv(lx);
    while (top > 0) {
        if (cfg_lex_at_end(lx)) {
            const struct open_br *o = &stack[top - 1];
            return cfg_error(e, &o->at, "unterminated '%c' (no matching '%c' before the end)",
                             o->ch, cfg_lex_closer_of(o->ch));
        }
        char ch = cfg_lex_cur(lx);
        if (ch == '"') {
            int rc = cfg_lex_skip_string(lx, e);
            if (rc)
                return rc;
            continue;
        }
        if (cfg_lex_comment_here(lx)) {
            cfg_lex_skip_to_eol(lx);
            continue;
        }
        if (cfg_lex_is_opener(ch)) {
            if (top == CFG_MAX_DEPTH) {
                struct cfg_origin at = cfg_lex_here(lx);
                return cfg_error(e, &at, "brackets nested deeper than %d levels", CFG_MAX_DEPTH);
            }
            stack[top].ch = ch;
            stack[top++].at = cfg_lex_here(lx);
        } else if (cfg_lex_is_closer(ch)) {
            const struct open_br *o = &stack[top - 1];
            if (ch != cfg_lex_closer_of(o->ch)) {
                struct cfg_origin at = cfg_lex_here(lx);
                char where[512];
                return cfg_error(
                    e, &at, "'%c' does not match the '%c' opened at %s (expected '%c')", ch, o->ch,
                    cfg_origin_str(&o->at, where, sizeof where), cfg_lex_closer_of(o->ch));
            }
            top--;
        }
        cfg_lex_adv(lx);
    }
    return 0;
}

/* Length of the UTF-8 sequence starting at s[0] (of len bytes), 0 when it is not valid. */
static size_t utf8_length(const unsigned char *s, size_t len)
{
    unsigned ch = s[0];
    size_t need = 0;
    unsigned cp = 0, min = 0;
    if (ch < 0x80) {
        need = 1;
    } else if (ch >= 0xC2 && ch <= 0xDF) {
        need = 2;
        cp = ch & 0x1F;
        min = 0x80;
    } else if (ch >= 0xE0 && ch <= 0xEF) {
        need = 3;
        cp = ch & 0x0F;
        min = 0x800;
    } else if (ch >= 0xF0 && ch <= 0xF4) {
        need = 4;
        cp = ch & 0x07;
        min = 0x10000;
    }
    if (need == 0 || need > len)
        return 0;
    for (size_t k = 1; k < need; k++) {
        if ((s[k] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[k] & 0x3F);
    }
    if (need > 1 && (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)))
        return 0;
    return need;
}

int cfg_check_text(const char *name, const char *text, size_t len, struct pt_err *e)
{
    int line = 1, col = 1;
    const unsigned char *s = (const unsigned char *)text;
    for (size_t i = 0; i < len;) {
        unsigned ch = s[i];
        if (ch == 0)
            return pt_err_set(e, PT_EUSER, "%s:%d:%d: error: NUL byte in config text", name, line,
                              col);
        size_t need = utf8_length(s + i, len - i);
        if (need == 0)
            return pt_err_set(
                e, PT_EUSER,
                "%s:%d:%d: error: invalid UTF-8 (byte 0x%02X); config files must be UTF-8", name,
                line, col, ch);
        if (ch == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
        i += need;
    }
    return 0;
}
