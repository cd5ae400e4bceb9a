/* Legacy config text -> entries of one block. Grammar in cfg_parse.h. */
#include "parsers/cfg_parse.h"

#include <string.h>

#include "parsers/cfg_lex.h"
#include "parsers/cfg_merge.h"

struct parser {
    struct cfg_lex lx;
    struct cfg_node *block; /* entries go here */
    const char *dir;        /* base of relative include= paths */
};

static void skip_blanks(struct cfg_lex *lx)
{
    while (!cfg_lex_at_end(lx) && cfg_lex_is_blank(cfg_lex_cur(lx)))
        cfg_lex_adv(lx);
}

static int bad_entry_start(struct cfg_lex *lx, struct pt_err *e)
{
    struct cfg_origin at = cfg_lex_here(lx);
    char ch = cfg_lex_cur(lx);
    if (ch == '=')
        return cfg_error(e, &at, "missing key before '='");
    if (ch == ']' || ch == '}' || ch == ')')
        return cfg_error(e, &at, "unexpected '%c' (no block is open here)", ch);
    if (ch == '[' || ch == '{')
        return cfg_error(e, &at, "a block needs a name: expected 'name = %c ... %c'", ch,
                         cfg_lex_closer_of(ch));
    if (ch == '"')
        return cfg_error(e, &at, "a quoted string needs a key: expected 'key = \"...\"'");
    if (ch == '(')
        return cfg_error(e, &at, "unexpected '(' where a key was expected");
    char ex[16];
    return cfg_error(e, &at, "unexpected character '%s' where a key was expected",
                     pt_excerpt(ex, sizeof ex, lx->s + lx->i, 1, 1));
}

/* At '[' or '{': make n a block whose pending text is the body. */
static int parse_block_value(struct parser *p, struct cfg_node *n, struct pt_err *e)
{
    struct cfg_lex *lx = &p->lx;
    char ch = cfg_lex_cur(lx);
    size_t open = lx->i;
    int rc = cfg_lex_skim(lx, e);
    if (rc)
        return rc;
    /* body starts one character after the opener */
    struct cfg_origin bat = n->vorigin;
    if (bat.arg == 0)
        bat.col++;
    n->is_block = 1;
    n->open = ch;
    return cfg_add_segment(n, lx->s + open + 1, lx->i - open - 2, &bat, p->dir, e);
}

/* Make n a scalar: the text up to the next separator or comment, outer quotes stripped. */
static int parse_scalar_value(struct parser *p, struct cfg_node *n, struct pt_err *e)
{
    struct cfg_lex *lx = &p->lx;
    size_t start = lx->i;
    while (!cfg_lex_at_end(lx)) {
        char ch = cfg_lex_cur(lx);
        if (cfg_lex_is_sep(ch) || (lx->i > start && cfg_lex_comment_here(lx)))
            break;
        if (ch == '"' || cfg_lex_is_opener(ch)) {
            int rc = ch == '"' ? cfg_lex_skip_string(lx, e) : cfg_lex_skim(lx, e);
            if (rc)
                return rc;
            continue;
        }
        if (cfg_lex_is_closer(ch)) {
            struct cfg_origin at = cfg_lex_here(lx);
            return cfg_error(e, &at, "unexpected '%c' in a value (no matching opening bracket)",
                             ch);
        }
        cfg_lex_adv(lx);
    }
    size_t end = lx->i;
    while (end > start && cfg_lex_is_blank(lx->s[end - 1]))
        end--;
    const char *v = lx->s + start;
    size_t len = end - start;
    if (len >= 2 && v[0] == '"' && v[len - 1] == '"') {
        v++;
        len -= 2;
    }
    n->value = pt_strndup(v, len, e);
    if (!n->value)
        return e ? e->code : PT_ENOMEM;
    return 0;
}

/* Parse the value at the cursor into a new node (key filled in by the caller). */
static int parse_value(struct parser *p, struct cfg_node **out, struct pt_err *e)
{
    struct cfg_origin vat = cfg_lex_here(&p->lx);
    struct cfg_node *n = cfg_node_new(p->block->cfg, p->block, "", 0, &vat, e);
    if (!n)
        return e ? e->code : PT_ENOMEM;
    char ch = cfg_lex_cur(&p->lx);
    int rc = ch == '[' || ch == '{' ? parse_block_value(p, n, e) : parse_scalar_value(p, n, e);
    if (rc) {
        cfg_node_free(n);
        return rc;
    }
    *out = n;
    return 0;
}

