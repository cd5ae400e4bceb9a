/* Lookup (see the map in cfg_internal.h): a key in one block, then climbing to the
 * root as CNTK does; `$name$` standing for a whole block. */
#include "parsers/cfg_internal.h"

#include <ctype.h>
#include <string.h>

int cfg_find_local(struct cfg_node *block, const char *key, struct cfg_node **out, struct pt_err *e)
{
    *out = NULL;
    int rc = cfg_parse_block(block, e);
    if (rc)
        return rc;
    *out = cfg_node_child(block, key, strlen(key));
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

int cfg_find_inner_block(struct cfg_node *block, const char *key, struct cfg_node **out,
                         struct pt_err *e)
{
    struct cfg_node *n = NULL;
    int rc = cfg_find(block, key, &n, e);
    *out = NULL;
    if (rc || !n)
        return rc;
    if (n->parent != block && !n->is_block && !single_var(n->value))
        return 0;
    return cfg_find_block(block, key, out, e);
}
