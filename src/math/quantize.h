/* Column quantizers of 1-bit SGD (SPEC 7.1), with error feedback: the packed format. The
 * codecs are backend ops (backend_ops.quantize / unquantize over a struct bk_columns; the
 * CPU's in cpu_quantize.c).
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
 * The codecs are deterministic: the same inputs give the same bytes on every rank (and
 * every backend must give the CPU's bytes). */
#ifndef PT_MATH_QUANTIZE_H
#define PT_MATH_QUANTIZE_H

#include <stddef.h>

/* Bytes of one packed column of `rows` values at `bits` (1..16); 0 outside that range
 * (outside the contract: encode and decode then touch nothing). */
static inline size_t quant_column_bytes(size_t rows, int bits)
{
    if (bits < 1 || bits > 16)
        return 0;
    return 2 * sizeof(float) + 4 * ((rows * (size_t)bits + 31) / 32);
}

#endif
