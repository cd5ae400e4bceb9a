/* CNTK's NDLNetworkBuilder (its Network Description Language) read as BrainScript: the NDL
 * files (networkDescription, ndlMacros) or the config's sections (run=, load=) parsed with
 * BrainScript's parser in its NDL mode (parsers/bs.h: (a, b) and {a, b} are arrays),
 * then written out as the BrainScript text that bs_config.c reads for a
 * BrainScriptNetworkBuilder. What NDL means differently is written into that text:
 *
 *   - the sections named by load= and then run= (each file's own, the builder block's
 *     overriding the description's) are one scope, with the files' macros beside them
 *     (only the macros the network calls, directly or through others);
 *   - a macro whose body is a block gives, as CNTK's NDL, the line named like the macro or
 *     else its last line, every line evaluated, and L1.W still reaches a line:
 *     BS.NDL.Return ([ ... ], 'NAME') (bs_builtins.c);
 *   - a named argument's bare word that names nothing (init=Gaussian, tag=feature,
 *     imageLayout=cudnn) is a string, and a quoted number or boolean is one;
 *   - FeatureNodes, LabelNodes, CriteriaNodes / CriterionNodes, EvalNodes and OutputNodes
 *     (any case) are BrainScript's featureNodes ... outputNodes;
 *   - NDL's function names and argument forms become BrainScript's (InputValue, Const,
 *     Delay, CEWithSM, ImageParameter, the 7-argument 2D Convolution, RowStack's argument
 *     list, ClassificationError's topN as a Const, needGradient=false, init in any case,
 *     ImageInput's HWC default, BatchNormalization's eval= and engine=).
 *
 * Each member of the text is preceded by a "#@at LINE COL FILE" line, so that errors
 * found when the text is evaluated name the NDL file and line. This file reads the files
 * and sections and gathers their members; ndl_write.c writes them out. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/fs.h"
#include "nn/ndl_internal.h"
#include "nn/nn_internal.h"
#include "parsers/bs.h"
#include "parsers/cfg.h"

static int names_add(struct names *s, const char *name)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        const char **v = realloc(s->v, cap * sizeof *v);
        if (!v)
            return -1;
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = name;
    return 0;
}

int ndl_names_find(const struct names *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcasecmp(s->v[i], name)) /* NDL's names have no case */
            return (int)i;
    return -1;
}

/* NDL's names have no case (DnnLastLayer is DNNLastLayer): every spelling of a name the
 * NDL defines is written as its first definition's. */
const char *ndl_canon(const struct names *defined, const char *name)
{
    int k = ndl_names_find(defined, name);
    return k >= 0 ? defined->v[k] : name;
}

/* ------------------------------------------------------------------ gathering */

/* Two members of one scope whose names differ only in case are one NDL symbol assigned
 * twice, which CNTK refuses: an error at the second. */
static int no_case_twice(struct ndl *d, const struct bs_node *const *m, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (m[i]->kind != BS_DEF)
            continue;
        for (size_t j = 0; j < i; j++)
            if (m[j]->kind == BS_DEF && !strcasecmp(m[i]->str, m[j]->str) &&
                !(m[i]->a && m[i]->a->kind == BS_LAMBDA) &&
                !(m[j]->a && m[j]->a->kind == BS_LAMBDA)) /* macros are apart */
                return bs_error(
                    d->e, m[i], "'%s' is '%s' (%s:%d:%d) again: NDL's names have no case",
                    m[i]->str, m[j]->str, m[j]->file ? m[j]->file : "", m[j]->line, m[j]->col);
        const struct bs_node *v = m[i]->a;
        if (v && v->kind == BS_LAMBDA && v->a && v->a->kind == BS_RECORD) {
            int rc = no_case_twice(d, (const struct bs_node *const *)v->a->items, v->a->nitems);
            if (rc)
                return rc;
        }
    }
    return 0;
}

static int top_add(struct ndl *d, const struct bs_node *m)
{
    if (d->ntop == d->captop) {
        size_t cap = d->captop ? 2 * d->captop : 64;
        const struct bs_node **v = realloc(d->top, cap * sizeof *v);
        if (!v)
            return pt_err_set(d->e, PT_ENOMEM, "error: out of memory");
        d->top = v;
        d->captop = cap;
    }
    d->top[d->ntop++] = m;
    return 0;
}

