/* BrainScript networks (src/nn/graph.c, graph_nodes.c, graph_rnn.c, bs_eval.c, bs_net.c):
 * gradients of every node kind with a backward pass (every parameter against central
 * finite differences of the training criterion; one table row per case), padding that
 * does not count (a padded minibatch against its sequences one by one), forward values
 * computed by hand, shape inference and the errors that name FILE:LINE:COL. */
#include "test_nn_util.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------------ helpers */

/* Parse "BrainScriptNetworkBuilder = [ body ]" (file "g.cfg": the body starts on line 2,
 * column 1) into *out. Returns the error code; the message is in *e. */
static int parse_bs(const char *body, struct nn_config *out, struct pt_err *e)
{
    size_t n = strlen(body) + 64;
    char *text = malloc(n);
    ck_assert_ptr_nonnull(text);
    snprintf(text, n, "BrainScriptNetworkBuilder = [\n%s\n]\n", body);
    struct cfg *c = load("g.cfg", text, e);
    free(text);
    ck_assert_msg(e->code == 0, "%s", e->msg);
    int rc = nn_bs_config_read(node_at(c, "BrainScriptNetworkBuilder"), out, e);
    cfg_free(c);
    return rc;
}

static struct nn *make_bs_net(struct backend *b, const char *body, uint64_t seed)
{
    static struct nn_config cfg; /* 16 KiB of description: not on the stack */
    struct pt_err e = {0};
    pt_err_clear(&e);
    ck_assert_msg(parse_bs(body, &cfg, &e) == 0, "%s", e.msg);
    struct nn *net = NULL;
    ck_assert_msg(nn_new(&cfg, b, seed, &net, &e) == 0, "%s", e.msg);
    return net;
}

/* The error message of a description that must fail to build. */
static const char *bs_error_of(const char *body)
{
    static struct nn_config cfg;
    static struct pt_err e;
    pt_err_clear(&e);
    int rc = parse_bs(body, &cfg, &e);
    ck_assert_msg(rc == PT_EUSER, "%d (%s) from:\n%s", rc, e.msg, body);
    return e.msg;
}

/* Every parameter set uniformly in [-amp, amp] (seeded). */
static void randomize_params(struct nn *net, double amp, uint64_t seed)
{
    struct pt_err e = {0};
    size_t n = nn_param_count(net);
    float *p = malloc((n ? n : 1) * sizeof *p);
    ck_assert_ptr_nonnull(p);
    for (size_t k = 0; k < n; k++)
        p[k] = (float)((test_uniform(&seed) * 2.0 - 1.0) * amp);
    ck_assert_int_eq(nn_set_params(net, p, &e), 0);
    free(p);
}

/* The tensor called name (the BrainScript definition's name), or NULL. */
static const struct nn_tensor *tensor_named(struct nn *net, const char *name)
{
    size_t n = 0;
    const struct nn_tensor *t = nn_tensors(net, &n);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(t[i].name, name))
            return &t[i];
    return NULL;
}

/* Set tensor `name` (rows x cols, column-major) to vals. */
static void set_tensor(struct nn *net, const char *name, const float *vals)
{
    struct pt_err e = {0};
    const struct nn_tensor *t = tensor_named(net, name);
    ck_assert_msg(t != NULL, "no tensor %s", name);
    size_t n = nn_param_count(net);
    float *p = malloc(n * sizeof *p);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(nn_get_params(net, p, &e), 0);
    memcpy(p + t->offset, vals, (size_t)t->rows * (size_t)t->cols * sizeof *p);
    ck_assert_int_eq(nn_set_params(net, p, &e), 0);
    free(p);
}

/* Input `name` of mb: dim x ncols samples (one step each) holding data. */
static void set_input(struct minibatch *mb, const char *name, int dim, size_t ncols,
                      const float *data)
{
    uint64_t rng = 1;
    fill_input(mb, name, dim, ncols, 1, NULL, 0, &rng);
    memcpy(mb_find(mb, name)->data, data, (size_t)dim * ncols * sizeof(float));
}

/* ------------------------------------------------------------------ the gradient table */

#include "test_graph_cases.h"

enum in_kind { RAND, HOT, PROB, BIN };

struct case_spec {
    struct {
        char name[64];
        int dim;
        enum in_kind kind;
        int per_seq; /* ":seq" after the kind: one row per sequence (BS.Sequences.Last) */
    } in[8];
    int nin;
    int seqs; /* 0: 6 samples of one step; 1: sequences, garbage padding; 2: zero padding */
    double away;
    float dropout; /* > 0: the passes train at this rate through one fixed mask */
    int mvn;       /* set feature statistics (Mean, InvStdDev) other than 0 and 1 */
};

