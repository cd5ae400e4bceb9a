/* action=SVD: CNTK's low-rank decomposition of a trained model's weight matrices
 * (OtherActions.cpp DoParameterSVD, ComputationNetwork::PerformSVDecomposition), which its
 * speech test Speech/SVD runs between two trainings:
 *
 *   modelDecomposition = [ action = SVD; modelPath = ...; outputModelPath = ...;
 *                          KeepRatio = 0.5; NodeNameRegex = W.* ]
 *
 * Every learned parameter matrix (more than one row and column) whose name the regular
 * expression matches whole, taken in name order, is written as A = U S V^T (LAPACK's
 * sgesvd, from OpenBLAS); r singular values are kept, the fewest whose sum exceeds
 * KeepRatio times the sum of all, rounded up to a multiple of AlignedSize (at most
 * min(rows, cols)); A becomes the product of A_U = U_r sqrt(S_r) [rows x r] and A_V =
 * sqrt(S_r) V_r^T [r x cols] (a LowRank edit of the network, src/nn/bs_edit.c). Instead of
 * NodeNameRegex, SVDConfig names a file of lines "REGEX KEEPRATIO", one group each,
 * processed in the regular expressions' order as CNTK's map keeps them. A feed-forward
 * SimpleNetworkBuilder model becomes the BrainScript network it describes first
 * (src/nn/simple_bs.c). The model written is an ordinary model file, which a training
 * starts from (CNTK's test: modelPath.0 of a makeMode training).
 *
 * Where CNTK differs: KeepRatio = 1 keeps every singular value (CNTK's comparison keeps
 * none); a regular expression that matches no matrix is an error (CNTK writes the model
 * unchanged); the expressions are POSIX extended ones (CNTK's are ECMAScript: the same for
 * names, dots, classes, alternatives and repetitions). Rank 0 computes and writes; the
 * other ranks wait for its outcome. */
#include <errno.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "comm/comm.h"
#include "core/fs.h"
#include "math/backend.h"
#include "train/train_internal.h"

/* LAPACK's single-precision SVD (OpenBLAS exports it): Fortran's calling convention, the
 * two character arguments' lengths last. */
extern void sgesvd_(const char *jobu, const char *jobvt, const int *m, const int *n, float *a,
                    const int *lda, float *s, float *u, const int *ldu, float *vt, const int *ldvt,
                    float *work, const int *lwork, int *info, size_t jobu_len, size_t jobvt_len);

#define SVD_GROUPS 64

struct svd_settings {
    char model[4096], output[4096], groups_file[4096];
    const char *regex;
    double keep;
    long long aligned;
};

#define SS(m) CFG_OUT(struct svd_settings, m)

static const struct cfg_key svd_cmd_keys[] = {
    {.name = "action", .type = CFG_STRING, .def = "SVD", .help = "SVD: decompose weight matrices"},
    {.name = "modelPath",
     .type = CFG_PATH,
     .flags = CFG_REQUIRED,
     .help = "the trained model whose matrices are decomposed",
     SS(model)},
    {.name = "outputModelPath",
     .type = CFG_PATH,
     .flags = CFG_REQUIRED,
     .help = "the model file written (replaced atomically; never modelPath)",
     SS(output)},
    {.name = "KeepRatio",
     .type = CFG_REAL,
     .def = "0.4",
     .flags = CFG_HAS_MIN | CFG_MIN_EXCL | CFG_HAS_MAX,
     .min = 0,
     .max = 1,
     .help = "the share of the singular values' sum kept (1: all of them)",
     SS(keep)},
    {.name = "AlignedSize",
     .type = CFG_INT,
     .def = "8",
     .flags = CFG_HAS_MIN,
     .min = 1,
     .help = "the rank kept is rounded up to a multiple of this (at most min(rows, cols))",
     SS(aligned)},
    {.name = "NodeNameRegex",
     .type = CFG_STRING,
     .def = "",
     .help = "the parameters decomposed: a regular expression that matches their whole name "
             "(POSIX extended); empty: SVDConfig's groups",
     SS(regex)},
    {.name = "SVDConfig",
     .type = CFG_PATH,
     .help = "without NodeNameRegex: a file of lines \"REGEX KEEPRATIO\", one group of "
             "parameters each",
     SS(groups_file)},
    {.name = NULL},
};

