/* Schema-driven validation, typed reads, --help and man text; see schema.h. */
#include "parsers/schema.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ------------------------------------------------------------------ small helpers */

size_t cfg_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64)
        return (size_t)-1;
    size_t row[65];
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            int same = (a[i - 1] | 0x20) == (b[j - 1] | 0x20);
            size_t best = diag + (same ? 0 : 1);
            if (row[j] + 1 < best)
                best = row[j] + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

/* Index of word in "a|b|c" (case-insensitive), or -1. */
static int choice_index(const char *choices, const char *word)
{
    if (!choices)
        return -1;
    size_t wl = strlen(word);
    int idx = 0;
    for (const char *p = choices;; idx++) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == wl && strncasecmp(p, word, len) == 0)
            return idx;
        if (!bar)
            return -1;
        p = bar + 1;
    }
}

static const char *type_word(const struct cfg_key *k)
{
    switch (k->type) {
    case CFG_BOOL: return "boolean";
    case CFG_INT: return "integer";
    case CFG_REAL: return "number";
    case CFG_STRING: return "string";
    case CFG_PATH: return "path";
    case CFG_ENUM: return "one of";
    case CFG_INT_SCHED: return "integer schedule";
    case CFG_REAL_SCHED: return "number schedule";
    case CFG_INT_LIST: return "integer array";
    case CFG_STRING_LIST: return "array";
    case CFG_BLOCK: return "block";
    case CFG_BLOCK_MAP: return "block of blocks";
    case CFG_TEXT: return "block (kept as text)";
    case CFG_UNSUPPORTED: return "not supported";
    }
    return "?";
}

const struct cfg_key *cfg_key_first(const struct cfg_schema *s, struct cfg_key_iter *it)
{
    it->s = s;
    it->table = 0;
    it->k = s->keys;
    while (!it->k->name && s->more && s->more[it->table])
        it->k = s->more[it->table++];
    return it->k->name ? it->k : NULL;
}

const struct cfg_key *cfg_key_next(struct cfg_key_iter *it)
{
    if (!it->k->name)
        return NULL;
    it->k++;
    while (!it->k->name && it->s->more && it->s->more[it->table])
        it->k = it->s->more[it->table++];
    return it->k->name ? it->k : NULL;
}

static const struct cfg_key *find_key(const struct cfg_schema *s, const char *name)
{
    struct cfg_key_iter it;
    const struct cfg_key *k;
    for (k = cfg_key_first(s, &it); k; k = cfg_key_next(&it))
        if (strcasecmp(k->name, name) == 0)
            return k;
    return NULL;
}

const struct cfg_key *cfg_schema_key(const struct cfg_schema *s, const char *name)
{
    return find_key(s, name);
}

static const char *canonical(const struct cfg_key *k)
{
    return k->alias_of ? k->alias_of : k->name;
}

/* The key whose value the alias k stands for. */
static const struct cfg_key *target_of(const struct cfg_schema *s, const struct cfg_key *k)
{
    const struct cfg_key *t = k->alias_of ? find_key(s, k->alias_of) : k;
    return t ? t : k;
}

/* The node for key k as the trainer reads it: climbing enclosing blocks, unless CFG_LOCAL. */
static int find_for(struct cfg_node *block, const struct cfg_key *k, const char *name,
                    struct cfg_node **out, struct pt_err *e)
{
    return (k->flags & CFG_LOCAL) ? cfg_find_local(block, name, out, e)
                                  : cfg_find(block, name, out, e);
}

/* ------------------------------------------------------------------ one value */

static int range_check(const struct cfg_node *n, const struct cfg_key *k, double v,
                       struct pt_err *e)
{
    static const struct cfg_origin def = {.file = "<default>"};
    const struct cfg_origin *o = n ? cfg_value_origin(n) : &def;
    if ((k->flags & CFG_HAS_MIN) && ((k->flags & CFG_MIN_EXCL) ? !(v > k->min) : !(v >= k->min)))
        return cfg_error(e, o, "%s: %g is out of range: must be %s %g", k->name, v,
                         (k->flags & CFG_MIN_EXCL) ? ">" : ">=", k->min);
    if ((k->flags & CFG_HAS_MAX) && ((k->flags & CFG_MAX_EXCL) ? !(v < k->max) : !(v <= k->max)))
        return cfg_error(e, o, "%s: %g is out of range: must be %s %g", k->name, v,
                         (k->flags & CFG_MAX_EXCL) ? "<" : "<=", k->max);
    return 0;
}