static void parse_spec(const struct grad_case *c, struct case_spec *sp)
{
    char buf[256], kind[16];
    memset(sp, 0, sizeof *sp);
    snprintf(buf, sizeof buf, "%s", c->inputs);
    for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " ")) {
        if (!strcmp(tok, "seqs") || !strcmp(tok, "zeropad")) {
            sp->seqs = tok[0] == 's' ? 1 : 2;
            continue;
        }
        if (sscanf(tok, "away=%lf", &sp->away) == 1 || sscanf(tok, "dropout=%f", &sp->dropout) == 1)
            continue;
        if (!strcmp(tok, "mvn")) {
            sp->mvn = 1;
            continue;
        }
        ck_assert_msg(sp->nin < 8, "%s: too many inputs", c->name);
        char *colon = strchr(tok, ':');
        ck_assert_msg(colon != NULL, "%s: bad input spec '%s'", c->name, tok);
        *colon = '\0';
        snprintf(sp->in[sp->nin].name, sizeof sp->in[sp->nin].name, "%s", tok);
        kind[0] = '\0';
        int got = sscanf(colon + 1, "%d:%15s", &sp->in[sp->nin].dim, kind);
        char *seq = strstr(kind, ":seq");
        if (seq && !seq[4]) {
            sp->in[sp->nin].per_seq = 1;
            *seq = '\0';
        }
        ck_assert_msg(got >= 1 && sp->in[sp->nin].dim > 0, "%s: bad input spec", c->name);
        sp->in[sp->nin].kind = !strcmp(kind, "hot")    ? HOT
                               : !strcmp(kind, "prob") ? PROB
                               : !strcmp(kind, "bin")  ? BIN
                                                       : RAND;
        ck_assert_msg(got == 1 || sp->in[sp->nin].kind != RAND || !strcmp(kind, "rand"),
                      "%s: unknown input kind '%s'", c->name, kind);
        sp->nin++;
    }
}

/* Fill the inputs of a case (sequences: garbage or zeros in the padding). */
static void case_minibatch(const struct case_spec *sp, struct minibatch *mb, uint64_t seed)
{
    static const uint32_t len[3] = {3, 1, 2}, ones[6] = {1, 1, 1, 1, 1, 1};
    size_t nseq = sp->seqs ? 3 : 6;
    for (int i = 0; i < sp->nin; i++) {
        int dim = sp->in[i].dim;
        enum in_kind kind = sp->in[i].kind;
        size_t steps = sp->seqs && !sp->in[i].per_seq ? 3 : 1;
        const uint32_t *l = sp->in[i].per_seq ? ones : sp->seqs ? len : NULL;
        fill_input(mb, sp->in[i].name, dim, nseq, steps, l, kind == HOT, &seed);
        struct mb_input *m = mb_find(mb, sp->in[i].name);
        for (size_t t = 0; t < steps; t++)
            for (size_t s = 0; s < nseq; s++) {
                float *col = m->data + (t * nseq + s) * (size_t)dim;
                for (int r = 0; r < dim; r++) {
                    if (t >= m->len[s])
                        col[r] = sp->seqs == 2 ? 0.0f : (float)(r % 2 ? -4.0 : 5.0);
                    else if (kind == PROB)
                        col[r] = (float)(0.5 + 0.45 * col[r]);
                    else if (kind == BIN)
                        col[r] = (float)(col[r] > 0.0f);
                }
            }
    }
}

/* One pass: an evaluation (rate 0), or a training step at dropout stream position 1000
 * (every call draws the same mask). */
static void run_pass(struct nn *net, struct minibatch *mb, float rate, struct nn_stats *st)
{
    struct pt_err e = {0};
    int rc;
    if (rate > 0.0f) {
        nn_set_dropout_state(net, 1000);
        rc = nn_train_step(net, mb, rate, st, &e);
    } else
        rc = nn_evaluate(net, mb, st, &e);
    ck_assert_msg(rc == 0, "%s", e.msg);
}

/* The training criterion with parameter k at value x (host holds the others). */
static double crit_with(struct nn *net, struct minibatch *mb, float rate, float *host, size_t k,
                        float x)
{
    struct pt_err e = {0};
    struct nn_stats st;
    float keep = host[k];
    host[k] = x;
    ck_assert_int_eq(nn_set_params(net, host, &e), 0);
    run_pass(net, mb, rate, &st);
    host[k] = keep;
    return st.train_crit;
}

/* Finite differences in float: the criterion is computed in float and summed in double,
 * so its rounding (about 1e-7 of each term) divided by the step is the numeric gradient's
 * noise. Every parameter is compared with the central differences of step GC_EPS (small
 * truncation error; a ReLU kink stays out of its reach) and of step GC_EPS_WIDE (a tenth of
 * the noise), whichever is closer: a wrong gradient matches neither. */
#define GC_EPS        1e-3f
#define GC_EPS_WIDE   1e-2f
#define GC_REL        2e-2 /* relative tolerance of one parameter */
#define GC_ABS        3e-3 /* absolute floor */
#define GC_TENSOR     1e-2 /* a tensor's relative error norm, */
#define GC_TENSOR_RMS 1e-4 /* where its RMS error is above the noise (a few 1e-5) */
#define GC_NONZERO    3e-4 /* every tensor has a gradient at least this large somewhere */

