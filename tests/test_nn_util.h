/* Helpers shared by the network tests (header-only): networks from config text, random
 * minibatches in the reader's layout, and a finite-difference gradient check. */
#ifndef PT_TESTS_TEST_NN_UTIL_H
#define PT_TESTS_TEST_NN_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "math/backend.h"
#include "nn/nn.h"
#include "data/minibatch.h"
#include "testutil.h"

/* Parse "SimpleNetworkBuilder = [ body ]" (file "n.cfg", the block on line 1) into *out.
 * Returns the error code; the message is in *e. */
static inline int parse_net_config(const char *body, struct nn_config *out, struct pt_err *e)
{
    char text[4096];
    snprintf(text, sizeof text, "SimpleNetworkBuilder = [\n%s\n]\n", body);
    struct cfg *c = load("n.cfg", text, e);
    ck_assert_msg(e->code == 0, "%s", e->msg);
    int rc = nn_config_read(node_at(c, "SimpleNetworkBuilder"), out, e);
    cfg_free(c);
    return rc;
}

static inline struct nn *make_net(struct backend *b, const char *body, uint64_t seed)
{
    struct nn_config cfg;
    struct pt_err e = {0};
    pt_err_clear(&e);
    ck_assert_msg(parse_net_config(body, &cfg, &e) == 0, "%s", e.msg);
    struct nn *net = NULL;
    ck_assert_msg(nn_new(&cfg, b, seed, &net, &e) == 0, "%s", e.msg);
    return net;
}

/* The backend the network tests run on: the CPU, or GPU 0 with PT_TEST_BACKEND=cuda
 * (tests/test_gpu_nn.sh in make check-gpu: the same gradient checks and layer tests on the
 * cuBLAS backend; the tests reach its memory only through nn_get_* / nn_set_*). */
static inline struct backend *make_backend(void)
{
    struct backend *b = NULL;
    struct pt_err e = {0};
    pt_err_clear(&e);
    const char *want = getenv("PT_TEST_BACKEND");
    if (want && strcmp(want, "cuda") == 0) {
        ck_assert_msg(backend_cuda_new(&b, 0, NULL, 0, &e) == 0, "%s", e.msg);
        return b;
    }
    ck_assert_int_eq(backend_cpu_new(&b, &e), 0);
    return b;
}

/* A tiny deterministic generator for test data. */
static inline double test_uniform(uint64_t *state)
{
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*state >> 11) * (1.0 / 9007199254740992.0);
}

/* Input `name` of mb: dim x (steps x nseq), len[s] real rows each; real columns get
 * uniform values in [-1, 1] (one_hot: a one-hot vector of a random class), padding 0. */
static inline void fill_input(struct minibatch *mb, const char *name, int dim, size_t nseq,
                              size_t steps, const uint32_t *len, int one_hot, uint64_t *rng)
{
    struct pt_err e = {0};
    struct mb_input *in = mb_find(mb, name);
    if (!in) {
        in = &mb->in[mb->ninputs++];
        snprintf(in->name, sizeof in->name, "%s", name);
    }
    in->dim = dim;
    ck_assert_int_eq(mb_input_reset(in, nseq, steps, &e), 0);
    for (size_t s = 0; s < nseq; s++) {
        in->len[s] = len ? len[s] : (uint32_t)steps;
        for (size_t t = 0; t < in->len[s]; t++) {
            float *col = in->data + (t * nseq + s) * (size_t)dim;
            int hot = (int)(test_uniform(rng) * dim);
            for (int i = 0; i < dim; i++)
                col[i] = one_hot ? (float)(i == hot) : (float)(test_uniform(rng) * 2.0 - 1.0);
        }
    }
    mb->nseq = nseq;
}

/* Add uniform noise in [-amp, amp] to every parameter: biases start at exactly 0, and a
 * ReLU unit whose input is 0 then sits on its kink, where finite differences see half a
 * slope. */
static inline void jitter_params(struct nn *net, float amp, uint64_t seed)
{
    struct pt_err e = {0};
    size_t n = nn_param_count(net);
    float *p = malloc(n * sizeof *p);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(nn_get_params(net, p, &e), 0);
    for (size_t k = 0; k < n; k++)
        p[k] += (float)((test_uniform(&seed) * 2.0 - 1.0) * amp);
    ck_assert_int_eq(nn_set_params(net, p, &e), 0);
    free(p);
}

/* Perturb parameter k by delta and return the training criterion. rate 0: evaluation;
 * else a training step at dropout stream position 1000, so every call draws the same mask. */
