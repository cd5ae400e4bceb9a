// The CUDA backend's column quantizers (1-bit SGD with error feedback): the packed format
// of quantize.h, byte for byte what cpu_quantize.c writes, so ranks on CPUs and GPUs can
// train together and every test can compare bytes.
//
// Same bytes. The CPU defines the column statistics as sums in double over 8 lanes (lane =
// row mod 8), each lane summed in row order, the lanes added in a fixed tree. Here a group
// of 8 threads takes a column, thread l summing lane l in row order, and the group adds
// the lanes in the same tree: the same roundings, so the same headers. After the
// statistics every value is float arithmetic with one rounding per operation (the CUDA
// files are compiled with --fmad=false; division and sqrt are IEEE), as on the CPU.
//
// Passes, all on the stream:
//   stats  8 threads a column: v = g + r (stored in r), the statistics, the header (into
//          the device image of the packed bytes) and the column's levels
//   codes  a block a column, a warp a 32-value block: codes (1 bit: one ballot is one
//          word), packed words, the residual r = v - level
//   copy   the packed bytes to the host buffer (the caller sends them as soon as the op
//          returns, so the op waits for the copy)
// Decoding copies the packed bytes up and gives a warp to each 32-value block.
#include <cfloat>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "math/cuda_internal.h"

extern "C" {
#include "math/quantize.h"
}

#define FULL 0xffffffffu

// One column of a run, as the kernels see it.
struct qcol {
    size_t foff;   // first float (relative to the op's float pointers)
    size_t boff;   // first packed byte in the device image (a multiple of 4)
    uint32_t rows; // floats in the column
    uint32_t pad;
};

// What the statistics leave for the codes: 1 bit (threshold, lo, hi); k bits (scale, step,
// half).
struct qlev {
    float a, b, c, d;
};

/* ---------------------------------------------------------------- the column table */

// The run's table on the device (uploaded only when it differs from the last one) and the
// byte count of its device image into *bytes; NULL on a failure (recorded). On the device
// the packed columns lie back to back from 0 (so every header and word is 4-byte aligned);
// *contiguous says whether the host layout is that same one (from boff[c0] on), so one copy
// moves them all. The backend contract allows any byte offsets, gaps included: then
// spread / gather (below) move column by column.
static const struct qcol *column_table(struct backend *b, const struct bk_columns *c, size_t *bytes,
                                       int *contiguous)
{
    struct cuda_state *st = cu_state(b);
    size_t ncol = c->c1 - c->c0, size = ncol * sizeof(struct qcol), at = 0;
    struct qcol *t = (struct qcol *)malloc(size);
    if (!t) {
        if (!st->failed) {
            st->failed = PT_ENOMEM;
            snprintf(st->failure, sizeof st->failure, "error: out of memory (quantizer table)");
        }
        return NULL;
    }
    size_t b0 = c->boff[c->c0];
    *contiguous = 1;
    for (size_t k = 0; k < ncol; k++) {
        size_t col = c->c0 + k;
        if (c->rows[col] > 0xffffffffu) {
            free(t);
            if (!st->failed) {
                st->failed = PT_EINTERNAL;
                snprintf(st->failure, sizeof st->failure,
                         "error: internal: a quantizer column of %zu rows (the CUDA backend "
                         "takes up to 2^32 - 1)",
                         c->rows[col]);
            }
            return NULL;
        }
        t[k].foff = c->off[col] - c->fbase;
        t[k].boff = at;
        t[k].rows = (uint32_t)c->rows[col];
        t[k].pad = 0;
        if (c->boff[col] - b0 != at)
            *contiguous = 0;
        at += quant_column_bytes(c->rows[col], c->bits);
    }
    *bytes = at;
    if (st->qtab_host && st->qtab_used == size && memcmp(st->qtab_host, t, size) == 0) {
        free(t);
        return (const struct qcol *)st->qtab_dev;
    }
    if (!cu_device_buffer(b, &st->qtab_dev, &st->qtab_bytes, size, 0, "quantizer table")) {
        free(t);
        return NULL;
    }
    free(st->qtab_host); // pageable: its upload read it before returning
    st->qtab_host = t;
    st->qtab_used = size;
    cu_to_device(b, st->qtab_dev, t, size, "upload (quantizer table)");
    return (const struct qcol *)st->qtab_dev;
}

