/* A model's edits (CNTK's MEL, src/train/edit_mel.c, and its SVD action, src/train/svd.c)
 * applied to its node graph: lines of the description that read
 *
 *   #@edit FILE:LINE SetInput PATTERN INDEX SOURCE
 *   #@edit FILE:LINE Rename NAME NEWNAME
 *   #@edit FILE:LINE LowRank NAME ROWS COLS RANK
 *
 * are carried out in their order once the description's members are evaluated and before
 * what no root reaches is dropped. SetInput: every node whose name matches PATTERN ('*'
 * matches any run of characters, dots included, as MEL's wildcards do) takes node SOURCE
 * as its input INDEX (from 0). Rename: the node NAME is called NEWNAME from then on (any
 * characters but blanks: CNTK's SimpleNetworkBuilder names such as "W0*features+B0").
 * LowRank: the parameter NAME [ROWS x COLS] becomes the product of two, NAME_U [ROWS x
 * RANK] and NAME_V [RANK x COLS] (CNTK's SVD action, ComputationNetwork::
 * PerformSVDecomposition): a Times node that reads NAME as its first operand reads NAME_V
 * instead and a new Times node NAME_SVD = NAME_U times it takes its place; any other reader
 * reads NAME_SVD = Times (NAME_U, NAME_V); NAME is gone. The values of NAME_U and NAME_V
 * are the model file's. A pattern that matches no node, a source that is no node, an
 * index beyond the node's inputs, a node made its own input, a name taken, or a parameter
 * of other dimensions are errors naming FILE:LINE. The lines are comments to the
 * BrainScript parser, so the description stays one text that a model file stores and a
 * later edit extends. */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/bs_eval_internal.h"

#define EDIT_TAG "#@edit "

/* The live node called name exactly, or -1. */
static int node_named(const struct nn_graph *g, const char *name)
{
    for (int i = 0; i < g->n; i++)
        if (!g->nodes[i].dead && !strcmp(g->nodes[i].name, name))
            return i;
    return -1;
}

/* Whether node `from` reads node `target`, directly or through others, not counting what
 * a delay (PastValue, FutureValue) reads: a loop through one is a recurrence. 1, 0, or -1
 * out of memory. */
static int reads(struct ev *v, int from, int target)
{
    const struct nn_graph *g = v->g;
    int *stack = pt_calloc((size_t)g->n + 1, sizeof *stack, v->e);
    char *seen = stack ? pt_calloc((size_t)g->n + 1, 1, v->e) : NULL;
    int top = 0, found = 0;
    if (!seen) {
        free(stack);
        return -1;
    }
    stack[top++] = from;
    seen[from] = 1;
    while (top > 0 && !found) {
        int i = stack[--top];
        if (i == target)
            found = 1;
        else if (g->nodes[i].kind != &g_kind_past && g->nodes[i].kind != &g_kind_past_init)
            for (int k = 0; k < g->nodes[i].kind->nin; k++) {
                int j = g->nodes[i].in[k];
                if (!seen[j]) {
                    seen[j] = 1;
                    stack[top++] = j;
                }
            }
    }
    free(stack);
    free(seen);
    return found;
}

static int set_input(struct ev *v, const char *where, const char *pattern, const char *index,
                     const char *source)
{
    struct nn_graph *g = v->g;
    char *end = NULL;
    long k = strtol(index, &end, 10);
    if (!*index || *end || k < 0 || k >= G_MAX_IN)
        return pt_err_set(v->e, PT_EUSER,
                          "%s: error: SetInput: the input's index '%s' is not a number from 0 "
                          "to %d",
                          where, index, G_MAX_IN - 1);
    int src = node_named(g, source);
    if (src < 0)
        return pt_err_set(v->e, PT_EUSER,
                          "%s: error: SetInput: '%s' is no node of the model (its inputs' "
                          "sources are named in full, as 'L2.S')",
                          where, source);
    int matched = 0;
    for (int i = 0; i < g->n; i++) {
        struct g_node *n = &g->nodes[i];
        if (n->dead || !n->name[0] || fnmatch(pattern, n->name, 0) != 0)
            continue;
        if (k >= n->kind->nin)
            return pt_err_set(v->e, PT_EUSER,
                              "%s: error: SetInput: node '%s' (%s) has %d input%s: no input "
                              "%ld (inputs count from 0)",
                              where, n->name, n->kind->name, n->kind->nin,
                              n->kind->nin == 1 ? "" : "s", k);
        int loop = reads(v, src, i);
        if (loop < 0)
            return v->e->code;
        if (loop)
            return pt_err_set(v->e, PT_EUSER,
                              "%s: error: SetInput: '%s' %s '%s', so this would make a loop "
                              "without a delay (PastValue) in it",
                              where, source, i == src ? "is" : "reads", n->name);
        n->in[k] = src;
        matched++;
    }
    if (!matched)
        return pt_err_set(v->e, PT_EUSER, "%s: error: SetInput: no node of the model matches '%s'",
                          where, pattern);
    return 0;
}