const struct cfg_schema svd_command_schema = {
    .name = "command block (action=SVD)",
    .where = "at top level, named in command=",
    .help = "Decomposes a trained model's weight matrices into products of two low-rank ones, "
            "as CNTK's SVD action does. Unknown keys here are allowed (they may be variables).",
    .keys = svd_cmd_keys,
    .open = 1,
};

struct svd_group {
    char regex[512];
    float keep;
    regex_t re;
    int compiled;
};

struct svd_done {
    char name[64];
    int rows, cols, rank;
    float *u, *v; /* rows x rank, rank x cols (column-major) */
};

static int compile(struct svd_group *g, const char *where, struct pt_err *e)
{
    char anchored[sizeof g->regex + 8], why[256];
    snprintf(anchored, sizeof anchored, "^(%s)$", g->regex); /* CNTK's regex_match: the whole */
    int rc = regcomp(&g->re, anchored, REG_EXTENDED | REG_NOSUB);
    if (rc) {
        regerror(rc, &g->re, why, sizeof why);
        return pt_err_set(e, PT_EUSER, "%s: error: '%s' is no regular expression: %s", where,
                          g->regex, why);
    }
    g->compiled = 1;
    return 0;
}

/* SVDConfig's lines into groups, in the order of their expressions (CNTK's std::map; a
 * repeated expression: the last ratio). */
static int read_groups(const char *path, struct svd_group *g, int *n, struct pt_err *e)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return pt_err_set(e, PT_EUSER, "error: cannot open SVDConfig '%s': %s", path,
                          strerror(errno));
    char line[1024];
    int rc = 0, no = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        no++;
        char where[4200], re[512], ratio[64], extra[8];
        snprintf(where, sizeof where, "%s:%d", path, no);
        if (!strchr(line, '\n') && !feof(f)) {
            rc = pt_err_set(e, PT_EUSER, "%s: error: a line longer than %zu characters", where,
                            sizeof line - 2);
            break;
        }
        int k = sscanf(line, "%511s %63s %7s", re, ratio, extra);
        if (k <= 0)
            continue; /* a blank line */
        char *end = NULL;
        double keep = k == 2 ? strtod(ratio, &end) : 0;
        if (k != 2 || *end || !(keep > 0 && keep <= 1)) {
            rc = pt_err_set(e, PT_EUSER,
                            "%s: error: expected \"REGEX KEEPRATIO\" (a regular expression, then "
                            "a share of the singular values' sum kept, above 0 and at most 1)",
                            where);
            break;
        }
        int at = 0;
        while (at < *n && strcmp(g[at].regex, re) < 0)
            at++;
        if (at < *n && !strcmp(g[at].regex, re)) {
            g[at].keep = (float)keep;
            continue;
        }
        if (*n == SVD_GROUPS) {
            rc = pt_err_set(e, PT_EUSER, "%s: error: more than %d groups", where, SVD_GROUPS);
            break;
        }
        memmove(&g[at + 1], &g[at], (size_t)(*n - at) * sizeof *g);
        memset(&g[at], 0, sizeof *g);
        snprintf(g[at].regex, sizeof g[at].regex, "%s", re);
        g[at].keep = (float)keep;
        (*n)++;
        rc = compile(&g[at], where, e);
        if (rc)
            (*n)--, memmove(&g[at], &g[at + 1], (size_t)(*n - at) * sizeof *g);
    }
    if (rc == 0 && ferror(f))
        rc = pt_err_set(e, PT_EUSER, "error: cannot read SVDConfig '%s'", path);
    if (rc == 0 && *n == 0)
        rc = pt_err_set(e, PT_EUSER, "%s: error: no \"REGEX KEEPRATIO\" line", path);
    fclose(f);
    return rc;
}

