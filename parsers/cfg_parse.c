/* Legacy config text -> entries of one block.
 *
 * Grammar (CNTK's "configFile=" dialect):
 *   text   := { sep | comment | entry }
 *   sep    := newline | ';' | ','
 *   entry  := key [ '=' value ]          (a bare key means key=true)
 *   value  := '[' balanced-text ']' | '{' balanced-text '}' | scalar
 *   scalar := text up to a separator at bracket depth 0; "..." and (...) protect separators
 * A comment is '#' (or '//') that starts an entry or follows a blank, ';', ',', '[' or '{';
 * so "1#INF" is a value. Block bodies are not parsed here: their text is kept as a pending
 * segment of the block node and parsed on first lookup (cfg_parse_block).
 */
#include "parsers/cfg_internal.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

struct lex {
    const char *s;
    size_t n, i;
    int line, col;
    struct cfg_origin base; /* file and arg of this text */
    struct cfg_node *block;
    const char *dir;
};

static int at_end(const struct lex *lx)
{
    return lx->i >= lx->n;
}

static char cur(const struct lex *lx)
{
    return lx->i < lx->n ? lx->s[lx->i] : '\0';
}

static char peek(const struct lex *lx, size_t k)
{
    return lx->i + k < lx->n ? lx->s[lx->i + k] : '\0';
}

static void adv(struct lex *lx)
{
    if (lx->i >= lx->n)
        return;
    char ch = lx->s[lx->i++];
    if (ch == '\n') {
        lx->line++;
        lx->col = 1;
    } else if (lx->i >= lx->n || (lx->s[lx->i] & 0xC0) != 0x80) {
        lx->col++; /* count characters, not UTF-8 continuation bytes */
    }
}

static struct cfg_origin here(const struct lex *lx)
{
    struct cfg_origin o = lx->base;
    if (o.arg == 0) {
        o.line = lx->line;
        o.col = lx->col;
    }
    return o;
}

static int is_blank(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\f' || ch == '\v';
}

static int is_sep(char ch)
{
    return ch == '\n' || ch == ';' || ch == ',';
}

/* May a comment start at the current position? (after a blank, separator or opener) */
static int comment_here(const struct lex *lx)
{
    char ch = cur(lx);
    if (!(ch == '#' || (ch == '/' && peek(lx, 1) == '/')))
        return 0;
    if (lx->i == 0)
        return 1;
    char prev = lx->s[lx->i - 1];
    return is_blank(prev) || is_sep(prev) || prev == '[' || prev == '{';
}

static void skip_to_eol(struct lex *lx)
{
    while (!at_end(lx) && cur(lx) != '\n')
        adv(lx);
}

static int is_opener(char ch)
{
    return ch == '[' || ch == '{' || ch == '(';
}

static int is_closer(char ch)
{
    return ch == ']' || ch == '}' || ch == ')';
}

static char closer_of(char open)
{
    return open == '[' ? ']' : open == '{' ? '}' : ')';
}

/* At '"': move past the closing quote. */
static int skip_string(struct lex *lx, struct pt_err *e)
{
    struct cfg_origin start = here(lx);
    adv(lx);
    while (!at_end(lx) && cur(lx) != '"')
        adv(lx);
    if (at_end(lx))
        return cfg_error(e, &start, "unterminated string (no closing '\"')");
    adv(lx);
    return 0;
}

