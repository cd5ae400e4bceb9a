/* .ini files, read with inih and mapped onto the config tree:
 *   [a.b]        -> block a, sub-block b (created or merged)
 *   key = value  -> key in the current section's block; values typed as everywhere else
 * inih only reports line numbers of syntax errors, so we feed it lines ourselves and count
 * them, to give every value a file:line:col origin. */
#include "parsers/cfg_ini.h"

#include <ini.h>
#include <string.h>

#include "parsers/cfg_merge.h"

struct ini_state {
    struct cfg_node *root;
    const char *name; /* interned file name */
    const char *dir;
    const char *text;
    size_t len, pos;
    int line;             /* line number of the line inih is handling */
    const char *line_ptr; /* its first byte */
    size_t line_len;
    int at_line_start;
    struct pt_err *e;
    int rc;
};

/* fgets-like reader over the text that tracks line numbers. */
static char *ini_read(char *str, int num, void *stream)
{
    struct ini_state *st = stream;
    if (st->pos >= st->len || num < 2)
        return NULL;
    if (st->at_line_start) {
        st->line++;
        st->line_ptr = st->text + st->pos;
        const char *nl = memchr(st->line_ptr, '\n', st->len - st->pos);
        st->line_len = nl ? (size_t)(nl - st->line_ptr) : st->len - st->pos;
    }
    size_t k = 0;
    while (k + 1 < (size_t)num && st->pos < st->len) {
        char ch = st->text[st->pos++];
        str[k++] = ch;
        if (ch == '\n')
            break;
    }
    str[k] = '\0';
    st->at_line_start = k > 0 && str[k - 1] == '\n';
    return str;
}

/* 1-based character column of `needle` within the current line (1 when not found). */
static int column_of(const struct ini_state *st, const char *needle)
{
    size_t nl = strlen(needle);
    if (nl == 0)
        return 1;
    for (size_t i = 0; i + nl <= st->line_len; i++) {
        if (memcmp(st->line_ptr + i, needle, nl) == 0) {
            int col = 1;
            for (size_t k = 0; k < i; k++)
                if ((st->line_ptr[k] & 0xC0) != 0x80)
                    col++;
            return col;
        }
    }
    return 1;
}

/* Find or create block a.b.c under root. */
static int section_block(struct ini_state *st, const char *section, struct cfg_node **out,
                         const struct cfg_origin *at)
{
    struct cfg_node *cur = st->root;
    const char *p = section;
    while (*p) {
        const char *dot = strchr(p, '.');
        size_t len = dot ? (size_t)(dot - p) : strlen(p);
        if (len == 0)
            return cfg_error(st->e, at, "empty name in section [%s]", section);
        struct cfg_node *child = NULL;
        char name[256];
        if (len >= sizeof name)
            return cfg_error(st->e, at, "section name too long");
        memcpy(name, p, len);
        name[len] = '\0';
        int rc = cfg_find_local(cur, name, &child, st->e);
        if (rc)
            return rc;
        if (!child || !cfg_is_block(child)) {
            struct cfg_node *nb = cfg_node_new(cur->cfg, cur, name, len, at, st->e);
            if (!nb)
                return st->e ? st->e->code : PT_ENOMEM;
            nb->is_block = 1;
            nb->open = '[';
            rc = cfg_insert(cur, nb, st->e);
            if (rc)
                return rc;
            rc = cfg_find_local(cur, name, &child, st->e);
            if (rc)
                return rc;
        }
        cur = child;
        p = dot ? dot + 1 : p + len;
    }
    *out = cur;
    return 0;
}

static int on_ini_pair(void *user, const char *section, const char *name, const char *value)
{
    struct ini_state *st = user;
    if (st->rc)
        return 0;
    struct cfg_origin kat = {.file = st->name, .line = st->line, .col = column_of(st, name)};
    struct cfg_node *block = NULL;
    st->rc = section_block(st, section, &block, &kat);
    if (st->rc)
        return 0;
    struct cfg_origin vat = kat;
    if (value[0])
        vat.col = column_of(st, value);
    struct cfg_node *v = cfg_node_new(st->root->cfg, block, "", 0, &vat, st->e);
    if (!v) {
        st->rc = st->e ? st->e->code : PT_ENOMEM;
        return 0;
    }
    v->origin = kat;
    size_t len = strlen(value);
    /* an inline comment: '#' after a blank, outside quotes and brackets */
    int depth = 0, inq = 0;
    for (size_t i = 0; i < len; i++) {
        char ch = value[i];
        if (ch == '"')
            inq = !inq;
        else if (!inq && (ch == '[' || ch == '{' || ch == '('))
            depth++;
        else if (!inq && (ch == ']' || ch == '}' || ch == ')'))
            depth--;
        else if (!inq && depth <= 0 && ch == '#' && i > 0 &&
                 (value[i - 1] == ' ' || value[i - 1] == '\t')) {
            len = i;
            while (len > 0 && (value[len - 1] == ' ' || value[len - 1] == '\t'))
                len--;
            break;
        }
    }
    if (len >= 2 && (value[0] == '[' || value[0] == '{') &&
        value[len - 1] == (value[0] == '[' ? ']' : '}')) {
        struct cfg_origin bat = vat;
        bat.col++;
        v->is_block = 1;
        v->open = value[0];
        st->rc = cfg_add_segment(v, value + 1, len - 2, &bat, st->dir, st->e);
    } else {
        if (len >= 2 && value[0] == '"' && value[len - 1] == '"') {
            value++;
            len -= 2;
        }
        v->value = pt_strndup(value, len, st->e);
        if (!v->value)
            st->rc = st->e ? st->e->code : PT_ENOMEM;
    }
    if (st->rc) {
        cfg_node_free(v);
        return 0;
    }
    st->rc = cfg_insert_path(block, name, strlen(name), &kat, v, st->e);
    return st->rc == 0;
}

int cfg_parse_ini(struct cfg_node *block, const char *name, const char *text, size_t len,
                  const char *dir, struct pt_err *e)
{
    /* Debian's inih exposes its compile-time options as variables: lines of any length
     * (a heap buffer as long as the longest line), and no continuation lines, so that every value
     * comes from exactly one line we can point at. */
    size_t longest = 0;
    for (size_t i = 0, start = 0; i <= len; i++) {
        if (i == len || text[i] == '\n') {
            if (i - start > longest)
                longest = i - start;
            start = i + 1;
        }
    }
    ini_use_stack = false;
    ini_allow_realloc = true; /* not honoured by every build: size the buffer ourselves */
    ini_max_line = (int)(longest + 3 > 200 ? longest + 3 : 200);
    ini_allow_multiline = false;
    ini_stop_on_first_error = true;
    /* ';' separates entries inside block values ("input = [ a = [...] ; b = [...] ]"), so
     * it must not start an inline comment; the language's own rule (' #') applies. */
    ini_allow_inline_comments = false;
    struct ini_state st = {
        .root = block,
        .name = name,
        .dir = dir,
        .text = text,
        .len = len,
        .at_line_start = 1,
        .e = e,
    };
    int bad = ini_parse_stream(ini_read, &st, on_ini_pair, &st);
    if (st.rc)
        return st.rc;
    if (bad > 0)
        return pt_err_set(e, PT_EUSER,
                          "%s:%d:1: error: expected '[section]' or 'key = value' (.ini syntax)",
                          name, bad);
    if (bad < 0)
        return pt_err_set(e, PT_ENOMEM, "%s: error: out of memory reading .ini file", name);
    return 0;
}