/* The rank kept: the fewest singular values whose sum exceeds keep times the sum of all
 * (summed in float as CNTK sums them), all of them for keep = 1, then rounded up to a
 * multiple of aligned, at most k. */
static int rank_kept(const float *s, int k, float keep, int aligned)
{
    float total = 0.0f, run = 0.0f, want;
    for (int i = 0; i < k; i++)
        total += s[i];
    want = total * keep;
    int r = k;
    for (int i = 0; keep < 1.0f && i < k; i++) {
        run += s[i];
        if (run > want) {
            r = i + 1;
            break;
        }
    }
    if (r % aligned)
        r = r - r % aligned + aligned > k ? k : r - r % aligned + aligned;
    return r;
}

/* A (rows x cols, column-major, destroyed) as U_r sqrt(S) and sqrt(S) V_r^T into d. */
static int decompose(struct pt_log *log, float *a, float keep, int aligned, struct svd_done *d,
                     struct pt_err *e)
{
    int m = d->rows, n = d->cols, k = m < n ? m : n, lwork = -1, info = 0;
    float *s = pt_malloc((size_t)k * sizeof *s, e);
    float *u = s ? pt_malloc((size_t)m * (size_t)k * sizeof *u, e) : NULL;
    float *vt = u ? pt_malloc((size_t)k * (size_t)n * sizeof *vt, e) : NULL;
    float *work = NULL, query = 0.0f;
    int rc = vt ? 0 : e->code;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (rc == 0) {
        sgesvd_("S", "S", &m, &n, a, &m, s, u, &m, vt, &k, &query, &lwork, &info, 1, 1);
        lwork = info == 0 ? (int)query + 1 : 0;
        work = info == 0 ? pt_malloc((size_t)lwork * sizeof *work, e) : NULL;
        rc = info   ? pt_err_set(e, PT_EINTERNAL,
                                 "error: SVD of '%s': LAPACK's workspace query "
                                   "failed (info %d)",
                                 d->name, info)
             : work ? 0
                    : e->code;
    }
    if (rc == 0) {
        sgesvd_("S", "S", &m, &n, a, &m, s, u, &m, vt, &k, work, &lwork, &info, 1, 1);
        if (info)
            rc = pt_err_set(e, PT_EUSER,
                            "error: SVD of '%s' [%d x %d] did not converge (LAPACK info %d): "
                            "does it hold NaN or infinite values?",
                            d->name, m, n, info);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    int r = rc == 0 ? rank_kept(s, k, keep, aligned) : 0;
    d->rank = r;
    d->u = rc == 0 ? pt_malloc((size_t)m * (size_t)r * sizeof *d->u, e) : NULL;
    d->v = d->u ? pt_malloc((size_t)r * (size_t)n * sizeof *d->v, e) : NULL;
    if (rc == 0 && !d->v)
        rc = e->code;
    for (int j = 0; rc == 0 && j < r; j++) {
        float root = sqrtf(s[j] > 0.0f ? s[j] : 0.0f);
        for (int i = 0; i < m; i++)
            d->u[(size_t)j * m + i] = u[(size_t)j * m + i] * root;
        for (int c = 0; c < n; c++) /* vt is k x n: row j */
            d->v[(size_t)c * r + j] = vt[(size_t)c * k + j] * root;
    }
    if (rc == 0)
        pt_log_printf(log,
                      "Performing SVD for a %5d-by-%-5d matrix (node name: %-20s) ---  "
                      "computation time %5.2f secs ;  keep %4.1f%% energy ===> keep %5d svd "
                      "values (reduce to %4.1f%% parameters) \n",
                      m, n, d->name,
                      (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec),
                      keep * 100.0, r, ((double)(m + n) * r) / m / n * 100.0);
    free(s);
    free(u);
    free(vt);
    free(work);
    return rc;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct nn_tensor *)a)->name, ((const struct nn_tensor *)b)->name);
}