/* The central difference of the training criterion at parameter k, step eps (rounded to
 * the neighbours floats can take). */
static double central_diff(struct nn *net, struct minibatch *mb, float rate, float *host, size_t k,
                           float eps)
{
    float up = host[k] + eps, down = host[k] - eps;
    return (crit_with(net, mb, rate, host, k, up) - crit_with(net, mb, rate, host, k, down)) /
           ((double)up - (double)down);
}

static int close_enough(double ana, double num)
{
    return fabs(ana - num) <= GC_REL * fmax(fabs(ana), fabs(num)) + GC_ABS;
}

/* Compare every parameter's gradient from nn_train_step with central differences of the
 * training criterion (nn_evaluate's; with a dropout rate, nn_train_step's through the same
 * mask). Returns the failures (printed, with the case's name); *checked += the parameters
 * compared. */
static int check_gradients(const char *name, struct nn *net, struct minibatch *mb, float rate,
                           int *checked)
{
    struct pt_err e = {0};
    struct nn_stats st;
    size_t n = nn_param_count(net), nt = 0;
    const struct nn_tensor *t = nn_tensors(net, &nt);
    float *host = malloc(n * sizeof *host), *grad = malloc(n * sizeof *grad);
    double *diff2 = calloc(nt, sizeof *diff2), *num2 = calloc(nt, sizeof *num2),
           *numax = calloc(nt, sizeof *numax);
    ck_assert(host && grad && diff2 && num2 && numax);
    nn_set_dropout_state(net, 1000);
    ck_assert_msg(nn_train_step(net, mb, rate, &st, &e) == 0, "%s: %s", name, e.msg);
    ck_assert_msg(isfinite(st.train_crit), "%s: criterion %g", name, st.train_crit);
    ck_assert_int_eq(nn_get_grads(net, grad, &e), 0);
    ck_assert_int_eq(nn_get_params(net, host, &e), 0);
    int failures = 0;
    for (size_t i = 0; i < nt; i++)
        for (size_t k = t[i].offset; k < t[i].offset + (size_t)t[i].rows * (size_t)t[i].cols; k++) {
            double ana = grad[k], fine = central_diff(net, mb, rate, host, k, GC_EPS),
                   wide = central_diff(net, mb, rate, host, k, GC_EPS_WIDE);
            double num = fabs(ana - fine) <= fabs(ana - wide) ? fine : wide;
            int ok = close_enough(ana, num);
            if (!ok && failures < 8)
                fprintf(stderr,
                        "%s: %s[%zu] (param %zu): analytic %.6g numeric %.6g (step %g: %.6g)\n",
                        name, t[i].name, k - t[i].offset, k, ana, fine, GC_EPS_WIDE, wide);
            failures += !ok;
            diff2[i] += (ana - num) * (ana - num);
            num2[i] += num * num;
            numax[i] = fmax(numax[i], fabs(num));
            (*checked)++;
        }
    for (size_t i = 0; i < nt; i++) {
        double count = (double)t[i].rows * (double)t[i].cols;
        if (num2[i] > 0 && sqrt(diff2[i] / num2[i]) > GC_TENSOR &&
            sqrt(diff2[i] / count) > GC_TENSOR_RMS) {
            fprintf(stderr, "%s: tensor %s: relative error %.3g\n", name, t[i].name,
                    sqrt(diff2[i] / num2[i]));
            failures++;
        }
        if (numax[i] < GC_NONZERO) { /* the case must exercise every parameter */
            fprintf(stderr, "%s: tensor %s: no gradient (largest %.3g)\n", name, t[i].name,
                    numax[i]);
            failures++;
        }
    }
    ck_assert_int_eq(nn_set_params(net, host, &e), 0);
    free(host);
    free(grad);
    free(diff2);
    free(num2);
    free(numax);
    return failures;
}

/* Padding must not count: the padded minibatch gives the criteria, sample count and
 * gradients of its sequences run one by one without padding (which holds for recurrent
 * nodes too: each sequence starts from the initial state). */
