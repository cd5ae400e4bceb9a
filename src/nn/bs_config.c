/* BrainScript network builders read into struct nn_config (nn.h): a block's text (or CNTK's
 * expression form, `(new ComputationNetwork [ ... ])`), its includes expanded, evaluated
 * once into its graph so that every error names FILE:LINE:COL in the config, and what the
 * trainer needs to know of it (criteria, inputs, statistics). bs_net.c builds the graph
 * behind struct nn from the description. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/bs_eval.h"
#include "nn/graph.h"
#include "nn/nn_internal.h"

/* Copy s into dst (size n), cut to fit. */
static void copy_cut(char *dst, size_t n, const char *s)
{
    size_t len = strlen(s);
    len = len < n ? len : n - 1;
    memcpy(dst, s, len);
    dst[len] = '\0';
}

static enum bk_crit_kind crit_of(const struct g_node *n)
{
    return (enum bk_crit_kind)(n->kind->crit - 1);
}

static int read_block(struct cfg_node *block, struct nn_config *out, struct pt_err *e);

int nn_bs_config_read(struct cfg_node *block, struct nn_config *out, struct pt_err *e)
{
    memset(out, 0, sizeof *out);
    return read_block(block, out, e);
}

int nn_bs_config_read_eval(struct cfg_node *block, int want_eval, const char *const *want,
                           size_t nwant, struct nn_config *out, struct pt_err *e)
{
    memset(out, 0, sizeof *out);
    out->eval_only = 1;
    out->want_eval = want_eval;
    out->load_ok = !cfg_node_plain(block);
    for (size_t i = 0; i < nwant; i++) {
        size_t at = strlen(out->want);
        if (strchr(want[i], ',') || at + strlen(want[i]) + 2 > sizeof out->want)
            return pt_err_set(e, PT_EUSER, "error: %s: the node names asked for are too long",
                              cfg_key(block));
        snprintf(out->want + at, sizeof out->want - at, "%s%s", at ? "," : "", want[i]);
    }
    return read_block(block, out, e);
}

/* CNTK's expression form of a builder, `BrainScriptNetworkBuilder = (new ComputationNetwork
 * [ ... ])` (or { ... }): the record's text and where it starts; with `([ ... ].MEMBER)`,
 * MEMBER into member (the record's member that is the network), else "". */
static int expression_text(struct cfg_node *n, char **text, struct cfg_origin *at, char *member,
                           size_t msize, struct pt_err *e)
{
    const char *s = NULL;
    int rc = cfg_value(n, &s, e);
    if (rc)
        return rc;
    const char *p = s + strspn(s, " \t\r\n"), *open = NULL, *close = NULL;
    static const char *const words[] = {"(", "new", "ComputationNetwork"};
    int ok = 1;
    for (int i = 0; ok && i < 3; i++) {
        size_t len = strlen(words[i]);
        ok = !strncmp(p, words[i], len);
        p += ok ? len : 0;
        p += strspn(p, " \t\r\n");
    }
    int parens = 0; /* (new ComputationNetwork ([ ... ])), as CNTK's speech test writes it */
    while (ok && *p == '(') {
        parens++;
        p++;
        p += strspn(p, " \t\r\n");
    }
    if (ok && (*p == '[' || *p == '{')) { /* the matching bracket, past strings and comments */
        open = p;
        int depth = 0;
        for (; *p && !close; p++) {
            if (*p == '\'' || *p == '"') {
                const char *q = strchr(p + 1, *p);
                p = q ? q : p + strlen(p) - 1;
            } else if (*p == '#' || (p[0] == '/' && p[1] == '/')) {
                p += strcspn(p, "\n") - 1;
            } else if (*p == '[' || *p == '{' || *p == '(') {
                depth++;
            } else if ((*p == ']' || *p == '}' || *p == ')') && --depth == 0) {
                close = p;
            }
        }
    }
    const char *rest = close ? close + 1 : NULL;
    member[0] = '\0';
    if (rest && parens > 0) { /* ([ ... ].fit): the member that is the network */
        const char *m = rest + strspn(rest, " \t\r\n");
        size_t len = 0;
        if (*m == '.') {
            m += 1 + strspn(m + 1, " \t\r\n");
            while (m[len] == '_' || (m[len] >= 'a' && m[len] <= 'z') ||
                   (m[len] >= 'A' && m[len] <= 'Z') || (len && m[len] >= '0' && m[len] <= '9'))
                len++;
            if (len == 0 || len >= msize)
                rest = NULL;
            else {
                memcpy(member, m, len);
                member[len] = '\0';
                rest = m + len;
            }
        }
    }
    for (int i = 0; rest && i <= parens; i++) { /* the inner parentheses, then the outer one */
        rest += strspn(rest, " \t\r\n");
        rest = *rest == ')' ? rest + 1 : NULL;
    }
    char path[512];
    if (!rest || rest[strspn(rest, " \t\r\n")] != '\0')
        return cfg_error(e, cfg_value_origin(n),
                         "%s must be a block [ ... ] or CNTK's (new ComputationNetwork [ ... ]) "
                         "(or ([ ... ].MEMBER)); "
                         "other expressions (BS.Network.Load (...) as a whole network) are not "
                         "supported",
                         cfg_path(n, path, sizeof path));
    *at = *cfg_value_origin(n);
    for (const char *q = s; q <= open; q++) { /* where the record's text starts */
        at->col++;
        if (*q == '\n') {
            at->line++;
            at->col = 1;
        }
    }
    size_t len = (size_t)(close - open - 1);
    *text = malloc(len + 1);
    if (!*text)
        return pt_err_set(e, PT_ENOMEM, "error: out of memory");
    memcpy(*text, open + 1, len);
    (*text)[len] = '\0';
    return 0;
}

