/* tests/test_comm: hierarchical allreduce (ranks_per_node = 2 fakes the nodes), fp16
 * transport and its conversions, bucketed lists. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/comm_internal.h"
#include "test_comm.h"

static int set_opts(struct tctx *t, int hier, int fp16, size_t bucket, int rpn)
{
    struct comm_options o = {
        .hierarchical = hier, .fp16 = fp16, .bucket_bytes = bucket, .ranks_per_node = rpn};
    struct pt_err e;
    pt_err_clear(&e);
    int rc = comm_set_options(t->c, &o, &e);
    if (rc != 0)
        tc_note(t, "comm_set_options: %s", e.msg);
    return rc == 0;
}

static float *wavy(int r, size_t n)
{
    float *b = malloc((n + 1) * sizeof *b);
    for (size_t i = 0; i < n; i++)
        b[i] = tc_wavy(r, i);
    return b;
}

/* |got - exact sum| within rel * sum |x| for every element. */
static int near_wavy(const struct tctx *t, const float *got, size_t n, double rel)
{
    for (size_t i = 0; i < n; i++) {
        double want = 0, mag = 0;
        for (int r = 0; r < t->size; r++) {
            want += tc_wavy(r, i);
            mag += fabs(tc_wavy(r, i));
        }
        if (!(fabs(got[i] - want) <= rel * mag + 1e-7)) {
            tc_note(t, "element %zu is %.9g, want %.9g (tolerance %.3g)", i, got[i], want,
                    rel * mag + 1e-7);
            return 0;
        }
    }
    return 1;
}

/* Every reduction of exact values, through comm_allreduce under the current options. */
static int exact_ops(struct tctx *t, size_t n)
{
    int ok = 1;
    float *buf = malloc((n + 1) * sizeof *buf);
    for (int op = COMM_SUM; ok && op <= COMM_MAX; op++) {
        struct pt_err e;
        pt_err_clear(&e);
        for (size_t i = 0; i < n; i++)
            buf[i] = (float)tc_val(COMM_FLOAT, t->rank, i);
        ok = comm_allreduce(t->c, buf, n, COMM_FLOAT, (enum comm_op)op, &e) == 0 &&
             tc_match(t, COMM_FLOAT, (enum comm_op)op, buf, n, t->size);
    }
    free(buf);
    return ok;
}

static void hier_split(struct tctx *t)
{
    int ok = set_opts(t, 1, 0, 0, 2);
    int lsize = t->size - t->rank / 2 * 2 < 2 ? 1 : 2;
    ok = ok && comm_local_rank(t->c) == t->rank % 2 && comm_local_size(t->c) == lsize &&
         comm_node_rank(t->c) == t->rank / 2 && comm_node_count(t->c) == (t->size + 1) / 2;
    CHECK(ok, "ranks_per_node=2: local %d/%d, node %d/%d", comm_local_rank(t->c),
          comm_local_size(t->c), comm_node_rank(t->c), comm_node_count(t->c));
}

void tc_hierarchical(struct tctx *t)
{
    size_t n = t->small ? 41 : 5000;
    struct pt_err e;
    pt_err_clear(&e);
    hier_split(t);
    int ok = set_opts(t, 0, 0, 0, 2);
    float *flat = wavy(t->rank, n), *hier = wavy(t->rank, n);
    ok = ok && comm_allreduce(t->c, flat, n, COMM_FLOAT, COMM_SUM, &e) == 0;
    ok = ok && set_opts(t, 1, 0, 0, 2) &&
         comm_allreduce(t->c, hier, n, COMM_FLOAT, COMM_SUM, &e) == 0;
    ok = ok && near_wavy(t, hier, n, 1e-6) && near_wavy(t, flat, n, 1e-6);
    CHECK(ok, "hierarchical sum equals the flat sum (float tolerance)");
    CHECK(tc_same_everywhere(t, hier, n * sizeof *hier), "hierarchical bit-identical");
    CHECK(exact_ops(t, n), "hierarchical sum/avg/min/max of exact values");
    free(flat);
    free(hier);
    ok = set_opts(t, -1, 0, 0, 2) && comm_hier_active(t->c) == (t->size >= 3);
    CHECK(ok && exact_ops(t, n), "automatic mode, 2 ranks per node: %s",
          t->size >= 3 ? "on" : "off");
    ok = set_opts(t, -1, 0, 0, 1) && comm_hier_active(t->c) == 0;
    CHECK(ok && exact_ops(t, n), "automatic mode, 1 rank per node: off");
    ok = set_opts(t, -1, 0, 0, 0);
    ok = ok &&
         comm_hier_active(t->c) == (comm_node_count(t->c) > 1 && t->size > comm_node_count(t->c));
    CHECK(ok, "automatic mode on the real nodes (%d)", comm_node_count(t->c));
    ok = set_opts(t, 1, 0, 0, 0) && exact_ops(t, n);
    CHECK(ok, "hierarchical forced on the real nodes");
    struct comm_options bad = {.hierarchical = 2};
    pt_err_clear(&e);
    CHECK(tc_err_is(t, comm_set_options(t->c, &bad, &e), &e, PT_EINTERNAL, "hierarchical"),
          "comm_set_options refuses hierarchical = 2");
    set_opts(t, -1, 0, 0, 0);
}