static int rename_node(struct ev *v, const char *where, const char *name, const char *to)
{
    struct nn_graph *g = v->g;
    int i = node_named(g, name);
    if (i < 0)
        return pt_err_set(v->e, PT_EUSER, "%s: error: Rename: '%s' is no node of the model", where,
                          name);
    if (strlen(to) >= sizeof g->nodes[i].name)
        return pt_err_set(v->e, PT_EUSER, "%s: error: Rename: '%s' is longer than %zu characters",
                          where, to, sizeof g->nodes[i].name - 1);
    if (node_named(g, to) >= 0 && node_named(g, to) != i)
        return pt_err_set(v->e, PT_EUSER, "%s: error: Rename: a node is called '%s' already", where,
                          to);
    snprintf(g->nodes[i].name, sizeof g->nodes[i].name, "%s", to);
    return 0;
}

/* A new node of the kind called kind, named name, reading in[0..nin): its index, or -1. */
static int add_named(struct ev *v, const char *where, const char *kind, const int *in, int nin,
                     const char *name)
{
    struct nn_graph *g = v->g;
    if (node_named(g, name) >= 0) {
        pt_err_set(v->e, PT_EUSER,
                   "%s: error: LowRank: a node is called '%s' already (the decomposition's "
                   "name)",
                   where, name);
        return -1;
    }
    int id = g_add(g, g_kind_find(kind), in, nin, where, v->e);
    if (id >= 0)
        snprintf(g->nodes[id].name, sizeof g->nodes[id].name, "%s", name);
    return id;
}

static int add_param(struct ev *v, const char *where, const char *name, int rows, int cols)
{
    int id = add_named(v, where, "Parameter", NULL, 0, name);
    if (id >= 0) {
        struct g_node *n = &v->g->nodes[id];
        n->learnable = 1;
        n->rows = rows;
        n->cols = cols;
        n->init = G_INIT_FIXED; /* the model file's values follow */
        n->init_value = 0.0;
        n->init_scale = 1.0;
    }
    return id;
}

/* Every live reader of node `from` (and the network's groups) reads `to` instead, but
 * node `skip`. */
static void redirect(struct nn_graph *g, int from, int to, int skip)
{
    for (int i = 0; i < g->n; i++)
        for (int k = 0; i != skip && !g->nodes[i].dead && k < g->nodes[i].kind->nin; k++)
            if (g->nodes[i].in[k] == from)
                g->nodes[i].in[k] = to;
    g->crit = g->crit == from ? to : g->crit;
    g->eval = g->eval == from ? to : g->eval;
    g->out = g->out == from ? to : g->out;
    for (int k = 0; k < g->n_eval_more; k++)
        g->eval_more[k] = g->eval_more[k] == from ? to : g->eval_more[k];
}

static int number(struct ev *v, const char *where, const char *what, const char *text, int *out)
{
    char *end = NULL;
    long n = strtol(text, &end, 10);
    if (!*text || *end || n < 1 || n > (1L << 24))
        return pt_err_set(v->e, PT_EUSER, "%s: error: LowRank: %s '%s' is not a positive number",
                          where, what, text);
    *out = (int)n;
    return 0;
}

