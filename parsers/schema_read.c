/* cfg_schema_read: a whole block into its struct, each key stored where its schema row
 * says (see schema.h). Every value goes through cfg_schema_get, so a block read this way
 * behaves exactly as one read key by key. */
#include <stdio.h>
#include <string.h>

#include "parsers/schema.h"

static void *member(void *out, size_t at)
{
    return (char *)out + at - 1;
}

/* Store v (read as key k) into its member; moves lists and schedules (v is then empty). */
static int store(void *out, const struct cfg_key *k, struct cfg_node *block, struct cfg_val *v,
                 struct pt_err *e)
{
    void *p = member(out, k->out);
    long long i = k->type == CFG_BOOL ? v->b : k->type == CFG_ENUM ? v->choice : v->i;
    switch (k->out_kind) {
    case CFG_OUT_NONE:
    case CFG_OUT_BLOCK: return 0;
    case CFG_OUT_INT: *(int *)p = (int)i; return 0;
    case CFG_OUT_LLONG: *(long long *)p = i; return 0;
    case CFG_OUT_ULONG: *(unsigned long *)p = (unsigned long)i; return 0;
    case CFG_OUT_DOUBLE: *(double *)p = v->d; return 0;
    case CFG_OUT_STR: *(const char **)p = v->s; return 0;
    case CFG_OUT_CHARS:
        if (!v->s)
            return 0;
        if (strlen(v->s) >= k->out_size)
            return cfg_error(e, v->node ? cfg_value_origin(v->node) : cfg_origin_of(block),
                             "%s: path too long", k->name);
        memcpy(p, v->s, strlen(v->s) + 1);
        return 0;
    case CFG_OUT_VAL:
        *(struct cfg_val *)p = *v;
        memset(v, 0, sizeof *v);
        return 0;
    }
    return 0;
}

/* A CFG_BLOCK key with a destination: its block (absent: block itself) into the nested
 * struct. */
static int read_sub(struct cfg_node *block, const struct cfg_key *k, void *out, struct pt_err *e)
{
    struct cfg_node *sub = NULL;
    int rc = block ? cfg_find_block(block, k->name, &sub, e) : 0;
    if (rc)
        return rc;
    if (k->given)
        *(int *)member(out, k->given) = sub != NULL;
    if (!k->out)
        return 0;
    return cfg_schema_read(sub ? sub : block, k->sub, member(out, k->out), e);
}

/* Whether a value of k's type can be stored in its member (a table error otherwise). */
static int fits(const struct cfg_key *k)
{
    switch (k->out_kind) {
    case CFG_OUT_NONE: return 1;
    case CFG_OUT_INT: return k->type == CFG_BOOL || k->type == CFG_ENUM || k->type == CFG_INT;
    case CFG_OUT_LLONG:
    case CFG_OUT_ULONG: return k->type == CFG_INT;
    case CFG_OUT_DOUBLE: return k->type == CFG_REAL;
    case CFG_OUT_STR: return k->type == CFG_STRING || k->type == CFG_PATH || k->type == CFG_ENUM;
    case CFG_OUT_CHARS: return k->type == CFG_STRING || k->type == CFG_PATH;
    case CFG_OUT_VAL:
        return k->type == CFG_INT_SCHED || k->type == CFG_REAL_SCHED || k->type == CFG_INT_LIST ||
               k->type == CFG_STRING_LIST;
    case CFG_OUT_BLOCK: return k->type == CFG_BLOCK && k->sub;
    }
    return 0;
}

static int read_key(struct cfg_node *block, const struct cfg_schema *s, const struct cfg_key *k,
                    void *out, struct pt_err *e)
{
    if (k->out && !fits(k))
        return pt_err_set(e, PT_EINTERNAL, "error: internal: %s.%s does not fit its member",
                          s->name, k->name);
    if (k->type == CFG_BLOCK)
        return read_sub(block, k, out, e);
    struct cfg_val v;
    int rc = cfg_schema_get(block, s, k->name, &v, e);
    if (rc == 0 && k->given)
        *(int *)member(out, k->given) = v.node != NULL;
    if (rc == 0 && k->out)
        rc = store(out, k, block, &v, e);
    if (rc == 0 && k->set)
        rc = k->set(out, &v, block, e);
    cfg_val_free(&v);
    return rc;
}

int cfg_schema_read(struct cfg_node *block, const struct cfg_schema *s, void *out, struct pt_err *e)
{
    struct cfg_key_iter it;
    int rc = 0;
    for (const struct cfg_key *k = cfg_key_first(s, &it); k && rc == 0; k = cfg_key_next(&it))
        if (!k->alias_of && (k->out || k->given || k->set))
            rc = read_key(block, s, k, out, e);
    return rc;
}

void cfg_schema_free(const struct cfg_schema *s, void *out)
{
    struct cfg_key_iter it;
    for (const struct cfg_key *k = cfg_key_first(s, &it); k; k = cfg_key_next(&it)) {
        if (!k->out || k->alias_of)
            continue;
        if (k->out_kind == CFG_OUT_VAL)
            cfg_val_free(member(out, k->out));
        else if (k->type == CFG_BLOCK && k->out_kind == CFG_OUT_BLOCK)
            cfg_schema_free(k->sub, member(out, k->out));
    }
}
