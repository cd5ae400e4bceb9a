/* BrainScript networks' roots (bs_eval_internal.h): the node groups that criterionNodes,
 * evaluationNodes and outputNodes name (or the nodes' tags), CNTK's node names, the nodes
 * the network reaches, and bs_build_graph, which evaluates a description into a graph.
 * A network loaded by BS.Network.Load (bs_load.c) is evaluated by the same steps, so its
 * nodes are made in the order its own training made them. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/bs_eval_internal.h"

/* The nodes of root list `key` (a node or an array of nodes) into out[0 .. *n), at most
 * max of them (evaluationNodes: NN_EVAL_MAX; criterionNodes: one; featureNodes,
 * labelNodes and outputNodes: the first is the one used); *n = 0 when absent. */
static int root_nodes(struct ev *v, struct benv *root, const char *key, int *out, int max, int *n)
{
    *n = 0;
    struct bslot *s = bse_find_local(root, key);
    if (!s)
        return 0;
    struct bv val;
    int rc = bse_force(v, s->expr, root, s, &val);
    if (rc)
        return rc;
    if (val.k != BV_ARR) {
        if (val.k != BV_NODE)
            return bse_type_error(v, s->expr, key, "a node or an array of nodes", &val);
        out[(*n)++] = val.node;
        return 0;
    }
    if ((rc = bse_arr_force(v, s->expr, &val)) != 0)
        return rc;
    for (size_t i = 0; i < val.arr->n; i++)
        if (val.arr->v[i].k != BV_NODE)
            return bse_type_error(v, s->expr, key, "nodes", &val.arr->v[i]);
    int first_only =
        !strcmp(key, "featureNodes") || !strcmp(key, "labelNodes") || !strcmp(key, "outputNodes");
    if (val.arr->n > (size_t)max && !first_only)
        return max == 1
                   ? bs_error(v->e, s->expr, "%s: more than one node is not supported yet", key)
                   : bs_error(v->e, s->expr, "%s: %zu nodes; at most %d are supported", key,
                              val.arr->n, max);
    for (size_t i = 0; i < val.arr->n && *n < max; i++)
        out[(*n)++] = val.arr->v[i].node;
    return 0;
}

/* The node of root's member k (-1: none, or not evaluated); a member that a later one of
 * the same name hides (a block given again on the command line adds its definitions after
 * the file's) is no member. */
static int member_node(struct benv *root, size_t k)
{
    const struct bslot *s = &root->slots[k];
    if (s->state != SLOT_DONE || s->val.k != BV_NODE || bse_find_local(root, s->name) != s)
        return -1;
    return s->val.node;
}

/* Whether node i is this network's to tag: not one of a model that BS.Network.Load made
 * (its tags were its own network's), unless a top-level member is that node. */
static int own_node(struct ev *v, struct benv *root, int i)
{
    const struct nn_graph *g = v->g;
    int loaded = 0;
    for (int k = 0; k < g->nloaded; k++)
        loaded |= i >= g->loaded[k].base && i < g->loaded[k].base + g->loaded[k].n;
    for (size_t s = 0; loaded && s < root->n; s++)
        loaded = member_node(root, s) != i;
    return !loaded;
}

/* The groups that no criterionNodes, evaluationNodes or outputNodes names, from the nodes'
 * tags, as CNTK makes them: the nodes tagged 'criterion' (one at most), 'evaluation' (up to
 * NN_EVAL_MAX, in the order made) and 'output' (the first) fill the groups not named.
 * Without criterionNodes (`all`), every top-level member is evaluated first, as each is a
 * root of CNTK's network; with it, the tagged nodes are those its nodes reach (a network
 * that names its criterion keeps the nodes, and the order they are made in, that it always
 * had). */