static int bad_choice(const struct cfg_node *n, const struct cfg_key *k, const char *s,
                      struct pt_err *e)
{
    static const struct cfg_origin def = {.file = "<default>"};
    const struct cfg_origin *o = n ? cfg_value_origin(n) : &def;
    char ex[128];
    pt_excerpt(ex, sizeof ex, s, strlen(s), 60);
    if (choice_index(k->unsupported, s) >= 0)
        return cfg_error(e, o, "%s=%s is not supported by partrain (supported: %s)", k->name, ex,
                         k->choices);
    return cfg_error(e, o, "%s: expected one of %s, got \"%s\"", k->name, k->choices, ex);
}

/* Reals are finite unless the key says otherwise: an infinite (1#INF, inf, 1e400) or
 * float-overflowing rate would be accepted here and only turn the model into NaNs an epoch
 * later, with no origin. The trainer computes in 32-bit floats, so beyond FLT_MAX is the
 * same infinity. */
static int finite_check(const struct cfg_node *n, const struct cfg_key *k, const char *text,
                        double v, struct pt_err *e)
{
    if ((k->flags & CFG_ALLOW_INF) || fabs(v) <= FLT_MAX)
        return 0;
    static const struct cfg_origin def = {.file = "<default>"};
    char ex[128], path[512];
    pt_excerpt(ex, sizeof ex, text, strlen(text), 60);
    return cfg_error(
        e, n ? cfg_value_origin(n) : &def, "%s: expected a finite number%s, got \"%s\"",
        n ? cfg_path(n, path, sizeof path) : k->name,
        isinf(v) ? "" : " (at most 3.4e38 in magnitude: training uses 32-bit floats)", ex);
}

static int parse_typed(struct cfg_node *n, const struct cfg_key *k, const char *s,
                       struct cfg_val *out, struct pt_err *e);

/* Parse text s (from node n, or the default when n is NULL) as key k into out. */
static int parse_as(struct cfg_node *n, const struct cfg_key *k, const char *s, struct cfg_val *out,
                    struct pt_err *e)
{
    int rc = parse_typed(n, k, s, out, e);
    char why[256];
    if (rc == 0 && k->valid && k->valid(out, why, sizeof why)) {
        static const struct cfg_origin def = {.file = "<default>"};
        return cfg_error(e, n ? cfg_value_origin(n) : &def, "%s: %s", k->name, why);
    }
    return rc;
}

/* CFG_FIRST: the first element of the integer array s, every element an integer in range. */
static int first_int(struct cfg_node *n, const struct cfg_key *k, const char *s, long long *out,
                     struct pt_err *e)
{
    struct cfg_list l = {0};
    int rc = cfg_to_list(n, s, &l, e);
    for (size_t i = 0; rc == 0 && i < l.n; i++) {
        long long v = 0;
        rc = cfg_to_int(n, l.items[i], &v, e);
        if (rc == 0)
            rc = range_check(n, k, (double)v, e);
        if (i == 0)
            *out = v;
    }
    cfg_list_free(&l);
    return rc;
}

