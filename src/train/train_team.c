/* DataParallelSGD with the ranks of one host sharing one model (nn_set_team): where every
 * rank runs on this host, at full precision in every epoch, unbuffered and without
 * overlap, with momentum SGD that can run inside the backward pass and a network of dense
 * layers, the parameters, the momentum and every rank's activations live in shared memory.
 * Each rank updates its slice of the model from all ranks' columns, so no gradient is
 * summed or sent (bench/RESULTS.md: the 2-rank step's allreduce and update pass were 16 %
 * of it). ParallelTrain's shareModelInHost=false keeps the gradient allreduce. */
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "math/backend.h"
#include "train/train_run.h"

struct run_team {
    struct nn_team t;
    struct comm *comm;
    long long *all; /* one per rank: gather's exchange */
    float *s1;      /* the learner's momentum (team memory), n floats */
    size_t n;
};

static int t_alloc(void *ctx, size_t n, float **out, struct pt_err *e)
{
    struct run_team *rt = ctx;
    void *p = NULL;
    int rc = comm_shared_alloc(rt->comm, n * sizeof(float), &p, e);
    *out = p;
    return rc;
}

static void t_release(void *ctx, float *p, size_t n)
{
    (void)ctx;
    comm_shared_free(p, n * sizeof(float));
}

static int t_sync(void *ctx, struct pt_err *e)
{
    struct run_team *rt = ctx;
    return comm_shared_sync(rt->comm, e);
}

static int t_gather(void *ctx, size_t v, size_t *all, struct pt_err *e)
{
    struct run_team *rt = ctx;
    long long mine = (long long)v;
    __atomic_thread_fence(__ATOMIC_SEQ_CST); /* also a sync: the writes before it are seen */
    int rc = comm_allgather(rt->comm, &mine, 1, rt->all, COMM_INT64, e);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    for (int k = 0; rc == 0 && k < rt->t.size; k++)
        all[k] = (size_t)rt->all[k];
    return rc;
}

/* Whether this rank could train in a team (the ranks then agree). */
static int eligible(struct run *r)
{
    struct learn_epoch ep;
    struct bk_sgd u;
    learn_epoch_params(&r->lc, 0, &ep);
    /* (autoAdjustMinibatch's sizes are not known when the team's workspace is sized) */
    return r->pc.share_host && !r->lc.aa.auto_mb && parallel_config_epoch_on(&r->pc, 0) &&
           engine_can_share(r->engine) && nn_can_team(r->net) && r->be->host_memory &&
           learner_fused_sgd(&r->learner, &r->lc, &ep, 1, &u);
}

int run_team_setup(struct run *r, struct pt_err *e)
{
    struct comm *c = r->ctx->comm;
    if (r->workers < 2)
        return 0;
    /* what could fail on one rank alone comes before the ranks agree */
    size_t w = (size_t)r->workers;
    struct run_team *rt = calloc(1, sizeof *rt);
    long long *all = calloc(w, sizeof *all);
    size_t *scratch = calloc(2 * w, sizeof *scratch);
    int ok = rt && all && scratch && eligible(r);
    int rc = comm_allreduce(c, &ok, 1, COMM_INT, COMM_MIN, e);
    if (rc == 0 && ok)
        rc = comm_all_local(c, &ok, e);
    if (rc || !ok) {
        free(rt);
        free(all);
        free(scratch);
        return rc;
    }
    *rt = (struct run_team){.t = {.rank = r->rank,
                                  .size = r->workers,
                                  .scratch = scratch,
                                  .ctx = rt,
                                  .alloc = t_alloc,
                                  .release = t_release,
                                  .sync = t_sync,
                                  .gather = t_gather},
                            .comm = c,
                            .all = all,
                            .n = nn_param_count(r->net)};
    float *s1 = r->learner.s1;
    size_t cols = 0; /* the largest minibatch of the schedule: the workspace's size now */
    for (size_t ep = 0; ep < (size_t)r->lc.max_epochs; ep++) {
        struct learn_epoch le;
        learn_epoch_params(&r->lc, ep, &le);
        cols = le.mb_size > cols ? le.mb_size : cols;
    }
    /* its failures are the ranks' together (comm_shared_alloc agrees on them): a host
     * without room in /dev/shm trains with the gradient allreduce */
    if ((rc = nn_set_team(r->net, &rt->t, &s1, rt->n, cols, e)) != 0) {
        if (run_may_log(r))
            pt_log_printf(r->ctx->log,
                          "warning: %s; DataParallelSGD sums the gradients "
                          "instead\n",
                          strncmp(e->msg, "error: ", 7) ? e->msg : e->msg + 7);
        pt_err_clear(e);
        free(all);
        free(scratch);
        free(rt);
        return 0;
    }
    learner_lend_s1(&r->learner, s1);
    rt->s1 = s1;
    engine_share(r->engine, nn_params(r->net));
    r->team = rt;
    if (r->trace > 0 && run_may_log(r))
        pt_log_printf(r->ctx->log,
                      "DataParallelSGD: the %d ranks of this host share one model in memory "
                      "(each updates its share of it; no gradient is summed).\n",
                      r->workers);
    return 0;
}

void run_team_release_state(struct run *r)
{
    if (r->team)
        nn_team_release(r->net, r->team->s1, r->team->n);
}

void run_team_free(struct run *r)
{
    struct run_team *rt = r->team;
    if (!rt)
        return;
    free(rt->all);
    free(rt->t.scratch);
    free(rt);
    r->team = NULL;
}