static int tagged_roots(struct ev *v, struct benv *root, int from, int all, int roots[5],
                        int *evals, int *nev)
{
    for (size_t i = 0; all && i < root->n; i++) {
        if (bse_find_local(root, root->slots[i].name) != &root->slots[i])
            continue; /* hidden by a later definition */
        struct bv val;
        int rc = bse_force(v, root->slots[i].expr, root, &root->slots[i], &val);
        if (rc)
            return rc;
    }
    static const struct {
        int root;
        enum g_tag tag;
        const char *name;
    } groups[] = {{2, G_TAG_CRITERION, "criterion"},
                  {3, G_TAG_EVALUATION, "evaluation"},
                  {4, G_TAG_OUTPUT, "output"}};
    for (size_t k = 0; k < sizeof groups / sizeof *groups; k++) {
        int ev = groups[k].tag == G_TAG_EVALUATION;
        if (ev ? *nev > 0 : roots[groups[k].root] >= 0)
            continue;
        for (int i = from; i < v->g->n; i++) {
            const struct g_node *n = &v->g->nodes[i];
            if (n->tag != groups[k].tag || !own_node(v, root, i))
                continue;
            if (ev && *nev == NN_EVAL_MAX)
                return pt_err_set(v->e, PT_EUSER,
                                  "%s: error: '%s' is tagged 'evaluation': more than %d "
                                  "evaluation nodes are not supported",
                                  n->where, n->name[0] ? n->name : n->kind->name, NN_EVAL_MAX);
            if (ev) {
                evals[(*nev)++] = i;
                continue;
            }
            int first = roots[groups[k].root];
            if (first >= 0 && groups[k].tag != G_TAG_OUTPUT)
                return pt_err_set(v->e, PT_EUSER,
                                  "%s: error: '%s' is tagged '%s' as '%s' is (%s): more than one "
                                  "%s node is not supported yet",
                                  n->where, n->name[0] ? n->name : n->kind->name, groups[k].name,
                                  v->g->nodes[first].name[0] ? v->g->nodes[first].name
                                                             : v->g->nodes[first].kind->name,
                                  v->g->nodes[first].where, groups[k].name);
            if (first < 0)
                roots[groups[k].root] = i;
        }
    }
    return 0;
}

/* Names as CNTK gives them: a top-level member's node is called by the member's name (not
 * featureNodes and the other groups), unless it has a top-level name already (the first
 * member that made or named it, in the order written: `x = features` leaves the Input
 * called features, which is how the reader's inputs find it), or it is an NDL macro's
 * result, which keeps the name of its line inside the macro (CNTK's NDL: L1 = SBFF (...)
 * makes L1.S, and a criterion CE = SMBFF (...) is reported as CE.SM). unique_names then
 * makes them unique (CNTK's makeUniqueName). */
static void name_roots(struct ev *v, struct benv *root)
{
    struct nn_graph *g = v->g;
    for (size_t i = 0; i < root->n; i++) {
        const struct bslot *s = &root->slots[i];
        size_t len = strlen(s->name); /* not featureNodes, criterionNodes, ... */
        int group = len > 5 && !strcmp(s->name + len - 5, "Nodes");
        if (member_node(root, i) < 0 || group)
            continue;
        char *name = g->nodes[s->val.node].name;
        if (s->val.members && name[0]) /* an NDL macro's result (BS.NDL.Return) */
            continue;
        if (!name[0] || strpbrk(name, ".["))
            bse_path_join(name, sizeof g->nodes[0].name, "", s->name);
    }
}

/* Whether node i takes part in unique_names: not dead (drop_unreached), not a criterion
 * made for a node, which goes by that node's name. */
static int named(const struct nn_graph *g, int i)
{
    const struct g_node *n = &g->nodes[i];
    return !n->dead && n->kind != &g_kind_own_crit && n->kind != &g_kind_no_crit;
}

/* The network's nodes by names of their own: a name that two share gets a '_' in front on
 * the later one until it is the only one. */