/* Every name a tree defines, into d->defined; its macros into d->macros. */
static int collect(struct ndl *d, const struct bs_node *x, int top)
{
    if (!x)
        return 0;
    int rc = 0;
    if (x->kind == BS_DEF && x->str) {
        rc = names_add(&d->defined, x->str);
        if (rc == 0 && !(top && x->a && x->a->kind == BS_LAMBDA))
            rc = names_add(&d->vars, x->str);
        if (rc == 0 && top && x->a && x->a->kind == BS_LAMBDA) {
            if (names_add(&d->macros, x->str))
                rc = -1;
            else {
                const struct bs_node **v =
                    realloc(d->macro_def, d->macros.cap * sizeof *d->macro_def);
                if (!v)
                    rc = -1;
                else {
                    d->macro_def = v;
                    v[d->macros.n - 1] = x;
                }
            }
        }
    }
    if (x->kind == BS_LAMBDA)
        for (size_t i = 0; rc == 0 && i < x->nitems; i++)
            if (x->items[i]->kind == BS_ID || x->items[i]->kind == BS_DEF)
                rc = names_add(&d->defined, x->items[i]->str) ||
                     names_add(&d->vars, x->items[i]->str);
    if (rc)
        return pt_err_set(d->e, PT_ENOMEM, "error: out of memory");
    const struct bs_node *kids[] = {x->a, x->b, x->c};
    /* a macro is a function defined at the top of a file or of one of its sections */
    int section = top == 1 && x->kind == BS_DEF && x->a && x->a->kind == BS_RECORD;
    for (int i = 0; rc == 0 && i < 3; i++)
        rc = collect(d, kids[i], section && i == 0 ? 2 : 0);
    for (size_t i = 0; rc == 0 && i < x->nitems; i++)
        rc = collect(d, x->items[i], top && x->kind == BS_RECORD ? top : 0);
    return rc;
}

/* The names x uses (callees and variables) that are macros: mark them needed. */
static void uses(const struct ndl *d, const struct bs_node *x, char *need)
{
    if (!x)
        return;
    if (x->kind == BS_ID) {
        int k = ndl_names_find(&d->macros, x->str);
        if (k >= 0 && !need[k]) {
            need[k] = 1;
            uses(d, d->macro_def[k]->a, need);
        }
    }
    uses(d, x->a, need);
    uses(d, x->b, need);
    uses(d, x->c, need);
    for (size_t i = 0; i < x->nitems; i++)
        uses(d, x->items[i], need);
}

/* The value of load= or run=: a section name, or several (a : b, or NDL's (a, b)). */
static int section_names(const struct bs_node *v, const char **out, int max)
{
    if (v->kind == BS_ID || v->kind == BS_STR) {
        out[0] = v->str;
        return 1;
    }
    int n = 0;
    if (v->kind == BS_ARRAY)
        for (size_t i = 0; i < v->nitems && n < max; i++)
            if (v->items[i]->kind == BS_ID || v->items[i]->kind == BS_STR)
                out[n++] = v->items[i]->str;
    return n;
}

static const struct bs_node *find_member(const struct bs_node *r, const char *name)
{
    for (size_t i = r->nitems; i-- > 0;)
        if (r->items[i]->kind == BS_DEF && !strcasecmp(r->items[i]->str, name))
            return r->items[i];
    return NULL;
}

static int skipped(const char *name)
{
    return !strcasecmp(name, "load") || !strcasecmp(name, "run");
}

/* A file's members into d->top: with load= / run= its macros and those sections' lines
 * (the builder's own load / run, when given, override the file's); else every member. */
