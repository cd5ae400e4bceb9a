/* Column quantizers of 1-bit SGD (SPEC 7.1), with error feedback.
 *
 * A column is `rows` consecutive floats (a column of a column-major weight matrix, or a
 * whole bias vector). Its packed form is a header of two floats followed by the codes:
 *
 *   bits = 1, zero threshold:  header (mean of v < 0, mean of v >= 0); code = (v >= 0);
 *                              an empty side reconstructs to 0
 *   bits = 1, no threshold:    header (mu - d, mu + d), mu = column mean, d = mean absolute
 *                              deviation; code = (v >= mu)
 *   bits = k in 2..16:         header (lower, upper) = (-4 sigma, +4 sigma), sigma =
 *                              sqrt(mean v^2); q = clamp(floor((v - lower) * (2^k - 1) /
 *                              (upper - lower)), 0, 2^k - 2); value (q + 0.5) * (upper -
 *                              lower) / (2^k - 1) + lower (0 is representable); sigma = 0
 *                              reconstructs every value as 0
 *
 * Codes are packed densely, least significant bit first, in 32-bit little-endian words; a
 * column's codes are padded to a whole word. So a packed column is 8 + 4 * ceil(rows * k /
 * 32) bytes, and columns can be laid out back to back at 4-byte alignment. Headers and
 * words are stored with memcpy (no alignment demands on the buffer).
 *
 * Every function is deterministic and pure C (no MPI, no threads): the same inputs give
 * the same bytes on every rank. */
#ifndef PT_PARALLEL_QUANTIZE_H
#define PT_PARALLEL_QUANTIZE_H

#include <stddef.h>

/* Bytes of one packed column of `rows` values at `bits` (1..16). */
size_t quant_column_bytes(size_t rows, int bits);

/* Quantize v = g + r (r == NULL: v = g) into out (quant_column_bytes bytes) and, when r is
 * not NULL, store the error feedback r = v - reconstruct(quantize(v)). zero_threshold
 * matters only for bits == 1. g and r may not overlap out. */
void quant_encode_column(const float *g, float *r, size_t rows, int bits, int zero_threshold,
                         unsigned char *out);

/* Reconstruct a packed column into out[0..rows): out = values (accumulate == 0) or out +=
 * values (accumulate != 0). */
void quant_decode_column(const unsigned char *in, size_t rows, int bits, int accumulate,
                         float *out);

#endif