static int low_rank(struct ev *v, const char *where, const char *name, const char *rows_text,
                    const char *cols_text, const char *rank_text)
{
    struct nn_graph *g = v->g;
    int rows = 0, cols = 0, rank = 0;
    if (number(v, where, "ROWS", rows_text, &rows) || number(v, where, "COLS", cols_text, &cols) ||
        number(v, where, "RANK", rank_text, &rank))
        return v->e->code;
    int w = node_named(g, name);
    if (w < 0 || !g->nodes[w].learnable || g->nodes[w].state)
        return pt_err_set(v->e, PT_EUSER,
                          "%s: error: LowRank: '%s' is no learned parameter of "
                          "the model",
                          where, name);
    const struct g_node *wn = &g->nodes[w];
    if ((wn->rows && wn->rows != rows) || (wn->cols && wn->cols != cols))
        return pt_err_set(v->e, PT_EUSER, "%s: error: LowRank: '%s' is [%d x %d], not [%d x %d]",
                          where, name, wn->rows, wn->cols, rows, cols);
    char un[64], vn[64], sn[64];
    if (snprintf(un, sizeof un, "%s_U", name) >= (int)sizeof un ||
        snprintf(vn, sizeof vn, "%s_V", name) >= (int)sizeof vn ||
        snprintf(sn, sizeof sn, "%s_SVD", name) >= (int)sizeof sn)
        return pt_err_set(v->e, PT_EUSER, "%s: error: LowRank: the name '%s' is too long", where,
                          name);
    int n0 = g->n, u = add_param(v, where, un, rows, rank);
    int vv = u >= 0 ? add_param(v, where, vn, rank, cols) : -1;
    if (vv < 0)
        return v->e->code;
    const struct g_kind *times = g_kind_find("Times");
    int pair = -1, made = 0;       /* the Times (U, V) that readers other than products share */
    for (int i = 0; i < n0; i++) { /* the nodes before this edit's */
        struct g_node *n = &g->nodes[i];
        if (n->dead || i == w)
            continue;
        int reads_w = 0;
        for (int k = 0; k < n->kind->nin; k++)
            reads_w |= n->in[k] == w;
        if (!reads_w || i == u || i == vv || i == pair)
            continue;
        if (n->kind == times && n->in[0] == w && n->in[1] != w) {
            /* U (V x): the product keeps its place, with V, and NAME_SVD reads it */
            char nm[64];
            if (made)
                snprintf(nm, sizeof nm, "%.40s_SVD%d", name, made % 1000);
            int in[2] = {u, i};
            int s = add_named(v, where, "Times", in, 2, made ? nm : sn);
            if (s < 0)
                return v->e->code;
            made++;
            g->nodes[i].in[0] = vv;
            redirect(g, i, s, s);
            continue;
        }
        if (pair < 0) {
            char nm[64];
            if (made)
                snprintf(nm, sizeof nm, "%.40s_SVD%d", name, made % 1000);
            int in[2] = {u, vv};
            pair = add_named(v, where, "Times", in, 2, made ? nm : sn);
            if (pair < 0)
                return v->e->code;
            made++;
        }
        n = &g->nodes[i];
        for (int k = 0; k < n->kind->nin; k++)
            if (n->in[k] == w)
                n->in[k] = pair;
    }
    redirect(g, w, pair >= 0 ? pair : w, -1); /* a group that was the parameter itself */
    g_retire(&g->nodes[w]);
    return 0;
}

int bse_apply_edits(struct ev *v, struct benv *root, const char *text)
{
    if (!text || !strstr(text, EDIT_TAG))
        return 0;
    /* every member made, as the roots' walk makes them: a new layer nothing reads yet */
    int rc = 0;
    size_t fix0 = v->nfix;
    for (size_t i = 0; rc == 0 && i < root->n; i++) {
        struct bslot *s = &root->slots[i];
        struct bv val;
        if (bse_find_local(root, s->name) == s)
            rc = bse_force(v, s->expr, root, s, &val);
    }
    if (rc == 0) /* the delays those members made read their inputs */
        rc = bse_fixups(v, fix0);
    for (const char *p = text; rc == 0 && (p = strstr(p, EDIT_TAG)) != NULL;) {
        if (p != text && p[-1] != '\n') {
            p += strlen(EDIT_TAG);
            continue;
        }
        p += strlen(EDIT_TAG);
        size_t len = strcspn(p, "\n");
        char line[1024], *f[7];
        int nf = 0;
        if (len >= sizeof line)
            return pt_err_set(v->e, PT_EUSER, "error: a model edit line is too long");
        memcpy(line, p, len);
        line[len] = '\0';
        p += len;
        for (char *s = strtok(line, " \t"); s && nf < 7; s = strtok(NULL, " \t"))
            f[nf++] = s;
        if (nf == 5 && !strcmp(f[1], "SetInput"))
            rc = set_input(v, f[0], f[2], f[3], f[4]);
        else if (nf == 4 && !strcmp(f[1], "Rename"))
            rc = rename_node(v, f[0], f[2], f[3]);
        else if (nf == 6 && !strcmp(f[1], "LowRank"))
            rc = low_rank(v, f[0], f[2], f[3], f[4], f[5]);
        else
            rc = pt_err_set(v->e, PT_EUSER,
                            "%s: error: a model edit this version cannot carry out (expected "
                            "'SetInput PATTERN INDEX SOURCE', 'Rename NAME NEWNAME' or "
                            "'LowRank NAME ROWS COLS RANK')",
                            nf ? f[0] : "the network description");
    }
    return rc;
}