static int file_members(struct ndl *d, const struct unit *u, const char *const *load, int nload,
                        const char *const *run, int nrun)
{
    const struct bs_node *r = bs_tree_root(u->tree);
    const char *sec_load[16], *sec_run[16];
    const struct bs_node *l = find_member(r, "load"), *ru = find_member(r, "run");
    if (!nload && l)
        nload = section_names(l->a, sec_load, 16), load = sec_load;
    if (!nrun && ru)
        nrun = section_names(ru->a, sec_run, 16), run = sec_run;
    int rc = 0;
    if (!nload && !nrun) {
        for (size_t i = 0; rc == 0 && i < r->nitems; i++)
            if (!skipped(r->items[i]->str))
                rc = top_add(d, r->items[i]);
        return rc;
    }
    for (size_t i = 0; rc == 0 && i < r->nitems; i++)
        if (r->items[i]->a && r->items[i]->a->kind == BS_LAMBDA)
            rc = top_add(d, r->items[i]);
    for (int pass = 0; rc == 0 && pass < 2; pass++) {
        const char *const *names = pass ? run : load;
        for (int k = 0; rc == 0 && k < (pass ? nrun : nload); k++) {
            const struct bs_node *s = find_member(r, names[k]);
            if (!s || s->a->kind != BS_RECORD)
                return bs_error(d->e, pass ? ru : l,
                                "%s=%s: the NDL file has no section [ ... ] called '%s'",
                                pass ? "run" : "load", names[k], names[k]);
            for (size_t i = 0; rc == 0 && i < s->a->nitems; i++)
                if (!skipped(s->a->items[i]->str))
                    rc = top_add(d, s->a->items[i]);
        }
    }
    return rc;
}

/* ------------------------------------------------------------------ reading */

static int read_file(const char *path, char **out, size_t *len)
{
    return pt_file_read_all(path, NDL_MAX_FILE, out, len);
}

/* Parse NDL text (its $variables$ replaced from block outward) as unit d->u[d->nu]. */
static int add_text(struct ndl *d, struct cfg_node *scope, const char *text, size_t len,
                    const char *file, int line, int col, int is_macros, int subst)
{
    if (d->nu == NDL_MAX_UNITS)
        return pt_err_set(d->e, PT_EUSER, "error: %s: more than %d NDL files or sections", file,
                          NDL_MAX_UNITS);
    struct unit *u = &d->u[d->nu];
    char *sub = NULL;
    struct cfg_origin o = {.file = file, .line = line, .col = col};
    int rc = 0;
    if (!(u->file = strdup(file)))
        return pt_err_set(d->e, PT_ENOMEM, "error: out of memory");
    if (subst)
        rc = cfg_subst_text(scope, text, len, &o, &sub, d->e);
    if (rc == 0)
        rc = bs_parse_ndl(sub ? sub : text, sub ? strlen(sub) : len, u->file, line, col, &u->tree,
                          d->e);
    free(sub);
    if (rc) {
        free(u->file);
        u->file = NULL;
        return rc;
    }
    u->is_macros = is_macros;
    d->nu++;
    return collect(d, bs_tree_root(u->tree), 1);
}

/* An NDL file named by key (of block) at `path`: as written, else beside the config file. */
static int add_file(struct ndl *d, struct cfg_node *block, struct cfg_node *key, const char *path,
                    int is_macros)
{
    char *text = NULL, alt[1024];
    size_t len = 0;
    const char *used = path;
    int rc = read_file(path, &text, &len);
    const struct cfg_origin *o = cfg_value_origin(key);
    if (rc == -1 && path[0] != '/' && o && o->file && strchr(o->file, '/')) {
        int dir = (int)(strrchr(o->file, '/') - o->file);
        const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
        snprintf(alt, sizeof alt, "%.*s/%s", dir, o->file, base);
        if ((rc = read_file(alt, &text, &len)) == 0)
            used = alt;
    }
    char where[512];
    if (rc == -1)
        return cfg_error(d->e, o, "%s: cannot read the NDL file '%s'",
                         cfg_path(key, where, sizeof where), path);
    if (rc == -2)
        return cfg_error(d->e, o, "%s: the NDL file '%s' cannot be read whole (at most %d bytes)",
                         cfg_path(key, where, sizeof where), path, NDL_MAX_FILE);
    rc = add_text(d, block, text, len, used, 1, 1, is_macros, 1);
    free(text);
    return rc;
}