static int parse_typed(struct cfg_node *n, const struct cfg_key *k, const char *s,
                       struct cfg_val *out, struct pt_err *e)
{
    int rc = 0;
    switch (k->type) {
    case CFG_BOOL: return cfg_to_bool(n, s, &out->b, e);
    case CFG_INT:
        if (k->flags & CFG_FIRST)
            return first_int(n, k, s, &out->i, e);
        rc = cfg_to_int(n, s, &out->i, e);
        return rc ? rc : range_check(n, k, (double)out->i, e);
    case CFG_REAL:
        rc = cfg_to_double(n, s, &out->d, e);
        if (rc == 0)
            rc = finite_check(n, k, s, out->d, e);
        return rc ? rc : range_check(n, k, out->d, e);
    case CFG_STRING:
    case CFG_PATH:
        out->s = s;
        if (k->type == CFG_PATH && s[0] == '\0') {
            static const struct cfg_origin def = {.file = "<default>"};
            return cfg_error(e, n ? cfg_value_origin(n) : &def,
                             "%s: expected a path, got an empty value", k->name);
        }
        return 0;
    case CFG_ENUM:
        out->choice = choice_index(k->choices, s);
        out->s = s;
        return out->choice < 0 ? bad_choice(n, k, s, e) : 0;
    case CFG_INT_SCHED:
    case CFG_REAL_SCHED:
    case CFG_INT_LIST:
    case CFG_STRING_LIST: break;
    default: return 0;
    }
    rc = cfg_to_list(n, s, &out->slist, e);
    if (rc)
        return rc;
    out->n = out->slist.n;
    if (k->type == CFG_STRING_LIST) {
        for (size_t i = 0; i < out->n && k->choices; i++)
            if (choice_index(k->choices, out->slist.items[i]) < 0)
                return bad_choice(n, k, out->slist.items[i], e);
        return 0;
    }
    int ints = k->type != CFG_REAL_SCHED;
    if (ints)
        out->ilist = pt_calloc(out->n, sizeof *out->ilist, e);
    out->dlist = pt_calloc(out->n, sizeof *out->dlist, e);
    if ((ints && !out->ilist) || !out->dlist)
        return e ? e->code : PT_ENOMEM;
    for (size_t i = 0; i < out->n && rc == 0; i++) {
        if (ints) {
            rc = cfg_to_int(n, out->slist.items[i], &out->ilist[i], e);
            out->dlist[i] = (double)out->ilist[i];
        } else {
            rc = cfg_to_double(n, out->slist.items[i], &out->dlist[i], e);
            if (rc == 0)
                rc = finite_check(n, k, out->slist.items[i], out->dlist[i], e);
        }
        if (rc == 0)
            rc = range_check(n, k, out->dlist[i], e);
    }
    return rc;
}

void cfg_val_free(struct cfg_val *v)
{
    if (!v)
        return;
    free(v->ilist);
    free(v->dlist);
    cfg_list_free(&v->slist);
    v->ilist = NULL;
    v->dlist = NULL;
    v->n = 0;
}

double cfg_sched_real(const struct cfg_val *v, size_t epoch)
{
    if (v->n == 0)
        return v->d;
    return v->dlist[epoch < v->n ? epoch : v->n - 1];
}

long long cfg_sched_int(const struct cfg_val *v, size_t epoch)
{
    if (v->n == 0)
        return v->i;
    return v->ilist[epoch < v->n ? epoch : v->n - 1];
}

/* Validate node n (present in a block) as key k. */
static int check_node(struct cfg_check *ck, struct cfg_node *n, const struct cfg_schema *s,
                      const struct cfg_key *k, struct pt_err *e)
{
    char path[512];
    const struct cfg_key *t = target_of(s, k);
    cfg_mark_used(n);
    if (k->type == CFG_UNSUPPORTED)
        return cfg_error(e, cfg_origin_of(n), "%s: not supported by partrain: %s",
                         cfg_path(n, path, sizeof path), k->help);
    if (k->flags & CFG_DEPRECATED)
        cfg_warn(ck->cfg, cfg_origin_of(n), "'%s' is deprecated; use '%s'", k->name, canonical(k));
    if (t->type == CFG_TEXT)
        return 0;
    if (t->type == CFG_BLOCK || t->type == CFG_BLOCK_MAP) {
        if (!cfg_is_block(n)) {
            /* key = $name$ naming a block stands for that block */
            struct cfg_node *target = NULL;
            int rc = cfg_find_block(cfg_parent(n), cfg_key(n), &target, e);
            if (rc)
                return rc;
            if (target && cfg_is_block(target))
                return t->type == CFG_BLOCK ? cfg_schema_check(ck, target, t->sub, e) : 0;
        }
        if (!cfg_is_block(n))
            return cfg_error(e, cfg_origin_of(n), "'%s' must be a block [ ... ], but it is a value",
                             cfg_path(n, path, sizeof path));
        if (t->type == CFG_BLOCK)
            return cfg_schema_check(ck, n, t->sub, e);
        int rc = cfg_parse_block(n, e);
        for (struct cfg_node *ch = cfg_first(n); ch && rc == 0; ch = cfg_next(ch)) {
            cfg_mark_used(ch);
            if (!cfg_is_block(ch))
                return cfg_error(
                    e, cfg_origin_of(ch),
                    "'%s' must be a block [ ... ] describing one %s, but it is a value",
                    cfg_path(ch, path, sizeof path), t->sub->name);
            rc = cfg_schema_check(ck, ch, t->sub, e);
        }
        return rc;
    }
    if (cfg_is_block(n))
        return cfg_error(e, cfg_origin_of(n), "'%s' must be a value (%s), but it is a block",
                         cfg_path(n, path, sizeof path), type_word(t));
    const char *v = NULL;
    int rc = cfg_value(n, &v, e);
    if (rc)
        return rc;
    if (strcasecmp(v, "default") == 0)
        return 0;
    struct cfg_val tmp = {0};
    rc = parse_as(n, t, v, &tmp, e);
    cfg_val_free(&tmp);
    return rc;
}