static int half_is(float f, uint16_t want)
{
    return comm_half_from_float(f) == want;
}

/* h is a nearest half to f, ties to even (f finite, |f| < 65520). */
static int nearest(float f, uint16_t h)
{
    double x = f, got = comm_float_from_half(h), err = fabs(x - got);
    for (int d = -1; d <= 1; d += 2) {
        uint16_t o = (uint16_t)(h + d);
        if ((o & 0x7fff) >= 0x7c00 || ((h & 0x7fff) == 0 && d < 0))
            continue;
        double alt = fabs(x - comm_float_from_half(o));
        if (alt < err || (alt == err && (h & 1)))
            return 0;
    }
    return 1;
}

static int sweep(void)
{
    uint32_t s = 12345;
    for (int k = 0; k < 200000; k++) {
        s = s * 1664525u + 1013904223u;
        float f = ldexpf((float)(s >> 8) / 16777216.0f, (int)(s % 48) - 30);
        if (k % 2)
            f = -f;
        if (fabsf(f) < 65504.0f && !nearest(f, comm_half_from_float(f)))
            return 0;
    }
    return 1;
}

void tc_fp16_conversions(void)
{
    int ok = half_is(0.0f, 0) && half_is(-0.0f, 0x8000) && half_is(1.0f, 0x3c00) &&
             half_is(-2.0f, 0xc000) && half_is(0.333333f, 0x3555);
    CHECK(ok, "fp16: zeros, ones, a third");
    ok = half_is(65504.0f, 0x7bff) && half_is(65519.0f, 0x7bff) && half_is(65520.0f, 0x7c00) &&
         half_is(1e6f, 0x7c00) && half_is(-1e6f, 0xfc00) && half_is(INFINITY, 0x7c00) &&
         half_is(-INFINITY, 0xfc00);
    CHECK(ok, "fp16: 65504 is the largest, then inf");
    uint16_t hn = comm_half_from_float(NAN);
    ok = (hn & 0x7c00) == 0x7c00 && (hn & 0x3ff) != 0 && isnan(comm_float_from_half(hn));
    CHECK(ok, "fp16: nan stays nan");
    ok = half_is(6e-8f, 0x0001) && half_is(ldexpf(1, -24), 0x0001) && half_is(ldexpf(1, -25), 0) &&
         half_is(ldexpf(1.0001f, -25), 0x0001) && half_is(ldexpf(3, -25), 0x0002) &&
         half_is(ldexpf(2047, -25), 0x0400) && half_is(ldexpf(1, -14), 0x0400) &&
         half_is(1e-10f, 0) && half_is(1e-40f, 0) && half_is(-ldexpf(1, -24), 0x8001);
    CHECK(ok, "fp16: subnormals, underflow, ties among them");
    ok = half_is(1.0f + ldexpf(1, -11), 0x3c00) && half_is(1.0f + ldexpf(3, -11), 0x3c02) &&
         half_is(1.0f + ldexpf(1, -11) + ldexpf(1, -20), 0x3c01) && half_is(2049.0f, 0x6800) &&
         half_is(2051.0f, 0x6802) && half_is(-2051.0f, 0xe802);
    CHECK(ok, "fp16: ties round to even");
    ok = comm_float_from_half(0x0001) == ldexpf(1, -24) &&
         comm_float_from_half(0x03ff) == ldexpf(1023, -24) &&
         comm_float_from_half(0x7bff) == 65504.0f && comm_float_from_half(0x7c00) == INFINITY &&
         comm_float_from_half(0xfc00) == -INFINITY && signbit(comm_float_from_half(0x8000)) &&
         comm_float_from_half(0x8000) == 0.0f && isnan(comm_float_from_half(0x7e00));
    CHECK(ok, "fp16 to float: subnormals, 65504, inf, -0, nan");
    ok = 1;
    for (uint32_t h = 0; ok && h < 0x10000; h++) {
        float f = comm_float_from_half((uint16_t)h);
        ok = isnan(f) ? isnan(comm_float_from_half(comm_half_from_float(f)))
                      : comm_half_from_float(f) == h;
    }
    CHECK(ok, "fp16: every half survives the round trip");
    CHECK(sweep(), "fp16: 200000 floats round to a nearest half, ties even");
}

/* fp16 transport under the current options: exact values exactly, wavy ones within half
 * precision, the same bits everywhere, inf and nan carried. */
