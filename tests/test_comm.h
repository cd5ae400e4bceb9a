/* Shared parts of tests/test_comm: a plain MPI program (no Check: it forks) that runs
 * every communicator function and compares against references each rank computes alone
 * (rank r contributes tc_val(type, r, i), which every rank can evaluate). */
#ifndef PT_TESTS_TEST_COMM_H
#define PT_TESTS_TEST_COMM_H

#include <stddef.h>
#include <stdint.h>

#include "comm/comm.h"
#include "tcheck.h"

/* Checks are CHECK (tcheck.h): collective, every rank passes its verdict. tcheck_suffix
 * names the piece size that runs. */
struct tctx {
    struct comm *c;
    int rank, size;
    int small; /* tiny piece size: keep the big cases out */
};

/* Local: print "# rank R: message" (detail of a failing comparison). */
void tc_note(const struct tctx *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Collective: buf[0..bytes) hashes the same on every rank. */
int tc_same_everywhere(struct tctx *t, const void *buf, size_t bytes);
/* An error rc/e with code `code` and a message holding `part`. */
int tc_err_is(const struct tctx *t, int rc, const struct pt_err *e, int code, const char *part);

/* Elements of any comm_type as doubles (all test values are exact in every type). */
size_t tc_size(enum comm_type ty);
void tc_set(enum comm_type ty, void *buf, size_t i, double v);
double tc_get(enum comm_type ty, const void *buf, size_t i);
/* The value rank r contributes at index i: small integers (and quarters for floats), so
 * every sum is exact in any order, even in half precision. */
double tc_val(enum comm_type ty, int r, size_t i);
/* A float with no short binary expansion: sums depend on the order. */
float tc_wavy(int r, size_t i);
/* The reduction over ranks 0..size-1 of tc_val(ty, r, i), as the type computes it. */
double tc_ref(enum comm_type ty, enum comm_op op, int size, size_t i);
/* buf[i] == tc_ref(...) for i < n, noting the first mismatch. */
int tc_match(const struct tctx *t, enum comm_type ty, enum comm_op op, const void *buf, size_t n,
             int size);

extern const enum comm_type tc_types[5];
extern const char *const tc_type_names[5];
extern const char *const tc_op_names[4];

void tc_collectives(struct tctx *t);
void tc_vectors(struct tctx *t);
void tc_p2p_groups(struct tctx *t);
void tc_nonblocking(struct tctx *t);
void tc_hierarchical(struct tctx *t);
void tc_ring(struct tctx *t);
void tc_fp16(struct tctx *t);
void tc_fp16_conversions(void);
void tc_lists(struct tctx *t);

#endif