static void report_unknown(struct cfg_check *ck, struct cfg_node *n, const struct cfg_schema *s,
                           struct pt_err *e, int *rc)
{
    char hint[256] = "", path[512];
    const char *key = cfg_key(n);
    size_t best = (size_t)-1;
    const char *best_name = NULL;
    struct cfg_key_iter it;
    const struct cfg_key *k;
    for (k = cfg_key_first(s, &it); k; k = cfg_key_next(&it)) {
        size_t d = cfg_edit_distance(key, k->name);
        if (d < best) {
            best = d;
            best_name = k->name;
        }
    }
    size_t limit = strlen(key) / 3 > 2 ? strlen(key) / 3 : 2;
    if (best_name && best <= limit)
        snprintf(hint, sizeof hint, " (did you mean '%s'?)", best_name);
    /* a block put in the wrong place, then a key of another block */
    for (int i = 0; !hint[0] && ck->all && ck->all[i]; i++)
        if (ck->all[i] != s && strcasecmp(ck->all[i]->name, key) == 0)
            snprintf(hint, sizeof hint, " (a %s block belongs %s)", ck->all[i]->name,
                     ck->all[i]->where);
    for (int i = 0; !hint[0] && ck->all && ck->all[i]; i++) {
        const struct cfg_schema *o = ck->all[i];
        k = o != s ? find_key(o, key) : NULL;
        if (k && o->open && !strchr(o->name, '('))
            snprintf(hint, sizeof hint, " ('%s' belongs at the %s)", k->name, o->name);
        else if (k)
            snprintf(hint, sizeof hint, " ('%s' belongs in the %s block)", k->name, o->name);
    }
    cfg_path(n, path, sizeof path);
    if (ck->strict)
        *rc = cfg_error(e, cfg_origin_of(n), "unknown key '%s' in %s%s (strictConfig=true)", path,
                        s->name, hint);
    else
        cfg_warn(ck->cfg, cfg_origin_of(n), "unknown key '%s' in %s is ignored%s", path, s->name,
                 hint);
}

/* Keys sharing an exclusive group (or aliases of one key) must not both be set. */
static int check_groups(struct cfg_node *block, const struct cfg_schema *s, struct pt_err *e)
{
    struct cfg_key_iter ia, ib;
    const struct cfg_key *a, *b;
    for (a = cfg_key_first(s, &ia); a; a = cfg_key_next(&ia)) {
        struct cfg_node *na = NULL;
        int rc = find_for(block, a, a->name, &na, e);
        if (rc)
            return rc;
        if (!na)
            continue;
        ib = ia;
        for (b = cfg_key_next(&ib); b; b = cfg_key_next(&ib)) {
            int same = strcasecmp(canonical(a), canonical(b)) == 0;
            if (!same && (a->group == 0 || a->group != b->group))
                continue;
            struct cfg_node *nb = NULL;
            rc = find_for(block, b, b->name, &nb, e);
            if (rc)
                return rc;
            if (!nb || nb == na)
                continue;
            char where[512];
            const struct cfg_node *later = nb, *earlier = na;
            return cfg_error(e, cfg_origin_of(later),
                             "%s: '%s' and '%s' (set at %s) %s; give only one", s->name,
                             cfg_key(later), cfg_key(earlier),
                             cfg_origin_str(cfg_origin_of(earlier), where, sizeof where),
                             same ? "are two names for the same setting" : "exclude each other");
        }
    }
    return 0;
}

static int visited(struct cfg_check *ck, struct cfg_node *block)
{
    for (int i = 0; i < ck->nvisited; i++)
        if (ck->visited[i] == block)
            return 1;
    if (ck->nvisited < (int)(sizeof ck->visited / sizeof ck->visited[0]))
        ck->visited[ck->nvisited++] = block;
    return 0;
}

