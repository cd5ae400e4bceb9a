/* CPU pointwise math of one peephole-LSTM time step (see struct bk_lstm_fwd for the
 * equations and the gate layout). The gemms around it (Wx x for all steps at once, Wh h per
 * step) are the caller's; this is everything between them, fused into one pass per column:
 * bias, gates, cell, output and, backward, the bias and peephole gradient sums (so no
 * separate passes over the 4H x (T n) gate matrices are needed).
 *
 * The rows of one column are gathered into a struct of pointers; they never overlap, which
 * CPU_IVDEP tells gcc, so the CPU_BLOCK inner loops vectorize without alias checks. */
#include "math/cpu_kernels.h"

#define LSTM_BLOCK 16
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__ELF__)
#define LSTM_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define LSTM_CLONES
#endif

/* Forward rows of one column: gates 4 x H (pre-activations in, activations out). */
struct lstm_fwd_col {
    float *i, *f, *o, *g;
    const float *bi, *bf, *bo, *bg;
    const float *pi, *pf, *po;
    const float *cp;
    float *c, *tc, *h;
};

CPU_INLINE void lstm_forward_cells(const struct lstm_fwd_col *r, size_t lo, size_t hi)
{
    CPU_IVDEP
    for (size_t k = lo; k < hi; k++) {
        float cp = r->cp[k];
        float i = cpu_sigmoid(r->i[k] + r->bi[k] + r->pi[k] * cp);
        float f = cpu_sigmoid(r->f[k] + r->bf[k] + r->pf[k] * cp);
        float g = cpu_tanh(r->g[k] + r->bg[k]);
        float cn = f * cp + i * g;
        float o = cpu_sigmoid(r->o[k] + r->bo[k] + r->po[k] * cn);
        float t = cpu_tanh(cn);
        r->i[k] = i;
        r->f[k] = f;
        r->o[k] = o;
        r->g[k] = g;
        r->c[k] = cn;
        r->tc[k] = t;
        r->h[k] = o * t;
    }
}

static struct lstm_fwd_col lstm_forward_rows(const struct bk_lstm_fwd *s, size_t j)
{
    const size_t hid = (size_t)s->hidden, at = j * hid;
    float *g = s->gates + 4 * at;
    const float *b = s->bias, *p = s->peep;
    return (struct lstm_fwd_col){
        .i = g,
        .f = g + hid,
        .o = g + 2 * hid,
        .g = g + 3 * hid,
        .bi = b,
        .bf = b + hid,
        .bo = b + 2 * hid,
        .bg = b + 3 * hid,
        .pi = p,
        .pf = p + hid,
        .po = p + 2 * hid,
        .cp = s->c_prev + at,
        .c = s->c + at,
        .tc = s->tanh_c + at,
        .h = s->h + at,
    };
}

LSTM_CLONES void cpu_lstm_forward(struct backend *b, const struct bk_lstm_fwd *s)
{
    (void)b;
    const size_t hid = (size_t)s->hidden;
    for (size_t j = 0; j < s->n; j++) {
        size_t at = j * hid;
        if (s->mask && s->mask[j] == 0.0f) { /* padding: carry the state */
            memcpy(s->c + at, s->c_prev + at, hid * sizeof(float));
            memcpy(s->h + at, s->h_prev + at, hid * sizeof(float));
            continue;
        }
        const struct lstm_fwd_col r = lstm_forward_rows(s, j);
        size_t k = 0;
        for (; k + LSTM_BLOCK <= hid; k += LSTM_BLOCK)
            lstm_forward_cells(&r, k, k + LSTM_BLOCK);
        lstm_forward_cells(&r, k, hid);
    }
}

/* Backward rows of one column: a* activations, d* pre-activation gradients (out), and the
 * bias (db*) and peephole (dp*) sums that every real column adds to. */
struct lstm_bwd_col {
    const float *ai, *af, *ao, *ag;
    float *di, *df, *d_o, *dg;
    const float *pi, *pf, *po;
    const float *cp, *c, *tc, *dh;
    float *dc; /* dL/dc_t in, dL/dc_{t-1} out */
    float *dbi, *dbf, *dbo, *dbg, *dpi, *dpf, *dpo;
};

CPU_INLINE void lstm_backward_cells(const struct lstm_bwd_col *r, size_t lo, size_t hi)
{
    CPU_IVDEP
    for (size_t k = lo; k < hi; k++) {
        float o = r->ao[k], t = r->tc[k], i = r->ai[k], f = r->af[k], g = r->ag[k];
        float dh = r->dh[k], cp = r->cp[k];
        float d_o = dh * t * o * (1.0f - o);
        /* c' feeds h (through tanh), the output gate's peephole and step t+1 */
        float dcc = r->dc[k] + dh * o * (1.0f - t * t) + d_o * r->po[k];
        float d_i = dcc * g * i * (1.0f - i);
        float d_f = dcc * cp * f * (1.0f - f);
        float d_g = dcc * i * (1.0f - g * g);
        r->di[k] = d_i;
        r->df[k] = d_f;
        r->d_o[k] = d_o;
        r->dg[k] = d_g;
        r->dc[k] = dcc * f + d_i * r->pi[k] + d_f * r->pf[k];
        r->dbi[k] += d_i;
        r->dbf[k] += d_f;
        r->dbo[k] += d_o;
        r->dbg[k] += d_g;
        r->dpi[k] += d_i * cp;
        r->dpf[k] += d_f * cp;
        r->dpo[k] += d_o * r->c[k];
    }
}

static struct lstm_bwd_col lstm_backward_rows(const struct bk_lstm_bwd *s, size_t j)
{
    const size_t hid = (size_t)s->hidden, at = j * hid;
    const float *a = s->gates + 4 * at, *p = s->peep;
    float *d = s->dgates + 4 * at, *db = s->dbias, *dp = s->dpeep;
    return (struct lstm_bwd_col){
        .ai = a,
        .af = a + hid,
        .ao = a + 2 * hid,
        .ag = a + 3 * hid,
        .di = d,
        .df = d + hid,
        .d_o = d + 2 * hid,
        .dg = d + 3 * hid,
        .pi = p,
        .pf = p + hid,
        .po = p + 2 * hid,
        .cp = s->c_prev + at,
        .c = s->c + at,
        .tc = s->tanh_c + at,
        .dh = s->dh + at,
        .dc = s->dc + at,
        .dbi = db,
        .dbf = db + hid,
        .dbo = db + 2 * hid,
        .dbg = db + 3 * hid,
        .dpi = dp,
        .dpf = dp + hid,
        .dpo = dp + 2 * hid,
    };
}

LSTM_CLONES void cpu_lstm_backward(struct backend *b, const struct bk_lstm_bwd *s)
{
    (void)b;
    const size_t hid = (size_t)s->hidden;
    for (size_t j = 0; j < s->n; j++) {
        size_t at = j * hid;
        if (s->mask && s->mask[j] == 0.0f) {
            /* padding carried h and c: their gradients pass straight through */
            memset(s->dgates + 4 * at, 0, 4 * hid * sizeof(float));
            if (s->dh_prev)
                for (size_t k = 0; k < hid; k++)
                    s->dh_prev[at + k] += s->dh[at + k];
            continue;
        }
        const struct lstm_bwd_col r = lstm_backward_rows(s, j);
        size_t k = 0;
        for (; k + LSTM_BLOCK <= hid; k += LSTM_BLOCK)
            lstm_backward_cells(&r, k, k + LSTM_BLOCK);
        lstm_backward_cells(&r, k, hid);
    }
}