static void unique_names(struct nn_graph *g)
{
    for (int i = 0; i < g->n; i++) {
        char *name = g->nodes[i].name;
        for (int tries = 0; name[0] && named(g, i);) {
            int j = 0;
            while (j < g->n && (j == i || !named(g, j) || strcmp(g->nodes[j].name, name)))
                j++;
            if (j == g->n)
                break;
            if (j > i) /* the later node gets the '_' */
                break;
            if (++tries > 8) { /* too long to grow: its index makes it unique */
                snprintf(name, sizeof g->nodes[0].name, "_%d", i);
                break;
            }
            memmove(name + 1, name, sizeof g->nodes[0].name - 2);
            name[0] = '_';
            name[sizeof g->nodes[0].name - 1] = '\0';
        }
    }
}

/* CNTK's network is what its roots reach: the groups' nodes and every top-level member
 * that is a node. The rest was made on the way and is not part of it (a layer function
 * never applied, its parameters): dead, neither a parameter nor a constant. */
static int drop_unreached(struct ev *v, struct benv *root)
{
    struct nn_graph *g = v->g;
    int *stack = pt_calloc((size_t)g->n + 1, sizeof *stack, v->e);
    char *seen = pt_calloc((size_t)g->n + 1, 1, v->e);
    int top = 0, rc = stack && seen ? 0 : v->e->code;
    for (size_t i = 0; rc == 0 && i < root->n; i++)
        if (member_node(root, i) >= 0 && !seen[member_node(root, i)]) {
            seen[member_node(root, i)] = 1;
            stack[top++] = member_node(root, i);
        }
    int groups[3 + NN_EVAL_MAX] = {g->crit, g->eval, g->out};
    for (int k = 0; k < g->n_eval_more; k++)
        groups[3 + k] = g->eval_more[k];
    for (int k = 0; rc == 0 && k < 3 + g->n_eval_more; k++)
        if (!seen[groups[k]]) {
            seen[groups[k]] = 1;
            stack[top++] = groups[k];
        }
    while (rc == 0 && top > 0) {
        const struct g_node *n = &g->nodes[stack[--top]];
        for (int k = 0; k < n->kind->nin; k++)
            if (!seen[n->in[k]]) {
                seen[n->in[k]] = 1;
                stack[top++] = n->in[k];
            }
    }
    for (int i = 0; rc == 0 && i < g->n; i++)
        if (!seen[i]) {
            g->nodes[i].dead = g->nodes[i].unreached = 1;
            g->nodes[i].learnable = g->nodes[i].is_const = 0;
        }
    free(stack);
    free(seen);
    return rc;
}

/* The nodes that the action names (evalNodeNames, outputNodeNames: bs_build_opts.want),
 * at most max of them, into out: for each name a top-level member of that name, else a
 * node so named (a name that is neither is left to the action: a reader's input). */
static int wanted_nodes(struct ev *v, struct benv *root, int *out, int max, int *n)
{
    const struct bs_build_opts *o = v->opts;
    *n = 0;
    for (size_t w = 0; o && w < o->nwant && *n < max; w++) {
        struct bslot *s = bse_find_local(root, o->want[w]);
        struct bv val = {.k = BV_NONE};
        int rc = s ? bse_force(v, s->expr, root, s, &val) : 0; /* a member not made yet */
        if (rc)
            return rc;
        int found = val.k == BV_NODE ? val.node : -1;
        for (int i = 0; found < 0 && i < v->g->n; i++)
            if (!strcmp(v->g->nodes[i].name, o->want[w]))
                found = i;
        if (found >= 0)
            out[(*n)++] = found;
    }
    return 0;
}