/* Whether key n of block, unknown to s, is read from there by a sub-block that block has:
 * a key of that sub-block's schema that is not CFG_LOCAL, whose lookup climbs into block
 * (as CNTK's do: SGD's loadBestModel read by its AutoAdjust block, CNTK's rnn.cntk). */
static int read_by_sub_block(struct cfg_node *block, struct cfg_node *n, const struct cfg_schema *s)
{
    struct cfg_key_iter it;
    for (const struct cfg_key *k = cfg_key_first(s, &it); k; k = cfg_key_next(&it)) {
        const struct cfg_key *sk =
            k->type == CFG_BLOCK && k->sub ? find_key(k->sub, cfg_key(n)) : NULL;
        struct cfg_node *b = NULL;
        struct pt_err quiet;
        pt_err_clear(&quiet);
        if (sk && !(sk->flags & CFG_LOCAL) && cfg_find_local(block, k->name, &b, &quiet) == 0 &&
            b && cfg_is_block(b))
            return 1;
    }
    return 0;
}

int cfg_schema_check(struct cfg_check *ck, struct cfg_node *block, const struct cfg_schema *s,
                     struct pt_err *e)
{
    char path[512];
    if (visited(ck, block))
        return 0;
    int rc = cfg_parse_block(block, e);
    if (rc)
        return rc;
    for (struct cfg_node *n = cfg_first(block); n && rc == 0; n = cfg_next(n)) {
        const struct cfg_key *k = find_key(s, cfg_key(n));
        if (k)
            rc = check_node(ck, n, s, k, e);
        else if (!s->open && !(s->owns && s->owns(block, n)) && !read_by_sub_block(block, n, s))
            report_unknown(ck, n, s, e, &rc);
    }
    if (rc)
        return rc;
    rc = check_groups(block, s, e);
    /* sub-blocks and required keys that live further out (climbing lookup) */
    struct cfg_key_iter it, ia;
    const struct cfg_key *k, *a;
    for (k = cfg_key_first(s, &it); k && rc == 0; k = cfg_key_next(&it)) {
        if (k->alias_of)
            continue;
        struct cfg_node *n = NULL, *local = NULL;
        rc = cfg_find_local(block, k->name, &local, e);
        if (rc)
            break;
        if (k->type == CFG_BLOCK || k->type == CFG_BLOCK_MAP) {
            rc = (k->flags & CFG_INNER_BLOCK) ? cfg_find_inner_block(block, k->name, &n, e)
                                              : cfg_find_block(block, k->name, &n, e);
            if (rc == 0 && n && !local)
                rc = k->type == CFG_BLOCK ? cfg_schema_check(ck, n, k->sub, e) : 0;
        } else {
            rc = find_for(block, k, k->name, &n, e);
            for (a = cfg_key_first(s, &ia); rc == 0 && !n && a; a = cfg_key_next(&ia))
                if (a->alias_of && strcasecmp(a->alias_of, k->name) == 0)
                    rc = find_for(block, a, a->name, &n, e);
        }
        if (rc == 0 && !n && (k->flags & CFG_REQUIRED)) {
            if (k->type == CFG_BLOCK)
                rc = cfg_error(e, cfg_origin_of(block), "%s: missing the %s block: %s",
                               cfg_path(block, path, sizeof path), k->name, k->help);
            else
                rc = cfg_error(e, cfg_origin_of(block), "%s: required key '%s' is not set (%s)",
                               cfg_path(block, path, sizeof path), k->name, k->help);
        }
    }
    return rc;
}

/* ------------------------------------------------------------------ typed read */

