/* Images: decoding (stb_image, from Debian's libstb) and CNTK's transforms
 * (ImageTransformers.cpp) in floats: Crop, Scale (OpenCV's resize: pixel centres mapped,
 * nearest, linear or cubic), Mean, Color, Intensity. Pixels are blue, green, red (OpenCV's
 * order, which CNTK's mean files and trained models assume), 0 to 255. The random draws come
 * from a per-sample generator (image_reader.c seeds it from the sample's place in the
 * stream of samples), so that an image's transforms do not depend on the ranks. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stb_image.h>

#include "reader/image.h"

void img_free(struct img *im)
{
    free(im->px);
    memset(im, 0, sizeof *im);
}

static int img_room(struct img *im, int w, int h, int c)
{
    size_t n = (size_t)w * (size_t)h * (size_t)c;
    if (n > im->cap) {
        float *p = realloc(im->px, n * sizeof *p);
        if (!p)
            return -1;
        im->px = p;
        im->cap = n;
    }
    im->w = w;
    im->h = h;
    im->c = c;
    return 0;
}

static void img_swap(struct img *a, struct img *b)
{
    struct img t = *a;
    *a = *b;
    *b = t;
}

int img_decode(const char *path, int channels, struct img *im, const char **why)
{
    int w = 0, h = 0, n = 0;
    unsigned char *p = stbi_load(path, &w, &h, &n, channels);
    if (!p) {
        *why = stbi_failure_reason();
        return -1;
    }
    if (img_room(im, w, h, channels)) {
        stbi_image_free(p);
        *why = "out of memory";
        return -1;
    }
    size_t px = (size_t)w * (size_t)h;
    for (size_t i = 0; i < px; i++)
        for (int c = 0; c < channels; c++) /* RGB -> BGR */
            im->px[i * channels + c] = p[i * channels + (channels == 3 ? 2 - c : c)];
    im->u8 = 1;
    stbi_image_free(p);
    return 0;
}

/* ------------------------------------------------------------------ draws */

static uint64_t next64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double uniform(uint64_t *s, double a, double b) /* [a, b) */
{
    return a + (b - a) * (double)(next64(s) >> 11) * 0x1.0p-53;
}

static int uniform_int(uint64_t *s, int a, int b) /* [a, b] */
{
    return a >= b ? a : a + (int)(next64(s) % (uint64_t)(b - a + 1));
}

static int coin(uint64_t *s)
{
    return (int)(next64(s) >> 63);
}

static double normal(uint64_t *s)
{
    double u = uniform(s, 0.0, 1.0), v = uniform(s, 0.0, 1.0);
    return sqrt(-2.0 * log(1.0 - u)) * cos(6.283185307179586 * v);
}

/* CNTK's jittered ratio: the min, or uniform over [min, max] with jitterType=uniRatio */
static double jitter(const struct img_tf *t, const double *r, uint64_t *s)
{
    return !t->jitter || r[0] == r[1] ? r[0] : uniform(s, r[0], r[1]);
}

/* ------------------------------------------------------------------ Crop */

static void crop_size(const struct img_tf *t, int W, int H, uint64_t *s, int *w, int *h)
{
    if (t->crop_w > 0 && t->crop_h > 0) {
        *w = t->crop_w < W ? t->crop_w : W;
        *h = t->crop_h < H ? t->crop_h : H;
        return;
    }
    *w = W;
    *h = H;
    for (int attempt = 0; attempt < 10; attempt++) {
        if (t->side[0] > 0)
            *w = *h = (int)lround((W < H ? W : H) * jitter(t, t->side, s));
        else if (t->area[0] > 0)
            *w = *h = (int)lround(sqrt((double)H * W * jitter(t, t->area, s)));
        double ar = jitter(t, t->aspect, s);
        if (ar != 1.0) {
            double area = (double)*w * *h;
            int wide = coin(s);
            *w = (int)sqrt(wide ? area * ar : area / ar);
            *h = (int)sqrt(wide ? area / ar : area * ar);
        }
        if (*w <= W && *h <= H && *w > 0 && *h > 0)
            return;
    }
    *w = W;
    *h = H;
}

static int crop(const struct img_tf *t, struct img *im, struct img *tmp, uint64_t *s)
{
    int W = im->w, H = im->h, w, h, x, y;
    crop_size(t, W, H, s, &w, &h);
    if (t->crop_type == IMG_CROP_SIDE || t->crop_type == IMG_CROP_AREA) {
        x = uniform_int(s, 0, W - w);
        y = uniform_int(s, 0, H - h);
    } else if (t->crop_type == IMG_CROP_MULTIVIEW) { /* the first of the ten views */
        x = y = 0;
    } else {
        x = (W - w) / 2;
        y = (H - h) / 2;
    }
    int flip = t->hflip && coin(s);
    if (img_room(tmp, w, h, im->c))
        return -1;
    int c = im->c;
    for (int r = 0; r < h; r++)
        for (int q = 0; q < w; q++) {
            const float *src = im->px + ((size_t)(y + r) * W + (size_t)(x + q)) * c;
            float *dst = tmp->px + ((size_t)r * w + (size_t)(flip ? w - 1 - q : q)) * c;
            memcpy(dst, src, (size_t)c * sizeof *dst);
        }
    tmp->u8 = im->u8;
    img_swap(im, tmp);
    return 0;
}