/* The decomposed network: cfg (a graph) with a LowRank edit per matrix, the model's values
 * by name and the new factors', written to ss->output. */
static int write_model(struct backend *be, struct nn *src, struct nn_config *cfg,
                       const struct svd_settings *ss, const struct svd_done *d, int nd,
                       struct pt_err *e)
{
    size_t len = strlen(cfg->bs_text);
    for (int i = 0; i < nd; i++) {
        int w = snprintf(cfg->bs_text + len, sizeof cfg->bs_text - len,
                         "\n#@edit action=SVD LowRank %s %d %d %d", d[i].name, d[i].rows, d[i].cols,
                         d[i].rank);
        if (w < 0 || (size_t)w >= sizeof cfg->bs_text - len)
            return pt_err_set(e, PT_EUSER, "error: SVD: the network's description is too long");
        len += (size_t)w;
    }
    struct nn *net = NULL;
    float *host = NULL;
    int copied = 0, fresh = 0;
    int rc = nn_config_reread(ss->model, cfg, e);
    if (rc == 0)
        rc = nn_new(cfg, be, 1, &net, e);
    if (rc == 0)
        rc = nn_graph_copy_named(net, src, &copied, &fresh, e);
    if (rc == 0 && fresh != 2 * nd)
        rc = pt_err_set(e, PT_EINTERNAL,
                        "error: SVD: %d parameters of the decomposed network are new, "
                        "expected %d",
                        fresh, 2 * nd);
    if (rc == 0 && !(host = pt_malloc((nn_param_count(net) + 1) * sizeof *host, e)))
        rc = e->code;
    if (rc == 0)
        rc = nn_get_params(net, host, e);
    size_t nt = 0;
    const struct nn_tensor *t = rc == 0 ? nn_tensors(net, &nt) : NULL;
    for (int i = 0; rc == 0 && i < nd; i++)
        for (int side = 0; side < 2; side++) {
            char name[80];
            snprintf(name, sizeof name, "%s_%c", d[i].name, side ? 'V' : 'U');
            size_t j = 0;
            while (j < nt && strcmp(t[j].name, name))
                j++;
            if (j == nt) {
                rc = pt_err_set(e, PT_EINTERNAL, "error: SVD: no parameter '%s' was made", name);
                break;
            }
            memcpy(host + t[j].offset, side ? d[i].v : d[i].u,
                   (size_t)t[j].rows * (size_t)t[j].cols * sizeof *host);
        }
    if (rc == 0)
        rc = nn_set_params(net, host, e);
    if (rc == 0)
        rc = pt_make_parent_dirs(ss->output, e);
    if (rc == 0)
        rc = nn_save(net, ss->output, e);
    if (rc)
        pt_err_context(e, "in action=SVD (the decomposed model '%s')", ss->output);
    free(host);
    nn_free(net);
    return rc;
}

