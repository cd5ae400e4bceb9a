/* tests/test_comm: blocking collectives over every type and reduction. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test_comm.h"

static void *fill(enum comm_type ty, int r, size_t n)
{
    void *buf = calloc(n ? n : 1, tc_size(ty));
    for (size_t i = 0; i < n; i++)
        tc_set(ty, buf, i, tc_val(ty, r, i));
    return buf;
}

static void allreduce_all(struct tctx *t, size_t n)
{
    for (int k = 0; k < 5; k++) {
        enum comm_type ty = tc_types[k];
        for (int op = COMM_SUM; op <= COMM_MAX; op++) {
            struct pt_err e;
            pt_err_clear(&e);
            void *buf = fill(ty, t->rank, n);
            int rc = comm_allreduce(t->c, buf, n, ty, (enum comm_op)op, &e);
            int floating = ty == COMM_FLOAT || ty == COMM_DOUBLE;
            if (op == COMM_AVG && !floating)
                CHECK(tc_err_is(t, rc, &e, PT_EINTERNAL, "COMM_AVG"), "allreduce %s avg is refused",
                      tc_type_names[k]);
            else
                CHECK(rc == 0 && tc_match(t, ty, (enum comm_op)op, buf, n, t->size),
                      "allreduce %s %s n=%zu", tc_type_names[k], tc_op_names[op], n);
            free(buf);
        }
    }
}

/* Sums whose rounding depends on the order: all ranks still hold the same bits. */
static void allreduce_wavy(struct tctx *t, size_t n)
{
    struct pt_err e;
    pt_err_clear(&e);
    float *buf = malloc(n * sizeof *buf);
    double *d = malloc(n * sizeof *d);
    for (size_t i = 0; i < n; i++) {
        buf[i] = tc_wavy(t->rank, i);
        d[i] = tc_wavy(t->rank, i);
    }
    int ok = comm_allreduce_f32(t->c, buf, n, &e) == 0 && comm_allreduce_f64(t->c, d, n, &e) == 0;
    for (size_t i = 0; ok && i < n; i++) {
        double want = 0;
        for (int r = 0; r < t->size; r++)
            want += tc_wavy(r, i);
        ok = fabs(buf[i] - want) <= 1e-5 * (1 + fabs(want)) && fabs(d[i] - want) <= 1e-12;
        if (!ok)
            tc_note(t, "wavy element %zu: %.9g / %.17g, want %.17g", i, buf[i], d[i], want);
    }
    CHECK(ok, "allreduce_f32 / f64 of wavy values");
    CHECK(tc_same_everywhere(t, buf, n * sizeof *buf), "allreduce_f32 bit-identical");
    CHECK(tc_same_everywhere(t, d, n * sizeof *d), "allreduce_f64 bit-identical");
    free(buf);
    free(d);
}

static void bcast_all(struct tctx *t, size_t n)
{
    for (int root = 0; root < t->size; root++) {
        int ok = 1;
        for (int k = 0; k < 5; k++) {
            struct pt_err e;
            pt_err_clear(&e);
            void *buf = fill(tc_types[k], t->rank == root ? 1 : 2, n);
            void *want = fill(tc_types[k], 1, n);
            ok = ok && comm_bcast(t->c, buf, n, tc_types[k], root, &e) == 0 &&
                 memcmp(buf, want, n * tc_size(tc_types[k])) == 0;
            free(buf);
            free(want);
        }
        CHECK(ok, "bcast of every type from root %d, n=%zu", root, n);
    }
    struct pt_err e;
    pt_err_clear(&e);
    float f = 0;
    CHECK(tc_err_is(t, comm_bcast(t->c, &f, 1, COMM_FLOAT, t->size, &e), &e, PT_EINTERNAL, "root"),
          "bcast refuses a root outside the communicator");
}

static void reduce_all(struct tctx *t, size_t n)
{
    int root = t->size - 1;
    for (int k = 0; k < 2; k++) {
        enum comm_type ty = tc_types[k * 2]; /* float and int */
        for (int op = COMM_SUM; op <= COMM_MAX; op++) {
            if (op == COMM_AVG && ty != COMM_FLOAT)
                continue;
            struct pt_err e;
            pt_err_clear(&e);
            void *send = fill(ty, t->rank, n);
            void *recv = calloc(n ? n : 1, tc_size(ty));
            int rc = comm_reduce(t->c, send, t->rank == root ? recv : NULL, n, ty, (enum comm_op)op,
                                 root, &e);
            int ok =
                rc == 0 && (t->rank != root || tc_match(t, ty, (enum comm_op)op, recv, n, t->size));
            CHECK(ok, "reduce %s %s to root %d", tc_type_names[ty], tc_op_names[op], root);
            /* in place at the root */
            rc =
                comm_reduce(t->c, send, t->rank == 0 ? send : NULL, n, ty, (enum comm_op)op, 0, &e);
            ok = rc == 0 && (t->rank != 0 || tc_match(t, ty, (enum comm_op)op, send, n, t->size));
            CHECK(ok, "reduce %s %s in place at root 0", tc_type_names[ty], tc_op_names[op]);
            free(send);
            free(recv);
        }
    }
}