int bse_network(struct ev *v, struct benv *root, int first, size_t fix0, int need_crit,
                struct bs_roots *r)
{
    struct nn_graph *g = v->g;
    const char *keys[] = {"featureNodes", "labelNodes", "criterionNodes", "evaluationNodes",
                          "outputNodes"};
    int roots[5] = {-1, -1, -1, -1, -1}, evals[NN_EVAL_MAX], nev = 0, rc = 0;
    for (int i = 0; rc == 0 && i < 5; i++) {
        int got[NN_EVAL_MAX], n = 0;
        rc = root_nodes(v, root, keys[i], got, i == 3 ? NN_EVAL_MAX : 1, &n);
        if (rc == 0 && i == 3)
            memcpy(evals, got, (size_t)(nev = n) * sizeof *got);
        else if (rc == 0 && n)
            roots[i] = got[0];
    }
    if (rc == 0 && roots[1] >= 0 && g->nodes[roots[1]].is_input) /* g_labels finds it */
        g->nodes[roots[1]].tag = G_TAG_LABEL;
    if (rc == 0 && (roots[2] < 0 || nev == 0 || roots[4] < 0))
        rc = tagged_roots(v, root, first, roots[2] < 0, roots, evals, &nev);
    if (rc == 0 && v->opts && v->opts->want_eval && !v->loading) { /* evalNodeNames */
        int named[NN_EVAL_MAX], n = 0;
        rc = wanted_nodes(v, root, named, NN_EVAL_MAX, &n);
        if (rc == 0 && (n == (int)v->opts->nwant || (n > 0 && nev == 0))) { /* else the
                                                                             * test names them */
            memcpy(evals, named, (size_t)n * sizeof *named);
            nev = n;
        }
    }
    if (rc == 0 && v->opts && !v->opts->want_eval && !v->loading) { /* outputNodeNames */
        int named[16], n = 0;
        rc = wanted_nodes(v, root, named, 16, &n);
        for (int k = 0; rc == 0 && k < n; k++)
            g->nodes[named[k]].keep = 1;
    }
    if (rc == 0)
        rc = bse_fixups(v, fix0);
    if (rc == 0 && roots[2] < 0 && need_crit)
        return bs_error(v->e, v->root,
                        "the network has no criterionNodes and no node tagged 'criterion' (say "
                        "criterionNodes = (ce) in the BrainScriptNetworkBuilder block)");
    /* a criterion that other nodes read is its sum over the minibatch, one value (CNTK's
     * criteria are such sums): InceptionV3's `ce = auxWeight .* ceAux + ceZ` */
    if (rc == 0)
        g_crit_as_value(g, first);
    /* the criterion (to evaluate only: the first evaluation node stands in for a missing
     * one, or none at all), then the evaluation nodes; a node of the network's own among
     * them is summed over the samples by a criterion node made for it (one for all the
     * groups that name the same node) */
    int *all = r->all, own[1 + NN_EVAL_MAX];
    r->nall = 1 + nev;
    all[0] = roots[2];
    memcpy(all + 1, evals, (size_t)nev * sizeof *evals);
    if (all[0] < 0 && nev > 0)
        all[0] = evals[0];
    for (int i = 0; rc == 0 && i < r->nall; i++) {
        own[i] = -1;
        if (all[i] < 0 || g->nodes[all[i]].kind->crit)
            continue;
        int j = 0;
        while (j < i && own[j] != all[i])
            j++;
        if (j < i) { /* the criterion node made for an earlier group */
            own[i] = own[j];
            all[i] = all[j];
            continue;
        }
        char where[sizeof g->nodes[0].where]; /* g_add may move the nodes */
        memcpy(where, g->nodes[all[i]].where, sizeof where);
        int in[2] = {all[i], all[i]};
        int id = g_add(g, &g_kind_own_crit, in, 2, where, v->e);
        if (id < 0)
            rc = v->e->code;
        own[i] = all[i];
        all[i] = id;
    }
    if (rc == 0 && need_crit && g->nodes[all[0]].kind->crit == BK_CRIT_CLASS_ERR + 1)
        rc = bs_error(v->e, v->root,
                      "criterionNodes: '%s' (ClassificationError) has no gradient to train with; "
                      "make it an evaluationNodes",
                      g->nodes[all[0]].name);
    for (int i = 0; rc == 0 && i < r->nall; i++) { /* before g_finish fuses nodes */
        if (all[i] < 0)
            continue;
        const struct g_node *c = &g->nodes[all[i]], *y = &g->nodes[c->in[0]];
        /* SquareError's target may be computed (TIMIT's autoencoder: the normalized
         * features), from no parameter (g_finish checks) */
        if (!y->is_input && c->kind != &g_kind_own_crit && c->kind->crit != BK_CRIT_SQUARE_ERR + 1)
            rc = pt_err_set(v->e, PT_EUSER,
                            "%s: error: %s: the first operand (labels) must be an Input node, "
                            "got %s",
                            c->where, c->kind->name, y->kind->name);
    }
    if (rc == 0)
        name_roots(v, root);
    for (int i = 0; rc == 0 && i < r->nall; i++) /* an own criterion goes by its node's name */
        if (own[i] >= 0)
            memcpy(g->nodes[all[i]].name, g->nodes[own[i]].name, sizeof g->nodes[0].name);
    r->out = roots[4];
    return rc;
}

