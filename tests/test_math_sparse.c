/* tests/test_math: the CPU backend's products with a sparse operand (gemm_sparse: one-hot
 * words times their embedding) against gemm. */
#include <math.h>

#include "math/backend.h"
#include "test_math.h"
#include "testutil.h"

TCase *math_sparse_tcase(void);

/* gemm_sparse against gemm on X of one-hot columns (the same bits forward), of several
 * nonzeros and of none, both forms, beta 0 (C's NaNs gone), 1 and 0.5. */
START_TEST(gemm_sparse_as_gemm)
{
    enum { M = 6, N = 7, K = 40, LD = 41 };
    static float a[LD * LD], x[LD * N], c[LD * LD], d[LD * LD];
    uint64_t s = 3;
    for (int i = 0; i < LD * LD; i++)
        a[i] = (float)uni(&s);
    ck_assert_ptr_nonnull(bk->ops->gemm_sparse);
    for (int kind = 0; kind < 2; kind++) { /* one-hot; 0 to 3 nonzeros */
        for (int i = 0; i < LD * N; i++)
            x[i] = 0.0f;
        for (int j = 0; j < N; j++)
            for (int r = 0; r < (kind ? j % 4 : 1); r++)
                x[(size_t)(j * 7 + r * 13) % K + (size_t)j * LD] = kind ? (float)uni(&s) : 1.0f;
        for (int tx = 0; tx < 2; tx++)
            for (int beta = 0; beta < 3; beta++) {
                float bv = beta == 2 ? 0.5f : (float)beta;
                int rows = M, cols = tx ? K : N;
                for (int i = 0; i < LD * LD; i++)
                    c[i] = d[i] = beta ? (float)uni(&s) : NAN;
                for (int i = 0; beta && i < LD * LD; i++)
                    d[i] = c[i];
                if (tx)
                    bk->ops->gemm(bk, BK_NOTRANS, BK_TRANS, M, K, N, 1.0f, a, LD, x, LD, bv, d, LD);
                else
                    bk->ops->gemm(bk, BK_NOTRANS, BK_NOTRANS, M, N, K, 1.0f, a, LD, x, LD, bv, d,
                                  LD);
                bk->ops->gemm_sparse(bk, (enum bk_trans)tx, M, N, K, a, LD, x, LD, bv, c, LD);
                for (int j = 0; j < cols; j++)
                    for (int i = 0; i < rows; i++) {
                        float got = c[i + j * LD], want = d[i + j * LD];
                        if (!kind && !tx) /* a column picked: gemm's bits */
                            ck_assert_msg(got == want, "%d %d: %g %g", i, j, got, want);
                        else
                            ck_assert_msg(fabsf(got - want) <= 1e-5f * (1.0f + fabsf(want)),
                                          "kind %d tx %d beta %d (%d, %d): %g against %g", kind, tx,
                                          beta, i, j, got, want);
                    }
            }
    }
}
END_TEST

TCase *math_sparse_tcase(void)
{
    TCase *tc = tcase_create("cpu sparse");
    tcase_add_checked_fixture(tc, math_setup, math_teardown);
    tcase_add_test(tc, gemm_sparse_as_gemm);
    return tc;
}