static int check_padding(const char *name, struct nn *net, struct minibatch *seq)
{
    struct nn_stats a, one;
    struct pt_err e = {0};
    size_t n = nn_param_count(net), samples = 0;
    float *ga = malloc(n * sizeof *ga), *g1 = malloc(n * sizeof *g1);
    double *sum = calloc(n, sizeof *sum), train = 0, eval = 0;
    ck_assert(ga && g1 && sum);
    ck_assert_msg(nn_train_step(net, seq, 0.0f, &a, &e) == 0, "%s", e.msg);
    ck_assert_int_eq(nn_get_grads(net, ga, &e), 0);
    for (size_t s = 0; s < seq->nseq; s++) {
        struct minibatch mb = {0};
        uint64_t rng = 1;
        for (int i = 0; i < seq->ninputs; i++) {
            struct mb_input *in = &seq->in[i];
            size_t dim = (size_t)in->dim;
            fill_input(&mb, in->name, in->dim, 1, in->len[s], NULL, 0, &rng);
            for (size_t t = 0; t < in->len[s]; t++)
                memcpy(mb_find(&mb, in->name)->data + t * dim, in->data + (t * seq->nseq + s) * dim,
                       dim * sizeof(float));
        }
        ck_assert_msg(nn_train_step(net, &mb, 0.0f, &one, &e) == 0, "%s", e.msg);
        ck_assert_int_eq(nn_get_grads(net, g1, &e), 0);
        for (size_t k = 0; k < n; k++)
            sum[k] += g1[k];
        train += one.train_crit;
        eval += one.eval_crit;
        samples += one.samples;
        mb_free(&mb);
    }
    int bad = a.samples != samples || !(fabs(a.train_crit - train) <= 1e-5 * fabs(train) + 1e-6) ||
              !(fabs(a.eval_crit - eval) <= 1e-5 * fabs(eval) + 1e-6);
    if (bad)
        fprintf(stderr, "%s: padded: %zu samples, criteria %.9g %.9g; one by one: %zu, %.9g %.9g\n",
                name, a.samples, a.train_crit, a.eval_crit, samples, train, eval);
    for (size_t k = 0; k < n; k++)
        if (!(fabs(ga[k] - sum[k]) <= 1e-4 * fabs(sum[k]) + 1e-5)) {
            if (bad < 5)
                fprintf(stderr, "%s: padded gradient %zu: %.9g, one by one %.9g\n", name, k, ga[k],
                        sum[k]);
            bad++;
        }
    free(ga);
    free(g1);
    free(sum);
    return bad;
}

/* A case's seed: from its name, so that adding a row changes no other case's numbers. */
static uint64_t name_seed(const char *name)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (const char *c = name; *c; c++)
        h = (h ^ (uint8_t)*c) * 1099511628211ull;
    return h;
}

static int grad_checks_total; /* parameters compared by the table (CK_NOFORK runs) */

START_TEST(gradients)
{
    const struct grad_case *c = &cases[_i];
    struct case_spec sp;
    parse_spec(c, &sp);
    struct backend *b = make_backend();
    struct nn *net = make_bs_net(b, c->body, 3);
    randomize_params(net, 0.8, name_seed(c->name));
    struct minibatch mb = {0};
    case_minibatch(&sp, &mb, name_seed(c->name) ^ 77);
    ck_assert_msg(nn_param_count(net) > 0, "%s: no parameters", c->name);
    if (sp.mvn) { /* statistics of the first input */
        float mean[64], inv[64];
        struct pt_err e = {0};
        ck_assert(sp.in[0].dim <= 64);
        for (int r = 0; r < sp.in[0].dim; r++) {
            mean[r] = 0.1f * (float)(r + 1);
            inv[r] = 0.5f + 0.75f * (float)r;
        }
        ck_assert_msg(nn_set_mean_var(net, mean, inv, sp.in[0].dim, &e) == 0, "%s", e.msg);
    }
    if (sp.away > 0) { /* no pre-activation within reach of a kink */
        struct nn_stats st;
        struct pt_err e = {0};
        float out[4096];
        size_t rows = 0, cols = 0;
        ck_assert_msg(nn_evaluate(net, &mb, &st, &e) == 0, "%s", e.msg);
        ck_assert_int_eq(nn_get_output(net, out, COUNT(out), &rows, &cols, &e), 0);
        for (size_t k = 0; k < rows * cols; k++)
            ck_assert_msg(fabs(out[k]) >= sp.away, "%s: output %zu is %g (pick another seed)",
                          c->name, k, out[k]);
    }
    if (sp.dropout > 0) { /* the mask is applied: training and evaluation differ */
        struct nn_stats tr, ev;
        run_pass(net, &mb, sp.dropout, &tr);
        run_pass(net, &mb, 0.0f, &ev);
        ck_assert_msg(tr.train_crit != ev.train_crit, "%s: no dropout", c->name);
    }
    int checked = 0;
    int bad = check_gradients(c->name, net, &mb, sp.dropout, &checked);
    ck_assert_int_eq(checked, (int)nn_param_count(net));
    if (sp.seqs && sp.dropout == 0) /* a mask depends on the minibatch's shape */
        bad += check_padding(c->name, net, &mb);
    ck_assert_msg(bad == 0, "%s: %d failures (%d parameters checked)", c->name, bad, checked);
    grad_checks_total += checked;
    mb_free(&mb);
    nn_free(net);
    backend_free(b);
}
END_TEST

/* ------------------------------------------------------------------ values by hand */

static double sigmoid(double x)
{
    return 1.0 / (1.0 + exp(-x));
}

/* out = W x + b for column-major W (rows x cols). */
static void affine(const float *w, const float *bias, const float *x, int rows, int cols,
                   double *out)
{
    for (int i = 0; i < rows; i++) {
        out[i] = bias ? bias[i] : 0.0;
        for (int j = 0; j < cols; j++)
            out[i] += (double)w[j * rows + i] * x[j];
    }
}

