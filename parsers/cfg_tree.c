/* The config tree (see the map in cfg_internal.h): the config and its nodes, their
 * lifetime, pending text segments, warnings, accessors and paths, and cfg_parse_block, which
 * hands a block's pending text to the config's reader. */
#include "parsers/cfg_internal.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct cfg *cfg_tree_new(const struct cfg_reader *reader)
{
    struct cfg *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->reader = reader;
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

void cfg_node_clear(struct cfg_node *n)
{
    while (n->array) {
        struct cfg_node *nx = n->array->next;
        cfg_node_free(n->array);
        n->array = nx;
    }
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
    cfg_node_clear(n);
    free(n->key);
    free(n);
}

void cfg_free(struct cfg *c)
{
    if (!c)
        return;
    cfg_node_clear(&c->root);
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

/* ------------------------------------------------------------------ warnings */

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
    for (size_t i = 0; i < c->nwarnings; i++)
        if (!strcmp(c->warnings[i], line)) { /* a block checked again as it is read again */
            free(line);
            return;
        }
    c->warnings[c->nwarnings++] = line;
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

struct cfg_node *cfg_node_child(const struct cfg_node *block, const char *key, size_t len)
{
    for (struct cfg_node *ch = block->first; ch; ch = ch->next)
        if (cfg_key_eq(ch->key, key, len))
            return ch;
    return NULL;
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
        int rc = block->cfg->reader->parse_segment(block, s, &local);
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

struct cfg *cfg_of(const struct cfg_node *n)
{
    return n->cfg;
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
