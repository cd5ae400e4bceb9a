/* The config tree: nodes, merging, lookup that climbs blocks, `$var$` resolution. */
#include "parsers/cfg_internal.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct cfg *cfg_new(void)
{
    struct cfg *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->root.cfg = c;
    c->root.is_block = 1;
    c->root.open = '[';
    c->root.key = strdup("");
    if (!c->root.key) {
        free(c);
        return NULL;
    }
    c->root.origin.file = c->root.vorigin.file = "";
    return c;
}

static void free_children(struct cfg_node *n)
{
    struct cfg_node *ch = n->first;
    while (ch) {
        struct cfg_node *nx = ch->next;
        cfg_node_free(ch);
        ch = nx;
    }
    n->first = n->last = NULL;
}

static void free_segs(struct cfg_seg *s)
{
    while (s) {
        struct cfg_seg *nx = s->next;
        free(s->text);
        free(s);
        s = nx;
    }
}

/* Drop a node's value (scalar or block) but keep key, links and position. */
static void clear_value(struct cfg_node *n)
{
    free(n->value);
    free(n->resolved);
    free(n->parse_error);
    n->value = n->resolved = n->parse_error = NULL;
    free_children(n);
    free_segs(n->pending);
    free_segs(n->parsed);
    n->pending = n->parsed = NULL;
    n->is_block = 0;
}

void cfg_node_free(struct cfg_node *n)
{
    if (!n)
        return;
    clear_value(n);
    free(n->key);
    free(n);
}

void cfg_free(struct cfg *c)
{
    if (!c)
        return;
    clear_value(&c->root);
    free(c->root.key);
    for (size_t i = 0; i < c->nstrings; i++)
        free(c->strings[i]);
    for (size_t i = 0; i < c->nloaded; i++)
        free(c->loaded[i]);
    for (size_t i = 0; i < c->nwarnings; i++)
        free(c->warnings[i]);
    free(c->strings);
    free(c->loaded);
    free(c->warnings);
    free(c);
}

struct cfg_node *cfg_root(struct cfg *c)
{
    return &c->root;
}

const char *cfg_intern(struct cfg *c, const char *s)
{
    for (size_t i = c->nstrings; i-- > 0;)
        if (strcmp(c->strings[i], s) == 0)
            return c->strings[i];
    char **grown = realloc(c->strings, (c->nstrings + 1) * sizeof *grown);
    if (!grown)
        return NULL;
    c->strings = grown;
    char *copy = strdup(s);
    if (!copy)
        return NULL;
    c->strings[c->nstrings++] = copy;
    return copy;
}

/* ------------------------------------------------------------------ warnings & errors */

size_t cfg_warning_count(const struct cfg *c)
{
    return c->nwarnings;
}

const char *cfg_warning(const struct cfg *c, size_t i)
{
    return i < c->nwarnings ? c->warnings[i] : NULL;
}

void cfg_warn(struct cfg *c, const struct cfg_origin *at, const char *fmt, ...)
{
    char where[512], text[1536], *line;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    size_t need = strlen(text) + 600;
    line = malloc(need);
    char **grown = realloc(c->warnings, (c->nwarnings + 1) * sizeof *grown);
    if (!line || !grown) {
        free(line);
        if (grown)
            c->warnings = grown;
        return; /* out of memory: a warning is not worth failing for */
    }
    c->warnings = grown;
    if (at && at->file && at->file[0])
        snprintf(line, need, "%s: warning: %s", cfg_origin_str(at, where, sizeof where), text);
    else
        snprintf(line, need, "warning: %s", text);
    c->warnings[c->nwarnings++] = line;
}

const char *cfg_origin_str(const struct cfg_origin *o, char *buf, size_t size)
{
    if (!o || !o->file)
        snprintf(buf, size, "<unknown>");
    else if (o->arg > 0)
        snprintf(buf, size, "%s:arg%d", o->file, o->arg);
    else if (o->line > 0)
        snprintf(buf, size, "%s:%d:%d", o->file, o->line, o->col);
    else
        snprintf(buf, size, "%s", o->file);
    return buf;
}

