/* Assigning keys: append, replace, merge, and dotted paths. See cfg_merge.h. */
#include "parsers/cfg_merge.h"

#include <stdlib.h>
#include <string.h>

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
    struct cfg_node *old = cfg_node_child(block, n->key, strlen(n->key));
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
    cfg_node_clear(old);
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
        struct cfg_node *child = cfg_node_child(cur, key + start, len);
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
            child = cfg_node_child(cur, key + start, len);
        }
        cur = child;
        start = i + 1;
    }
    cfg_node_free(value);
    return 0;
}