/* A config section (run= or load= of an inline NDLNetworkBuilder): its text, variables
 * replaced, as a unit whose members are the section's lines. */
static int add_section(struct ndl *d, struct cfg_node *block, struct cfg_node *by, const char *name)
{
    struct cfg_node *s = NULL;
    char where[512];
    int rc = cfg_find_block(block, name, &s, d->e);
    if (rc)
        return rc;
    if (!s)
        return cfg_error(d->e, cfg_value_origin(by),
                         "%s=%s: no section [ ... ] called '%s' in the config (or give "
                         "networkDescription=FILE)",
                         cfg_path(by, where, sizeof where), name, name);
    char *text = NULL;
    struct cfg_origin o;
    if ((rc = cfg_block_text(s, &text, &o, d->e)) != 0)
        return rc;
    rc = add_text(d, block, text, strlen(text), o.file ? o.file : "<config>", o.line, o.col, 0, 0);
    free(text);
    return rc;
}

/* The first of keys that the block has (outward: climbing to the top, as CNTK looks up
 * ndlMacros and networkDescription). */
static int find_key(struct cfg_node *block, const char *const *keys, int outward,
                    struct cfg_node **out, struct pt_err *e)
{
    *out = NULL;
    for (int i = 0; keys[i] && !*out; i++) {
        int rc =
            outward ? cfg_find(block, keys[i], out, e) : cfg_find_local(block, keys[i], out, e);
        if (rc)
            return rc;
    }
    if (*out)
        cfg_mark_used(*out);
    return 0;
}

static void ndl_free(struct ndl *d)
{
    for (int i = 0; i < d->nu; i++) {
        bs_tree_free(d->u[i].tree);
        free(d->u[i].file);
    }
    free(d->top);
    for (size_t i = 0; d->macro_out && i < d->macros.n; i++)
        free(d->macro_out[i]);
    free(d->macro_out);
    free(d->defined.v);
    free(d->vars.v);
    free(d->macros.v);
    free(d->macro_def);
}

/* Whether callee x is an input (Input, InputValue, SparseInputValue, ImageInput ...). */
static int input_call(const struct bs_node *x)
{
    size_t n = x->kind == BS_ID ? strlen(x->str) : 0;
    return (n >= 5 && !strcasecmp(x->str + n - 5, "Input")) ||
           (n >= 10 && !strcasecmp(x->str + n - 10, "InputValue"));
}

/* The top member named `name` (any case), or that its alias chain ends at, whose value is
 * a call (of a function or a macro) but not an input's: its index + 1, or 0. (CNTK would rename an
 * input too, and then find no reader input of the node's name: no config does it, and an input
 * keeps its name here, as an alias of it in BrainScript leaves it.) */
static size_t call_member(const struct ndl *d, const char *name)
{
    for (int hops = 0; hops < 64; hops++) { /* through aliases: c = b, b = a (a chain) */
        size_t i = 0;
        while (i < d->ntop && strcasecmp(d->top[i]->str, name))
            i++;
        const struct bs_node *v = i < d->ntop ? d->top[i]->a : NULL;
        if (v && v->kind == BS_ID && !v->op) {
            name = v->str;
            continue;
        }
        return v && v->kind == BS_CALL && !input_call(v->a) ? i + 1 : 0;
    }
    return 0;
}

/* CNTK's renames (ndl_internal.h's ndl_write_rename): X = Y, Y a top member defined by a
 * call (or an alias of one: c = b after b = a renames a's node too) and X written without
 * parentheses (NDL's (Y) is an array of one: a node group, FeatureNodes = (features),
 * renames nothing); the last alias of a definition names it, as CNTK's parser sets the
 * node's name at each. Indices + 1 (0: none). */
static void find_renames(const struct ndl *d, size_t *alias, size_t *def)
{
    for (size_t j = 0; j < d->ntop; j++) {
        const struct bs_node *v = d->top[j]->a;
        size_t i = v && v->kind == BS_ID && !v->op ? call_member(d, v->str) : 0;
        if (!i || i - 1 == j)
            continue;
        if (alias[i - 1])
            def[alias[i - 1] - 1] = 0; /* an earlier alias: Y's own now (Y = X) */
        alias[i - 1] = j + 1;
        def[j] = i;
    }
}