int cfg_error(struct pt_err *e, const struct cfg_origin *o, const char *fmt, ...)
{
    char where[512], text[PT_ERR_MSG];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    return pt_err_set(e, PT_EUSER, "%s: error: %s", cfg_origin_str(o, where, sizeof where), text);
}

/* ------------------------------------------------------------------ nodes */

int cfg_key_eq(const char *a, const char *b, size_t blen)
{
    return strlen(a) == blen && strncasecmp(a, b, blen) == 0;
}

struct cfg_node *cfg_node_new(struct cfg *c, struct cfg_node *parent, const char *key,
                              size_t keylen, const struct cfg_origin *at, struct pt_err *e)
{
    int depth = parent ? parent->depth + 1 : 0;
    if (depth > CFG_MAX_DEPTH) {
        cfg_error(e, at, "blocks nested deeper than %d levels", CFG_MAX_DEPTH);
        return NULL;
    }
    struct cfg_node *n = pt_calloc(1, sizeof *n, e);
    if (!n)
        return NULL;
    n->key = pt_strndup(key, keylen, e);
    if (!n->key) {
        free(n);
        return NULL;
    }
    n->cfg = c;
    n->parent = parent;
    n->depth = depth;
    n->origin = n->vorigin = *at;
    return n;
}

static struct cfg_node *find_child(const struct cfg_node *block, const char *key, size_t len)
{
    for (struct cfg_node *ch = block->first; ch; ch = ch->next)
        if (cfg_key_eq(ch->key, key, len))
            return ch;
    return NULL;
}

static void reparent(struct cfg_node *n, struct cfg_node *parent)
{
    n->parent = parent;
    n->depth = parent->depth + 1;
    for (struct cfg_node *ch = n->first; ch; ch = ch->next)
        reparent(ch, n);
}

int cfg_insert(struct cfg_node *block, struct cfg_node *n, struct pt_err *e)
{
    (void)e;
    struct cfg_node *old = find_child(block, n->key, strlen(n->key));
    if (!old) {
        reparent(n, block);
        if (block->last)
            block->last->next = n;
        else
            block->first = n;
        block->last = n;
        return 0;
    }
    if (old->is_block && n->is_block && !n->first) {
        /* merge: the new text is parsed after the old one */
        struct cfg_seg **tail = &old->pending;
        while (*tail)
            tail = &(*tail)->next;
        *tail = n->pending;
        n->pending = NULL;
        cfg_node_free(n);
        return 0;
    }
    if (old->is_block && n->is_block) {
        /* a block built from a dotted path: move its children over one by one */
        int rc = cfg_parse_block(old, e);
        while (rc == 0 && n->first) {
            struct cfg_node *ch = n->first;
            n->first = ch->next;
            ch->next = NULL;
            rc = cfg_insert(old, ch, e);
        }
        n->last = NULL;
        cfg_node_free(n);
        return rc;
    }
    /* replace, keeping the old position */
    clear_value(old);
    old->origin = n->origin;
    old->vorigin = n->vorigin;
    old->is_block = n->is_block;
    old->open = n->open;
    old->value = n->value;
    old->pending = n->pending;
    old->first = n->first;
    old->last = n->last;
    n->value = NULL;
    n->pending = NULL;
    n->first = n->last = NULL;
    for (struct cfg_node *ch = old->first; ch; ch = ch->next)
        reparent(ch, old);
    cfg_node_free(n);
    return 0;
}

