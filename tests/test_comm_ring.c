/* tests/test_comm: the pipelined ring allreduce (comm_ring.c) against exact sums, on
 * buffer sizes around the chunk and segment boundaries, with tiny segments (many in
 * flight), flat and among the leaders of a hierarchical sum, and the auto rule. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/comm_internal.h"
#include "test_comm.h"

static int ring_opts(struct tctx *t, int alg, int hier, int rpn, size_t seg_bytes)
{
    struct comm_options o = {
        .hierarchical = hier, .ranks_per_node = rpn, .algorithm = alg, .segment_bytes = seg_bytes};
    struct pt_err e;
    pt_err_clear(&e);
    int rc = comm_set_options(t->c, &o, &e);
    if (rc != 0)
        tc_note(t, "comm_set_options: %s", e.msg);
    return rc == 0;
}

/* SUM and AVG of exact values (small integers: every order gives the same floats) and
 * a sum of non-integers that must be bit-identical on every rank. */
static int ring_sums(struct tctx *t, size_t n)
{
    float *buf = malloc((n + 1) * sizeof *buf);
    int ok = buf != NULL;
    for (int op = COMM_SUM; ok && op <= COMM_AVG; op++) {
        struct pt_err e;
        pt_err_clear(&e);
        for (size_t i = 0; i < n; i++)
            buf[i] = (float)tc_val(COMM_FLOAT, t->rank, i);
        ok = comm_allreduce(t->c, buf, n, COMM_FLOAT, (enum comm_op)op, &e) == 0 &&
             tc_match(t, COMM_FLOAT, (enum comm_op)op, buf, n, t->size);
        if (!ok && e.msg[0])
            tc_note(t, "n = %zu: %s", n, e.msg);
    }
    for (size_t i = 0; ok && i < n; i++)
        buf[i] = (float)(sin((double)(i + 1) * 0.37 + t->rank) / (1.0 + t->rank));
    struct pt_err e;
    pt_err_clear(&e);
    ok = ok && comm_allreduce(t->c, buf, n, COMM_FLOAT, COMM_SUM, &e) == 0 &&
         tc_same_everywhere(t, buf, n * sizeof *buf);
    for (size_t i = 0; ok && i < n; i++) {
        double want = 0;
        for (int r = 0; r < t->size; r++)
            want += (float)(sin((double)(i + 1) * 0.37 + r) / (1.0 + r));
        if (fabs(buf[i] - want) > 1e-5 * t->size) {
            tc_note(t, "n = %zu: element %zu is %.9g, want %.9g", n, i, buf[i], want);
            ok = 0;
        }
    }
    free(buf);
    return ok;
}

void tc_ring(struct tctx *t)
{
    /* below the ranks, around a chunk of 1 KiB segments (256 floats), larger */
    static const size_t sizes[] = {0, 1, 2, 3, 5, 255, 256, 257, 1023, 1024, 4099, 70001};
    size_t count = t->small ? 8 : sizeof sizes / sizeof *sizes;
    for (size_t s = 0; s < count; s++) {
        int ok = ring_opts(t, COMM_ALG_RING, 0, 0, 1024) && ring_sums(t, sizes[s]);
        CHECK(ok, "ring sum of %zu floats, 1 KiB segments", sizes[s]);
    }
    int ok = ring_opts(t, COMM_ALG_RING, 0, 0, 0) && ring_sums(t, 70001);
    CHECK(ok, "ring sum, default segments");
    /* the automatic segment: under the TCP eager limit that every rank's Open MPI reads
     * (OMPI_MCA_btl_tcp_eager_limit in its environment, else 64 KiB), the ranks' smallest;
     * read only across nodes (on one, Open MPI's default is assumed: no 0.2 s MPI_T start;
     * tests/test_cluster.sh checks the reading across hosts) */
    const char *env = comm_node_count(t->c) > 1 ? getenv("OMPI_MCA_btl_tcp_eager_limit") : NULL;
    unsigned long long eager = env ? strtoull(env, NULL, 10) : 65536, want = 65536, all = 0;
    if (eager - COMM_EAGER_MARGIN < want)
        want = (eager - COMM_EAGER_MARGIN) & ~63ull;
    MPI_Allreduce(&want, &all, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
    size_t seg = comm_ring_segment_bytes(t->c);
    CHECK(seg == all && seg < eager,
          "automatic ring segment %zu bytes (eager limit %llu here, %llu expected)", seg, eager,
          all);
    ok = ring_opts(t, COMM_ALG_RING, 0, 0, 4096) && comm_ring_segment_bytes(t->c) == 4096;
    CHECK(ok, "allReduceSegmentBytes given: that segment");
    /* hierarchical: reduce in the (faked) node, ring among the leaders, broadcast */
    ok = ring_opts(t, COMM_ALG_RING, 1, 2, 1024) && ring_sums(t, 4099) && ring_sums(t, 3);
    CHECK(ok, "hierarchical sum with the ring among the leaders");
    /* auto: the ring only across nodes and for buffers of COMM_RING_MIN_BYTES or more */
    size_t big = COMM_RING_MIN_BYTES / sizeof(float);
    ok = ring_opts(t, COMM_ALG_AUTO, 0, 1, 0) && comm_ring_active(t->c, big) == (t->size > 1) &&
         !comm_ring_active(t->c, big - 1);
    CHECK(ok, "auto: the ring across nodes for buffers of %zu bytes or more", COMM_RING_MIN_BYTES);
    ok = ring_opts(t, COMM_ALG_AUTO, 0, 0, 0) &&
         comm_ring_active(t->c, big) == (comm_node_count(t->c) > 1);
    CHECK(ok, "auto on the real nodes (%d)", comm_node_count(t->c));
    ok = ring_opts(t, COMM_ALG_MPI, 0, 1, 0) && !comm_ring_active(t->c, big);
    CHECK(ok, "mpi: never the ring");
    if (!t->small) {
        ok = ring_opts(t, COMM_ALG_AUTO, 0, 1, 0) && ring_sums(t, big + 7);
        CHECK(ok, "auto across faked nodes: the ring's sums");
    }
    struct comm_options bad = {.hierarchical = -1, .algorithm = 3};
    struct pt_err e;
    pt_err_clear(&e);
    CHECK(tc_err_is(t, comm_set_options(t->c, &bad, &e), &e, PT_EINTERNAL, "algorithm"),
          "comm_set_options refuses algorithm = 3");
    ring_opts(t, COMM_ALG_AUTO, -1, 0, 0);
}
