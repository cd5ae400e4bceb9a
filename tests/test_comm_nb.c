/* tests/test_comm: nonblocking operations, completed by test loops and waits. */
#include <stdlib.h>
#include <string.h>

#include "test_comm.h"

/* Poll until done; 0 on success. */
static int spin(struct comm_req **req, struct pt_err *e)
{
    int done = 0;
    long polls = 0;
    while (!done) {
        int rc = comm_test(req, &done, e);
        if (rc != 0)
            return rc;
        polls++;
    }
    return *req == NULL && polls > 0 ? 0 : -1;
}

static void iallreduce_all(struct tctx *t, size_t n)
{
    for (int k = 0; k < 5; k++) {
        enum comm_type ty = tc_types[k];
        for (int op = COMM_SUM; op <= COMM_MAX; op++) {
            struct pt_err e;
            pt_err_clear(&e);
            struct comm_req *req = NULL;
            void *buf = calloc(n + 1, tc_size(ty));
            for (size_t i = 0; i < n; i++)
                tc_set(ty, buf, i, tc_val(ty, t->rank, i));
            int rc = comm_iallreduce(t->c, buf, n, ty, (enum comm_op)op, &req, &e);
            if (op == COMM_AVG && ty != COMM_FLOAT && ty != COMM_DOUBLE) {
                CHECK(tc_err_is(t, rc, &e, PT_EINTERNAL, "COMM_AVG") && req == NULL,
                      "iallreduce %s avg is refused", tc_type_names[k]);
            } else {
                if (rc == 0)
                    rc = (k + op) % 2 ? comm_wait(&req, &e) : spin(&req, &e);
                CHECK(rc == 0 && req == NULL && tc_match(t, ty, (enum comm_op)op, buf, n, t->size),
                      "iallreduce %s %s n=%zu (%s)", tc_type_names[k], tc_op_names[op], n,
                      (k + op) % 2 ? "wait" : "test loop");
            }
            free(buf);
        }
    }
}

/* Two operations in flight at once, completed in the other order. */
static void overlapping(struct tctx *t, size_t n)
{
    struct pt_err e;
    pt_err_clear(&e);
    float *a = malloc(n * sizeof *a);
    int *b = malloc(n * sizeof *b);
    for (size_t i = 0; i < n; i++) {
        a[i] = (float)tc_val(COMM_FLOAT, t->rank, i);
        b[i] = t->rank == t->size - 1 ? (int)i * 3 : -1;
    }
    struct comm_req *ra = NULL, *rb = NULL;
    int ok = comm_iallreduce(t->c, a, n, COMM_FLOAT, COMM_SUM, &ra, &e) == 0 &&
             comm_ibcast(t->c, b, n, COMM_INT, t->size - 1, &rb, &e) == 0 && spin(&rb, &e) == 0 &&
             comm_wait(&ra, &e) == 0;
    ok = ok && tc_match(t, COMM_FLOAT, COMM_SUM, a, n, t->size);
    for (size_t i = 0; ok && i < n; i++)
        ok = b[i] == (int)i * 3;
    CHECK(ok, "iallreduce and ibcast in flight together, n=%zu", n);
    free(a);
    free(b);
    ra = NULL;
    int done = 0;
    ok = comm_wait(&ra, &e) == 0 && comm_wait(NULL, &e) == 0 && comm_test(&ra, &done, &e) == 0 &&
         done == 1;
    CHECK(ok, "wait and test on no request");
}

static void iallgatherv_all(struct tctx *t)
{
    struct pt_err e;
    pt_err_clear(&e);
    size_t p = (size_t)t->size, total = 0;
    size_t *counts = calloc(p, sizeof *counts), *displs = calloc(p, sizeof *displs);
    for (size_t r = 0; r < p; r++) {
        counts[r] = (r * 3 + 1) % 4 * 3; /* 3, 0, 9, 6: a zero count, uneven */
        displs[r] = total;
        total += counts[r] + 1;
    }
    double *recv = calloc(total, sizeof *recv), *send = calloc(counts[t->rank] + 1, sizeof *send);
    for (size_t i = 0; i < counts[t->rank]; i++)
        send[i] = t->rank * 1000.0 + (double)i;
    for (int in_place = 0; in_place < 2; in_place++) {
        for (size_t i = 0; i < total; i++)
            recv[i] = -1;
        double *src = send;
        if (in_place) {
            src = recv + displs[t->rank];
            memcpy(src, send, counts[t->rank] * sizeof *send);
        }
        struct comm_req *req = NULL;
        int ok = comm_iallgatherv(t->c, src, counts[t->rank], recv, counts, displs, COMM_DOUBLE,
                                  &req, &e) == 0 &&
                 spin(&req, &e) == 0;
        for (size_t r = 0; ok && r < p; r++)
            for (size_t i = 0; ok && i <= counts[r]; i++)
                ok = recv[displs[r] + i] == (i < counts[r] ? (double)r * 1000.0 + (double)i : -1);
        CHECK(ok, "iallgatherv uneven counts%s", in_place ? ", in place" : "");
    }
    free(recv);
    free(send);
    free(counts);
    free(displs);
}

