/* tests/test_comm: every communicator function under real MPI (tests/test_comm.sh runs it
 * with 1 to 4 ranks). Prints TAP-like "ok N - what" / "not ok N - what" from rank 0
 * (tcheck.h) and exits non-zero when a check failed. The whole suite runs three times:
 * with the normal piece size, then with pieces of 7 and 1 elements (comm_set_piece), which
 * sends every count through the large-count paths. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/comm_internal.h"
#include "test_comm.h"

const enum comm_type tc_types[5] = {COMM_FLOAT, COMM_DOUBLE, COMM_INT, COMM_INT64, COMM_BYTE};
const char *const tc_type_names[5] = {"float", "double", "int", "int64", "byte"};
const char *const tc_op_names[4] = {"sum", "avg", "min", "max"};

void tc_note(const struct tctx *t, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    printf("# rank %d: %s%s\n", t->rank, msg, tcheck_suffix);
    fflush(stdout);
}

static uint64_t fnv(const void *buf, size_t bytes)
{
    const unsigned char *p = buf;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < bytes; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

int tc_same_everywhere(struct tctx *t, const void *buf, size_t bytes)
{
    uint64_t mine = fnv(buf, bytes);
    uint64_t *all = calloc((size_t)t->size, sizeof *all);
    struct pt_err e;
    pt_err_clear(&e);
    int ok = comm_allgather(t->c, &mine, 1, all, COMM_INT64, &e) == 0;
    for (int r = 0; ok && r < t->size; r++)
        ok = all[r] == mine;
    free(all);
    return ok;
}

int tc_err_is(const struct tctx *t, int rc, const struct pt_err *e, int code, const char *part)
{
    int ok = rc == code && e->code == code && strstr(e->msg, part) != NULL;
    if (!ok)
        tc_note(t, "wanted error %d with \"%s\", got rc %d: %s", code, part, rc, e->msg);
    return ok;
}

size_t tc_size(enum comm_type ty)
{
    static const size_t sizes[] = {sizeof(float), sizeof(double), sizeof(int), sizeof(int64_t), 1};
    return sizes[ty];
}

void tc_set(enum comm_type ty, void *buf, size_t i, double v)
{
    switch (ty) {
    case COMM_FLOAT: ((float *)buf)[i] = (float)v; break;
    case COMM_DOUBLE: ((double *)buf)[i] = v; break;
    case COMM_INT: ((int *)buf)[i] = (int)v; break;
    case COMM_INT64: ((int64_t *)buf)[i] = (int64_t)v; break;
    case COMM_BYTE: ((unsigned char *)buf)[i] = (unsigned char)v; break;
    }
}

double tc_get(enum comm_type ty, const void *buf, size_t i)
{
    switch (ty) {
    case COMM_FLOAT: return ((const float *)buf)[i];
    case COMM_DOUBLE: return ((const double *)buf)[i];
    case COMM_INT: return ((const int *)buf)[i];
    case COMM_INT64: return (double)((const int64_t *)buf)[i];
    case COMM_BYTE: return ((const unsigned char *)buf)[i];
    }
    return NAN;
}

double tc_val(enum comm_type ty, int r, size_t i)
{
    int k = (int)(i % 1009);
    switch (ty) {
    case COMM_BYTE: return (r * 5 + k * 3) % 7;
    case COMM_INT: return (r * 7 + k * 3) % 11 - 5;
    case COMM_INT64: return (r * 7 + k * 3) % 11 - 5 + (double)(k % 3) * 8589934592.0;
    default: return (r * 7 + k * 3) % 11 - 5 + 0.25 * (k % 4);
    }
}

float tc_wavy(int r, size_t i)
{
    return sinf(1.3f * (float)r + 0.7f * (float)(i % 977)) * (float)(1 + i % 5) / 3.0f;
}

double tc_ref(enum comm_type ty, enum comm_op op, int size, size_t i)
{
    double acc = tc_val(ty, 0, i);
    for (int r = 1; r < size; r++) {
        double v = tc_val(ty, r, i);
        if (op == COMM_MIN)
            acc = v < acc ? v : acc;
        else if (op == COMM_MAX)
            acc = v > acc ? v : acc;
        else
            acc += v;
    }
    if (op != COMM_AVG)
        return acc;
    return ty == COMM_FLOAT ? (double)((float)acc / (float)size) : acc / size;
}

int tc_match(const struct tctx *t, enum comm_type ty, enum comm_op op, const void *buf, size_t n,
             int size)
{
    for (size_t i = 0; i < n; i++) {
        double want = tc_ref(ty, op, size, i), got = tc_get(ty, buf, i);
        if (got != want) {
            tc_note(t, "%s %s: element %zu is %.9g, want %.9g", tc_type_names[ty], tc_op_names[op],
                    i, got, want);
            return 0;
        }
    }
    return 1;
}

static void basics(struct tctx *t)
{
    struct pt_err e;
    pt_err_clear(&e);
    struct comm *c = t->c;
    CHECK(comm_rank(c) >= 0 && comm_rank(c) < comm_size(c), "rank within size");
    int lr = comm_local_rank(c), ls = comm_local_size(c);
    CHECK(lr >= 0 && lr < ls && ls <= t->size, "local rank %d of %d", lr, ls);
    int nr = comm_node_rank(c), nc = comm_node_count(c);
    CHECK(nr >= 0 && nr < nc && nc <= t->size, "node %d of %d", nr, nc);
    /* node ranks are numbered by their lowest rank: rank 0 is on node 0 */
    int first = nr;
    CHECK(comm_bcast(c, &first, 1, COMM_INT, 0, &e) == 0 && first == 0, "rank 0 is on node 0");
    CHECK(comm_barrier(c, &e) == 0, "barrier");
}

static void main_passes(struct tctx *t)
{
    static const size_t pieces[] = {0, 7, 1};
    static const char *const names[] = {"", " [piece 7]", " [piece 1]"};
    for (int p = 0; p < 3; p++) {
        comm_set_piece(t->c, pieces[p]);
        tcheck_suffix = names[p];
        t->small = pieces[p] != 0;
        tc_collectives(t);
        tc_vectors(t);
        tc_p2p_groups(t);
        tc_nonblocking(t);
        tc_hierarchical(t);
        tc_ring(t);
        tc_fp16(t);
        tc_lists(t);
    }
    comm_set_piece(t->c, 0);
    tcheck_suffix = "";
    t->small = 0;
}

int main(int argc, char **argv)
{
    struct pt_err e;
    pt_err_clear(&e);
    struct comm *c = comm_init(&argc, &argv, &e);
    if (!c) {
        fprintf(stderr, "test_comm: %s\n", e.msg);
        return 1;
    }
    struct tctx t = {c, comm_rank(c), comm_size(c), 0};
    tcheck_init(c, "test_comm");
    if (t.rank == 0)
        printf("# test_comm with %d rank%s\n", t.size, t.size == 1 ? "" : "s");
    basics(&t);
    tc_fp16_conversions();
    main_passes(&t);
    if (t.rank == 0)
        printf("1..%d\n", tcheck_count());
    int status = tcheck_finish();
    comm_finalize(c);
    return status;
}