int cfg_insert_path(struct cfg_node *block, const char *key, size_t keylen,
                    const struct cfg_origin *at, struct cfg_node *value, struct pt_err *e)
{
    struct cfg_node *cur = block;
    size_t start = 0;
    int parts = 0;
    for (size_t i = 0; i <= keylen; i++) {
        if (i < keylen && key[i] != '.')
            continue;
        size_t len = i - start;
        if (len == 0) {
            char ex[128];
            cfg_node_free(value);
            return cfg_error(e, at, "empty name in dotted key \"%s\"",
                             pt_excerpt(ex, sizeof ex, key, keylen, 60));
        }
        if (++parts > CFG_MAX_DEPTH) {
            cfg_node_free(value);
            return cfg_error(e, at, "dotted key has more than %d parts", CFG_MAX_DEPTH);
        }
        if (i == keylen) {
            free(value->key);
            value->key = pt_strndup(key + start, len, e);
            if (!value->key) {
                value->key = NULL;
                cfg_node_free(value);
                return e ? e->code : PT_ENOMEM;
            }
            if (cur->depth + 1 > CFG_MAX_DEPTH) {
                cfg_node_free(value);
                return cfg_error(e, at, "blocks nested deeper than %d levels", CFG_MAX_DEPTH);
            }
            return cfg_insert(cur, value, e);
        }
        struct cfg_node *child = find_child(cur, key + start, len);
        if (child && child->is_block) {
            int rc = cfg_parse_block(child, e);
            if (rc) {
                cfg_node_free(value);
                return rc;
            }
        } else {
            struct cfg_node *nb = cfg_node_new(cur->cfg, cur, key + start, len, at, e);
            if (!nb) {
                cfg_node_free(value);
                return e ? e->code : PT_ENOMEM;
            }
            nb->is_block = 1;
            nb->open = '[';
            int rc = cfg_insert(cur, nb, e); /* appends, or replaces a scalar */
            if (rc) {
                cfg_node_free(value);
                return rc;
            }
            child = find_child(cur, key + start, len);
        }
        cur = child;
        start = i + 1;
    }
    cfg_node_free(value);
    return 0;
}

int cfg_add_segment(struct cfg_node *block, const char *text, size_t len,
                    const struct cfg_origin *at, const char *dir, struct pt_err *e)
{
    struct cfg_seg *s = pt_calloc(1, sizeof *s, e);
    if (!s)
        return e ? e->code : PT_ENOMEM;
    s->text = pt_strndup(text, len, e);
    if (!s->text) {
        free(s);
        return e ? e->code : PT_ENOMEM;
    }
    s->len = len;
    s->at = *at;
    s->dir = dir;
    struct cfg_seg **tail = &block->pending;
    while (*tail)
        tail = &(*tail)->next;
    *tail = s;
    return 0;
}

int cfg_parse_block(struct cfg_node *block, struct pt_err *e)
{
    if (!block->is_block) {
        char path[512];
        return cfg_error(e, &block->origin, "'%s' is a value, not a block [ ... ]",
                         cfg_path(block, path, sizeof path));
    }
    if (block->parse_error)
        return pt_err_set(e, PT_EUSER, "%s", block->parse_error);
    while (block->pending) {
        struct cfg_seg *s = block->pending;
        block->pending = s->next;
        s->next = NULL;
        struct cfg_seg **tail = &block->parsed;
        while (*tail)
            tail = &(*tail)->next;
        *tail = s;
        struct pt_err local;
        pt_err_clear(&local);
        int rc = cfg_parse_segment(block, s, &local);
        if (rc) {
            block->parse_error = strdup(local.msg);
            /* keep the rest of the text for raw printing */
            *tail = s;
            s->next = block->pending;
            block->pending = NULL;
            return pt_err_set(e, rc, "%s", local.msg);
        }
    }
    return 0;
}

/* ------------------------------------------------------------------ lookup */

int cfg_find_local(struct cfg_node *block, const char *key, struct cfg_node **out, struct pt_err *e)
{
    *out = NULL;
    int rc = cfg_parse_block(block, e);
    if (rc)
        return rc;
    *out = find_child(block, key, strlen(key));
    return 0;
}

int cfg_find(struct cfg_node *block, const char *key, struct cfg_node **out, struct pt_err *e)
{
    for (struct cfg_node *b = block; b; b = b->parent) {
        int rc = cfg_find_local(b, key, out, e);
        if (rc || *out)
            return rc;
    }
    return 0;
}

/* If s is exactly "$name$", the length of name (else 0). */
static size_t single_var(const char *s)
{
    size_t n = strlen(s);
    if (n < 3 || s[0] != '$' || s[n - 1] != '$')
        return 0;
    for (size_t i = 1; i + 1 < n; i++)
        if (!(isalnum((unsigned char)s[i]) || s[i] == '_'))
            return 0;
    return n - 2;
}