/* ------------------------------------------------------------------ Scale */

/* OpenCV's cubic weights (a = -0.75) for fraction f */
static void cubic_weights(double f, double *k)
{
    const double a = -0.75;
    k[0] = ((a * (f + 1) - 5 * a) * (f + 1) + 8 * a) * (f + 1) - 4 * a;
    k[1] = ((a + 2) * f - (a + 3)) * f * f + 1;
    k[2] = ((a + 2) * (1 - f) - (a + 3)) * (1 - f) * (1 - f) + 1;
    k[3] = 1.0 - k[0] - k[1] - k[2];
}

static int clampi(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* Taps of destination coordinate d (of n) from a source of m: first index, weights. */
static int taps(int interp, int d, int n, int m, int *first, double *k)
{
    double scale = (double)m / n;
    if (interp == IMG_NEAREST) {
        *first = clampi((int)floor(d * scale), 0, m - 1);
        k[0] = 1.0;
        return 1;
    }
    double f = (d + 0.5) * scale - 0.5;
    int i = (int)floor(f);
    f -= i;
    if (interp == IMG_LINEAR) {
        if (i < 0) { /* OpenCV holds the edge */
            i = 0;
            f = 0.0;
        }
        if (i >= m - 1) {
            i = m - 1;
            f = 0.0;
        }
        *first = i;
        k[0] = 1.0 - f;
        k[1] = f;
        return 2;
    }
    *first = i - 1;
    cubic_weights(f, k);
    return 4;
}

/* im resized to w x h into dst (separable: rows, then columns). */
static int resize(const struct img *im, int interp, int w, int h, struct img *dst)
{
    int W = im->w, H = im->h, c = im->c;
    if (img_room(dst, w, h, c))
        return -1;
    float *row = malloc((size_t)w * (size_t)H * (size_t)c * sizeof *row);
    if (!row)
        return -1;
    for (int q = 0; q < w; q++) { /* horizontal pass: H x w */
        int first;
        double k[4];
        int nt = taps(interp, q, w, W, &first, k);
        for (int r = 0; r < H; r++)
            for (int ch = 0; ch < c; ch++) {
                double v = 0.0;
                for (int t = 0; t < nt; t++)
                    v += k[t] *
                         im->px[((size_t)r * W + (size_t)clampi(first + t, 0, W - 1)) * c + ch];
                row[((size_t)r * w + q) * c + ch] = (float)v;
            }
    }
    for (int r = 0; r < h; r++) { /* vertical pass */
        int first;
        double k[4];
        int nt = taps(interp, r, h, H, &first, k);
        for (int q = 0; q < w; q++)
            for (int ch = 0; ch < c; ch++) {
                double v = 0.0;
                for (int t = 0; t < nt; t++)
                    v += k[t] * row[((size_t)clampi(first + t, 0, H - 1) * w + q) * c + ch];
                if (im->u8) /* 8-bit data stay 8-bit, rounded and saturated */
                    v = v < 0.0 ? 0.0 : v > 255.0 ? 255.0 : nearbyint(v);
                dst->px[((size_t)r * w + q) * c + ch] = (float)v;
            }
    }
    dst->u8 = im->u8;
    free(row);
    return 0;
}

static int scale(const struct img_tf *t, struct img *im, struct img *tmp)
{
    int W = im->w, H = im->h, w = t->width, h = t->height;
    if (t->scale_mode == IMG_FILL || (W == w && H == h))
        return W == w && H == h ? 0
                                : (resize(im, t->interp, w, h, tmp) ? -1 : (img_swap(im, tmp), 0));
    /* keep the aspect: the side that fits, the other rounded */
    int crop_mode = t->scale_mode == IMG_SCALE_CROP;
    int by_width = crop_mode ? W < H : W > H;
    int sw = by_width ? w : (int)lround((double)W * h / H);
    int sh = by_width ? (int)lround((double)H * w / W) : h;
    if (sw < 1)
        sw = 1;
    if (sh < 1)
        sh = 1;
    if (resize(im, t->interp, sw, sh, tmp))
        return -1;
    if (img_room(im, w, h, tmp->c))
        return -1;
    int c = tmp->c, x0 = (sw - w) / 2, y0 = (sh - h) / 2; /* crop: >= 0; pad: <= 0 */
    if (!crop_mode) {
        x0 = -((w - sw) / 2);
        y0 = -((h - sh) / 2);
    }
    for (int r = 0; r < h; r++)
        for (int q = 0; q < w; q++) {
            int sy = r + y0, sx = q + x0;
            int inside = sy >= 0 && sy < sh && sx >= 0 && sx < sw;
            for (int ch = 0; ch < c; ch++) {
                float v;
                if (inside || t->pad_value < 0) /* edge pixels repeated */
                    v = tmp->px[((size_t)clampi(sy, 0, sh - 1) * sw +
                                 (size_t)clampi(sx, 0, sw - 1)) *
                                    c +
                                ch];
                else
                    v = (float)t->pad_value;
                im->px[((size_t)r * w + q) * c + ch] = v;
            }
        }
    im->u8 = tmp->u8;
    return 0;
}

/* ------------------------------------------------------------------ Color, Intensity */

static float clamp255(double v)
{
    return (float)(v < 0.0 ? 0.0 : v > 255.0 ? 255.0 : v);
}

static void color(const struct img_tf *t, struct img *im, uint64_t *s)
{
    size_t n = (size_t)im->w * (size_t)im->h * (size_t)im->c;
    if (t->brightness > 0 || t->contrast > 0) {
        double beta = 0.0, alpha = 1.0;
        if (t->brightness > 0) {
            double sum = 0.0;
            for (size_t i = 0; i < n; i++)
                sum += im->px[i];
            beta = uniform(s, -t->brightness, t->brightness) * sum / (double)n;
        }
        if (t->contrast > 0)
            alpha = 1.0 + uniform(s, -t->contrast, t->contrast);
        for (size_t i = 0; i < n; i++)
            im->px[i] = clamp255(im->px[i] * alpha + beta);
    }
    if (t->saturation > 0 && im->c == 3) {
        /* HSV's saturation times ratio (at most 1), hue and value kept: each channel's
         * distance below the value scales with the saturation */
        double ratio = 1.0 + uniform(s, -t->saturation, t->saturation);
        for (size_t i = 0; i < n; i += 3) {
            float *p = im->px + i;
            double v = fmax(p[0], fmax(p[1], p[2])), m = fmin(p[0], fmin(p[1], p[2]));
            double sat = (v - m) / (fabs(v) + 1.1920929e-07);
            if (sat <= 0.0)
                continue;
            double s2 = fmin(sat * ratio, 1.0), k = s2 / sat;
            for (int ch = 0; ch < 3; ch++)
                p[ch] = (float)(v - (v - p[ch]) * k);
        }
    }
    im->u8 = 0;
}

static void intensity(const struct img_tf *t, const struct img_aux *aux, struct img *im,
                      uint64_t *s)
{
    double a[3], shift[3];
    for (int i = 0; i < 3; i++)
        a[i] = normal(s) * t->intensity_std * aux->eigval[i];
    for (int r = 0; r < 3; r++)
        shift[r] = aux->eigvec[3 * r] * a[0] + aux->eigvec[3 * r + 1] * a[1] +
                   aux->eigvec[3 * r + 2] * a[2];
    size_t n = (size_t)im->w * (size_t)im->h;
    int c = im->c;
    for (size_t i = 0; i < n; i++)
        for (int ch = 0; ch < c; ch++) /* blue takes the last component, red the first */
            im->px[i * c + ch] = clamp255(im->px[i * c + ch] + shift[c - 1 - ch]);
    im->u8 = 0;
}

int img_apply(const struct img_tf *t, const struct img_aux *aux, struct img *im, struct img *tmp,
              uint64_t *rng, char *why, size_t why_size)
{
    switch (t->kind) {
    case IMG_CROP:
        if (crop(t, im, tmp, rng))
            goto oom;
        return 0;
    case IMG_SCALE:
        if (im->c != t->channels) {
            snprintf(why, why_size, "Scale: the image has %d channels, channels = %d", im->c,
                     t->channels);
            return -1;
        }
        if (scale(t, im, tmp))
            goto oom;
        return 0;
    case IMG_MEAN: {
        if (aux->mean_w != im->w || aux->mean_h != im->h || aux->mean_c != im->c) {
            snprintf(why, why_size,
                     "Mean: meanFile '%s' holds a %d x %d x %d image, the image is %d x %d x %d "
                     "there (CNTK would skip the mean)",
                     t->file, aux->mean_w, aux->mean_h, aux->mean_c, im->w, im->h, im->c);
            return -1;
        }
        size_t n = (size_t)im->w * (size_t)im->h * (size_t)im->c;
        for (size_t i = 0; i < n; i++)
            im->px[i] -= aux->mean[i];
        im->u8 = 0;
        return 0;
    }
    case IMG_COLOR:
        if (t->brightness > 0 || t->contrast > 0 || t->saturation > 0)
            color(t, im, rng);
        return 0;
    case IMG_INTENSITY:
        if (t->file[0] && t->intensity_std != 0)
            intensity(t, aux, im, rng);
        return 0;
    default: /* Transpose: at the end (img_store) */ return 0;
    }
oom:
    snprintf(why, why_size, "out of memory");
    return -1;
}

void img_store(const struct img *im, int planar, float *dst)
{
    size_t n = (size_t)im->w * (size_t)im->h;
    int c = im->c;
    if (!planar || c == 1) {
        memcpy(dst, im->px, n * (size_t)c * sizeof *dst);
        return;
    }
    for (int ch = 0; ch < c; ch++)
        for (size_t i = 0; i < n; i++)
            dst[(size_t)ch * n + i] = im->px[i * c + ch];
}
