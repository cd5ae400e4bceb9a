/* A model's edits (CNTK's MEL, src/train/edit_mel.c) applied to its node graph: lines of the
 * description that read
 *
 *   #@edit FILE:LINE SetInput PATTERN INDEX SOURCE
 *
 * are carried out in their order once the description's members are evaluated and before
 * what no root reaches is dropped: every node whose name matches PATTERN ('*' matches any
 * run of characters, dots included, as MEL's wildcards do) takes node SOURCE as its input
 * INDEX (from 0). A pattern that matches no node, a source that is no node, an index
 * beyond the node's inputs, or a node made its own input are errors naming FILE:LINE. The
 * lines are comments to the BrainScript parser, so the description stays one text that
 * a model file stores and a later edit extends. */
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
        else if (g->nodes[i].kind != &g_kind_past)
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

int bse_apply_edits(struct ev *v, struct benv *root, const char *text)
{
    if (!text || !strstr(text, EDIT_TAG))
        return 0;
    /* every member made, as the roots' walk makes them: a new layer nothing reads yet */
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < root->n; i++) {
        struct bslot *s = &root->slots[i];
        struct bv val;
        if (bse_find_local(root, s->name) == s)
            rc = bse_force(v, s->expr, root, s, &val);
    }
    for (const char *p = text; rc == 0 && (p = strstr(p, EDIT_TAG)) != NULL;) {
        if (p != text && p[-1] != '\n') {
            p += strlen(EDIT_TAG);
            continue;
        }
        p += strlen(EDIT_TAG);
        size_t len = strcspn(p, "\n");
        char line[1024], *f[6];
        int nf = 0;
        if (len >= sizeof line)
            return pt_err_set(v->e, PT_EUSER, "error: a model edit line is too long");
        memcpy(line, p, len);
        line[len] = '\0';
        p += len;
        for (char *s = strtok(line, " \t"); s && nf < 6; s = strtok(NULL, " \t"))
            f[nf++] = s;
        if (nf == 5 && !strcmp(f[1], "SetInput"))
            rc = set_input(v, f[0], f[2], f[3], f[4]);
        else
            rc = pt_err_set(v->e, PT_EUSER,
                            "%s: error: a model edit this version cannot carry out (expected "
                            "'SetInput PATTERN INDEX SOURCE')",
                            nf ? f[0] : "the network description");
    }
    return rc;
}
