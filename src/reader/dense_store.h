/* A dense input's rows of one chunk, kept losslessly packed.
 *
 * While the chunk holds at most 256 distinct values (bit patterns) of the input, each
 * value is one byte indexing a table of floats: images (Fashion-MNIST's pixels are k/255)
 * and one-hot labels take a quarter of the memory of floats, and a row decodes to exactly
 * the floats the parser produced. The 257th distinct value turns the store into plain
 * floats for the rest of the chunk. */
#ifndef PT_READER_DENSE_STORE_H
#define PT_READER_DENSE_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"

struct dense_hash;

struct dense_store {
    size_t dim;
    size_t rows;   /* rows held */
    size_t cap;    /* rows of capacity */
    uint8_t *code; /* rows x dim codes into table, while packed */
    float *val;    /* rows x dim floats, once not packed */
    float table[256];
    int ntable;
    struct dense_hash *hash; /* value -> code, while appending (dense_store_seal frees it) */
};

/* Empty the store for rows of dim values (buffers are kept for reuse). */
void dense_store_reset(struct dense_store *s, size_t dim);
/* Append rows x dim floats. */
int dense_store_append(struct dense_store *s, const float *v, size_t rows, struct pt_err *e);
/* No more appends: drop the hash and spare capacity. */
void dense_store_seal(struct dense_store *s);
/* A hint that rows [row, row + n) will be read soon (fetched into the cache). */
void dense_store_prefetch(const struct dense_store *s, size_t row, size_t n);
/* Row `row` as dim floats into out. */
void dense_store_row(const struct dense_store *s, size_t row, float *out);
/* How rows are decoded: 1 by AVX-512 gathers, 0 by table lookups, -1 not chosen yet (the
 * first row decoded times both). gather 0 or 1 sets it (1 only where AVX-512F is; tests
 * run both), -1 only asks. */
int dense_store_decoder(int gather);
/* Bytes held for the rows (for tests and traces). */
size_t dense_store_bytes(const struct dense_store *s);
void dense_store_free(struct dense_store *s);

#endif