/* CNTK's HelloWorld network: Times + Plus + Sigmoid, SquareError and Logistic sums. */
START_TEST(values_sigmoid_square_logistic)
{
    struct backend *b = make_backend();
    struct nn *net = make_bs_net(b,
                                 "features = Input (3)\nlabels = Input (2)\n"
                                 "W = Parameter (2, 3)\nb = Parameter (2, 1)\n"
                                 "p = Sigmoid (W * features + b)\n"
                                 "se = SquareError (labels, p)\nlr = Logistic (labels, p)\n"
                                 "criterionNodes = (se)\nevaluationNodes = (lr)\n"
                                 "outputNodes = (p)\n",
                                 5);
    static const float w[6] = {0.1f, 0.4f, -0.2f, 0.5f, 0.3f, -0.6f}, bias[2] = {0.05f, -0.1f};
    static const float x[9] = {1, 0, -1, 0.5f, 0.5f, 0.5f, -1, 2, 0};
    static const float y[6] = {1, 0, 0, 1, 1, 1};
    ck_assert_uint_eq(nn_param_count(net), 8);
    set_tensor(net, "W", w);
    set_tensor(net, "b", bias);
    struct minibatch mb = {0};
    set_input(&mb, "features", 3, 3, x);
    set_input(&mb, "labels", 2, 3, y);
    struct nn_stats st;
    struct pt_err e = {0};
    ck_assert_msg(nn_evaluate(net, &mb, &st, &e) == 0, "%s", e.msg);
    float out[6];
    size_t rows, cols;
    ck_assert_int_eq(nn_get_output(net, out, 6, &rows, &cols, &e), 0);
    ck_assert_uint_eq(rows, 2);
    ck_assert_uint_eq(cols, 3);
    double se = 0, lr = 0;
    for (int j = 0; j < 3; j++) {
        double z[2];
        affine(w, bias, x + 3 * j, 2, 3, z);
        for (int i = 0; i < 2; i++) {
            double p = sigmoid(z[i]), t = y[2 * j + i];
            ck_assert_msg(fabs(out[2 * j + i] - p) < 1e-6, "p[%d,%d] %g want %g", i, j,
                          out[2 * j + i], p);
            se += (p - t) * (p - t);
            lr -= t * log(p) + (1 - t) * log(1 - p);
        }
    }
    ck_assert_uint_eq(st.samples, 3);
    ck_assert_msg(fabs(st.train_crit - se) < 1e-6 * se, "SquareError %.9g want %.9g", st.train_crit,
                  se);
    ck_assert_msg(fabs(st.eval_crit - lr) < 1e-6 * lr, "Logistic %.9g want %.9g", st.eval_crit, lr);
    /* the gradient of SquareError by hand: dW = sum_j 2 (p - y) p (1 - p) x^T */
    float g[8];
    double want[8] = {0};
    ck_assert_int_eq(nn_train_step(net, &mb, 0.0f, &st, &e), 0);
    ck_assert_int_eq(nn_get_grads(net, g, &e), 0);
    for (int j = 0; j < 3; j++) {
        double z[2];
        affine(w, bias, x + 3 * j, 2, 3, z);
        for (int i = 0; i < 2; i++) {
            double p = sigmoid(z[i]), d = 2 * (p - y[2 * j + i]) * p * (1 - p);
            for (int k = 0; k < 3; k++)
                want[tensor_named(net, "W")->offset + (size_t)(k * 2 + i)] += d * x[3 * j + k];
            want[tensor_named(net, "b")->offset + (size_t)i] += d;
        }
    }
    for (int k = 0; k < 8; k++)
        ck_assert_msg(fabs(g[k] - want[k]) < 1e-6, "grad %d: %g want %g", k, g[k], want[k]);
    mb_free(&mb);
    nn_free(net);
    backend_free(b);
}
END_TEST