// Column k of the run: its host bytes (relative to the host buffer of the op) and size.
static size_t host_at(const struct bk_columns *c, size_t k)
{
    return c->boff[c->c0 + k] - c->bbase;
}

// A run of columns as the kernels see it: its table and the device image of its packed
// bytes (false when there is nothing to do or a failure was recorded).
struct run {
    const struct qcol *tab;
    unsigned char *img;
    size_t ncol, total;
    int contiguous;
};

static bool run_prepare(struct backend *b, const struct bk_columns *c, struct run *run)
{
    if (c->bits < 1 || c->bits > 16 || c->c1 <= c->c0)
        return false;
    struct cuda_state *st = cu_state(b);
    run->ncol = c->c1 - c->c0;
    run->tab = column_table(b, c, &run->total, &run->contiguous);
    run->img = run->tab ? (unsigned char *)cu_device_buffer(b, &st->qbytes, &st->qbytes_cap,
                                                            run->total, 65536, "packed bytes")
                        : NULL;
    return run->img != NULL;
}

/* ---------------------------------------------------------------- statistics */

// The CPU's lanes_total over the 8 threads of a group (every thread gets the total).
__device__ static double lanes_total(double v)
{
    double a[8];
#pragma unroll
    for (int l = 0; l < 8; l++)
        a[l] = __shfl_sync(FULL, v, l, 8);
    return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
}

__device__ static unsigned group_count(unsigned v)
{
    for (int o = 4; o > 0; o >>= 1)
        v += __shfl_down_sync(FULL, v, o, 8);
    return __shfl_sync(FULL, v, 0, 8);
}

__device__ static void store_header(unsigned char *p, float a, float b)
{
    float *h = (float *)p; // 4-byte aligned: column offsets are multiples of 4
    h[0] = a;
    h[1] = b;
}

__global__ static void stats_k(const struct qcol *tab, size_t ncol, const float *g, float *r,
                               int bits, int zero_threshold, unsigned char *bytes, struct qlev *lev)
{
    size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x, col = t / 8;
    int lane = (int)(t % 8);
    // threads past the last column take part in the shuffles with an empty column
    size_t rows = col < ncol ? tab[col].rows : 0;
    const float *gc = col < ncol ? g + tab[col].foff : g;
    float *rc = r && col < ncol ? r + tab[col].foff : NULL;
    const float *v = rc ? rc : gc;
    double s1 = 0.0, s2 = 0.0;
    unsigned npos = 0;
    // pass 1: v = g + r kept in r; the lane's first statistic
    for (size_t i = lane; i < rows; i += 8) {
        float x = rc ? rc[i] + gc[i] : gc[i];
        if (rc)
            rc[i] = x;
        if (bits == 1 && zero_threshold) {
            double d = x, a = fabs(d);
            s1 += (d + a) * 0.5;
            s2 += (d - a) * 0.5;
            npos += x >= 0.0f;
        } else if (bits == 1) {
            s1 += x;
        } else {
            s1 += (double)x * x;
        }
    }
    float h0, h1;
    struct qlev lv = {0.0f, 0.0f, 0.0f, 0.0f};
    if (bits == 1 && zero_threshold) {
        double pos = lanes_total(s1), neg = lanes_total(s2);
        size_t np = group_count(npos);
        h0 = rows > np ? (float)(neg / (double)(rows - np)) : 0.0f;
        h1 = np ? (float)(pos / (double)np) : 0.0f;
        lv = {0.0f, h0, h1, 0.0f};
    } else if (bits == 1) {
        double total = lanes_total(s1);
        float m = rows ? (float)(total / (double)rows) : 0.0f;
        double a = 0.0;
        for (size_t i = lane; i < rows; i += 8)
            a += fabs((double)v[i] - m);
        double dev = lanes_total(a);
        dev = rows ? dev / (double)rows : 0.0;
        float d = (float)(dev > FLT_MAX ? FLT_MAX : dev);
        h0 = m - d < -FLT_MAX ? -FLT_MAX : m - d;
        h1 = m + d > FLT_MAX ? FLT_MAX : m + d;
        lv = {m, h0, h1, 0.0f};
    } else {
        double total = lanes_total(s1);
        float sigma = rows ? (float)sqrt(total / (double)rows) : 0.0f;
        sigma = sigma <= FLT_MAX / 8 ? sigma : FLT_MAX / 8;
        float upper = 4.0f * sigma, lower = upper > 0.0f ? -upper : 0.0f;
        int32_t steps = (1 << bits) - 1;
        float step = (upper - lower) / (float)steps;
        float scale = upper > lower ? (float)steps / (upper - lower) : 0.0f;
        h0 = lower;
        h1 = upper;
        lv = {scale, step, (float)((1 << (bits - 1)) - 1), 0.0f};
    }
    if (lane == 0 && col < ncol) {
        store_header(bytes + tab[col].boff, h0, h1);
        lev[col] = lv;
    }
}