/* At an opener: move past its matching closer, skipping strings and comments inside. */
static int skim(struct lex *lx, struct pt_err *e)
{
    struct open_br {
        char ch;
        struct cfg_origin at;
    } stack[CFG_MAX_DEPTH];
    int top = 0;
    stack[top].ch = cur(lx);
    stack[top++].at = here(lx);
    adv(lx);
    while (top > 0) {
        if (at_end(lx)) {
            const struct open_br *o = &stack[top - 1];
            return cfg_error(e, &o->at, "unterminated '%c' (no matching '%c' before the end)",
                             o->ch, closer_of(o->ch));
        }
        char ch = cur(lx);
        if (ch == '"') {
            int rc = skip_string(lx, e);
            if (rc)
                return rc;
            continue;
        }
        if (comment_here(lx)) {
            skip_to_eol(lx);
            continue;
        }
        if (is_opener(ch)) {
            if (top == CFG_MAX_DEPTH) {
                struct cfg_origin at = here(lx);
                return cfg_error(e, &at, "brackets nested deeper than %d levels", CFG_MAX_DEPTH);
            }
            stack[top].ch = ch;
            stack[top++].at = here(lx);
        } else if (is_closer(ch)) {
            const struct open_br *o = &stack[top - 1];
            if (ch != closer_of(o->ch)) {
                struct cfg_origin at = here(lx);
                char where[512];
                return cfg_error(
                    e, &at, "'%c' does not match the '%c' opened at %s (expected '%c')", ch, o->ch,
                    cfg_origin_str(&o->at, where, sizeof where), closer_of(o->ch));
            }
            top--;
        }
        adv(lx);
    }
    return 0;
}

static int key_char(char ch)
{
    unsigned char u = (unsigned char)ch;
    if (u < 0x20 || u == 0x7F || ch == ' ')
        return 0;
    return !strchr("=;,[]{}()\"#", ch);
}

static int bad_entry_start(struct lex *lx, struct pt_err *e)
{
    struct cfg_origin at = here(lx);
    char ch = cur(lx);
    if (ch == '=')
        return cfg_error(e, &at, "missing key before '='");
    if (ch == ']' || ch == '}' || ch == ')')
        return cfg_error(e, &at, "unexpected '%c' (no block is open here)", ch);
    if (ch == '[' || ch == '{')
        return cfg_error(e, &at, "a block needs a name: expected 'name = %c ... %c'", ch,
                         closer_of(ch));
    if (ch == '"')
        return cfg_error(e, &at, "a quoted string needs a key: expected 'key = \"...\"'");
    if (ch == '(')
        return cfg_error(e, &at, "unexpected '(' where a key was expected");
    char ex[16];
    return cfg_error(e, &at, "unexpected character '%s' where a key was expected",
                     pt_excerpt(ex, sizeof ex, lx->s + lx->i, 1, 1));
}

/* Parse the value at the cursor into a new node (key filled in by the caller). */
static int parse_value(struct lex *lx, struct cfg_node **out, struct pt_err *e)
{
    struct cfg_origin vat = here(lx);
    struct cfg *c = lx->block->cfg;
    struct cfg_node *n = cfg_node_new(c, lx->block, "", 0, &vat, e);
    if (!n)
        return e ? e->code : PT_ENOMEM;
    char ch = cur(lx);
    if (ch == '[' || ch == '{') {
        size_t open = lx->i;
        int rc = skim(lx, e);
        if (rc) {
            cfg_node_free(n);
            return rc;
        }
        /* body starts one character after the opener */
        struct cfg_origin bat = vat;
        if (bat.arg == 0)
            bat.col++;
        n->is_block = 1;
        n->open = ch;
        rc = cfg_add_segment(n, lx->s + open + 1, lx->i - open - 2, &bat, lx->dir, e);
        if (rc) {
            cfg_node_free(n);
            return rc;
        }
        *out = n;
        return 0;
    }
    size_t start = lx->i;
    while (!at_end(lx)) {
        ch = cur(lx);
        if (is_sep(ch) || (lx->i > start && comment_here(lx)))
            break;
        if (ch == '"' || is_opener(ch)) {
            int rc = ch == '"' ? skip_string(lx, e) : skim(lx, e);
            if (rc) {
                cfg_node_free(n);
                return rc;
            }
            continue;
        }
        if (is_closer(ch)) {
            struct cfg_origin at = here(lx);
            cfg_node_free(n);
            return cfg_error(e, &at, "unexpected '%c' in a value (no matching opening bracket)",
                             ch);
        }
        adv(lx);
    }
    size_t end = lx->i;
    while (end > start && is_blank(lx->s[end - 1]))
        end--;
    const char *v = lx->s + start;
    size_t len = end - start;
    if (len >= 2 && v[0] == '"' && v[len - 1] == '"') {
        v++;
        len -= 2;
    }
    n->value = pt_strndup(v, len, e);
    if (!n->value) {
        cfg_node_free(n);
        return e ? e->code : PT_ENOMEM;
    }
    *out = n;
    return 0;
}

