/* DataParallelSGD's quantized exchange (dpsgd_quant.c): internal to src/parallel. */
#ifndef PT_PARALLEL_DPSGD_QUANT_H
#define PT_PARALLEL_DPSGD_QUANT_H

#include <stddef.h>

#include "core/err.h"
#include "parallel/parallel.h"

/* The quantized exchange's layout and buffers. */
struct quant {
    size_t ncols;
    size_t *off, *rows; /* column c: floats off[c] .. off[c] + rows[c] */
    size_t *boff;       /* packed byte offset of column c at the current bits; [ncols] = all */
    size_t *first;      /* stripe s = columns first[s] .. first[s+1] */
    size_t *scount, *sdispl, *rcount, *rdispl; /* bytes, per rank */
    int bits, zero_threshold;
    float *r1, *r2, *sum; /* residuals (all; own stripe), own stripe's sum */
    unsigned char *send, *recv, *all;
    size_t cap_send, cap_recv;
    struct backend *host_bk; /* whose host_alloc made send, recv and all (NULL: malloc) */
    struct comm_req *req;
    double bytes; /* sent by this rank per sync */
};

/* The first float of column c (n past the last column). */
size_t quant_col_start(const struct quant *q, size_t c, size_t n);
/* Columns of L's tensors and the stripes of `workers` ranks; the residuals r1. */
int quant_layout(struct quant *q, const struct engine_layout *L, int workers, struct pt_err *e);
/* Byte offsets, counts and buffers for `bits`; residuals zeroed (a new epoch). */
int quant_prepare(struct quant *q, struct backend *b, int bits, int rank, int workers, size_t n,
                  struct pt_err *e);
void quant_release(struct quant *q, struct backend *b);
/* Steps 1-2 of an exchange of g on en's communicator: quantize every column, start the
 * stripe exchange. */
int quant_start(struct engine *en, struct quant *q, const float *g, struct pt_err *e);
/* Steps 3-4: sum and re-quantize the own stripe, share it, reconstruct g. */
int quant_finish(struct engine *en, struct quant *q, float *g, struct pt_err *e);

#endif