static int svd_model(struct pt_ctx *ctx, const struct svd_settings *ss, struct svd_group *g, int ng,
                     struct pt_err *e)
{
    struct backend *be = NULL;
    struct nn *src = NULL;
    struct nn_config *cfg = pt_malloc(sizeof *cfg, e);
    struct svd_done *d = NULL;
    struct nn_tensor *sorted = NULL;
    int nd = 0, rc = cfg ? backend_cpu_new(&be, e) : e->code;
    if (rc == 0)
        rc = nn_load(ss->model, be, &src, e);
    if (rc == 0) {
        memcpy(cfg, nn_get_config(src), sizeof *cfg);
        if (cfg->rnn == NN_SIMPLENET)
            rc = nn_simple_as_graph(cfg, e);
        else if (cfg->rnn != NN_GRAPH)
            rc = pt_err_set(e, PT_EUSER,
                            "error: SVD: '%s' holds a SimpleNetworkBuilder LSTM network; the "
                            "SVD action decomposes feed-forward (rnnType SIMPLENET), NDL and "
                            "BrainScript networks",
                            ss->model);
    }
    size_t nt = 0;
    const struct nn_tensor *t = rc == 0 ? nn_tensors(src, &nt) : NULL;
    if (rc == 0 && !(sorted = pt_malloc((nt + 1) * sizeof *sorted, e)))
        rc = e->code;
    if (rc == 0 && !(d = pt_calloc(nt + 1, sizeof *d, e)))
        rc = e->code;
    if (rc == 0) {
        memcpy(sorted, t, nt * sizeof *t);
        qsort(sorted, nt, sizeof *sorted, by_name);
    }
    float *host = rc == 0 ? pt_malloc((nn_param_count(src) + 1) * sizeof *host, e) : NULL;
    if (rc == 0 && !host)
        rc = e->code;
    if (rc == 0)
        rc = nn_get_params(src, host, e);
    char *taken = rc == 0 ? pt_calloc(nt + 1, 1, e) : NULL;
    if (rc == 0 && !taken)
        rc = e->code;
    /* the groups' members first, as CNTK gathers them, then each decomposed */
    char *member = rc == 0 ? pt_calloc((nt + 1) * (size_t)ng, 1, e) : NULL;
    if (rc == 0 && !member)
        rc = e->code;
    for (int k = 0; rc == 0 && k < ng; k++) {
        int found = 0;
        for (size_t i = 0; i < nt; i++)
            if (sorted[i].rows > 1 && sorted[i].cols > 1 &&
                regexec(&g[k].re, sorted[i].name, 0, NULL, 0) == 0)
                member[(size_t)k * nt + i] = 1, found++;
        if (!found) {
            char list[1024] = "";
            size_t at = 0;
            for (size_t i = 0; i < nt && at < sizeof list - 64; i++)
                if (sorted[i].rows > 1 && sorted[i].cols > 1)
                    at += (size_t)snprintf(list + at, sizeof list - at, "%s%s [%d x %d]",
                                           at ? ", " : "", sorted[i].name, sorted[i].rows,
                                           sorted[i].cols);
            rc = pt_err_set(e, PT_EUSER,
                            "error: SVD: '%s' matches the whole name of no parameter matrix of "
                            "'%s' (its matrices: %s)",
                            g[k].regex, ss->model, at ? list : "none");
        }
    }
    for (int k = 0; rc == 0 && k < ng; k++) {
        pt_log_printf(ctx->log,
                      "-------------------------------------------------------------"
                      "-------------------------------\n"
                      "ParameterSVD: start to process group %d with KeepRatio=%.2f\n"
                      "-------------------------------------------------------------"
                      "-------------------------------\n",
                      k, (double)g[k].keep);
        for (size_t i = 0; rc == 0 && i < nt; i++) {
            if (!member[(size_t)k * nt + i] || taken[i])
                continue;
            taken[i] = 1;
            struct svd_done *x = &d[nd++];
            snprintf(x->name, sizeof x->name, "%s", sorted[i].name);
            x->rows = sorted[i].rows;
            x->cols = sorted[i].cols;
            rc = decompose(ctx->log, host + sorted[i].offset, g[k].keep, (int)ss->aligned, x, e);
        }
    }
    if (rc == 0)
        rc = write_model(be, src, cfg, ss, d, nd, e);
    for (int i = 0; d && i < nd; i++) {
        free(d[i].u);
        free(d[i].v);
    }
    free(d);
    free(member);
    free(taken);
    free(host);
    free(sorted);
    free(cfg);
    nn_free(src);
    if (be)
        backend_free(be);
    return rc;
}

/* What can be checked before any command runs: the groups, and outputModelPath neither
 * modelPath nor SVDConfig. */
