/* `$name$` resolution (see the map in cfg_internal.h): a scalar's value with every
 * variable replaced by the value it names, looked up from the scalar's block outward. */
#include "parsers/cfg_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sbuf {
    char *p;
    size_t n, cap;
};

static int sb_add(struct sbuf *b, const char *s, size_t len, struct pt_err *e)
{
    if (b->n + len + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->n + len + 1)
            cap *= 2;
        char *p = pt_realloc(b->p, cap, e);
        if (!p)
            return e ? e->code : PT_ENOMEM;
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, len);
    b->n += len;
    b->p[b->n] = '\0';
    return 0;
}

static int is_var_char(char ch)
{
    return isalnum((unsigned char)ch) || ch == '_';
}

/* The resolved value of variable `name` as used in the value of n (marked used). */
static int expand_var(struct cfg_node *n, const char *name, const char **out, struct pt_err *e)
{
    char path[512];
    struct cfg_node *target = NULL;
    int rc = cfg_find(n->parent, name, &target, e);
    /* `x = $x$` means the x of an enclosing block (as in CNTK, which resolves a block's
     * text in the scope it is fetched from): a key never stands for itself */
    if (rc == 0 && target == n)
        rc = n->parent->parent ? cfg_find(n->parent->parent, name, &target, e) : (target = NULL, 0);
    if (rc)
        return rc;
    if (!target)
        return cfg_error(e, &n->vorigin, "unknown variable $%s$ in the value of '%s'%s", name,
                         cfg_path(n, path, sizeof path),
                         cfg_key_eq(n->key, name, strlen(name))
                             ? " (a key cannot refer to itself, and keys are case-insensitive: "
                               "set it in an enclosing block or on the command line)"
                             : "");
    if (target->is_block)
        return cfg_error(e, &n->vorigin,
                         "variable $%s$ in the value of '%s' names a block, not a value", name,
                         cfg_path(n, path, sizeof path));
    if (target->resolving)
        return cfg_error(e, &n->vorigin,
                         "variable cycle: $%s$ (used by '%s') refers back to itself", name,
                         cfg_path(n, path, sizeof path));
    rc = cfg_value(target, out, e);
    if (rc) {
        char where[512];
        pt_err_context(e, "while expanding $%s$ at %s", name,
                       cfg_origin_str(&n->vorigin, where, sizeof where));
        return rc;
    }
    cfg_mark_used(target);
    return 0;
}

int cfg_value(struct cfg_node *n, const char **out, struct pt_err *e)
{
    char path[512];
    *out = NULL;
    if (n->is_block)
        return cfg_error(e, &n->origin, "'%s' is a block, expected a value",
                         cfg_path(n, path, sizeof path));
    if (n->resolved) {
        *out = n->resolved;
        return 0;
    }
    if (!strchr(n->value, '$')) {
        *out = n->value;
        return 0;
    }
    if (n->cfg->options & CFG_LOAD_PLAIN)
        return cfg_error(e, &n->vorigin,
                         "'$' in the value of '%s': variables ($name$) are not allowed here",
                         cfg_path(n, path, sizeof path));
    if (n->resolving)
        return cfg_error(e, &n->vorigin, "variable cycle: '%s' refers to itself",
                         cfg_path(n, path, sizeof path));
    n->resolving = 1;
    struct sbuf b = {0};
    int rc = sb_add(&b, "", 0, e);
    const char *s = n->value;
    while (rc == 0 && *s) {
        const char *d = strchr(s, '$');
        if (!d) {
            rc = sb_add(&b, s, strlen(s), e);
            break;
        }
        size_t len = 0;
        while (is_var_char(d[1 + len]))
            len++;
        if (len == 0 || d[1 + len] != '$') {
            /* a lone '$' is literal text */
            rc = sb_add(&b, s, (size_t)(d - s) + 1, e);
            s = d + 1;
            continue;
        }
        rc = sb_add(&b, s, (size_t)(d - s), e);
        if (rc)
            break;
        char name[256];
        if (len >= sizeof name) {
            rc = cfg_error(e, &n->vorigin, "variable name too long");
            break;
        }
        memcpy(name, d + 1, len);
        name[len] = '\0';
        const char *tv = NULL;
        rc = expand_var(n, name, &tv, e);
        if (rc)
            break;
        rc = sb_add(&b, tv, strlen(tv), e);
        s = d + len + 2;
    }
    n->resolving = 0;
    if (rc) {
        free(b.p);
        return rc;
    }
    n->resolved = b.p;
    *out = n->resolved;
    return 0;
}

