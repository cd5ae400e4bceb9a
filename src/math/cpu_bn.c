/* Batch normalization on the CPU (the backend's bn_forward and bn_backward; see backend.h).
 *
 * A column holds maps x spatial values, each map's cells consecutive (an image's channel is
 * its last axis); without spatial normalization every row is a map of one cell. A map's
 * statistics are over its cells of every column: N = spatial x cols values. Sums are taken
 * in double, the mean first and then the squared deviations from it (two passes: no
 * cancellation when the mean is large against the spread). */
#include <math.h>

#include "math/cpu_kernels.h"

/* The map's cells of column j. */
static inline const float *cells(const float *x, int maps, int spatial, size_t j, int c)
{
    return x + j * (size_t)maps * (size_t)spatial + (size_t)c * (size_t)spatial;
}

void cpu_bn_forward(struct backend *b, int train, float *y, const float *x, int maps, int spatial,
                    size_t cols, const float *scale, const float *bias, float *rm, float *rv,
                    double f, double eps, float *mean, float *invstd)
{
    (void)b;
    double n = (double)spatial * (double)cols;
    for (int c = 0; c < maps; c++) {
        double mu, is;
        if (train) {
            double sum = 0.0, m2 = 0.0;
            for (size_t j = 0; j < cols; j++) {
                const float *p = cells(x, maps, spatial, j, c);
                for (int s = 0; s < spatial; s++)
                    sum += p[s];
            }
            mu = n > 0 ? sum / n : 0.0;
            for (size_t j = 0; j < cols; j++) {
                const float *p = cells(x, maps, spatial, j, c);
                for (int s = 0; s < spatial; s++)
                    m2 += (p[s] - mu) * (p[s] - mu);
            }
            double var = n > 0 ? m2 / n : 0.0, unbiased = n > 1 ? m2 / (n - 1) : 0.0;
            is = 1.0 / sqrt(var + eps);
            if (f != 0.0) {
                rm[c] = (float)(f * mu + (1.0 - f) * rm[c]);
                rv[c] = (float)(f * unbiased + (1.0 - f) * rv[c]);
            }
        } else {
            mu = rm[c];
            is = 1.0 / sqrt((double)rv[c] + eps);
        }
        mean[c] = (float)mu;
        invstd[c] = (float)is;
        float m = mean[c], a = scale[c] * invstd[c], o = bias[c];
        for (size_t j = 0; j < cols; j++) {
            const float *p = cells(x, maps, spatial, j, c);
            float *q = y + (p - x);
            for (int s = 0; s < spatial; s++)
                q[s] = (p[s] - m) * a + o;
        }
    }
}

void cpu_bn_backward(struct backend *b, const float *dy, const float *x, int maps, int spatial,
                     size_t cols, const float *scale, const float *mean, const float *invstd,
                     float *dx, float *dscale, float *dbias)
{
    (void)b;
    double n = (double)spatial * (double)cols;
    for (int c = 0; c < maps; c++) {
        double sb = 0.0, ss = 0.0, m = mean[c], is = invstd[c];
        for (size_t j = 0; j < cols; j++) {
            const float *p = cells(x, maps, spatial, j, c), *d = dy + (p - x);
            for (int s = 0; s < spatial; s++) {
                sb += d[s];
                ss += d[s] * ((p[s] - m) * is);
            }
        }
        dbias[c] += (float)sb;
        dscale[c] += (float)ss;
        if (!dx || n <= 0)
            continue;
        /* dL/dx = scale invstd / N (N dy - sum dy - xhat sum dy xhat) */
        double k = scale[c] * is / n;
        for (size_t j = 0; j < cols; j++) {
            const float *p = cells(x, maps, spatial, j, c), *d = dy + (p - x);
            float *q = dx + (p - x);
            for (int s = 0; s < spatial; s++)
                q[s] += (float)(k * (n * d[s] - sb - (p[s] - m) * is * ss));
        }
    }
}
