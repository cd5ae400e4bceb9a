/* The minibatch: what the reader hands to the network.
 *
 * Layout (one matrix per input, time-major, padded):
 *   data is dim x (steps * nseq), column-major; column t*nseq + s holds step t of sequence s;
 *   columns with t >= len[s] are zero (padding).
 * Feed-forward data has steps == 1. For an LSTM over 28-row images, "features" has
 * steps == 28 and "labels" has steps == 1 (one label per sequence: sequence classification
 * from the last step) or steps == 28 (a label per step: frame classification).
 * Sparse inputs are delivered dense (densified by the reader).
 *
 * Inputs keep the order of the reader's `input = [ ... ]` block; networks find theirs by
 * name ("features", "labels", as CNTK's SimpleNetworkBuilder does). */
#ifndef PT_DATA_MINIBATCH_H
#define PT_DATA_MINIBATCH_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "parsers/ctf.h"

/* Where inputs' data buffers come from: malloc when an input has none, else this (the
 * prefetching reader on a GPU: pinned host memory, which the device copies from at full
 * speed). */
struct mb_host_alloc {
    void *(*alloc)(void *ctx, size_t bytes); /* NULL on failure */
    void (*free)(void *ctx, void *p);
    void *ctx;
};

struct mb_input {
    const struct mb_host_alloc *host; /* data's allocator (NULL: malloc) */
    char name[64];
    int dim;
    size_t steps;   /* longest sequence of this input in the minibatch */
    float *data;    /* dim x (steps * nseq), see above */
    int normalized; /* data were normalized in place (the network's load_inputs, CPU; 0 again
                     * when the reader shapes the input for new data) */
    uint32_t *len;  /* rows of each sequence of this input (nseq entries) */
    size_t cap_data, cap_len;
};

struct minibatch {
    size_t nseq;           /* sequences this rank holds */
    size_t samples;        /* this rank's samples (per sequence: rows of the definesMBSize
                              input, else of its longest input) */
    size_t global_samples; /* samples of the whole global minibatch, all ranks; 0 = epoch over */
    int ninputs;
    /* its holder lets a CPU network normalize the features in place and read them there
     * (the training loop's minibatch, consumed by one step); 0 in a fresh minibatch */
    int in_place;
    struct mb_input in[CTF_MAX_INPUTS];
    /* Truncated back-propagation through time (the HTK reader's truncated = true): sequence
     * s is stream s, a segment of an utterance, and cont[s] = 1 where it goes on from the
     * same stream's segment in the previous minibatch (recurrent state carried over), 0
     * where it starts an utterance. NULL: whole sequences. */
    uint8_t *cont;
    size_t cap_cont;
    /* Truncated mode packs each stream's segment as CNTK does: where a stream's utterance
     * ends inside the segment, the next starts at the following step of the same sequence,
     * and begins[t * nseq + s] = 1 there (t > 0; step 0 is cont's). NULL: no such start. */
    uint8_t *begins;
    size_t cap_begins;
};

/* The input called name, or NULL. */
struct mb_input *mb_find(struct minibatch *mb, const char *name);
/* Shape input i for nseq sequences of at most steps rows (zeroed, len[] zeroed). */
int mb_input_reset(struct mb_input *in, size_t nseq, size_t steps, struct pt_err *e);
/* The same without clearing data (len[] is zeroed): for a filler that writes every column
 * of every sequence's rows and zeroes the padding itself (mb_input_pad). */
int mb_input_shape(struct mb_input *in, size_t nseq, size_t steps, struct pt_err *e);
/* Zero the padding columns: step t of sequence s for t >= len[s]. */
void mb_input_pad(struct mb_input *in, size_t nseq);
/* Free every buffer; the struct can be reused. */
void mb_free(struct minibatch *mb);

#endif