static void ialltoallv_all(struct tctx *t)
{
    struct pt_err e;
    pt_err_clear(&e);
    size_t p = (size_t)t->size;
    size_t *sc = calloc(p, sizeof *sc), *sd = calloc(p, sizeof *sd);
    size_t *rc = calloc(p, sizeof *rc), *rd = calloc(p, sizeof *rd);
    size_t st = 0, rt = 0;
    for (size_t r = 0; r < p; r++) {
        sc[r] = ((size_t)t->rank + 2 * r) % 3 * 5;
        sd[r] = st;
        st += sc[r];
        rc[r] = (r + 2 * (size_t)t->rank) % 3 * 5;
        rd[r] = rt;
        rt += rc[r];
    }
    int64_t *send = calloc(st + 1, sizeof *send), *recv = calloc(rt + 1, sizeof *recv);
    for (size_t r = 0; r < p; r++)
        for (size_t i = 0; i < sc[r]; i++)
            send[sd[r] + i] = ((int64_t)t->rank << 40) + (int64_t)(r * 100 + i);
    struct comm_req *req = NULL;
    int ok = comm_ialltoallv(t->c, send, sc, sd, recv, rc, rd, COMM_INT64, &req, &e) == 0 &&
             comm_wait(&req, &e) == 0 && req == NULL;
    for (size_t r = 0; ok && r < p; r++)
        for (size_t i = 0; ok && i < rc[r]; i++)
            ok = recv[rd[r] + i] == ((int64_t)r << 40) + (int64_t)((size_t)t->rank * 100 + i);
    CHECK(ok, "ialltoallv uneven and zero counts");
    free(send);
    free(recv);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
}

static void isend_irecv(struct tctx *t, size_t n)
{
    struct pt_err e;
    pt_err_clear(&e);
    int next = (t->rank + 1) % t->size, prev = (t->rank + t->size - 1) % t->size;
    float *out = malloc(n * sizeof *out), *in = calloc(n, sizeof *in);
    for (size_t i = 0; i < n; i++)
        out[i] = (float)(t->rank * 1000 + (int)i);
    struct comm_req *rs = NULL, *rr = NULL;
    /* ring, including a rank sending to itself when alone */
    int ok = comm_irecv(t->c, in, n, COMM_FLOAT, prev, 11, &rr, &e) == 0 &&
             comm_isend(t->c, out, n, COMM_FLOAT, next, 11, &rs, &e) == 0 && spin(&rr, &e) == 0 &&
             comm_wait(&rs, &e) == 0;
    for (size_t i = 0; ok && i < n; i++)
        ok = in[i] == (float)(prev * 1000 + (int)i);
    CHECK(ok, "isend/irecv around the ring, n=%zu", n);
    /* from anybody: each rank receives the one message its predecessor sends */
    memset(in, 0, n * sizeof *in);
    ok = comm_irecv(t->c, in, n, COMM_FLOAT, COMM_ANY_SOURCE, 12, &rr, &e) == 0 &&
         comm_isend(t->c, out, n, COMM_FLOAT, next, 12, &rs, &e) == 0 && comm_wait(&rs, &e) == 0 &&
         spin(&rr, &e) == 0;
    for (size_t i = 0; ok && i < n; i++)
        ok = in[i] == (float)(prev * 1000 + (int)i);
    CHECK(ok, "irecv from COMM_ANY_SOURCE, n=%zu", n);
    free(out);
    free(in);
}

void tc_nonblocking(struct tctx *t)
{
    iallreduce_all(t, t->small ? 23 : 1000);
    iallreduce_all(t, 0);
    overlapping(t, t->small ? 30 : 4000);
    iallgatherv_all(t);
    ialltoallv_all(t);
    isend_irecv(t, 1);
    isend_irecv(t, t->small ? 25 : 3000);
}
