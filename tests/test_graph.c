/* BrainScript networks (src/nn/graph.c, graph_nodes.c, graph_rnn.c, bs_eval.c, bs_net.c):
 * gradients of every node kind with a backward pass (every learned parameter against central
 * finite differences of the training criterion; one table row per case), padding that
 * does not count (a padded minibatch against its sequences one by one), forward values
 * computed by hand, shape inference and the errors that name FILE:LINE:COL. */
#include "test_graph.h"

/* ------------------------------------------------------------------ helpers */

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

/* ------------------------------------------------------------------ the gradient table */

#include "test_graph_cases.h"

enum in_kind { RAND, HOT, PROB, BIN, CLS };

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
    int train;     /* "train": the passes are training ones (batch normalization's statistics) */
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
        if (!strcmp(tok, "train")) {
            sp->train = 1;
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
                               : !strcmp(kind, "cls")  ? CLS
                                                       : RAND;
        ck_assert_msg(got == 1 || sp->in[sp->nin].kind != RAND || !strcmp(kind, "rand"),
                      "%s: unknown input kind '%s'", c->name, kind);
        ck_assert_msg(sp->in[sp->nin].kind != CLS || sp->in[sp->nin].dim == 4,
                      "%s: class labels have 4 rows", c->name);
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
                if (kind == CLS && t < m->len[s]) /* a random word of class_label's 9 */
                    class_label((int)((col[0] + 1.0f) * 4.5f) % 9, col);
            }
    }
}

/* One pass: an evaluation (rate 0, no train), or a training step at dropout stream
 * position 1000 (every call draws the same mask). */
static void run_pass(struct nn *net, struct minibatch *mb, float rate, int train,
                     struct nn_stats *st)
{
    struct pt_err e = {0};
    int rc;
    if (rate > 0.0f || train) {
        nn_set_dropout_state(net, 1000);
        rc = nn_train_step(net, mb, rate, st, &e);
    } else
        rc = nn_evaluate(net, mb, st, &e);
    ck_assert_msg(rc == 0, "%s", e.msg);
}

/* The training criterion with parameter k at value x (host holds the others). */
static double crit_with(struct nn *net, struct minibatch *mb, float rate, int train, float *host,
                        size_t k, float x)
{
    struct pt_err e = {0};
    struct nn_stats st;
    float keep = host[k];
    host[k] = x;
    ck_assert_int_eq(nn_set_params(net, host, &e), 0);
    run_pass(net, mb, rate, train, &st);
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
static double central_diff(struct nn *net, struct minibatch *mb, float rate, int train, float *host,
                           size_t k, float eps)
{
    float up = host[k] + eps, down = host[k] - eps;
    return (crit_with(net, mb, rate, train, host, k, up) -
            crit_with(net, mb, rate, train, host, k, down)) /
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
                           int train, int *checked)
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
            double ana = grad[k], fine = central_diff(net, mb, rate, train, host, k, GC_EPS),
                   wide = central_diff(net, mb, rate, train, host, k, GC_EPS_WIDE);
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
    struct nn *net = try_bs_net(b, c->name, c->body, 3);
    if (!net) {
        backend_free(b);
        return;
    }
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
        run_pass(net, &mb, sp.dropout, 0, &tr);
        run_pass(net, &mb, 0.0f, 0, &ev);
        ck_assert_msg(tr.train_crit != ev.train_crit, "%s: no dropout", c->name);
    }
    int checked = 0;
    int bad = check_gradients(c->name, net, &mb, sp.dropout, sp.train, &checked);
    ck_assert_int_eq(checked, (int)nn_learned_count(net)); /* every learned one (not states) */
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

int main(void)
{
    Suite *s = suite_create("graph");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, gradients, 0, (int)COUNT(cases));
    graph_value_tests(tc);
    graph_more_tests(tc);
    graph_reduce_tests(tc);
    graph_classce_tests(tc);
    graph_ctc_tests(tc);
    graph_math_tests(tc);
    graph_lib_tests(tc);
    suite_add_tcase(s, tc);
    int rc = run_suite(s);
    if (grad_checks_total) /* counted only when the tests run in this process */
        printf("graph: %d parameter gradients checked\n", grad_checks_total);
    return rc;
}