/* include = a+b+c: read each file into the block, in order. v is consumed. */
static int do_include(struct parser *p, struct cfg_node *v, const struct cfg_origin *at,
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
        const struct cfg_reader *r = p->block->cfg->reader;
        char *list = v->value;
        for (char *s = list; rc == 0;) {
            char *plus = strchr(s, '+');
            if (plus)
                *plus = '\0';
            if (*s == '\0')
                rc = cfg_error(e, at, "include=: empty file name in the '+' list");
            else
                rc = r->include_file(p->block, s, p->dir, at, e);
            if (!plus)
                break;
            s = plus + 1;
        }
    }
    cfg_node_free(v);
    return rc;
}

/* One entry at the cursor (which is at neither a blank, a separator nor a comment). */
static int parse_entry(struct parser *p, struct pt_err *e)
{
    struct cfg_lex *lx = &p->lx;
    struct cfg_origin kat = cfg_lex_here(lx);
    size_t k0 = lx->i;
    while (!cfg_lex_at_end(lx) && cfg_lex_key_char(cfg_lex_cur(lx)) &&
           !(cfg_lex_cur(lx) == '/' && cfg_lex_peek(lx, 1) == '/' && lx->i > k0 &&
             cfg_lex_is_blank(lx->s[lx->i - 1])))
        cfg_lex_adv(lx);
    size_t klen = lx->i - k0;
    if (klen == 0)
        return bad_entry_start(lx, e);
    const char *key = lx->s + k0;
    skip_blanks(lx);
    struct cfg_node *v = NULL;
    char kx[128];
    if (cfg_lex_cur(lx) == '=') {
        cfg_lex_adv(lx);
        skip_blanks(lx);
        int rc = parse_value(p, &v, e);
        if (rc)
            return rc;
    } else if (cfg_lex_at_end(lx) || cfg_lex_is_sep(cfg_lex_cur(lx)) || cfg_lex_comment_here(lx)) {
        v = cfg_node_new(p->block->cfg, p->block, "", 0, &kat, e);
        if (!v || !(v->value = pt_strdup("true", e))) {
            cfg_node_free(v);
            return e ? e->code : PT_ENOMEM;
        }
    } else {
        struct cfg_origin at = cfg_lex_here(lx);
        return cfg_error(e, &at, "expected '=' after key '%s'",
                         pt_excerpt(kx, sizeof kx, key, klen, 60));
    }
    skip_blanks(lx);
    if (cfg_lex_comment_here(lx))
        cfg_lex_skip_to_eol(lx);
    if (!cfg_lex_at_end(lx) && !cfg_lex_is_sep(cfg_lex_cur(lx))) {
        struct cfg_origin at = cfg_lex_here(lx);
        char ex[32];
        cfg_node_free(v);
        return cfg_error(e, &at,
                         "unexpected '%s' after the value of '%s' (separate entries with a "
                         "newline, ';' or ',')",
                         pt_excerpt(ex, sizeof ex, lx->s + lx->i, lx->n - lx->i, 1),
                         pt_excerpt(kx, sizeof kx, key, klen, 60));
    }
    v->origin = kat;
    if (cfg_key_eq("include", key, klen))
        return do_include(p, v, &kat, e);
    return cfg_insert_path(p->block, key, klen, &kat, v, e);
}

int cfg_parse_segment(struct cfg_node *block, struct cfg_seg *seg, struct pt_err *e)
{
    struct parser p = {
        .lx =
            {
                .s = seg->text,
                .n = seg->len,
                .i = 0,
                .line = seg->at.line,
                .col = seg->at.col,
                .base = seg->at,
            },
        .block = block,
        .dir = seg->dir,
    };
    struct cfg_lex *lx = &p.lx;
    while (!cfg_lex_at_end(lx)) {
        char ch = cfg_lex_cur(lx);
        if (cfg_lex_is_blank(ch) || cfg_lex_is_sep(ch)) {
            cfg_lex_adv(lx);
            continue;
        }
        if (ch == '#' || (ch == '/' && cfg_lex_peek(lx, 1) == '/')) {
            cfg_lex_skip_to_eol(lx);
            continue;
        }
        int rc = parse_entry(&p, e);
        if (rc)
            return rc;
    }
    return 0;
}

/* ------------------------------------------------------------------ arrays of blocks */