int cfg_schema_get(struct cfg_node *block, const struct cfg_schema *s, const char *name,
                   struct cfg_val *out, struct pt_err *e)
{
    char path[512];
    memset(out, 0, sizeof *out);
    const struct cfg_key *k = find_key(s, name);
    if (!k)
        return pt_err_set(e, PT_EINTERNAL, "error: internal: %s has no key '%s'", s->name, name);
    k = target_of(s, k);
    struct cfg_node *n = NULL;
    int rc = block ? find_for(block, k, k->name, &n, e) : 0;
    struct cfg_key_iter it;
    const struct cfg_key *a;
    for (a = cfg_key_first(s, &it); block && rc == 0 && !n && a; a = cfg_key_next(&it))
        if (a->alias_of && strcasecmp(a->alias_of, k->name) == 0)
            rc = find_for(block, a, a->name, &n, e);
    if (rc)
        return rc;
    const char *text = NULL;
    if (n) {
        cfg_mark_used(n);
        if (k->type == CFG_BLOCK || k->type == CFG_BLOCK_MAP || k->type == CFG_TEXT) {
            out->node = n;
            return 0;
        }
        rc = cfg_value(n, &text, e);
        if (rc)
            return rc;
        if (strcasecmp(text, "default") == 0)
            text = NULL;
        else
            out->node = n;
    }
    if (!text) {
        if (!k->def && (k->flags & CFG_REQUIRED) && block)
            return cfg_error(e, cfg_origin_of(block), "%s: required key '%s' is not set (%s)",
                             cfg_path(block, path, sizeof path), k->name, k->help);
        if (!k->def)
            return 0;
        text = k->def;
    }
    rc = parse_as(out->node, k, text, out, e);
    if (rc)
        cfg_val_free(out);
    return rc;
}

/* ------------------------------------------------------------------ reference text */

static void describe(const struct cfg_key *k, char *buf, size_t size)
{
    size_t o = 0;
    o += (size_t)snprintf(buf + o, size - o, "%s", type_word(k));
    if (k->type == CFG_ENUM && k->choices && o < size)
        o += (size_t)snprintf(buf + o, size - o, " %s", k->choices);
    if (k->type == CFG_STRING_LIST && k->choices && o < size)
        o += (size_t)snprintf(buf + o, size - o, " of %s", k->choices);
    if ((k->flags & CFG_HAS_MIN) && o < size)
        o += (size_t)snprintf(buf + o, size - o, ", %s %g",
                              (k->flags & CFG_MIN_EXCL) ? ">" : ">=", k->min);
    if ((k->flags & CFG_HAS_MAX) && o < size)
        o += (size_t)snprintf(buf + o, size - o, ", %s %g",
                              (k->flags & CFG_MAX_EXCL) ? "<" : "<=", k->max);
    if (k->alias_of && o < size)
        o += (size_t)snprintf(buf + o, size - o, ", alias of %s%s", k->alias_of,
                              (k->flags & CFG_DEPRECATED) ? " (deprecated)" : "");
    if ((k->flags & CFG_REQUIRED) && o < size)
        o += (size_t)snprintf(buf + o, size - o, ", required");
    else if (k->def && o < size)
        o += (size_t)snprintf(buf + o, size - o, ", default %s", k->def[0] ? k->def : "\"\"");
    (void)o;
}

void cfg_schema_print_help(FILE *out, const struct cfg_schema *s)
{
    fprintf(out, "%s = [ ... ]  (%s)\n  %s\n", s->name, s->where, s->help);
    struct cfg_key_iter it;
    const struct cfg_key *k;
    for (k = cfg_key_first(s, &it); k; k = cfg_key_next(&it)) {
        char d[512];
        describe(k, d, sizeof d);
        fprintf(out, "  %-36s %s\n", k->name, d);
        fprintf(out, "  %-36s   %s\n", "", k->help);
    }
}

/* Write text for troff: escape backslashes, and a leading '.' or '\''. */
static void troff(FILE *out, const char *s)
{
    if (*s == '.' || *s == '\'')
        fputs("\\&", out);
    for (; *s; s++) {
        if (*s == '\\')
            fputs("\\e", out);
        else if (*s == '-')
            fputs("\\-", out);
        else
            fputc(*s, out);
    }
}

void cfg_schema_print_man(FILE *out, const struct cfg_schema *s)
{
    fputs(".SS ", out);
    troff(out, s->name);
    fputs("\n", out);
    troff(out, s->help);
    fputs(" (", out);
    troff(out, s->where);
    fputs(")\n", out);
    struct cfg_key_iter it;
    const struct cfg_key *k;
    for (k = cfg_key_first(s, &it); k; k = cfg_key_next(&it)) {
        char d[512];
        describe(k, d, sizeof d);
        fputs(".TP\n.B ", out);
        troff(out, k->name);
        fputs("\n\\fI", out);
        troff(out, d);
        fputs("\\fR.\n", out);
        troff(out, k->help);
        fputs("\n", out);
    }
}