/* To evaluate a network without a criterion (action=write): a stand-in over the output,
 * which no report shows. */
static int no_criterion(struct ev *v, struct benv *root, int *crit)
{
    struct nn_graph *g = v->g;
    int out = -1;
    for (size_t i = 0; i < root->n; i++) /* the last top-level member that is a node */
        out = member_node(root, i) >= 0 ? member_node(root, i) : out;
    if (out < 0)
        return bs_error(v->e, v->root, "the network has no node to evaluate");
    int in[2] = {out, out};
    *crit = g_add(g, &g_kind_no_crit, in, 2, g->nodes[out].where, v->e);
    return *crit < 0 ? v->e->code : 0;
}

/* CNTK's `new ComputationNetwork ([ ... ].name)`: the record member `name` is the network. */
int bse_member_record(struct ev *v, struct benv **root, const char *name)
{
    struct bslot *s = bse_find_local(*root, name);
    if (!s)
        return bs_error(v->e, v->root,
                        "(new ComputationNetwork ([ ... ].%s)): the record has no member '%s'",
                        name, name);
    struct bv val;
    int rc = bse_force(v, s->expr, *root, s, &val);
    if (rc == 0 && val.k != BV_REC)
        rc = bse_type_error(v, s->expr, name, "a record (the network's nodes)", &val);
    if (rc == 0)
        *root = val.rec;
    return rc;
}

/* The delays' inputs from fixup fix0 on, now that the definitions they close a loop over
 * exist (an input may make more delays: the list grows while it is walked). */
int bse_fixups(struct ev *v, size_t fix0)
{
    int rc = 0;
    for (size_t i = fix0; rc == 0 && i < v->nfix; i++) {
        struct fixup f = v->fix[i];
        struct bv x;
        rc = bse_eval(v, f.expr, f.env, &x);
        if (rc == 0)
            rc = bse_as_node(v, f.expr, v->g->nodes[f.node].kind->name, &x);
        if (rc == 0)
            v->g->nodes[f.node].in[0] = x.node;
    }
    if (rc == 0)
        v->nfix = fix0;
    return rc;
}