/* ---------------------------------------------------------------- codes */

// k-bit code of v (the CPU's codes_block).
__device__ static uint32_t code_of(float v, float scale, int32_t half)
{
    const float fhalf = (float)half;
    float y = v * scale + 0.5f;
    y = y > -fhalf ? y : -fhalf;
    y = y < fhalf ? y : fhalf;
    int32_t s = (int32_t)y;
    s -= (float)s > y;
    return (uint32_t)(s + half);
}

__device__ static float level_value(uint32_t q, int32_t half, float step)
{
    return (float)((int32_t)q - half) * step;
}

__global__ static void codes_k(const struct qcol *tab, const float *g, float *r, int bits,
                               unsigned char *bytes, const struct qlev *lev)
{
    __shared__ uint32_t qs[CU_THREADS / 32][32];
    size_t col = blockIdx.x;
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32, nwarps = blockDim.x / 32;
    size_t rows = tab[col].rows, nblk = (rows + 31) / 32;
    const float *v = (r ? r : g) + tab[col].foff;
    float *rc = r ? r + tab[col].foff : NULL;
    unsigned char *codes = bytes + tab[col].boff + 8;
    const struct qlev lv = lev[col];
    for (size_t blk = warp; blk < nblk; blk += nwarps) {
        size_t row = blk * 32 + lane;
        bool valid = row < rows;
        float x = valid ? v[row] : 0.0f;
        if (bits == 1) {
            bool bit = valid && x >= lv.a;
            uint32_t w = __ballot_sync(FULL, bit);
            if (lane == 0)
                ((uint32_t *)codes)[blk] = w;
            if (rc && valid)
                rc[row] = x - (x >= lv.a ? lv.c : lv.b);
            continue;
        }
        int32_t half = (int32_t)lv.c;
        uint32_t q = valid ? code_of(x, lv.a, half) : 0u;
        if (rc && valid)
            rc[row] = x - level_value(q, half, lv.b);
        qs[warp][lane] = q;
        __syncwarp();
        size_t n = rows - blk * 32 < 32 ? rows - blk * 32 : 32;
        int words = (int)((n * (size_t)bits + 31) / 32);
        if (lane < words) {
            int lo = 32 * lane, j0 = lo / bits, j1 = (lo + 31) / bits;
            j1 = j1 > 31 ? 31 : j1;
            uint32_t w = 0;
            for (int j = j0; j <= j1; j++) {
                int at = j * bits - lo;
                uint64_t part =
                    at >= 0 ? (uint64_t)qs[warp][j] << at : (uint64_t)qs[warp][j] >> -at;
                w |= (uint32_t)part;
            }
            ((uint32_t *)codes)[blk * (size_t)bits + lane] = w;
        }
        __syncwarp();
    }
}