static int check(struct cfg_node *command, const struct svd_settings *ss, struct svd_group *g,
                 int *ng, struct pt_err *e)
{
    char at[512];
    int rc = 0;
    *ng = 0;
    if (ss->regex[0]) {
        struct cfg_val v = {0};
        char where[600];
        rc = cfg_schema_get(command, &svd_command_schema, "NodeNameRegex", &v, e);
        const struct cfg_origin *o = rc == 0 && v.node ? cfg_value_origin(v.node) : NULL;
        if (o)
            snprintf(where, sizeof where, "%s:%d:%d", o->file, o->line, o->col);
        else
            snprintf(where, sizeof where, "%s", cfg_path(command, at, sizeof at));
        cfg_val_free(&v);
        snprintf(g[0].regex, sizeof g[0].regex, "%s", ss->regex);
        g[0].keep = (float)ss->keep;
        if (rc == 0 && strlen(ss->regex) >= sizeof g[0].regex)
            rc = pt_err_set(e, PT_EUSER, "%s: error: NodeNameRegex is too long", where);
        if (rc == 0 && (rc = compile(&g[0], where, e)) == 0)
            *ng = 1;
    } else if (ss->groups_file[0]) {
        rc = read_groups(ss->groups_file, g, ng, e);
    } else {
        rc = cfg_error(e, cfg_origin_of(command),
                       "%s: action=SVD needs NodeNameRegex (the parameters decomposed) or "
                       "SVDConfig (a file of \"REGEX KEEPRATIO\" lines)",
                       cfg_path(command, at, sizeof at));
    }
    struct pt_inputs ins = {0};
    if (rc == 0)
        rc = pt_inputs_add(&ins, ss->model, "modelPath", e);
    if (rc == 0 && ss->groups_file[0] && !ss->regex[0])
        rc = pt_inputs_add(&ins, ss->groups_file, "SVDConfig", e);
    const struct pt_input *same = rc == 0 ? pt_inputs_find(&ins, ss->output) : NULL;
    if (same)
        rc = cfg_error(e, cfg_origin_of(command),
                       "%s: outputModelPath '%s' is %s (%s): not written over",
                       cfg_path(command, at, sizeof at), ss->output, same->what, same->real);
    pt_inputs_free(&ins);
    return rc;
}

static void free_groups(struct svd_group *g, int ng)
{
    for (int i = 0; i < ng; i++)
        if (g[i].compiled)
            regfree(&g[i].re);
}

int svd_check_config(struct cfg_node *command, struct pt_err *e)
{
    struct svd_settings ss;
    struct svd_group g[SVD_GROUPS];
    int ng = 0;
    memset(&ss, 0, sizeof ss);
    memset(g, 0, sizeof g);
    int rc = cfg_schema_read(command, &svd_command_schema, &ss, e);
    /* SVDConfig may be written by an earlier command: read when the action runs */
    if (rc == 0 && (ss.regex[0] || !ss.groups_file[0]))
        rc = check(command, &ss, g, &ng, e);
    free_groups(g, ng);
    cfg_schema_free(&svd_command_schema, &ss);
    return rc;
}

int svd_run(struct pt_ctx *ctx, struct cfg_node *command, struct pt_err *e)
{
    struct svd_settings ss;
    struct svd_group *g = pt_calloc(SVD_GROUPS, sizeof *g, e);
    int ng = 0;
    memset(&ss, 0, sizeof ss);
    int rc = g ? cfg_schema_read(command, &svd_command_schema, &ss, e) : e->code;
    if (rc == 0 && comm_rank(ctx->comm) == 0)
        rc = check(command, &ss, g, &ng, e);
    if (rc == 0 && comm_rank(ctx->comm) == 0)
        rc = svd_model(ctx, &ss, g, ng, e);
    rc = train_agree(ctx->comm, rc, "to decompose the model (action=SVD)", e);
    if (g)
        free_groups(g, ng);
    free(g);
    cfg_schema_free(&svd_command_schema, &ss);
    return rc;
}