/* d's members (d->top) written out as BrainScript: the macros the network calls, then the
 * rest, into *out (malloc'd). */
static int emit(struct ndl *d, char **out)
{
    struct pt_err *e = d->e;
    int rc = 0;
    if (rc == 0)
        rc = no_case_twice(d, d->top, d->ntop);
    /* the macros' names as written out */
    if (rc == 0 && !(d->macro_out = calloc(d->macros.n + 1, sizeof *d->macro_out)))
        rc = pt_err_set(e, PT_ENOMEM, "error: out of memory");
    for (size_t k = 0; rc == 0 && k < d->macros.n; k++) {
        const char *first = d->macros.v[ndl_names_find(&d->macros, d->macros.v[k])];
        int clash = 0;
        for (size_t i = 0; i < d->vars.n; i++)
            clash |= !strcmp(d->vars.v[i], first);
        size_t len = strlen(first) + 7;
        if (!(d->macro_out[k] = malloc(len)))
            rc = pt_err_set(e, PT_ENOMEM, "error: out of memory");
        else
            snprintf(d->macro_out[k], len, "%s%s", first, clash ? "_macro" : "");
    }
    /* only the macros the network uses */
    char *need = rc == 0 ? calloc(d->macros.n + 1, 1) : NULL;
    if (rc == 0 && !need)
        rc = pt_err_set(e, PT_ENOMEM, "error: out of memory");
    for (size_t i = 0; rc == 0 && i < d->ntop; i++)
        if (!(d->top[i]->a && d->top[i]->a->kind == BS_LAMBDA))
            uses(d, d->top[i]->a, need);
    /* aliases that rename a definition: alias[i] of definition i, def[j] of alias j */
    size_t *alias = rc == 0 ? calloc(2 * d->ntop + 1, sizeof *alias) : NULL, *def = NULL;
    if (rc == 0 && !alias)
        rc = pt_err_set(e, PT_ENOMEM, "error: out of memory");
    if (rc == 0) {
        def = alias + d->ntop;
        find_renames(d, alias, def);
    }
    struct out o = {0};
    for (size_t i = 0; rc == 0 && i < d->ntop; i++) {
        const struct bs_node *m = d->top[i];
        if (m->a && m->a->kind == BS_LAMBDA) {
            int k = ndl_names_find(&d->macros, m->str);
            if (k >= 0 && !need[k])
                continue; /* a macro the network does not call */
        }
        if (def[i])
            ndl_write_rename(d, &o, m, d->top[def[i] - 1]);
        else
            ndl_write_member(d, &o, m, 1,
                             alias[i] ? ndl_canon(&d->vars, d->top[alias[i] - 1]->str) : NULL);
    }
    free(alias);
    free(need);
    ndl_put(&o, "\n"); /* never an empty (NULL) text, even of an NDL without lines */
    if (rc == 0 && o.oom)
        rc = pt_err_set(e, PT_ENOMEM, "error: out of memory");
    if (rc == 0)
        *out = o.p;
    else
        free(o.p);
    return rc;
}

/* load= / run= of the builder block (searched outward for the inline form) as names. */
static int list_of(struct cfg_node *n, const char **names, char bufs[][128], int max,
                   struct pt_err *e)
{
    const char *s = NULL;
    int rc = cfg_value(n, &s, e), k = 0;
    if (rc)
        return -1;
    while (*s && k < max) {
        size_t len = strcspn(s, ":+ \t");
        if (len && len < 128) {
            memcpy(bufs[k], s, len);
            bufs[k][len] = '\0';
            names[k] = bufs[k];
            k++;
        }
        s += len;
        s += strspn(s, ":+ \t");
    }
    return k;
}