/* Softmax, CrossEntropyWithSoftmax's sum and ClassificationError's count. */
START_TEST(values_softmax_ce_errors)
{
    struct backend *b = make_backend();
    struct nn *net = make_bs_net(b,
                                 "features = Input (2)\nlabels = Input (3)\n"
                                 "W = Parameter (3, 2)\nb = Parameter (3)\n"
                                 "z = W * features + b\ns = Softmax (z)\n"
                                 "ce = CrossEntropyWithSoftmax (labels, z)\n"
                                 "errs = ClassificationError (labels, z)\n"
                                 "criterionNodes = (ce)\nevaluationNodes = (errs)\n"
                                 "outputNodes = (s)\n",
                                 5);
    /* z = (x1, x2, -x1 - x2): predictions 0, 1, 2, 1, 0 against labels 0, 1, 0, 2, 0 */
    static const float w[6] = {1, 0, -1, 0, 1, -1}, bias[3] = {0, 0, 0};
    static const float x[10] = {2, 1, 0, 3, -1, -1, 1, 2, 3, 0};
    static const int truth[5] = {0, 1, 0, 2, 0};
    float y[15] = {0};
    for (int j = 0; j < 5; j++)
        y[3 * j + truth[j]] = 1;
    set_tensor(net, "W", w);
    set_tensor(net, "b", bias);
    struct minibatch mb = {0};
    set_input(&mb, "features", 2, 5, x);
    set_input(&mb, "labels", 3, 5, y);
    struct nn_stats st;
    struct pt_err e = {0};
    ck_assert_msg(nn_evaluate(net, &mb, &st, &e) == 0, "%s", e.msg);
    float out[15];
    size_t rows, cols;
    ck_assert_int_eq(nn_get_output(net, out, 15, &rows, &cols, &e), 0);
    ck_assert_uint_eq(rows, 3);
    ck_assert_uint_eq(cols, 5);
    double ce = 0;
    for (int j = 0; j < 5; j++) {
        double z[3], s = 0;
        affine(w, bias, x + 2 * j, 3, 2, z);
        for (int i = 0; i < 3; i++)
            s += exp(z[i]);
        for (int i = 0; i < 3; i++)
            ck_assert_msg(fabs(out[3 * j + i] - exp(z[i]) / s) < 1e-6, "softmax[%d,%d] %g want %g",
                          i, j, out[3 * j + i], exp(z[i]) / s);
        ce += log(s) - z[truth[j]];
    }
    ck_assert_msg(fabs(st.train_crit - ce) < 1e-6 * ce, "CE %.9g want %.9g", st.train_crit, ce);
    ck_assert(st.eval_crit == 2.0); /* samples 2 and 3 */
    mb_free(&mb);
    nn_free(net);
    backend_free(b);
}
END_TEST

/* The element-wise nodes forward: Exp, ElementTimes, ReLU, Log, Sigmoid, Negate, Tanh,
 * Minus and Plus with broadcast columns and constants. */
START_TEST(values_elementwise)
{
    struct backend *b = make_backend();
    struct nn *net = make_bs_net(b,
                                 "features = Input (2)\nlabels = Input (2)\n"
                                 "W = Parameter (2, 2)\nb = Parameter (2)\nc = Parameter (2)\n"
                                 "h = W * features + b\n"
                                 "o = Exp (h) .* c - ReLU (h) + Log (Sigmoid (h)) - "
                                 "Negate (Tanh (h)) + (1 - h) .* 0.5\n"
                                 "se = SquareError (labels, o)\ncriterionNodes = (se)\n"
                                 "outputNodes = (o)\n",
                                 5);
    static const float w[4] = {0.5f, -1, 0.25f, 2}, bias[2] = {0.1f, -0.3f}, c[2] = {0.5f, -2};
    static const float x[8] = {1, 0, -1, 0.5f, 0.3f, -0.7f, 2, 1};
    static const float y[8] = {1, 2, 3, 4, -1, -2, 0, 0.5f};
    set_tensor(net, "W", w);
    set_tensor(net, "b", bias);
    set_tensor(net, "c", c);
    struct minibatch mb = {0};
    set_input(&mb, "features", 2, 4, x);
    set_input(&mb, "labels", 2, 4, y);
    struct nn_stats st;
    struct pt_err e = {0};
    ck_assert_msg(nn_evaluate(net, &mb, &st, &e) == 0, "%s", e.msg);
    float out[8];
    size_t rows, cols;
    ck_assert_int_eq(nn_get_output(net, out, 8, &rows, &cols, &e), 0);
    ck_assert_uint_eq(rows * cols, 8);
    double se = 0;
    for (int j = 0; j < 4; j++) {
        double h[2];
        affine(w, bias, x + 2 * j, 2, 2, h);
        for (int i = 0; i < 2; i++) {
            double o = exp(h[i]) * c[i] - fmax(h[i], 0) + log(sigmoid(h[i])) + tanh(h[i]) +
                       (1 - h[i]) * 0.5;
            ck_assert_msg(fabs(out[2 * j + i] - o) < 1e-5 * fmax(1, fabs(o)), "o[%d,%d] %g want %g",
                          i, j, out[2 * j + i], o);
            se += (o - y[2 * j + i]) * (o - y[2 * j + i]);
        }
    }
    ck_assert_msg(fabs(st.train_crit - se) < 1e-5 * se, "SquareError %.9g want %.9g", st.train_crit,
                  se);
    mb_free(&mb);
    nn_free(net);
    backend_free(b);
}
END_TEST

/* ------------------------------------------------------------------ shapes and errors */