static inline double crit_at(struct nn *net, struct minibatch *mb, float *host, size_t k,
                             float delta, float rate)
{
    struct pt_err e = {0};
    struct nn_stats st;
    float keep = host[k];
    host[k] = keep + delta;
    ck_assert_int_eq(nn_set_params(net, host, &e), 0);
    nn_set_dropout_state(net, 1000);
    if (rate > 0.0f)
        ck_assert_msg(nn_train_step(net, mb, rate, &st, &e) == 0, "%s", e.msg);
    else
        ck_assert_msg(nn_evaluate(net, mb, &st, &e) == 0, "%s", e.msg);
    host[k] = keep;
    return st.train_crit;
}

/* Which tensor holds parameter k. */
static inline size_t tensor_of(struct nn *net, size_t k)
{
    size_t n = 0;
    const struct nn_tensor *t = nn_tensors(net, &n);
    for (size_t i = 0; i + 1 < n; i++)
        if (k < t[i + 1].offset)
            return i;
    return n - 1;
}

/* Finite-difference check of probes parameters (every one when probes >= count): central
 * differences with step eps. A probe fails when |analytic - numeric| exceeds
 * 1e-2 max(|analytic|, |numeric|) + abs_tol; a tensor fails when the norm of its probes'
 * differences exceeds 1e-2 of the norm of their numeric gradients (so a small but
 * systematic error in a tensor of small gradients shows). Returns the failures; *checked
 * counts the probes. rate > 0 checks through a fixed dropout mask. */
static inline int grad_check_rate(struct nn *net, struct minibatch *mb, size_t probes, float eps,
                                  double abs_tol, float rate, int *checked)
{
    struct pt_err e = {0};
    struct nn_stats st;
    size_t n = nn_param_count(net), nt = 0;
    float *host = malloc(n * sizeof *host), *grad = malloc(n * sizeof *grad);
    const struct nn_tensor *t = nn_tensors(net, &nt);
    double diff2[64] = {0}, num2[64] = {0};
    ck_assert(nt <= 64);
    nn_set_dropout_state(net, 1000);
    ck_assert_msg(nn_train_step(net, mb, rate, &st, &e) == 0, "%s", e.msg);
    ck_assert_int_eq(nn_get_grads(net, grad, &e), 0);
    ck_assert_int_eq(nn_get_params(net, host, &e), 0);
    uint64_t rng = 12345;
    int failures = 0, kinks = 0;
    *checked = 0;
    for (size_t p = 0; p < (probes < n ? probes : n); p++) {
        size_t k = probes >= n ? p : (size_t)(test_uniform(&rng) * (double)n);
        float up = host[k] + eps, down = host[k] - eps; /* the steps floats can take */
        double f_up = crit_at(net, mb, host, k, up - host[k], rate);
        double f_down = crit_at(net, mb, host, k, down - host[k], rate);
        double num = (f_up - f_down) / ((double)up - (double)down);
        double ana = grad[k];
        /* A ReLU kink inside [down, up] makes the two one-sided slopes disagree; finite
         * differences say nothing there, so such probes are skipped when the analytic
         * gradient equals one side's slope (at most 2 % of probes). */
        double f0 = crit_at(net, mb, host, k, 0.0f, rate);
        double fwd = (f_up - f0) / ((double)up - host[k]),
               bwd = (f0 - f_down) / (host[k] - (double)down);
        int nonsmooth = fabs(fwd - bwd) > 2e-2 * fmax(fabs(fwd), fabs(bwd)) + 2 * abs_tol;
        int one_side = fabs(ana - fwd) <= 1e-2 * fabs(fwd) + abs_tol ||
                       fabs(ana - bwd) <= 1e-2 * fabs(bwd) + abs_tol;
        if (nonsmooth && one_side) { /* a wrong gradient matches neither side */
            kinks++;
            (*checked)++;
            continue;
        }
        double tol = 1e-2 * fmax(fabs(ana), fabs(num)) + abs_tol;
        diff2[tensor_of(net, k)] += (ana - num) * (ana - num);
        num2[tensor_of(net, k)] += num * num;
        if (fabs(ana - num) > tol) {
            if (failures < 5)
                fprintf(stderr, "grad_check: param %zu analytic %.6g numeric %.6g\n", k, ana, num);
            failures++;
        }
        (*checked)++;
    }
    for (size_t i = 0; i < nt; i++)
        if (num2[i] > 0 && sqrt(diff2[i] / num2[i]) > 1e-2) {
            fprintf(stderr, "grad_check: tensor %s relative error %.3g\n", t[i].name,
                    sqrt(diff2[i] / num2[i]));
            failures++;
        }
    ck_assert_msg(kinks * 50 <= *checked, "grad_check: %d of %d probes sit on a kink", kinks,
                  *checked);
    ck_assert_int_eq(nn_set_params(net, host, &e), 0);
    free(host);
    free(grad);
    return failures;
}

static inline int grad_check(struct nn *net, struct minibatch *mb, size_t probes, float eps,
                             double abs_tol, int *checked)
{
    return grad_check_rate(net, mb, probes, eps, abs_tol, 0.0f, checked);
}

#endif
