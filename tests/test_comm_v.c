/* tests/test_comm: v-collectives (uneven and zero counts, gaps, in place), point to point
 * and sub-communicators. */
#include <stdlib.h>
#include <string.h>

#include "test_comm.h"

/* A layout of uneven blocks, in reverse rank order with a gap of 2 after each. */
struct layout {
    size_t *counts, *displs;
    size_t total; /* elements of the receive buffer */
};

static struct layout layout_make(int size, int salt)
{
    struct layout l;
    l.counts = calloc((size_t)size, sizeof *l.counts);
    l.displs = calloc((size_t)size, sizeof *l.displs);
    l.total = 0;
    for (int r = size - 1; r >= 0; r--) {
        l.counts[r] = (size_t)((r * 5 + salt) % 4) * 4; /* 0, 4, 8 or 12: zero counts too */
        l.displs[r] = l.total;
        l.total += l.counts[r] + 2;
    }
    return l;
}

static void layout_free(struct layout *l)
{
    free(l->counts);
    free(l->displs);
}

static int value(int from, int to, size_t i)
{
    return from * 10000 + to * 100 + (int)i;
}

/* recv holds every rank's block at its displacement and -1 in the gaps. */
static int gathered(const struct tctx *t, const int *recv, const struct layout *l)
{
    for (int r = 0; r < t->size; r++)
        for (size_t i = 0; i < l->counts[r] + 2; i++) {
            int want = i < l->counts[r] ? value(r, 0, i) : -1;
            if (recv[l->displs[r] + i] != want) {
                tc_note(t, "allgatherv: block %d element %zu is %d, want %d", r, i,
                        recv[l->displs[r] + i], want);
                return 0;
            }
        }
    return 1;
}

static void allgatherv_all(struct tctx *t)
{
    for (int salt = 0; salt < 2; salt++) {
        struct pt_err e;
        pt_err_clear(&e);
        struct layout l = layout_make(t->size, salt);
        size_t n = l.counts[t->rank];
        int *send = malloc((n + 1) * sizeof *send), *recv = malloc(l.total * sizeof *recv);
        for (size_t i = 0; i < n; i++)
            send[i] = value(t->rank, 0, i);
        for (size_t i = 0; i < l.total; i++)
            recv[i] = -1;
        int ok = comm_allgatherv(t->c, send, n, recv, l.counts, l.displs, COMM_INT, &e) == 0;
        CHECK(ok && gathered(t, recv, &l), "allgatherv uneven counts, salt %d", salt);
        for (size_t i = 0; i < l.total; i++)
            recv[i] = -1;
        memcpy(recv + l.displs[t->rank], send, n * sizeof *send);
        ok = comm_allgatherv(t->c, recv + l.displs[t->rank], n, recv, l.counts, l.displs, COMM_INT,
                             &e) == 0;
        CHECK(ok && gathered(t, recv, &l), "allgatherv in place, salt %d", salt);
        free(send);
        free(recv);
        layout_free(&l);
    }
    struct pt_err e;
    pt_err_clear(&e);
    size_t *zero = calloc((size_t)t->size, sizeof *zero);
    int x = 0;
    CHECK(tc_err_is(t, comm_allgatherv(t->c, &x, 1, &x, zero, zero, COMM_INT, &e), &e, PT_EINTERNAL,
                    "counts say"),
          "allgatherv refuses n != counts[rank]");
    free(zero);
}

/* How many elements rank `from` sends rank `to`: uneven, some zero. */
static size_t pair_count(int from, int to)
{
    return (size_t)((from * 3 + to * 5) % 4) * 3;
}

static void alltoallv_all(struct tctx *t)
{
    struct pt_err e;
    pt_err_clear(&e);
    size_t p = (size_t)t->size;
    size_t *sc = calloc(p, sizeof *sc), *sd = calloc(p, sizeof *sd);
    size_t *rc = calloc(p, sizeof *rc), *rd = calloc(p, sizeof *rd);
    size_t stot = 0, rtot = 0;
    for (int r = (int)p - 1; r >= 0; r--) { /* blocks in reverse order, gaps of 1 */
        sc[r] = pair_count(t->rank, r);
        sd[r] = stot;
        stot += sc[r] + 1;
        rc[r] = pair_count(r, t->rank);
        rd[r] = rtot;
        rtot += rc[r] + 1;
    }
    int *send = calloc(stot, sizeof *send), *recv = calloc(rtot, sizeof *recv);
    for (size_t r = 0; r < p; r++)
        for (size_t i = 0; i < sc[r]; i++)
            send[sd[r] + i] = value(t->rank, (int)r, i);
    for (size_t i = 0; i < rtot; i++)
        recv[i] = -1;
    int ok = comm_alltoallv(t->c, send, sc, sd, recv, rc, rd, COMM_INT, &e) == 0;
    for (size_t r = 0; ok && r < p; r++)
        for (size_t i = 0; ok && i < rc[r] + 1; i++)
            ok = recv[rd[r] + i] == (i < rc[r] ? value((int)r, t->rank, i) : -1);
    CHECK(ok, "alltoallv uneven and zero counts, gaps");
    free(send);
    free(recv);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
}