START_TEST(inferred_dimensions)
{
    struct backend *b = make_backend();
    struct nn_config cfg;
    struct pt_err e = {0};
    const char *body =
        "features = Input (3)\nlabels = Input (4)\n"
        "W = Parameter (5, Inferred)\nb = ParameterTensor (Inferred)\n"
        "h = Tanh (W * features + b)\n"
        "model = Sequential (DenseLayer {6, activation = Sigmoid} : LinearLayer {4})\n"
        "z = model (h)\n" CE("z");
    ck_assert_msg(parse_bs(body, &cfg, &e) == 0, "%s", e.msg);
    ck_assert_int_eq(cfg.rnn, NN_GRAPH);
    ck_assert_int_eq(cfg.sizes[0], 3);
    ck_assert_int_eq(cfg.sizes[cfg.nsizes - 1], 4);
    ck_assert_str_eq(cfg.labels_input, "labels");
    ck_assert_str_eq(cfg.train_name, "ce");
    struct nn *net = make_bs_net(b, body, 1);
    /* W 5 x 3, b 5, DenseLayer 6 x 5 + 6, LinearLayer 4 x 6 + 4 */
    ck_assert_uint_eq(nn_param_count(net), 15 + 5 + 36 + 28);
    const struct nn_tensor *w = tensor_named(net, "W"), *bt = tensor_named(net, "b");
    ck_assert_ptr_nonnull(w);
    ck_assert_ptr_nonnull(bt);
    ck_assert_int_eq(w->rows, 5);
    ck_assert_int_eq(w->cols, 3);
    ck_assert_int_eq(bt->rows, 5);
    ck_assert_int_eq(bt->cols, 1);
    size_t nt = 0, off = 0;
    const struct nn_tensor *t = nn_tensors(net, &nt);
    ck_assert_uint_eq(nt, 6);
    int seen_dense = 0, seen_linear = 0;
    for (size_t i = 0; i < nt; i++) {
        ck_assert_uint_eq(t[i].offset, off);
        off += (size_t)t[i].rows * (size_t)t[i].cols;
        seen_dense += t[i].rows == 6 && t[i].cols == 5;
        seen_linear += t[i].rows == 4 && t[i].cols == 6;
    }
    ck_assert_uint_eq(off, nn_param_count(net));
    ck_assert_int_eq(seen_dense + seen_linear, 2);
    int nodes = 0, with_grad = 0;
    ck_assert_int_eq(nn_node_counts(net, &nodes, &with_grad), 1);
    ck_assert_int_gt(nodes, with_grad);
    nn_free(net);
    /* the same network with every dimension given has the same parameter count */
    net = make_bs_net(b,
                      "features = Input (3)\nlabels = Input (4)\n"
                      "W = Parameter (5, 3)\nb = Parameter (5, 1)\nh = Tanh (W * features + b)\n"
                      "W1 = Parameter (6, 5)\nb1 = Parameter (6)\nW2 = Parameter (4, 6)\n"
                      "b2 = Parameter (4)\nz = W2 * Sigmoid (W1 * h + b1) + b2\n" CE("z"),
                      1);
    ck_assert_uint_eq(nn_param_count(net), 15 + 5 + 36 + 28);
    nn_free(net);
    backend_free(b);
}
END_TEST

START_TEST(shape_errors)
{
    /* Times: the parameter's columns against the input's rows; the message names the
     * expression's FILE:LINE:COL and both shapes */
    const char *msg = bs_error_of(IO "W = Parameter (4, 5)\nz = W * features\n" CE("z"));
    ck_assert_msg(strstr(msg, "g.cfg:5:5: error: Times:") && strstr(msg, "[4 x 5]") &&
                      strstr(msg, "[3 x samples]"),
                  "%s", msg);
    ck_assert_str_eq(msg, "g.cfg:5:5: error: Times: operands of shapes [4 x 5] and [3 x samples]: "
                          "the left operand's columns must equal the right's rows");
    /* Plus: a bias of the wrong dimension */
    msg = bs_error_of(IO WB "z = W * features + Parameter (3, 1)\n" CE("z"));
    ck_assert_str_eq(msg, "g.cfg:6:5: error: Plus: operands of shapes [4 x samples] and [3 x 1]: "
                          "the rows must be equal");
    /* ElementTimes of two fixed widths that do not broadcast */
    msg = bs_error_of(IO WB "z = W * features .* Parameter (4, 2)\n" CE("z"));
    ck_assert_msg(strstr(msg, "ElementTimes: operands of shapes [4 x samples] and [4 x 2]: the "
                              "columns must be equal, or one operand one column"),
                  "%s", msg);
    /* Times with an input on the left */
    msg = bs_error_of(IO WB "z = features * W\n" CE("z"));
    ck_assert_msg(strstr(msg, "g.cfg:6:5: error: Times: ") &&
                      strstr(msg, "the left operand must be a parameter or constant"),
                  "%s", msg);
    /* a criterion compares equal dimensions */
    msg = bs_error_of(IO "W = Parameter (3, 3)\nz = W * features\n" CE("z"));
    ck_assert_str_eq(msg, "g.cfg:6:6: error: CrossEntropyWithSoftmax: operands of shapes "
                          "[4 x samples] and [3 x samples]: a criterion compares two per-sample "
                          "operands of equal dimension (labels first)");
    /* a dimension nothing fixes */
    msg = bs_error_of(IO WB "u = Parameter (4, Inferred)\nz = W * features + u\n" CE("z"));
    ck_assert_msg(strstr(msg, "g.cfg:6:5: error: Parameter u: its dimensions could not be "
                              "inferred"),
                  "%s", msg);
    msg = bs_error_of(IO WB "u = Parameter (Inferred, 1)\nz = W * features + Tanh (u)\n" CE("z"));
    ck_assert_msg(strstr(msg, "g.cfg:7:20: error: Tanh: the input's dimension is not known"), "%s",
                  msg);
    /* an unused definition is never evaluated (lazy, as in CNTK): no error */
    struct nn_config cfg;
    struct pt_err e = {0};
    ck_assert_int_eq(
        parse_bs(IO WB "u = Parameter (Inferred, 1)\nz = W * features + b\n" CE("z"), &cfg, &e), 0);
}
END_TEST

