/* A team of networks (nn_set_team) against one network: two members, each in its own
 * thread with its own backend and network, share one model in memory and train on their
 * shares of each minibatch; after every step their shared parameters and momentum must be
 * the very bits one network has after training on the whole minibatch (member 0's columns,
 * then member 1's) with the same fused momentum SGD step: every product's elements are the
 * same dot products in the same order, however the work is shared out. Also shares a
 * member has nothing of, uneven shares, and Sigmoid layers (f' applied by column). */
#include <pthread.h>

#include "test_nn_util.h"

#define STEPS    4
#define MAX_MEMS 64

/* partrain's AVX-512 kernel runs every product (the team's shares and the whole ones alike:
 * the shapes below keep each on it), so the bits must agree; without AVX-512F, OpenBLAS
 * (one thread) sums in its own blocks, and the parameters must agree within 1e-5. */
static int own_kernel;

/* What the two members share: a table of the memory the team allocated (member 0
 * allocates, both see the same block: the order of the collective calls matches) and the
 * gather's slots. */
struct shared {
    pthread_barrier_t bar;
    float *mem[MAX_MEMS];
    size_t vals[2];
};

struct member {
    struct shared *s;
    struct nn_team t;
    size_t scratch[4];
    int allocs;
};

static int t_alloc(void *ctx, size_t n, float **out, struct pt_err *e)
{
    (void)e;
    struct member *m = ctx;
    int k = m->allocs++;
    ck_assert_int_lt(k, (int)MAX_MEMS);
    if (m->t.rank == 0)
        m->s->mem[k] = calloc(n + 1, sizeof(float));
    pthread_barrier_wait(&m->s->bar);
    *out = m->s->mem[k];
    return 0;
}

static void t_release(void *ctx, float *p, size_t n)
{
    (void)ctx;
    (void)p;
    (void)n; /* the test frees the table at its end */
}

static int t_sync(void *ctx, struct pt_err *e)
{
    (void)e;
    struct member *m = ctx;
    pthread_barrier_wait(&m->s->bar);
    return 0;
}

static int t_gather(void *ctx, size_t v, size_t *all, struct pt_err *e)
{
    (void)e;
    struct member *m = ctx;
    m->s->vals[m->t.rank] = v;
    pthread_barrier_wait(&m->s->bar);
    all[0] = m->s->vals[0];
    all[1] = m->s->vals[1];
    pthread_barrier_wait(&m->s->bar);
    return 0;
}

/* Columns [from, from + n) of a one-step input into out (the same name and dim). */
static void slice(struct minibatch *out, const struct minibatch *full, size_t from, size_t n)
{
    struct pt_err e = {0};
    out->ninputs = full->ninputs;
    for (int i = 0; i < full->ninputs; i++) {
        const struct mb_input *src = &full->in[i];
        struct mb_input *dst = &out->in[i];
        snprintf(dst->name, sizeof dst->name, "%s", src->name);
        dst->dim = src->dim;
        ck_assert_int_eq(mb_input_reset(dst, n, 1, &e), 0);
        for (size_t s = 0; s < n; s++)
            dst->len[s] = 1;
        if (n)
            memcpy(dst->data, src->data + from * (size_t)src->dim,
                   n * (size_t)src->dim * sizeof(float));
    }
    out->nseq = n;
}

struct job {
    struct member *m;
    const char *net;
    struct minibatch mb[STEPS];
    struct bk_sgd u;
    float *momentum; /* shared, from nn_set_team */
    float *params;   /* host copy after each step, for the comparison */
    size_t n;
    double crit[STEPS];
};

static void *member_main(void *arg)
{
    struct job *j = arg;
    struct pt_err e = {0};
    struct backend *b = make_backend();
    struct nn *net = make_net(b, j->net, 7);
    j->n = nn_param_count(net);
    float *zeros = calloc(j->n, sizeof *zeros);
    float *mem = zeros;
    ck_assert_msg(nn_set_team(net, &j->m->t, &mem, j->n, 4, &e) == 0, "%s", e.msg);
    free(zeros);
    j->momentum = mem;
    for (int k = 0; k < STEPS; k++) {
        struct nn_stats st;
        ck_assert_msg(nn_train_forward(net, &j->mb[k], 0.0f, &st, &e) == 0, "%s", e.msg);
        struct bk_sgd u = j->u;
        u.s = mem;
        if (st.team_samples)
            nn_set_fused_sgd(net, &u);
        ck_assert_msg(nn_train_backward(net, &st, &e) == 0, "%s", e.msg);
        j->crit[k] = st.train_crit;
        ck_assert_int_eq(nn_get_params(net, j->params + (size_t)k * j->n, &e), 0);
    }
    nn_free(net);
    backend_free(b);
    return NULL;
}

/* One network on the whole minibatches against a team of two on shares of own[k] and
 * the rest: the same parameters after every step, bit for bit. */