int cfg_find_block(struct cfg_node *block, const char *key, struct cfg_node **out, struct pt_err *e)
{
    int rc = cfg_find(block, key, out, e);
    if (rc || !*out)
        return rc;
    struct cfg_node *n = *out;
    for (int hops = 0; !n->is_block && hops < 16; hops++) {
        size_t len = single_var(n->value);
        if (!len)
            break;
        char name[256];
        if (len >= sizeof name)
            break;
        memcpy(name, n->value + 1, len);
        name[len] = '\0';
        struct cfg_node *target = NULL;
        rc = cfg_find(n->parent, name, &target, e);
        if (rc)
            return rc;
        if (!target || target == n)
            break;
        cfg_mark_used(n);
        n = target;
    }
    if (!n->is_block) {
        char path[512];
        *out = NULL;
        return cfg_error(e, &n->origin, "'%s' must be a block [ ... ], but it is a value",
                         cfg_path(n, path, sizeof path));
    }
    *out = n;
    return 0;
}

/* ------------------------------------------------------------------ $var$ resolution */

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
        struct cfg_node *target = NULL;
        rc = cfg_find(n->parent, name, &target, e);
        /* `x = $x$` means the x of an enclosing block (as in CNTK, which resolves a block's
         * text in the scope it is fetched from): a key never stands for itself */
        if (rc == 0 && target == n)
            rc = n->parent->parent ? cfg_find(n->parent->parent, name, &target, e)
                                   : (target = NULL, 0);
        if (rc)
            break;
        if (!target) {
            rc = cfg_error(e, &n->vorigin, "unknown variable $%s$ in the value of '%s'%s", name,
                           cfg_path(n, path, sizeof path),
                           cfg_key_eq(n->key, name, strlen(name))
                               ? " (a key cannot refer to itself, and keys are case-insensitive: "
                                 "set it in an enclosing block or on the command line)"
                               : "");
            break;
        }
        if (target->is_block) {
            rc = cfg_error(e, &n->vorigin,
                           "variable $%s$ in the value of '%s' names a block, not a value", name,
                           cfg_path(n, path, sizeof path));
            break;
        }
        const char *tv = NULL;
        if (target->resolving) {
            rc = cfg_error(e, &n->vorigin,
                           "variable cycle: $%s$ (used by '%s') refers back to itself", name,
                           cfg_path(n, path, sizeof path));
            break;
        }
        rc = cfg_value(target, &tv, e);
        if (rc) {
            char where[512];
            pt_err_context(e, "while expanding $%s$ at %s", name,
                           cfg_origin_str(&n->vorigin, where, sizeof where));
            break;
        }
        cfg_mark_used(target);
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

/* ------------------------------------------------------------------ accessors */

struct cfg_node *cfg_first(const struct cfg_node *block)
{
    return block->is_block ? block->first : NULL;
}

struct cfg_node *cfg_next(const struct cfg_node *n)
{
    return n->next;
}

const char *cfg_key(const struct cfg_node *n)
{
    return n->key;
}

int cfg_is_block(const struct cfg_node *n)
{
    return n->is_block;
}

struct cfg_node *cfg_parent(const struct cfg_node *n)
{
    return n->parent;
}

const struct cfg_origin *cfg_origin_of(const struct cfg_node *n)
{
    return &n->origin;
}

const struct cfg_origin *cfg_value_origin(const struct cfg_node *n)
{
    return &n->vorigin;
}

const char *cfg_raw(const struct cfg_node *n)
{
    return n->is_block ? NULL : n->value;
}

void cfg_mark_used(struct cfg_node *n)
{
    n->used = 1;
}

int cfg_is_used(const struct cfg_node *n)
{
    return n->used;
}

const char *cfg_path(const struct cfg_node *n, char *buf, size_t size)
{
    const struct cfg_node *chain[CFG_MAX_DEPTH + 2];
    int k = 0;
    for (const struct cfg_node *p = n; p && p->parent && k < CFG_MAX_DEPTH + 1; p = p->parent)
        chain[k++] = p;
    size_t o = 0;
    if (size == 0)
        return buf;
    buf[0] = '\0';
    while (k-- > 0 && o + 1 < size) {
        int w = snprintf(buf + o, size - o, "%s%s", o ? "." : "", chain[k]->key);
        if (w < 0)
            break;
        o += (size_t)w;
        if (o >= size) {
            o = size - 1;
            break;
        }
    }
    if (!n->parent)
        snprintf(buf, size, "<top level>");
    return buf;
}
