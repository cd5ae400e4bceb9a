/* --print-config: the merged config, values resolved, origins as trailing comments. */
#include "parsers/cfg_internal.h"

#include <string.h>

static void indent(FILE *out, int depth)
{
    for (int i = 0; i < depth; i++)
        fputs("    ", out);
}

/* Does a value need quotes to read back as one value? */
static int needs_quotes(const char *v)
{
    size_t n = strlen(v);
    if (n == 0)
        return 1;
    if (v[0] == ' ' || v[0] == '\t' || v[n - 1] == ' ' || v[n - 1] == '\t' || v[0] == '[' ||
        v[0] == '{')
        return 1;
    for (const char *p = v; *p; p++)
        if (*p == ';' || *p == ',' || *p == '\n' ||
            ((*p == '#' || *p == '/') && p > v && (p[-1] == ' ' || p[-1] == '\t')))
            return 1;
    return 0;
}

static void print_raw_block(FILE *out, const struct cfg_node *n)
{
    char where[512];
    fprintf(out, "%s = %c", n->key, n->open);
    for (const struct cfg_seg *s = n->parsed; s; s = s->next)
        fwrite(s->text, 1, s->len, out);
    for (const struct cfg_seg *s = n->pending; s; s = s->next)
        fwrite(s->text, 1, s->len, out);
    fprintf(out, "%c", n->open == '[' ? ']' : '}');
    fprintf(out, "    # %s (kept as text: not config syntax)\n",
            cfg_origin_str(&n->origin, where, sizeof where));
}

static int print_block(FILE *out, struct cfg_node *block, int depth, int *problems,
                       struct pt_err *e);

/* A value that CNTK reads as an array of blocks (deserializers = ({ ... })) but that does not
 * resolve as text (an input = $var$ naming a block, as CMUDict's G2P.cntk has): printed
 * element by element, where such a variable is a reference, as the reader reads it. 1 when
 * printed, 0 when n is no such array, < 0 on a failure in e. */
static int print_array(FILE *out, struct cfg_node *n, int depth, int *problems, struct pt_err *e)
{
    char where[512];
    struct cfg_node *el = NULL;
    struct pt_err local;
    pt_err_clear(&local);
    const char *t = n->value;
    while (*t == ' ' || *t == '\t' || *t == '\n' || *t == '\r')
        t++;
    if ((*t != '(' && *t != '[' && *t != '{') || cfg_block_array(n, &el, &local) != 0 || !el)
        return local.code == PT_ENOMEM ? (pt_err_set(e, local.code, "%s", local.msg), -1) : 0;
    fprintf(out, "%s = (    # %s\n", n->key, cfg_origin_str(&n->origin, where, sizeof where));
    for (; el; el = cfg_next(el)) {
        indent(out, depth + 1);
        fprintf(out, "[    # %s\n", cfg_origin_str(&el->origin, where, sizeof where));
        pt_err_clear(&local);
        if (cfg_parse_block(el, &local)) { /* marked, as a value that does not resolve */
            if (local.code == PT_ENOMEM)
                return pt_err_set(e, local.code, "%s", local.msg), -1;
            indent(out, depth + 2);
            fprintf(out, "# %s\n", local.msg);
            (*problems)++;
        } else if (print_block(out, el, depth + 2, problems, e))
            return -1;
        indent(out, depth + 1);
        fputs("]\n", out);
    }
    indent(out, depth);
    fputs(")\n", out);
    return 1;
}

static int print_block(FILE *out, struct cfg_node *block, int depth, int *problems,
                       struct pt_err *e)
{
    char where[512];
    for (struct cfg_node *n = block->first; n; n = n->next) {
        indent(out, depth);
        if (n->is_block) {
            struct pt_err local;
            pt_err_clear(&local);
            if (cfg_parse_block(n, &local)) {
                if (local.code == PT_ENOMEM)
                    return pt_err_set(e, local.code, "%s", local.msg);
                print_raw_block(out, n);
                continue;
            }
            fprintf(out, "%s = [    # %s\n", n->key,
                    cfg_origin_str(&n->origin, where, sizeof where));
            int rc = print_block(out, n, depth + 1, problems, e);
            if (rc)
                return rc;
            indent(out, depth);
            fputs("]\n", out);
            continue;
        }
        const char *v = NULL;
        struct pt_err local;
        pt_err_clear(&local);
        struct cfg_node *stands = NULL; /* `reader = $rd$`: a reference to a block */
        if (cfg_find_block(block, n->key, &stands, &local) == 0 && stands && stands != n &&
            stands->is_block) {
            char at[512];
            fprintf(out, "%s = %s    # %s: the block '%s' (%s)\n", n->key, n->value,
                    cfg_origin_str(&n->origin, where, sizeof where), stands->key,
                    cfg_origin_str(&stands->origin, at, sizeof at));
            continue;
        }
        pt_err_clear(&local);
        if (cfg_value(n, &v, &local)) {
            if (local.code == PT_ENOMEM)
                return pt_err_set(e, local.code, "%s", local.msg);
            int rc = print_array(out, n, depth, problems, e);
            if (rc < 0)
                return e ? e->code : PT_ENOMEM;
            if (rc > 0)
                continue;
            fprintf(out, "%s = %s    # %s\n", n->key, n->value, local.msg);
            (*problems)++;
            continue;
        }
        if (needs_quotes(v) && !strchr(v, '"'))
            fprintf(out, "%s = \"%s\"", n->key, v);
        else
            fprintf(out, "%s = %s", n->key, v);
        fprintf(out, "    # %s\n", cfg_origin_str(&n->origin, where, sizeof where));
    }
    return 0;
}

int cfg_print(struct cfg *c, FILE *out, int *problems, struct pt_err *e)
{
    *problems = 0;
    return print_block(out, &c->root, 0, problems, e);
}