static void fp16_sums(struct tctx *t, size_t n, const char *how)
{
    struct pt_err e;
    pt_err_clear(&e);
    CHECK(exact_ops(t, n), "fp16 %s: exact values exactly", how);
    float *w = wavy(t->rank, n);
    int ok = comm_allreduce(t->c, w, n, COMM_FLOAT, COMM_SUM, &e) == 0;
    CHECK(ok && near_wavy(t, w, n, 2.0 * t->size * ldexp(1, -11)),
          "fp16 %s: wavy values within half precision", how);
    CHECK(tc_same_everywhere(t, w, n * sizeof *w), "fp16 %s: bit-identical", how);
    float s[3] = {t->rank == 0 ? INFINITY : 1.0f, t->rank == 0 ? NAN : 1.0f, 70000.0f};
    ok = comm_allreduce(t->c, s, 3, COMM_FLOAT, COMM_SUM, &e) == 0 && isinf(s[0]) && s[0] > 0 &&
         isnan(s[1]) && isinf(s[2]);
    CHECK(ok, "fp16 %s: inf, nan and overflow", how);
    free(w);
}

static void fp16_nonblocking(struct tctx *t, size_t n)
{
    struct pt_err e;
    pt_err_clear(&e);
    float *x = malloc((n + 1) * sizeof *x), *w = wavy(t->rank, n);
    for (size_t i = 0; i < n; i++)
        x[i] = (float)tc_val(COMM_FLOAT, t->rank, i);
    struct comm_req *rx = NULL, *rw = NULL;
    int done = 0;
    int ok = comm_iallreduce(t->c, x, n, COMM_FLOAT, COMM_AVG, &rx, &e) == 0 &&
             comm_iallreduce(t->c, w, n, COMM_FLOAT, COMM_SUM, &rw, &e) == 0;
    while (ok && !done)
        ok = comm_test(&rx, &done, &e) == 0;
    ok = ok && rx == NULL && comm_wait(&rw, &e) == 0;
    CHECK(ok && tc_match(t, COMM_FLOAT, COMM_AVG, x, n, t->size),
          "fp16 iallreduce avg of exact values");
    CHECK(ok && near_wavy(t, w, n, 2.0 * t->size * ldexp(1, -11)) &&
              tc_same_everywhere(t, w, n * sizeof *w),
          "fp16 iallreduce: wavy values within half precision, bit-identical");
    free(x);
    free(w);
}

void tc_fp16(struct tctx *t)
{
    size_t n = t->small ? 33 : 4000;
    set_opts(t, 0, 1, 0, 0);
    fp16_sums(t, n, "flat");
    fp16_nonblocking(t, n);
    set_opts(t, 1, 1, 0, 2);
    fp16_sums(t, n, "hierarchical");
    fp16_nonblocking(t, n);
    set_opts(t, -1, 0, 0, 0);
}

/* One list through comm_allreduce_list against the per-element reference. */
static int list_run(struct tctx *t, const size_t *ns, size_t count, enum comm_op op)
{
    struct pt_err e;
    pt_err_clear(&e);
    float **bufs = calloc(count, sizeof *bufs);
    for (size_t k = 0; k < count; k++) {
        bufs[k] = malloc((ns[k] + 1) * sizeof **bufs);
        for (size_t i = 0; i < ns[k]; i++)
            bufs[k][i] = (float)tc_val(COMM_FLOAT, t->rank, i + 13 * k);
    }
    int ok = comm_allreduce_list(t->c, bufs, ns, count, op, &e) == 0;
    if (!ok)
        tc_note(t, "comm_allreduce_list: %s", e.msg);
    for (size_t k = 0; k < count; k++) {
        for (size_t i = 0; ok && i < ns[k]; i++)
            if (bufs[k][i] != (float)tc_ref(COMM_FLOAT, op, t->size, i + 13 * k)) {
                tc_note(t, "list buffer %zu element %zu: %g", k, i, bufs[k][i]);
                ok = 0;
            }
        free(bufs[k]);
    }
    free(bufs);
    return ok;
}

void tc_lists(struct tctx *t)
{
    static const size_t small[] = {0, 1, 15, 16, 17, 3, 40, 5, 16, 2, 0, 7, 9};
    size_t count = sizeof small / sizeof *small;
    for (int op = COMM_SUM; op <= COMM_MAX; op++) {
        int ok = set_opts(t, -1, 0, 64, 0) && list_run(t, small, count, (enum comm_op)op);
        CHECK(ok, "allreduce_list %s, 16-float buckets, sizes 0..40", tc_op_names[op]);
    }
    int ok = set_opts(t, 1, 1, 64, 2) && list_run(t, small, count, COMM_SUM);
    CHECK(ok, "allreduce_list with fp16 and hierarchical");
    set_opts(t, -1, 0, 0, 0);
    if (t->small)
        return;
    const size_t m = (size_t)1 << 20; /* floats in the default 4 MiB bucket */
    const size_t big[] = {m - 1, 1, m, m + 1, 3, m - 3, 10, 0};
    ok = list_run(t, big, sizeof big / sizeof *big, COMM_SUM) &&
         list_run(t, big, sizeof big / sizeof *big, COMM_AVG);
    CHECK(ok, "allreduce_list, default bucket, sizes around 4 MiB");
}