START_TEST(criterion_errors)
{
    /* the first operand of a criterion must be an Input (the labels) */
    const char *msg = bs_error_of(IO WB "z = W * features\n"
                                        "ce = CrossEntropyWithSoftmax (z, labels)\n"
                                        "criterionNodes = (ce)\n");
    ck_assert_msg(strstr(msg, "g.cfg:7:6: ") && strstr(msg, "CrossEntropyWithSoftmax"), "%s", msg);
    ck_assert_str_eq(msg, "g.cfg:7:6: error: CrossEntropyWithSoftmax: the first operand (labels) "
                          "must be an Input node, got Times");
    msg = bs_error_of(IO WB "z = W * features + b\nce = CrossEntropyWithSoftmax (labels, z)\n"
                            "err = SquareError (Tanh (labels), z)\n"
                            "criterionNodes = (ce)\nevaluationNodes = (err)\n");
    ck_assert_msg(strstr(msg, "g.cfg:8:7: error: SquareError: the first operand (labels) must be "
                              "an Input node, got Tanh"),
                  "%s", msg);
    /* criterionNodes must name a criterion */
    msg = bs_error_of(IO WB "z = W * features + b\ncriterionNodes = (z)\n");
    ck_assert_msg(strstr(msg, "criterionNodes: 'z' is a Plus node, not a criterion"), "%s", msg);
    /* a criterion is not an operand */
    msg = bs_error_of(IO WB "z = W * features + b\nce = CrossEntropyWithSoftmax (labels, z)\n"
                            "x = Tanh (ce)\ncriterionNodes = (ce)\noutputNodes = (x)\n");
    ck_assert_msg(strstr(msg, "a criterion (CrossEntropyWithSoftmax) is used as an operand"), "%s",
                  msg);
    /* no criterion at all */
    msg = bs_error_of(IO WB "z = W * features + b\n");
    ck_assert_msg(strstr(msg, "the network has no criterionNodes"), "%s", msg);
}
END_TEST

/* Inputs are bound by name: a missing one and one of another dimension are errors that
 * name the Input's definition. */
START_TEST(input_binding_errors)
{
    struct backend *b = make_backend();
    struct nn *net = make_bs_net(b, IO WB "z = W * features + b\n" CE("z"), 1);
    struct minibatch mb = {0};
    uint64_t rng = 3;
    struct nn_stats st;
    struct pt_err e = {0};
    fill_input(&mb, "features", 3, 4, 1, NULL, 0, &rng);
    pt_err_clear(&e);
    ck_assert_int_eq(nn_train_step(net, &mb, 0.0f, &st, &e), PT_EUSER);
    ck_assert_str_eq(e.msg, "g.cfg:3:10: error: the network's Input 'labels' has no reader input "
                            "of that name (dim 4)");
    fill_input(&mb, "labels", 5, 4, 1, NULL, 1, &rng);
    pt_err_clear(&e);
    ck_assert_int_eq(nn_evaluate(net, &mb, &st, &e), PT_EUSER);
    ck_assert_msg(strstr(e.msg, "the network's Input 'labels' has dimension 4, the reader's input "
                                "'labels' dim 5"),
                  "%s", e.msg);
    fill_input(&mb, "labels", 4, 4, 1, NULL, 1, &rng);
    ck_assert_int_eq(nn_evaluate(net, &mb, &st, &e), 0);
    ck_assert_uint_eq(st.samples, 4);
    mb_free(&mb);
    nn_free(net);
    backend_free(b);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("graph");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, gradients, 0, (int)COUNT(cases));
    tcase_add_test(tc, values_sigmoid_square_logistic);
    tcase_add_test(tc, values_softmax_ce_errors);
    tcase_add_test(tc, values_elementwise);
    tcase_add_test(tc, inferred_dimensions);
    tcase_add_test(tc, shape_errors);
    tcase_add_test(tc, criterion_errors);
    tcase_add_test(tc, input_binding_errors);
    suite_add_tcase(s, tc);
    int rc = run_suite(s);
    if (grad_checks_total) /* counted only when the tests run in this process */
        printf("graph: %d parameter gradients checked\n", grad_checks_total);
    return rc;
}
