/* IEEE 754 binary16 <-> binary32 over host arrays: the conversion kernels of the fp16
 * allreduce (useFp16AllReduce). The CPU backend's half_out / half_in ops are pack and
 * unpack; the communicator's MPI reduction over halves is bk_half_sum (and its own fp16
 * option, comm_options.fp16, packs and unpacks with these too). Rounding is to nearest,
 * ties to even; overflow gives inf, NaN stays NaN (quiet), subnormals on both sides are
 * exact or rounded like any value. On x86-64 with F16C the arrays go 8 values per
 * instruction, with the same results as the scalar code. */
#ifndef PT_CORE_HALF_H
#define PT_CORE_HALF_H

#include <stddef.h>
#include <stdint.h>

uint16_t bk_half_from_float(float f);
float bk_float_from_half(uint16_t h);
/* dst[i] = half(src[i]), i < n. */
void bk_half_pack(uint16_t *dst, const float *src, size_t n);
/* dst[i] = float(src[i]), i < n. */
void bk_half_unpack(float *dst, const uint16_t *src, size_t n);
/* inout[i] = half(float(in[i]) + float(inout[i])) over n halves stored as bytes (no
 * alignment assumed): the commutative sum of the fp16 reduction. */
void bk_half_sum(const void *in, void *inout, size_t n);

#endif