static int do_include(struct lex *lx, struct cfg_node *v, const struct cfg_origin *at,
                      struct pt_err *e)
{
    int rc = 0;
    if (v->is_block) {
        rc = cfg_error(e, at, "include= expects file names (a+b+c), not a block");
    } else if (strchr(v->value, '$')) {
        rc = cfg_error(e, at,
                       "variables ($name$) are not allowed in include=; give the path itself");
    } else if (v->value[0] == '\0') {
        rc = cfg_error(e, at, "include= needs at least one file name");
    } else {
        char *list = v->value;
        for (char *p = list; rc == 0;) {
            char *plus = strchr(p, '+');
            if (plus)
                *plus = '\0';
            if (*p == '\0')
                rc = cfg_error(e, at, "include=: empty file name in the '+' list");
            else
                rc = cfg_read_file(lx->block, p, lx->dir, 1, at, e);
            if (!plus)
                break;
            p = plus + 1;
        }
    }
    cfg_node_free(v);
    return rc;
}

int cfg_parse_segment(struct cfg_node *block, struct cfg_seg *seg, struct pt_err *e)
{
    struct lex lx = {
        .s = seg->text,
        .n = seg->len,
        .i = 0,
        .line = seg->at.line,
        .col = seg->at.col,
        .base = seg->at,
        .block = block,
        .dir = seg->dir,
    };
    while (!at_end(&lx)) {
        char ch = cur(&lx);
        if (is_blank(ch) || is_sep(ch)) {
            adv(&lx);
            continue;
        }
        if (ch == '#' || (ch == '/' && peek(&lx, 1) == '/')) {
            skip_to_eol(&lx);
            continue;
        }
        struct cfg_origin kat = here(&lx);
        size_t k0 = lx.i;
        while (!at_end(&lx) && key_char(cur(&lx)) &&
               !(cur(&lx) == '/' && peek(&lx, 1) == '/' && lx.i > k0 && is_blank(lx.s[lx.i - 1])))
            adv(&lx);
        size_t klen = lx.i - k0;
        if (klen == 0)
            return bad_entry_start(&lx, e);
        const char *key = lx.s + k0;
        while (!at_end(&lx) && is_blank(cur(&lx)))
            adv(&lx);
        struct cfg_node *v = NULL;
        char kx[128];
        if (cur(&lx) == '=') {
            adv(&lx);
            while (!at_end(&lx) && is_blank(cur(&lx)))
                adv(&lx);
            int rc = parse_value(&lx, &v, e);
            if (rc)
                return rc;
        } else if (at_end(&lx) || is_sep(cur(&lx)) || comment_here(&lx)) {
            v = cfg_node_new(block->cfg, block, "", 0, &kat, e);
            if (!v || !(v->value = pt_strdup("true", e))) {
                cfg_node_free(v);
                return e ? e->code : PT_ENOMEM;
            }
        } else {
            struct cfg_origin at = here(&lx);
            return cfg_error(e, &at, "expected '=' after key '%s'",
                             pt_excerpt(kx, sizeof kx, key, klen, 60));
        }
        while (!at_end(&lx) && is_blank(cur(&lx)))
            adv(&lx);
        if (comment_here(&lx))
            skip_to_eol(&lx);
        if (!at_end(&lx) && !is_sep(cur(&lx))) {
            struct cfg_origin at = here(&lx);
            char ex[32];
            cfg_node_free(v);
            return cfg_error(e, &at,
                             "unexpected '%s' after the value of '%s' (separate entries with a "
                             "newline, ';' or ',')",
                             pt_excerpt(ex, sizeof ex, lx.s + lx.i, lx.n - lx.i, 1),
                             pt_excerpt(kx, sizeof kx, key, klen, 60));
        }
        v->origin = kat;
        int rc;
        if (cfg_key_eq("include", key, klen))
            rc = do_include(&lx, v, &kat, e);
        else
            rc = cfg_insert_path(block, key, klen, &kat, v, e);
        if (rc)
            return rc;
    }
    return 0;
}