void cu_quantize(struct backend *b, const struct bk_columns *c, const float *g, float *r,
                 unsigned char *out)
{
    struct cuda_state *st = cu_state(b);
    struct run run;
    if (!run_prepare(b, c, &run))
        return;
    const struct qcol *tab = run.tab;
    unsigned char *img = run.img;
    size_t ncol = run.ncol, total = run.total;
    struct qlev *lev = (struct qlev *)cu_scratch(b, ncol * sizeof(struct qlev));
    if (!lev)
        return;
    size_t threads = ncol * 8;
    unsigned blocks = (unsigned)((threads + CU_THREADS - 1) / CU_THREADS);
    stats_k<<<blocks, CU_THREADS, 0, st->stream>>>(tab, ncol, g, r, c->bits, c->zero_threshold, img,
                                                   lev);
    cu_launched(b, "quantize (statistics)");
    codes_k<<<(unsigned)ncol, CU_THREADS, 0, st->stream>>>(tab, g, r, c->bits, img, lev);
    cu_launched(b, "quantize (codes)");
    if (run.contiguous) {
        cu_check(
            b, cudaMemcpyAsync(out + host_at(c, 0), img, total, cudaMemcpyDeviceToHost, st->stream),
            "quantize (copy)");
        cu_check(b, cudaStreamSynchronize(st->stream), "quantize (wait)");
        return;
    }
    // spread: through the pinned bounce buffer, column by column to the host layout
    unsigned char *pin = (unsigned char *)cu_pinned(b, total);
    if (!pin)
        return;
    cu_check(b, cudaMemcpyAsync(pin, img, total, cudaMemcpyDeviceToHost, st->stream),
             "quantize (copy)");
    if (cu_check(b, cudaStreamSynchronize(st->stream), "quantize (wait)"))
        return;
    const struct qcol *t = (const struct qcol *)st->qtab_host;
    for (size_t k = 0; k < ncol; k++)
        memcpy(out + host_at(c, k), pin + t[k].boff, quant_column_bytes(t[k].rows, c->bits));
}

/* ---------------------------------------------------------------- decoding */

__global__ static void decode_k(const struct qcol *tab, const unsigned char *bytes, int bits,
                                int accumulate, float *out)
{
    size_t col = blockIdx.x;
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32, nwarps = blockDim.x / 32;
    size_t rows = tab[col].rows, nblk = (rows + 31) / 32;
    const float *h = (const float *)(bytes + tab[col].boff);
    const uint32_t *words = (const uint32_t *)(bytes + tab[col].boff + 8);
    float *o = out + tab[col].foff;
    float lo = h[0], hi = h[1];
    int32_t half = 0;
    float step = 0.0f;
    if (bits > 1) { // the CPU's levels_of
        int32_t steps = (1 << bits) - 1;
        step = (hi - lo) / (float)steps;
        half = (1 << (bits - 1)) - 1;
    }
    for (size_t blk = warp; blk < nblk; blk += nwarps) {
        size_t row = blk * 32 + lane;
        if (row >= rows)
            continue;
        float x;
        if (bits == 1) {
            x = (words[blk] >> lane) & 1u ? hi : lo;
        } else {
            const uint32_t *w = words + blk * (size_t)bits;
            int at = lane * bits, w0 = at / 32, sh = at % 32;
            uint32_t q = w[w0] >> sh;
            if (sh + bits > 32)
                q |= w[w0 + 1] << (32 - sh);
            q &= (1u << bits) - 1;
            x = level_value(q, half, step);
        }
        o[row] = accumulate ? o[row] + x : x;
    }
}

void cu_unquantize(struct backend *b, const struct bk_columns *c, const unsigned char *in,
                   int accumulate, float *out)
{
    struct cuda_state *st = cu_state(b);
    struct run run;
    if (!run_prepare(b, c, &run))
        return;
    unsigned char *img = run.img;
    size_t ncol = run.ncol, total = run.total;
    if (run.contiguous) {
        cu_to_device(b, img, in + host_at(c, 0), total, "unquantize (copy)");
    } else { // gather: column by column into the pinned bounce buffer, then one copy
        unsigned char *pin = (unsigned char *)cu_pinned(b, total);
        if (!pin)
            return;
        const struct qcol *t = (const struct qcol *)st->qtab_host;
        for (size_t k = 0; k < ncol; k++)
            memcpy(pin + t[k].boff, in + host_at(c, k), quant_column_bytes(t[k].rows, c->bits));
        cu_to_device(b, img, pin, total, "unquantize (copy)"); // waits: pinned source
    }
    decode_k<<<(unsigned)ncol, CU_THREADS, 0, st->stream>>>(run.tab, img, c->bits, accumulate,
                                                             out);
    cu_launched(b, "unquantize");
}