static int build_graph(struct bs_tree *tree, const struct bs_build_opts *opts, struct nn_graph *g,
                       int max_depth, struct pt_err *e)
{
    struct ev v = {
        .g = g, .e = e, .max_depth = max_depth, .root = bs_tree_root(tree), .opts = opts};
    struct bs_tree *pre = NULL; /* the outer scope: bs_prelude.c */
    int rc = bs_parse(bs_prelude, strlen(bs_prelude), bs_prelude_file, 1, 1, &pre, e);
    struct benv *outer = rc == 0 ? bse_record_env(&v, bs_tree_root(pre), NULL, "") : NULL;
    struct benv *root = outer ? bse_record_env(&v, v.root, outer, "") : NULL;
    v.prelude = outer;
    rc = rc ? rc : root ? 0 : e->code;
    if (rc == 0 && opts && opts->root_member && opts->root_member[0])
        rc = bse_member_record(&v, &root, opts->root_member);
    struct bs_roots r = {0};
    int eval_only = opts && opts->eval_only;
    if (rc == 0)
        rc = bse_network(&v, root, 0, 0, !eval_only, &r);
    if (rc == 0 && r.out < 0 && eval_only && !opts->want_eval) {
        int n = 0;
        rc = wanted_nodes(&v, root, &r.out, 1, &n);
        if (n == 0)
            r.out = -1;
    }
    if (rc == 0 && r.all[0] < 0 && eval_only && opts->want_eval)
        rc = bs_error(e, v.root,
                      "the network has nothing to evaluate: no criterionNodes or "
                      "evaluationNodes, no node tagged 'criterion' or 'evaluation', and "
                      "evalNodeNames names none of its nodes");
    if (rc == 0 && r.all[0] < 0)
        rc = no_criterion(&v, root, &r.all[0]);
    if (rc == 0) { /* CNTK reports a node once: the further ones that repeat one are left out */
        g->crit = r.all[0];
        g->eval = r.nall > 1 ? r.all[1] : r.all[0];
        g->n_eval_more = 0;
        for (int i = 2; i < r.nall; i++) {
            int dup = 0;
            for (int j = 0; j < i; j++)
                dup |= r.all[j] == r.all[i];
            if (!dup)
                g->eval_more[g->n_eval_more++] = r.all[i];
        }
        g->out = r.out >= 0 ? r.out : g->nodes[g->crit].in[1];
    }
    if (rc == 0 && opts)
        rc = bse_apply_edits(&v, root, opts->edits);
    if (rc == 0)
        rc = drop_unreached(&v, root);
    if (rc == 0)
        unique_names(g);
    if (rc == 0)
        rc = g_finish(g, e);
    free(v.fix);
    while (v.mem) {
        struct chunk *next = v.mem->next;
        free(v.mem);
        v.mem = next;
    }
    for (size_t i = 0; i < v.ntrees; i++)
        bs_tree_free(v.trees[i]);
    free(v.trees);
    bs_tree_free(pre);
    return rc;
}

/* The evaluation recurses as deep as the description nests calls in calls (an NDL ResNet of
 * 27 blocks, each macros in macros: about 1500 levels of MAX_DEPTH, half a KiB of stack
 * each, more under AddressSanitizer), so it runs on a thread of its own with a stack
 * large enough for MAX_DEPTH wherever it is built (reserved, touched only as deep as it
 * goes). Where a process cannot have such a thread (a virtual memory limit, ulimit -v),
 * it tries a smaller stack, and else evaluates on the caller's; the depth allowed shrinks
 * with the stack, so that a description nested too deeply is an error, not a crash. */
#define EVAL_STACK ((size_t)256 << 20)

struct build_call {
    struct bs_tree *tree;
    const struct bs_build_opts *opts;
    struct nn_graph *g;
    int max_depth;
    struct pt_err *e;
    int rc;
};

static void *build_thread(void *arg)
{
    struct build_call *c = arg;
    c->rc = build_graph(c->tree, c->opts, c->g, c->max_depth, c->e);
    return NULL;
}

int bs_build_graph(struct bs_tree *tree, const struct bs_build_opts *opts, struct nn_graph *g,
                   struct pt_err *e)
{
    static const struct {
        size_t stack;
        int depth;
    } tries[] = {{EVAL_STACK, MAX_DEPTH}, {EVAL_STACK / 8, MAX_DEPTH / 2}};
    for (size_t k = 0; k < sizeof tries / sizeof tries[0]; k++) {
        struct build_call c = {tree, opts, g, tries[k].depth, e, 0};
        pthread_attr_t attr;
        pthread_t t;
        if (pthread_attr_init(&attr) != 0)
            break;
        int ok = pthread_attr_setstacksize(&attr, tries[k].stack) == 0 &&
                 pthread_create(&t, &attr, build_thread, &c) == 0;
        pthread_attr_destroy(&attr);
        if (ok) {
            pthread_join(t, NULL);
            return c.rc;
        }
    }
    /* no thread: here, on this thread's stack (8 MiB by default), a tenth of the depth */
    return build_graph(tree, opts, g, MAX_DEPTH / 10, e);
}