/* ------------------------------------------------------------------ text checks */

int cfg_check_text(const char *name, const char *text, size_t len, struct pt_err *e)
{
    int line = 1, col = 1;
    const unsigned char *s = (const unsigned char *)text;
    for (size_t i = 0; i < len;) {
        unsigned ch = s[i];
        size_t need = 0;
        unsigned cp = 0, min = 0;
        if (ch == 0)
            return pt_err_set(e, PT_EUSER, "%s:%d:%d: error: NUL byte in config text", name, line,
                              col);
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
        int ok = need > 0 && i + need <= len;
        for (size_t k = 1; ok && k < need; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                ok = 0;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        if (ok && need > 1 && (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)))
            ok = 0;
        if (!ok)
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

/* ------------------------------------------------------------------ files */

static int ends_with_ci(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcasecmp(s + a - b, suffix) == 0;
}

static int read_whole(const char *path, const struct cfg_origin *at, char **out, size_t *len,
                      struct pt_err *e)
{
    char where[512];
    const char *w = at ? cfg_origin_str(at, where, sizeof where) : path;
    const char *sep = ": error: ";
    FILE *f = fopen(path, "rb");
    if (!f)
        return pt_err_set(e, PT_EUSER, "%s%scannot open config file '%s': %s", w, sep, path,
                          strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        return pt_err_set(e, PT_EUSER, "%s%sconfig file '%s' is a directory", w, sep, path);
    }
    size_t cap = 4096, n = 0;
    char *buf = pt_malloc(cap, e);
    if (!buf) {
        fclose(f);
        return e ? e->code : PT_ENOMEM;
    }
    for (;;) {
        if (n + 1 >= cap) {
            if (cap >= CFG_MAX_FILE_BYTES) {
                free(buf);
                fclose(f);
                return pt_err_set(e, PT_EUSER, "%s%sconfig file '%s' is larger than %u MiB", w, sep,
                                  path, CFG_MAX_FILE_BYTES >> 20);
            }
            char *g = pt_realloc(buf, cap * 2, e);
            if (!g) {
                free(buf);
                fclose(f);
                return e ? e->code : PT_ENOMEM;
            }
            buf = g;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0)
            break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return pt_err_set(e, PT_EUSER, "%s%scannot read config file '%s'", w, sep, path);
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return 0;
}

static int parse_text(struct cfg_node *block, const char *name, const char *text, size_t len,
                      const char *dir, struct pt_err *e)
{
    int rc = cfg_check_text(name, text, len, e);
    if (rc)
        return rc;
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
        text += 3;
        len -= 3;
    }
    if (ends_with_ci(name, ".ini"))
        return cfg_parse_ini(block, name, text, len, dir, e);
    struct cfg_seg seg = {
        .text = (char *)text,
        .len = len,
        .at = {.file = name, .line = 1, .col = 1},
        .dir = dir,
    };
    return cfg_parse_segment(block, &seg, e);
}

int cfg_read_file(struct cfg_node *block, const char *path, const char *dir, int include,
                  const struct cfg_origin *at, struct pt_err *e)
{
    struct cfg *c = block->cfg;
    char *full = NULL;
    if (path[0] != '/' && dir && dir[0]) {
        full = malloc(strlen(dir) + strlen(path) + 2);
        if (!full)
            return pt_err_set(e, PT_ENOMEM, "error: out of memory");
        sprintf(full, "%s/%s", dir, path);
    }
    const char *open_path = full ? full : path;
    char *real = realpath(open_path, NULL);
    if (!real) {
        int err = errno;
        free(full);
        if (at)
            return cfg_error(e, at, "cannot open config file '%s': %s", path, strerror(err));
        return pt_err_set(e, PT_EUSER, "error: cannot open config file '%s': %s", path,
                          strerror(err));
    }
    for (size_t i = 0; i < c->nloaded; i++) {
        if (strcmp(c->loaded[i], real) != 0)
            continue;
        free(real);
        free(full);
        if (include) {
            cfg_warn(c, at, "config file '%s' was already read; not including it again", path);
            return 0;
        }
        if (at)
            return cfg_error(e, at, "config file '%s' is given more than once", path);
        return pt_err_set(e, PT_EUSER, "error: config file '%s' is given more than once", path);
    }
    char **grown = realloc(c->loaded, (c->nloaded + 1) * sizeof *grown);
    if (!grown) {
        free(real);
        free(full);
        return pt_err_set(e, PT_ENOMEM, "error: out of memory");
    }
    c->loaded = grown;
    c->loaded[c->nloaded++] = real;

    char *text = NULL;
    size_t len = 0;
    int rc = read_whole(open_path, at, &text, &len, e);
    if (rc == 0) {
        /* the directory of the including text stays the base for relative paths (CNTK
         * resolves against the current directory, not the file's) */
        const char *name = cfg_intern(c, path);
        if (!name)
            rc = pt_err_set(e, PT_ENOMEM, "error: out of memory");
        else
            rc = parse_text(block, name, text, len, dir, e);
    }
    free(text);
    free(full);
    return rc;
}

static const char *current_dir(struct cfg *c)
{
    char buf[PATH_MAX];
    if (!getcwd(buf, sizeof buf))
        return cfg_intern(c, ".");
    return cfg_intern(c, buf);
}

int cfg_load_file(struct cfg *c, const char *path, const struct cfg_origin *at, struct pt_err *e)
{
    const char *dir = current_dir(c);
    if (!dir)
        return pt_err_set(e, PT_ENOMEM, "error: out of memory");
    return cfg_read_file(&c->root, path, dir, 0, at, e);
}

int cfg_load_string(struct cfg *c, const char *name, const char *text, size_t len, struct pt_err *e)
{
    const char *iname = cfg_intern(c, name);
    const char *dir = current_dir(c);
    if (!iname || !dir)
        return pt_err_set(e, PT_ENOMEM, "error: out of memory");
    return parse_text(&c->root, iname, text, len, dir, e);
}

int cfg_apply_arg(struct cfg *c, const char *arg, int argno, struct pt_err *e)
{
    const char *file = cfg_intern(c, "<command line>");
    const char *dir = current_dir(c);
    if (!file || !dir)
        return pt_err_set(e, PT_ENOMEM, "error: out of memory");
    size_t len = strlen(arg);
    struct cfg_origin at = {.file = file, .arg = argno};
    char where[64];
    struct pt_err local;
    pt_err_clear(&local);
    int rc = cfg_check_text(cfg_origin_str(&at, where, sizeof where), arg, len, &local);
    if (rc) {
        /* cfg_check_text names line:col inside the argument; keep only the argument */
        const char *msg = strstr(local.msg, ": error: ");
        return pt_err_set(e, rc, "%s%s", where, msg ? msg : local.msg);
    }
    struct cfg_seg seg = {.text = (char *)arg, .len = len, .at = at, .dir = dir};
    return cfg_parse_segment(&c->root, &seg, e);
}