/* CNTK's `BrainScriptNetworkBuilder = (BS.Network.Load ("PATH"))`, the whole network a
 * model file's (its trained values the start of a training): PATH into path, else "". */
static int whole_load(const char *s, char *path, size_t size)
{
    const char *p = s + strspn(s, " \t\r\n");
    int parens = 0;
    path[0] = '\0';
    for (; *p == '('; p += strspn(p, " \t\r\n"))
        p++, parens++;
    if (strncmp(p, "BS.Network.Load", 15))
        return 0;
    p += 15;
    p += strspn(p, " \t\r\n");
    if (*p++ != '(')
        return 0;
    p += strspn(p, " \t\r\n");
    char quote = *p;
    const char *end = quote == '"' || quote == '\'' ? strchr(p + 1, quote) : NULL;
    if (!end || (size_t)(end - p - 1) >= size)
        return 0;
    const char *q = end + 1;
    for (int i = 0; i <= parens; i++) { /* Load's own parenthesis, then the outer ones */
        q += strspn(q, " \t\r\n");
        if (*q++ != ')')
            return 0;
    }
    if (q[strspn(q, " \t\r\n")] != '\0')
        return 0;
    memcpy(path, p + 1, (size_t)(end - p - 1));
    path[end - p - 1] = '\0';
    return 1;
}

/* The network of model file path as the builder's (whole_load): its description, which
 * the model file keeps whole (includes in place), and the path to start from. */
static int read_loaded(struct cfg_node *block, const char *path, struct nn_config *out,
                       struct pt_err *e)
{
    struct nn_config *mc = pt_calloc(1, sizeof *mc, e);
    if (!mc)
        return e ? e->code : PT_ENOMEM;
    char where[512];
    const struct cfg_origin *o = cfg_value_origin(block);
    int rc = nn_model_description(NULL, path, mc, e);
    if (rc)
        pt_err_context(e, "in %s = (BS.Network.Load (\"%s\")) at %s:%d",
                       cfg_path(block, where, sizeof where), path,
                       o && o->file ? o->file : "<command line>", o ? o->line : 0);
    else if (strlen(path) >= sizeof out->start_model)
        rc = cfg_error(e, cfg_value_origin(block), "BS.Network.Load: the file name is too long");
    if (rc == 0) {
        out->rnn = NN_GRAPH;
        out->from_model = 1; /* the model's values are the start */
        memcpy(out->bs_text, mc->bs_text, sizeof out->bs_text);
        memcpy(out->bs_root, mc->bs_root, sizeof out->bs_root);
        memcpy(out->bs_file, mc->bs_file, sizeof out->bs_file);
        out->bs_line = mc->bs_line;
        out->bs_col = mc->bs_col;
        snprintf(out->start_model, sizeof out->start_model, "%s", path);
        snprintf(out->origin, sizeof out->origin, "%.200s:%d:%d", out->bs_file, out->bs_line,
                 out->bs_col);
    }
    free(mc);
    return rc;
}

static int describe(struct nn_config *out, struct pt_err *e);