static void reduce_scatter_all(struct tctx *t)
{
    size_t *counts = malloc((size_t)t->size * sizeof *counts);
    size_t total = 0, off = 0;
    for (int r = 0; r < t->size; r++) {
        counts[r] = r == 1 ? 0 : (size_t)(3 * r + 9); /* uneven, rank 1 gets none */
        if (r < t->rank)
            off += counts[r];
        total += counts[r];
    }
    for (int op = COMM_SUM; op <= COMM_MAX; op++) {
        struct pt_err e;
        pt_err_clear(&e);
        float *send = fill(COMM_FLOAT, t->rank, total);
        float *recv = calloc(counts[t->rank] + 1, sizeof *recv);
        int ok =
            comm_reduce_scatter(t->c, send, recv, counts, COMM_FLOAT, (enum comm_op)op, &e) == 0;
        for (size_t i = 0; ok && i < counts[t->rank]; i++)
            ok = recv[i] == tc_ref(COMM_FLOAT, (enum comm_op)op, t->size, off + i);
        CHECK(ok, "reduce_scatter float %s, uneven counts", tc_op_names[op]);
        free(send);
        free(recv);
    }
    free(counts);
}

/* Rank r's block for rank d at index i: every element says where it came from. */
static int tag_of(int r, int d, size_t i)
{
    return r * 100000 + d * 1000 + (int)i;
}

static void fixed_all(struct tctx *t, size_t n)
{
    struct pt_err e;
    pt_err_clear(&e);
    size_t all = n * (size_t)t->size;
    int *mine = malloc((n + 1) * sizeof *mine), *out = malloc((all + 1) * sizeof *out);
    int *blocks = malloc((all + 1) * sizeof *blocks);
    for (size_t i = 0; i < n; i++)
        mine[i] = tag_of(t->rank, 0, i);
    int ok = comm_allgather(t->c, mine, n, out, COMM_INT, &e) == 0;
    for (size_t i = 0; ok && i < all; i++)
        ok = out[i] == tag_of((int)(i / n), 0, i % n);
    CHECK(ok, "allgather n=%zu", n);
    for (int root = 0; root<t->size; root += t->size> 1 ? t->size - 1 : 1) {
        memset(out, 0, all * sizeof *out);
        ok = comm_gather(t->c, mine, n, t->rank == root ? out : NULL, COMM_INT, root, &e) == 0;
        for (size_t i = 0; ok && t->rank == root && i < all; i++)
            ok = out[i] == tag_of((int)(i / n), 0, i % n);
        CHECK(ok, "gather n=%zu to root %d", n, root);
        for (size_t i = 0; i < all; i++)
            blocks[i] = tag_of(root, (int)(i / n), i % n);
        memset(mine, 0, n * sizeof *mine);
        ok = comm_scatter(t->c, t->rank == root ? blocks : NULL, n, mine, COMM_INT, root, &e) == 0;
        for (size_t i = 0; ok && i < n; i++)
            ok = mine[i] == tag_of(root, t->rank, i);
        CHECK(ok, "scatter n=%zu from root %d", n, root);
        for (size_t i = 0; i < n; i++)
            mine[i] = tag_of(t->rank, 0, i);
    }
    for (size_t i = 0; i < all; i++)
        blocks[i] = tag_of(t->rank, (int)(i / n), i % n);
    ok = comm_alltoall(t->c, blocks, n, out, COMM_INT, &e) == 0;
    for (size_t i = 0; ok && i < all; i++)
        ok = out[i] == tag_of((int)(i / n), t->rank, i % n);
    CHECK(ok, "alltoall n=%zu", n);
    free(mine);
    free(out);
    free(blocks);
}

void tc_collectives(struct tctx *t)
{
    size_t n = t->small ? 37 : 1000;
    allreduce_all(t, n);
    allreduce_all(t, 0);
    allreduce_wavy(t, t->small ? 50 : 3000);
    bcast_all(t, n);
    reduce_all(t, n);
    reduce_scatter_all(t);
    fixed_all(t, 1);
    fixed_all(t, 10);
}