/* Step over blanks, newlines and comments. */
static void skip_space(struct cfg_lex *lx)
{
    while (!cfg_lex_at_end(lx)) {
        char ch = cfg_lex_cur(lx);
        if (cfg_lex_is_blank(ch) || ch == '\n')
            cfg_lex_adv(lx);
        else if (cfg_lex_comment_here(lx))
            cfg_lex_skip_to_eol(lx);
        else
            break;
    }
}

/* The directory include= paths in n's text are relative to: that of the nearest enclosing
 * block text. */
static const char *dir_of(const struct cfg_node *n)
{
    for (const struct cfg_node *b = n->parent; b; b = b->parent)
        if (b->parsed)
            return b->parsed->dir;
    return NULL;
}

/* At '[' or '{' in n's value: a new block (not linked) whose pending text is the body. */
static int array_element(struct cfg_node *n, struct cfg_lex *lx, struct cfg_node **out,
                         struct pt_err *e)
{
    struct cfg_origin at = cfg_lex_here(lx);
    struct cfg_lex body = *lx;
    cfg_lex_adv(&body);
    struct cfg_origin bat = cfg_lex_here(&body);
    char open = cfg_lex_cur(lx);
    size_t start = lx->i;
    int rc = cfg_lex_skim(lx, e);
    if (rc)
        return rc;
    struct cfg_node *b = cfg_node_new(n->cfg, n->parent, n->key, strlen(n->key), &at, e);
    if (!b)
        return e ? e->code : PT_ENOMEM;
    b->is_block = 1;
    b->open = open;
    rc = cfg_add_segment(b, lx->s + start + 1, lx->i - start - 2, &bat, dir_of(n), e);
    if (rc) {
        cfg_node_free(b);
        return rc;
    }
    *out = b;
    return 0;
}

static int array_error(struct cfg_node *n, struct cfg_lex *lx, const char *what, struct pt_err *e)
{
    char path[512], ex[32];
    struct cfg_origin at = cfg_lex_here(lx);
    const char *got = cfg_lex_at_end(lx) ? "the end of the value"
                                         : pt_excerpt(ex, sizeof ex, lx->s + lx->i, 1, 1);
    return cfg_error(e, &at,
                     "%s: expected %s, got %s%s%s (an array of blocks is ( [ ... ] : [ ... ] ))",
                     cfg_path(n, path, sizeof path), what, cfg_lex_at_end(lx) ? "" : "'", got,
                     cfg_lex_at_end(lx) ? "" : "'");
}

int cfg_block_array(struct cfg_node *n, struct cfg_node **first, struct pt_err *e)
{
    char path[512];
    *first = NULL;
    if (n->is_block)
        return cfg_error(e, &n->origin,
                         "'%s' must be an array of blocks ( [ ... ] : [ ... ] ), but it is a block",
                         cfg_path(n, path, sizeof path));
    if (n->array) {
        *first = n->array;
        return 0;
    }
    struct cfg_lex lx = {
        .s = n->value,
        .n = strlen(n->value),
        .line = n->vorigin.line,
        .col = n->vorigin.col,
        .base = n->vorigin,
    };
    struct cfg_node *head = NULL, **tail = &head;
    int rc = 0;
    skip_space(&lx);
    int paren = cfg_lex_cur(&lx) == '(';
    if (paren) {
        cfg_lex_adv(&lx);
        skip_space(&lx);
    }
    if (paren && cfg_lex_cur(&lx) == ')') { /* () holds no block */
        cfg_lex_adv(&lx);
    } else {
        for (;;) {
            char ch = cfg_lex_cur(&lx);
            if (cfg_lex_at_end(&lx) || (ch != '[' && ch != '{')) {
                rc = array_error(n, &lx, "a block '[ ... ]' or '{ ... }'", e);
                break;
            }
            if ((rc = array_element(n, &lx, tail, e)))
                break;
            tail = &(*tail)->next;
            skip_space(&lx);
            if (cfg_lex_cur(&lx) == ':') {
                cfg_lex_adv(&lx);
                skip_space(&lx);
                continue;
            }
            if (paren && cfg_lex_cur(&lx) != ')')
                rc = array_error(n, &lx, "':' or ')' after a block", e);
            else if (paren)
                cfg_lex_adv(&lx);
            break;
        }
    }
    if (rc == 0) {
        skip_space(&lx);
        if (!cfg_lex_at_end(&lx))
            rc = array_error(n, &lx, paren ? "nothing after ')'" : "':' after a block", e);
    }
    if (rc) {
        while (head) {
            struct cfg_node *nx = head->next;
            cfg_node_free(head);
            head = nx;
        }
        return rc;
    }
    n->array = head;
    *first = head;
    return 0;
}
