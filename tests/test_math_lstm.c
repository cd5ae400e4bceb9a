/* tests/test_math: the CPU backend's LSTM step kernels (lstm_forward, lstm_backward)
 * against the equations in double precision (backend.h's struct bk_lstm_fwd), padding
 * columns, the bias and peephole sums, and the backward pass written over the gates. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "math/backend.h"
#include "test_math.h"
#include "testutil.h"

static double sig(double v)
{
    return 1.0 / (1.0 + exp(-v));
}

/* One LSTM step: H cells, N columns, column 2 is padding. */
enum { H = 37, N = 3 }; /* two of the kernels' 16-cell blocks and a tail */
static struct {
    float gates[4 * H * N], pre[4 * H * N], cp[H * N], hp[H * N], c[H * N], h[H * N];
    float tc[H * N], bias[4 * H], peep[3 * H], mask[N];
} ls;

static void lstm_step_forward(void)
{
    uint64_t s = 9;
    for (int k = 0; k < 4 * H * N; k++)
        ls.pre[k] = ls.gates[k] = (float)(2 * uni(&s));
    for (int k = 0; k < H * N; k++) {
        ls.cp[k] = (float)uni(&s);
        ls.hp[k] = (float)uni(&s);
    }
    for (int k = 0; k < 4 * H; k++)
        ls.bias[k] = (float)uni(&s);
    for (int k = 0; k < 3 * H; k++)
        ls.peep[k] = (float)uni(&s);
    ls.mask[0] = ls.mask[1] = 1.0f;
    ls.mask[2] = 0.0f;
    struct bk_lstm_fwd f = {.hidden = H,
                            .n = N,
                            .gates = ls.gates,
                            .c_prev = ls.cp,
                            .h_prev = ls.hp,
                            .c = ls.c,
                            .h = ls.h,
                            .tanh_c = ls.tc,
                            .bias = ls.bias,
                            .peep = ls.peep,
                            .mask = ls.mask};
    bk->ops->lstm_forward(bk, &f);
}

/* Against a double reference; the padding column carries the state. */
START_TEST(lstm_step_forward_reference)
{
    lstm_step_forward();
    const float *b = ls.bias, *p = ls.peep;
    for (int j = 0; j < 2; j++)
        for (int k = 0; k < H; k++) {
            const float *g = ls.pre + 4 * H * j;
            double cprev = ls.cp[j * H + k];
            double i = sig(g[k] + b[k] + p[k] * cprev);
            double fg = sig(g[H + k] + b[H + k] + p[H + k] * cprev);
            double gg = tanh(g[3 * H + k] + b[3 * H + k]), cn = fg * cprev + i * gg;
            double o = sig(g[2 * H + k] + b[2 * H + k] + p[2 * H + k] * cn);
            ck_assert(fabs(ls.c[j * H + k] - cn) < 1e-5);
            ck_assert(fabs(ls.h[j * H + k] - o * tanh(cn)) < 1e-5);
            ck_assert(fabs(ls.gates[4 * H * j + k] - i) < 1e-6);
            ck_assert(fabs(ls.gates[4 * H * j + 2 * H + k] - o) < 1e-6);
        }
    ck_assert(memcmp(ls.c + 2 * H, ls.cp + 2 * H, H * sizeof(float)) == 0);
    ck_assert(memcmp(ls.h + 2 * H, ls.hp + 2 * H, H * sizeof(float)) == 0);
}
END_TEST

/* The padding column has no gate gradient and passes dh and dc through; the bias and
 * peephole sums add the real columns' gate gradients to what they held. (The gate
 * gradients themselves are checked by finite differences in test_nn_lstm.) */
START_TEST(lstm_step_backward_sums_and_padding)
{
    lstm_step_forward();
    float dh[H * N], dc[H * N], dprev[H * N], dg[4 * H * N], db[4 * H], dp[3 * H];
    uint64_t s = 10;
    for (int k = 0; k < H * N; k++) {
        dh[k] = (float)uni(&s);
        dc[k] = (float)uni(&s);
        dprev[k] = 1.0f;
    }
    for (int k = 0; k < 4 * H; k++)
        db[k] = 1.0f;
    memset(dp, 0, sizeof dp);
    float dc_in = dc[2 * H + 4];
    struct bk_lstm_bwd b = {.hidden = H,
                            .n = N,
                            .gates = ls.gates,
                            .c_prev = ls.cp,
                            .c = ls.c,
                            .tanh_c = ls.tc,
                            .peep = ls.peep,
                            .mask = ls.mask,
                            .dh = dh,
                            .dc = dc,
                            .dh_prev = dprev,
                            .dgates = dg,
                            .dbias = db,
                            .dpeep = dp};
    bk->ops->lstm_backward(bk, &b);
    for (int k = 0; k < 4 * H; k++) {
        ck_assert(dg[2 * 4 * H + k] == 0.0f);
        ck_assert(fabs(db[k] - (1.0 + dg[k] + dg[4 * H + k])) < 1e-6);
    }
    for (int k = 0; k < H; k++) {
        double want_i = (double)dg[k] * ls.cp[k] + (double)dg[4 * H + k] * ls.cp[H + k];
        double want_o =
            (double)dg[2 * H + k] * ls.c[k] + (double)dg[4 * H + 2 * H + k] * ls.c[H + k];
        ck_assert(fabs(dp[k] - want_i) < 1e-6);
        ck_assert(fabs(dp[2 * H + k] - want_o) < 1e-6);
    }
    ck_assert(dc[2 * H + 4] == dc_in);
    ck_assert(dprev[2 * H + 4] == 1.0f + dh[2 * H + 4]);
    ck_assert(dprev[0] == 1.0f); /* real columns leave dh_prev to the recurrent gemm */
    /* in place (dgates over the gates, as the LSTM layer runs it): the same bits */
    float g2[4 * H * N], dc2[H * N], db2[4 * H], dp2[3 * H];
    memcpy(g2, ls.gates, sizeof g2);
    s = 10;
    for (int k = 0; k < H * N; k++) {
        (void)uni(&s);
        dc2[k] = (float)uni(&s);
    }
    for (int k = 0; k < 4 * H; k++)
        db2[k] = 1.0f;
    memset(dp2, 0, sizeof dp2);
    b.gates = b.dgates = g2;
    b.dc = dc2;
    b.dbias = db2;
    b.dpeep = dp2;
    b.dh_prev = NULL;
    bk->ops->lstm_backward(bk, &b);
    ck_assert(memcmp(g2, dg, sizeof dg) == 0);
    ck_assert(memcmp(dc2, dc, sizeof dc) == 0);
    ck_assert(memcmp(db2, db, sizeof db) == 0);
    ck_assert(memcmp(dp2, dp, sizeof dp) == 0);
}
END_TEST

TCase *math_lstm_tcase(void);

TCase *math_lstm_tcase(void)
{
    TCase *tc = tcase_create("cpu lstm");
    tcase_add_checked_fixture(tc, math_setup, math_teardown);
    tcase_add_test(tc, lstm_step_forward_reference);
    tcase_add_test(tc, lstm_step_backward_sums_and_padding);
    return tc;
}