/* The value of $name$ in a text, looked up from `from` outward (for a block's own text, its
 * parent: the block's text is not config, so its keys are not variables); `what` names the
 * text in the message. */
static int text_var(struct cfg_node *from, const char *what, const char *name,
                    const struct cfg_origin *at, const char **out, struct pt_err *e)
{
    struct cfg_node *target = NULL;
    int rc = from ? cfg_find(from, name, &target, e) : 0;
    if (rc)
        return rc;
    if (!target || target->is_block)
        return cfg_error(e, at, "unknown variable $%s$ in %s%s", name, what,
                         target ? " (it names a block, not a value)" : "");
    rc = cfg_value(target, out, e);
    if (rc == 0)
        cfg_mark_used(target);
    return rc;
}

/* text[0..len) (starting at *start) into b with every $name$ replaced (text_var). */
static int subst(struct cfg_node *from, const char *what, const char *text, size_t len,
                 const struct cfg_origin *start, struct sbuf *b, struct pt_err *e)
{
    const char *s = text, *end = text + len;
    int rc = 0;
    while (rc == 0 && s < end) {
        const char *d = memchr(s, '$', (size_t)(end - s));
        if (!d)
            return sb_add(b, s, (size_t)(end - s), e);
        size_t n = 0;
        while (d + 1 + n < end && is_var_char(d[1 + n]))
            n++;
        if (n == 0 || d + 1 + n >= end || d[1 + n] != '$' || n >= 256) {
            rc = sb_add(b, s, (size_t)(d - s) + 1, e);
            s = d + 1;
            continue;
        }
        char name[256];
        memcpy(name, d + 1, n);
        name[n] = '\0';
        struct cfg_origin at = *start;
        for (const char *p = text; p < d; p++) {
            at.col++;
            if (*p == '\n') {
                at.line++;
                at.col = 1;
            }
        }
        const char *v = NULL;
        rc = sb_add(b, s, (size_t)(d - s), e);
        if (rc == 0)
            rc = text_var(from, what, name, &at, &v, e);
        if (rc == 0)
            rc = sb_add(b, v, strlen(v), e);
        s = d + n + 2;
    }
    return rc;
}

/* One segment's text into b with every $name$ replaced. */
static int block_segment(struct cfg_node *block, const struct cfg_seg *seg, struct sbuf *b,
                         struct pt_err *e)
{
    if (block->cfg->options & CFG_LOAD_PLAIN) /* model files: no variables */
        return sb_add(b, seg->text, seg->len, e);
    char what[300];
    snprintf(what, sizeof what, "the text of block '%s'", block->key);
    return subst(block->parent, what, seg->text, seg->len, &seg->at, b, e);
}

int cfg_subst_text(struct cfg_node *scope, const char *text, size_t len,
                   const struct cfg_origin *at, char **out, struct pt_err *e)
{
    struct sbuf b = {0};
    char what[300];
    snprintf(what, sizeof what, "%s (looked up from block '%s' outward)",
             at && at->file ? at->file : "the text", scope ? scope->key : "");
    int rc = sb_add(&b, "", 0, e);
    if (rc == 0)
        rc = subst(scope, what, text, len, at, &b, e);
    if (rc) {
        free(b.p);
        *out = NULL;
        return rc;
    }
    *out = b.p;
    return 0;
}

int cfg_node_plain(const struct cfg_node *n)
{
    return (n->cfg->options & CFG_LOAD_PLAIN) != 0;
}

int cfg_block_text(struct cfg_node *block, char **text, struct cfg_origin *at, struct pt_err *e)
{
    *text = NULL;
    if (!block->is_block)
        return cfg_error(e, &block->origin, "'%s' is a value, expected a block", block->key);
    struct sbuf b = {0};
    int rc = sb_add(&b, "", 0, e), first = 1;
    const struct cfg_seg *lists[2] = {block->parsed, block->pending};
    for (int l = 0; l < 2; l++)
        for (const struct cfg_seg *s = lists[l]; rc == 0 && s; s = s->next) {
            if (first)
                *at = s->at;
            else
                rc = sb_add(&b, "\n", 1, e);
            first = 0;
            if (rc == 0)
                rc = block_segment(block, s, &b, e);
        }
    if (rc == 0 && first)
        *at = block->vorigin;
    if (rc) {
        free(b.p);
        return rc;
    }
    *text = b.p;
    return 0;
}