static void send_recv(struct tctx *t, size_t n)
{
    struct pt_err e;
    pt_err_clear(&e);
    double *out = malloc(n * sizeof *out), *in = malloc(n * sizeof *in);
    int next = (t->rank + 1) % t->size, prev = (t->rank + t->size - 1) % t->size;
    for (size_t i = 0; i < n; i++)
        out[i] = value(t->rank, next, i);
    int ok = 1, from = -1;
    if (t->size > 1) {
        if (t->rank % 2 == 0)
            ok = comm_send(t->c, out, n, COMM_DOUBLE, next, 3, &e) == 0 &&
                 comm_recv(t->c, in, n, COMM_DOUBLE, prev, 3, &from, &e) == 0;
        else
            ok = comm_recv(t->c, in, n, COMM_DOUBLE, prev, 3, &from, &e) == 0 &&
                 comm_send(t->c, out, n, COMM_DOUBLE, next, 3, &e) == 0;
        for (size_t i = 0; ok && i < n; i++)
            ok = in[i] == value(prev, t->rank, i);
        ok = ok && from == prev;
    }
    CHECK(ok, "send/recv around the ring, n=%zu", n);
    /* everybody sends to rank 0, which takes them in arrival order */
    ok = 1;
    if (t->rank > 0) {
        ok = comm_send(t->c, out, n, COMM_DOUBLE, 0, 7, &e) == 0;
    } else {
        char *seen = calloc((size_t)t->size, 1);
        for (int k = 1; ok && k < t->size; k++) {
            ok = comm_recv(t->c, in, n, COMM_DOUBLE, COMM_ANY_SOURCE, 7, &from, &e) == 0 &&
                 from > 0 && from < t->size && !seen[from];
            for (size_t i = 0; ok && i < n; i++)
                ok = in[i] == value(from, (from + 1) % t->size, i);
            if (ok)
                seen[from] = 1;
        }
        free(seen);
    }
    CHECK(ok, "recv from COMM_ANY_SOURCE reports the sender, n=%zu", n);
    pt_err_clear(&e);
    CHECK(tc_err_is(t, comm_send(t->c, out, 1, COMM_DOUBLE, t->size, 0, &e), &e, PT_EINTERNAL,
                    "outside"),
          "send refuses a rank outside the communicator");
    free(out);
    free(in);
}

static void groups(struct tctx *t)
{
    struct pt_err e;
    pt_err_clear(&e);
    struct comm *sub = NULL;
    /* even / odd, ordered by descending rank */
    int rc = comm_split(t->c, t->rank % 2, t->size - t->rank, &sub, &e);
    int want_size = (t->size - t->rank % 2 + 1) / 2, higher = 0, sum = 0;
    for (int r = t->rank % 2; r < t->size; r += 2) {
        higher += r > t->rank;
        sum += r;
    }
    int ok = rc == 0 && sub && comm_size(sub) == want_size && comm_rank(sub) == higher;
    CHECK(ok, "split even/odd: size %d, rank %d", want_size, higher);
    int got = t->rank;
    ok = ok && comm_allreduce(sub, &got, 1, COMM_INT, COMM_SUM, &e) == 0 && got == sum;
    float f[3] = {(float)t->rank, 1, (float)t->rank};
    ok = ok && comm_allreduce(sub, f, 3, COMM_FLOAT, COMM_AVG, &e) == 0 &&
         f[0] == (float)sum / (float)want_size && f[1] == 1;
    int root_rank = t->rank; /* the lowest rank of the group is its last member */
    ok = ok && comm_bcast(sub, &root_rank, 1, COMM_INT, want_size - 1, &e) == 0 &&
         root_rank == t->rank % 2;
    ok = ok && comm_local_size(sub) <= want_size && comm_node_count(sub) >= 1;
    CHECK(ok, "collectives on the even/odd groups");
    comm_free(sub);
    sub = NULL;
    rc = comm_split(t->c, t->rank == 0 ? -1 : 4, 0, &sub, &e);
    ok = rc == 0 && (t->rank == 0 ? sub == NULL : sub != NULL && comm_size(sub) == t->size - 1);
    if (ok && sub) {
        got = 1;
        ok = comm_allreduce(sub, &got, 1, COMM_INT, COMM_SUM, &e) == 0 && got == t->size - 1;
    }
    CHECK(ok, "split with color < 0 leaves rank 0 out");
    comm_free(sub);
    comm_free(NULL);
}

void tc_vectors(struct tctx *t)
{
    allgatherv_all(t);
    alltoallv_all(t);
}

void tc_p2p_groups(struct tctx *t)
{
    send_recv(t, 1);
    send_recv(t, t->small ? 20 : 5000);
    groups(t);
}