int nn_ndl_text(struct cfg_node *block, char **text, char *file, size_t fsize, struct pt_err *e)
{
    struct ndl d;
    memset(&d, 0, sizeof d);
    d.e = e;
    *text = NULL;
    static const char *const k_desc[] = {"networkDescription", "NetworkDescription", NULL};
    static const char *const k_macros[] = {"ndlMacros", "NDLMacros", NULL};
    static const char *const k_load[] = {"load", NULL};
    static const char *const k_run[] = {"run", NULL};
    struct cfg_node *desc = NULL, *macros = NULL, *load = NULL, *run = NULL;
    const char *load_names[16], *run_names[16];
    char load_buf[16][128], run_buf[16][128];
    int nload = 0, nrun = 0, rc = find_key(block, k_desc, 1, &desc, e);
    if (rc == 0)
        rc = find_key(block, k_macros, 1, &macros, e);
    if (rc == 0)
        rc = find_key(block, k_load, 0, &load, e);
    if (rc == 0)
        rc = find_key(block, k_run, 0, &run, e);
    if (rc == 0 && !desc && !run) { /* the inline form: run= may be above the block */
        if ((rc = cfg_find(block, "run", &run, e)) == 0 && !load)
            rc = cfg_find(block, "load", &load, e);
    }
    if (rc == 0 && load && (nload = list_of(load, load_names, load_buf, 16, e)) < 0)
        rc = e->code;
    if (rc == 0 && run && (nrun = list_of(run, run_names, run_buf, 16, e)) < 0)
        rc = e->code;
    char where[512];
    if (rc == 0 && !desc && !run)
        rc = cfg_error(e, cfg_origin_of(block),
                       "%s: an NDLNetworkBuilder needs networkDescription=FILE (the NDL "
                       "file) or run=SECTION (a section of the config that holds the network)",
                       cfg_path(block, where, sizeof where));
    /* the macro files, '+'-separated, each read as a whole */
    const char *s = NULL;
    if (rc == 0 && macros && (rc = cfg_value(macros, &s, e)) == 0) {
        char path[1024];
        while (rc == 0 && *s) {
            size_t len = strcspn(s, "+");
            if (len >= sizeof path)
                rc = cfg_error(e, cfg_value_origin(macros), "ndlMacros: a path is too long");
            else if (len) {
                memcpy(path, s, len);
                path[len] = '\0';
                rc = add_file(&d, block, macros, path, 1);
            }
            s += len + (s[len] == '+');
        }
    }
    int first_net = d.nu;
    if (rc == 0 && desc && (rc = cfg_value(desc, &s, e)) == 0) {
        if (strchr(s, '+'))
            rc = cfg_error(e, cfg_value_origin(desc),
                           "networkDescription: one file only (more NDL files of macros go in "
                           "ndlMacros=A+B, as in CNTK)");
        else
            rc = add_file(&d, block, desc, s, 0);
    }
    if (rc == 0 && !desc) {
        for (int k = 0; rc == 0 && k < nload; k++)
            rc = add_section(&d, block, load, load_names[k]);
        for (int k = 0; rc == 0 && k < nrun; k++)
            rc = add_section(&d, block, run, run_names[k]);
    }
    /* the members: the macro files', then the network's */
    for (int i = 0; rc == 0 && i < d.nu; i++) {
        if (i < first_net || !desc)
            rc = file_members(&d, &d.u[i], NULL, 0, NULL, 0);
        else
            rc = file_members(&d, &d.u[i], load_names, nload, run_names, nrun);
    }
    char *out = NULL;
    if (rc == 0)
        rc = emit(&d, &out);
    if (rc == 0) {
        const char *f = desc ? d.u[first_net].file : d.nu ? d.u[d.nu - 1].file : "<config>";
        snprintf(file, fsize, "%s", f);
        *text = out;
    }
    ndl_free(&d);
    return rc;
}

int nn_ndl_translate(const char *text, size_t len, const char *file, char **out, struct pt_err *e)
{
    struct ndl d;
    memset(&d, 0, sizeof d);
    d.e = e;
    *out = NULL;
    int rc = add_text(&d, NULL, text, len, file, 1, 1, 0, 0);
    if (rc == 0)
        rc = file_members(&d, &d.u[0], NULL, 0, NULL, 0);
    if (rc == 0)
        rc = emit(&d, out);
    ndl_free(&d);
    return rc;
}