static void team_matches_one(const char *desc, const size_t *own, size_t total)
{
    struct pt_err e = {0};
    uint64_t rng = 42;
    struct minibatch full[STEPS];
    memset(full, 0, sizeof full);
    struct job jobs[2];
    memset(jobs, 0, sizeof jobs);
    for (int k = 0; k < STEPS; k++) {
        fill_input(&full[k], "features", 6, total, 1, NULL, 0, &rng);
        fill_input(&full[k], "labels", 3, total, 1, NULL, 1, &rng);
        slice(&jobs[0].mb[k], &full[k], 0, own[k]);
        slice(&jobs[1].mb[k], &full[k], own[k], total - own[k]);
    }
    struct bk_sgd u = {.m = 0.9f, .a = 0.01f, .nag = 0};
    /* the reference: one network, the fused step over the whole minibatch */
    struct backend *b = make_backend();
    struct nn *ref = make_net(b, desc, 7);
    size_t n = nn_param_count(ref);
    float *s = NULL, *want = malloc(n * sizeof *want);
    ck_assert_int_eq(bk_alloc_zero(b, n, &s, &e), 0);
    struct shared sh;
    memset(&sh, 0, sizeof sh);
    pthread_barrier_init(&sh.bar, NULL, 2);
    struct member mem[2];
    pthread_t th[2];
    for (int r = 0; r < 2; r++) {
        mem[r] = (struct member){.s = &sh};
        mem[r].t = (struct nn_team){.rank = r,
                                    .size = 2,
                                    .scratch = mem[r].scratch,
                                    .ctx = &mem[r],
                                    .alloc = t_alloc,
                                    .release = t_release,
                                    .sync = t_sync,
                                    .gather = t_gather};
        jobs[r].m = &mem[r];
        jobs[r].net = desc;
        jobs[r].u = u;
        jobs[r].params = malloc((size_t)STEPS * n * sizeof(float));
        ck_assert_int_eq(pthread_create(&th[r], NULL, member_main, &jobs[r]), 0);
    }
    for (int r = 0; r < 2; r++)
        pthread_join(th[r], NULL);
    for (int k = 0; k < STEPS; k++) {
        struct nn_stats st;
        struct bk_sgd v = u;
        v.s = s;
        ck_assert_msg(nn_train_forward(ref, &full[k], 0.0f, &st, &e) == 0, "%s", e.msg);
        nn_set_fused_sgd(ref, &v);
        ck_assert_msg(nn_train_backward(ref, &st, &e) == 0, "%s", e.msg);
        ck_assert_int_eq(nn_get_params(ref, want, &e), 0);
        for (int r = 0; r < 2; r++) {
            const float *got = jobs[r].params + (size_t)k * n;
            size_t bad = 0;
            for (size_t i = 0; i < n; i++)
                bad += own_kernel ? memcmp(&got[i], &want[i], sizeof *got) != 0
                                  : !(fabsf(got[i] - want[i]) <= 1e-5f * fabsf(want[i]) + 1e-7f);
            ck_assert_msg(bad == 0, "step %d, member %d: %zu of %zu parameters differ", k + 1, r,
                          bad, n);
        }
        double team = jobs[0].crit[k] + jobs[1].crit[k];
        ck_assert_msg(fabs(team - st.train_crit) <= 1e-5 * fabs(st.train_crit),
                      "step %d: criterion %.9g against %.9g", k + 1, team, st.train_crit);
    }
    ck_assert_msg(memcmp(jobs[0].momentum, s, n * sizeof *s) == 0, "the momentum differs");
    for (int k = 0; k < MAX_MEMS; k++)
        free(sh.mem[k]);
    pthread_barrier_destroy(&sh.bar);
    for (int r = 0; r < 2; r++) {
        free(jobs[r].params);
        for (int k = 0; k < STEPS; k++)
            mb_free(&jobs[r].mb[k]);
    }
    for (int k = 0; k < STEPS; k++)
        mb_free(&full[k]);
    free(want);
    b->ops->release(b, s);
    nn_free(ref);
    backend_free(b);
}

#define NET(sizes, types)                                                                          \
    "layerSizes=" sizes "\nlayerTypes=" types "\ntrainingCriterion=CrossEntropyWithSoftmax\n"      \
    "evalCriterion=ClassificationError\n"

/* The cases: a network, each step's share of member 0 (member 1 has the rest) and the
 * minibatch's columns. ReLU (its derivative fused into the dx products) with even shares,
 * then member 1 alone, member 0 alone, 40/24 and 1/63; Sigmoid and Tanh (f' after the
 * product) with a wide first layer; a small minibatch with a last step of member 1 only. */
static const struct team_case {
    const char *net;
    size_t own[STEPS], total;
} cases[] = {
    {NET("6:70:64:3", "RectifiedLinear"), {32, 32, 32, 32}, 64},
    {NET("6:70:64:3", "RectifiedLinear"), {0, 64, 40, 1}, 64},
    {NET("6:300:64:3", "Sigmoid:Tanh"), {150, 100, 0, 77}, 200},
    {NET("6:64:3", "Sigmoid"), {3, 5, 8, 0}, 8},
};

START_TEST(team_matches)
{
    team_matches_one(cases[_i].net, cases[_i].own, cases[_i].total);
}
END_TEST

int main(void)
{
    struct pt_err e = {0};
    backend_cpu_set_threads(1, 1);
    own_kernel = backend_cpu_set_gemm(2, &e) == 0;
    if (!own_kernel)
        printf("no AVX-512F: the team and one network compared within 1e-5\n");
    Suite *s = suite_create("nn_team");
    TCase *tc = tcase_create("team");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, team_matches, 0, (int)(sizeof cases / sizeof cases[0]));
    suite_add_tcase(s, tc);
    return run_suite(s);
}