/* The block into *out (zeroed but for the eval_only settings). */
static int read_block(struct cfg_node *block, struct nn_config *out, struct pt_err *e)
{
    char *text = NULL, path[1024];
    struct cfg_origin at;
    const char *value = NULL;
    if (!cfg_is_block(block) && cfg_value(block, &value, e) == 0 &&
        whole_load(value, path, sizeof path)) {
        int rc = read_loaded(block, path, out, e);
        return rc ? rc : describe(out, e);
    }
    char ndl_file[256];
    int ndl = !strcmp(cfg_key(block), "NDLNetworkBuilder");
    if (ndl) /* CNTK's NDL, read as BrainScript (ndl.c) */
        at = (struct cfg_origin){.file = ndl_file, .line = 1, .col = 1};
    int rc = ndl ? nn_ndl_text(block, &text, ndl_file, sizeof ndl_file, e)
             : cfg_is_block(block)
                 ? cfg_block_text(block, &text, &at, e)
                 : expression_text(block, &text, &at, out->bs_root, sizeof out->bs_root, e);
    if (rc)
        return rc;
    if (strlen(text) >= sizeof out->bs_text) {
        rc = cfg_error(e, &at,
                       "%s: the network description has %zu bytes, more than the %d "
                       "partrain keeps",
                       cfg_key(block), strlen(text), NN_BS_MAX - 1);
        free(text);
        return rc;
    }
    out->rnn = NN_GRAPH;
    /* without the blank space around it (a model file's copy has its own), its position
     * moved past what is dropped */
    const char *s = text;
    int line = at.line > 0 ? at.line : 1, col = at.col > 0 ? at.col : 1;
    for (; *s == ' ' || *s == '\t' || *s == '\n' || *s == '\r'; s++) {
        col++;
        if (*s == '\n') {
            line++;
            col = 1;
        }
    }
    size_t len = strlen(s);
    while (len > 0 &&
           (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\n' || s[len - 1] == '\r'))
        len--;
    /* CNTK's include "PATH": the files' text in place (a model file keeps it so, and
     * reads no file) */
    char *full = NULL;
    snprintf(out->bs_file, sizeof out->bs_file, "%s", at.file ? at.file : "<config>");
    rc = bs_expand_includes(s, len, out->bs_file, line, col, !cfg_node_plain(block),
                            sizeof out->bs_text, &full, e);
    free(text);
    if (rc)
        return rc;
    memcpy(out->bs_text, full, strlen(full) + 1);
    free(full);
    out->bs_line = line;
    out->bs_col = col;
    out->from_model = cfg_node_plain(block);
    snprintf(out->origin, sizeof out->origin, "%.200s:%d:%d", out->bs_file, out->bs_line,
             out->bs_col);
    return describe(out, e);
}

/* What the trainer needs to know of the description in out (criteria, inputs, statistics),
 * from its graph. */
static int describe(struct nn_config *out, struct pt_err *e)
{
    int rc = 0;
    struct nn_graph *g = NULL;
    if ((rc = nn_graph_build(out, &g, e)) != 0)
        return rc;
    const struct g_node *crit = &g->nodes[g->crit], *ev = &g->nodes[g->eval];
    const struct g_node *pred = &g->nodes[crit->in[1]];
    int labels = g_labels(g);
    const struct g_node *lab = labels >= 0 ? &g->nodes[labels] : NULL;
    out->train_crit = crit_of(crit);
    out->eval_crit = crit_of(ev);
    copy_cut(out->train_name, sizeof out->train_name, crit->name);
    copy_cut(out->eval_name, sizeof out->eval_name, ev->name);
    int own = crit->kind == &g_kind_own_crit || crit->kind == &g_kind_no_crit;
    if (!own) /* else no labels: the node is the criterion */
        copy_cut(out->labels_input, sizeof out->labels_input, lab->name);
    for (int i = 0; i < 2; i++) {
        const struct g_node *c = i ? ev : crit;
        int by_node = c->kind == &g_kind_own_crit || c->kind == &g_kind_no_crit;
        const struct g_node *k = by_node ? &g->nodes[c->in[1]] : c;
        copy_cut(i ? out->eval_kind : out->train_kind, sizeof out->train_kind, k->src_kind->name);
    }
    out->nsizes = 2;
    out->sizes[0] = 0;
    for (int i = 0; i < g->n; i++)
        if (g->nodes[i].is_input && !g->nodes[i].dead && i != labels && !out->sizes[0])
            out->sizes[0] = g->nodes[i].rows;
    out->sizes[1] = pred->rows;
    for (int i = 0; rc == 0 && i < g->n; i++) {
        const struct g_node *n = &g->nodes[i], *x = &g->nodes[n->in[0]];
        if (n->dead || (strcmp(n->kind->name, "Mean") && strcmp(n->kind->name, "InvStdDev")))
            continue;
        int off, root = g_stat_input(g, n, &off); /* x, or the Input x has rows of */
        if (root >= 0 && &g->nodes[root] == lab && x != lab)
            rc = pt_err_set(e, PT_EUSER,
                            "%s: error: %s of rows of the labels ('%s') is not supported (the "
                            "labels' Mean is the label prior)",
                            n->where, n->kind->name, lab->name);
        x = root >= 0 ? &g->nodes[root] : x;
        if (x == lab) { /* the labels' mean: the label prior (LogPrior), as needPrior makes it */
            if (strcmp(n->kind->name, "Mean"))
                rc = pt_err_set(e, PT_EUSER,
                                "%s: error: InvStdDev of the labels ('%s') is not supported "
                                "(their Mean is the label prior)",
                                n->where, x->name);
            else if (x->rows != pred->rows && !own)
                rc = pt_err_set(e, PT_EUSER,
                                "%s: error: Mean of the labels ('%s', %d rows) is the label "
                                "prior, which has the output's %d rows",
                                n->where, x->name, x->rows, pred->rows);
            out->need_prior = 1;
            continue;
        }
        if (nn_norm_base(out, x->name) >= 0) /* its statistics are counted already */
            continue;
        if (out->norm_input[0] && out->n_norm_more == NN_NORM_MORE)
            rc = pt_err_set(e, PT_EUSER,
                            "%s: error: %s: the statistics of %d Inputs at most ('%s' and %d "
                            "more, then '%s')",
                            n->where, n->kind->name, 1 + NN_NORM_MORE, out->norm_input,
                            NN_NORM_MORE, x->name);
        else if (out->norm_input[0])
            copy_cut(out->norm_more[out->n_norm_more++], sizeof out->norm_more[0], x->name);
        else
            copy_cut(out->norm_input, sizeof out->norm_input, x->name);
        out->norm_rows[out->n_norm_more] = x->rows;
        out->sizes[0] = out->norm_input[0] && out->n_norm_more ? out->sizes[0] + x->rows : x->rows;
        out->mean_var_norm = 1;
    }
    if (own && out->need_prior) /* the prior has the labels' rows */
        out->sizes[1] = lab->rows;
    out->init_scale = 1.0;
    g_free(g);
    return rc;
}

int nn_bs_config_text(const char *text, const char *where, struct nn_config *c, struct pt_err *e)
{
    size_t len = strlen(text);
    while (len > 0 && strchr(" \t\r\n", text[len - 1])) /* as a model file's copy reads back */
        len--;
    if (len >= sizeof c->bs_text)
        return pt_err_set(e, PT_EUSER,
                          "%s: error: the network description has %zu bytes, more "
                          "than the %d partrain keeps",
                          where, len, NN_BS_MAX - 1);
    char file[256];
    snprintf(file, sizeof file, "%s", where);
    int line = 1, col = 1;
    char *p = strchr(file, ':'); /* FILE:LINE:COL */
    if (p && sscanf(p, ":%d:%d", &line, &col) == 2)
        *p = '\0';
    c->rnn = NN_GRAPH;
    memmove(c->bs_text, text, len);
    c->bs_text[len] = '\0';
    snprintf(c->bs_file, sizeof c->bs_file, "%s", file);
    c->bs_line = line;
    c->bs_col = col;
    return describe(c, e);
}

int nn_norm_base(const struct nn_config *c, const char *name)
{
    if (!c->norm_input[0])
        return -1;
    if (!strcmp(c->norm_input, name))
        return 0;
    int base = c->norm_rows[0];
    for (int i = 0; i < c->n_norm_more; i++) {
        if (!strcmp(c->norm_more[i], name))
            return base;
        base += c->norm_rows[1 + i];
    }
    return -1;
}

int nn_find_builder(struct cfg_node *block, int local, struct cfg_node **out, struct pt_err *e)
{
    static const char *const keys[] = {"NDLNetworkBuilder", "BrainScriptNetworkBuilder",
                                       "ExperimentalNetworkBuilder"};
    *out = NULL;
    for (int i = 0; i < 3 && !*out; i++) {
        struct cfg_node *n = NULL;
        int rc = local ? cfg_find_local(block, keys[i], &n, e) : cfg_find(block, keys[i], &n, e);
        if (rc)
            return rc;
        if (!n || cfg_is_block(n)) {
            *out = n;
            continue;
        }
        /* a value: `$name$` standing for a block, else CNTK's expression form */
        struct cfg_node *b = NULL;
        struct pt_err quiet;
        pt_err_clear(&quiet);
        *out = cfg_find_block(block, keys[i], &b, &quiet) == 0 && b ? b : n;
    }
    return 0;
}
