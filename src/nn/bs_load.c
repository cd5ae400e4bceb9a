/* BS.Network.Load ("path"): a trained model's network, as a record of its nodes
 * (m.outputs, m.features), for the network builder of an action=test or write block
 * (ATIS's `final = Hardmax (BS.Network.Load ("$modelPath$").outputs)`).
 *
 * The model file's description is evaluated inside the network being built, by the steps
 * its own training took (its own outer scope, its groups, its delays), so that its nodes
 * are made in the same order: the graph records where they start (g->loaded), and
 * nn_graph_setup gives each of its parameters that the network reaches the trained values
 * of the same node of the model's own graph. Its tags are its own network's: only the
 * nodes that the new network reaches belong to it (its labels and criteria drop out
 * unless used). A model's description cannot load another model (a model file cannot make
 * partrain read another file), and a training network cannot load one yet. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/bs_eval_internal.h"

/* Keep t until the evaluation ends (bs_build_graph frees them). */
static int keep_tree(struct ev *v, struct bs_tree *t)
{
    struct bs_tree **more = realloc(v->trees, (v->ntrees + 1) * sizeof *more);
    if (!more) {
        bs_tree_free(t);
        return pt_err_set(v->e, PT_ENOMEM, "error: out of memory");
    }
    v->trees = more;
    v->trees[v->ntrees++] = t;
    return 0;
}

/* The model's description evaluated as its own network, in the graph being built. */
static int evaluate_model(struct ev *v, const struct nn_config *mc, struct benv **out)
{
    struct bs_tree *t = NULL, *pre = NULL;
    if (strstr(mc->bs_text, "\n#@edit ")) /* bs_edit.c works on a whole network's graph */
        return pt_err_set(v->e, PT_EUSER,
                          "error: the model's network was edited by a MEL script (SetInput): "
                          "BS.Network.Load cannot read it into another network; name the model "
                          "in modelPath instead");
    int rc =
        bs_parse(mc->bs_text, strlen(mc->bs_text), mc->bs_file, mc->bs_line, mc->bs_col, &t, v->e);
    if (rc == 0)
        rc = keep_tree(v, t);
    if (rc == 0)
        rc = bs_parse(bs_prelude, strlen(bs_prelude), bs_prelude_file, 1, 1, &pre, v->e);
    if (rc == 0)
        rc = keep_tree(v, pre);
    if (rc)
        return rc;
    /* its own outer scope (what the outer network forced of its own is not shared), no
     * path, no call of the user's around it */
    struct benv *outer = bse_record_env(v, bs_tree_root(pre), NULL, "");
    struct benv *root = outer ? bse_record_env(v, bs_tree_root(t), outer, "") : NULL;
    if (!root)
        return v->e->code;
    if (mc->bs_root[0] && (rc = bse_member_record(v, &root, mc->bs_root)) != 0)
        return rc;
    struct benv *prelude = v->prelude;
    const struct bs_node *vroot = v->root, *user_call = v->user_call;
    char path[sizeof v->path];
    memcpy(path, v->path, sizeof path);
    v->prelude = outer;
    v->root = bs_tree_root(t);
    v->user_call = NULL;
    v->path[0] = '\0';
    v->loading = 1;
    struct bs_roots r;
    rc = bse_network(v, root, v->g->n, v->nfix, 1, &r);
    v->loading = 0;
    v->prelude = prelude;
    v->root = vroot;
    v->user_call = user_call;
    memcpy(v->path, path, sizeof path);
    *out = root;
    return rc;
}

int bse_network_load(struct ev *v, const struct bs_node *at, const char *name, struct bv *args,
                     struct bv *out)
{
    (void)name;
    const char *path = bse_get_str(&args[0]);
    struct nn_graph *g = v->g;
    if (!path)
        return bse_type_error(v, at, "BS.Network.Load", "a file name (a string)", &args[0]);
    if (v->loading)
        return bs_error(v->e, at,
                        "BS.Network.Load inside a model file's network description: a model "
                        "file cannot make partrain read another file");
    if (!v->opts || !v->opts->load)
        return bs_error(v->e, at,
                        "BS.Network.Load is supported in the network builder of an action=test "
                        "or write block; a training network that starts from a loaded model is "
                        "not supported yet");
    for (int k = 0; k < g->nloaded; k++) /* the same file twice: the same network */
        if (!strcmp(g->loaded[k].path, path)) {
            *out = (struct bv){.k = BV_REC, .rec = v->loaded[k]};
            return 0;
        }
    if (g->nloaded == G_MAX_LOADED)
        return bs_error(v->e, at, "BS.Network.Load: more than %d models in one network",
                        G_MAX_LOADED);
    if (strlen(path) >= sizeof g->loaded[0].path)
        return bs_error(v->e, at, "BS.Network.Load: the file name is too long");
    struct nn_config *mc = pt_calloc(1, sizeof *mc, v->e);
    if (!mc)
        return v->e->code;
    int rc = v->opts->load(v->opts->ctx, path, mc, v->e);
    int base = g->n;
    struct benv *root = NULL;
    if (rc == 0)
        rc = evaluate_model(v, mc, &root);
    free(mc);
    if (rc)
        return pt_err_context(v->e, "in BS.Network.Load (\"%s\") at %s:%d:%d", path, at->file,
                              at->line, at->col);
    struct g_loaded *l = &g->loaded[g->nloaded];
    snprintf(l->path, sizeof l->path, "%s", path);
    l->base = base;
    l->n = g->n - base;
    v->loaded[g->nloaded++] = root;
    *out = (struct bv){.k = BV_REC, .rec = root};
    return 0;
}
