/* Assertions for plain C tests; see tcheck.h. */
#include "tcheck.h"

#include <stdarg.h>
#include <stdio.h>

#include "comm/comm.h"

const char *tcheck_suffix = "";

static struct comm *tc_comm;
static const char *tc_name = "test";
static int tc_rank, tc_count, tc_failed;

void tcheck_init(struct comm *comm, const char *name)
{
    tc_comm = comm;
    tc_name = name;
    tc_rank = comm ? comm_rank(comm) : 0;
    tc_count = tc_failed = 0;
}

int tcheck_at(const char *file, int line, int ok, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    /* every rank learns the lowest failing rank (or an error of the agreement itself) */
    int first = ok ? -1 : tc_rank;
    struct pt_err e;
    pt_err_clear(&e);
    if (tc_comm && comm_agree(tc_comm, ok ? 0 : -1, &first, &e))
        first = first < 0 ? 0 : first;
    tc_count++;
    if (first < 0) {
        if (tc_rank == 0)
            printf("ok %d - %s%s\n", tc_count, what, tcheck_suffix);
    } else {
        tc_failed++;
        if (tc_rank == 0)
            printf("not ok %d - %s%s (rank %d) at %s:%d%s%s\n", tc_count, what, tcheck_suffix,
                   first, file, line, e.msg[0] ? ": " : "", e.msg);
    }
    fflush(stdout);
    return first < 0;
}

int tcheck_finish(void)
{
    if (tc_rank == 0) {
        int n = tc_comm ? comm_size(tc_comm) : 1;
        printf("# %s: %d checks, %d failed (%d rank%s)\n", tc_name, tc_count, tc_failed, n,
               n == 1 ? "" : "s");
        printf("%d passed, %d failed\n", tc_count - tc_failed, tc_failed);
        fflush(stdout);
    }
    return tc_failed ? 1 : 0;
}

int tcheck_count(void)
{
    return tc_count;
}

int tcheck_failures(void)
{
    return tc_failed;
}
