/* The global minibatch timeline (SPEC 6): which sequences come in which order in each
 * sweep over the data, and which worker owns each. A pure function of the index, the
 * seed and the sweep number: every rank computes it alone, no rank waits on another.
 *
 *   randomized:  1. shuffle the chunks (seed, sweep);
 *                2. cut the shuffled chunks into randomization windows (W chunks, or
 *                   chunks until W samples with sample-based windows);
 *                3. shuffle the sequences inside each window (seed, sweep, window);
 *                owner of a sequence = (position of its chunk after step 1) mod workers.
 *   file order:  sequences as in the file; owner of the i-th sequence = i mod workers.
 * (reader distributionMode=sequence ignores these owners: the reader deals the sequences of
 * each global minibatch round-robin, k-th to rank k mod workers.) */
#ifndef PT_READER_TIMELINE_H
#define PT_READER_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"

/* The index as the timeline sees it: sequences in file order. */
struct tl_source {
    size_t nseq, nchunks;
    const uint32_t *seq_chunk;   /* chunk of each sequence (non-decreasing) */
    const uint32_t *seq_samples; /* samples of each sequence */
    const size_t *chunk_first;   /* first sequence of each chunk; chunk_first[nchunks] = nseq */
};

struct tl_params {
    int randomize;
    uint64_t seed;
    size_t window; /* chunks, or samples when sample_window */
    int sample_window;
};

/* One sweep: order[k] is the sequence at position k; key[k] decides its owner
 * (owner = key % workers). Buffers are owned by the struct: free with tl_sweep_free. */
struct tl_sweep {
    uint32_t *order;
    uint32_t *key;
    size_t n;
};

int tl_sweep_build(const struct tl_source *src, const struct tl_params *p, uint64_t sweep,
                   struct tl_sweep *out, struct pt_err *e);
void tl_sweep_free(struct tl_sweep *s);

#endif
