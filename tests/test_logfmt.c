/* Log lines (src/train/logfmt.c) against SPEC 9's sample lines, byte for byte. */
#include "testutil.h"
#include "train/logfmt.h"

START_TEST(spec_lines)
{
    char buf[1024];
    logfmt_epoch_start(buf, sizeof buf, 1, 0.02, 0.9, 237.29);
    ck_assert_str_eq(buf,
                     "Starting Epoch 1: learning rate per sample = 0.020000  effective momentum = "
                     "0.900000  momentum as time constant = 237.3 samples");
    struct logfmt_crit c[2] = {{"CrossEntropyWithSoftmax", 0.69973267 * 250, 250},
                               {"EvalClassificationError", 126, 250}};
    logfmt_progress(buf, sizeof buf, 1, 4, 1, 10, -1, 2, c, 2, 250 / 12368.3, 250);
    ck_assert_str_eq(
        buf,
        " Epoch[ 1 of 4]-Minibatch[   1-  10]: CrossEntropyWithSoftmax = 0.69973267 * 250; "
        "EvalClassificationError = 0.50400000 * 250; time = 0.0202s; samplesPerSecond = 12368.3");
    logfmt_progress(buf, sizeof buf, 2, 4, 1, 10, 2.5, 2, c, 2, 250 / 12368.3, 250);
    ck_assert_ptr_nonnull(
        strstr(buf, " Epoch[ 2 of 4]-Minibatch[   1-  10, 2.50%]: CrossEntropyWithSoftmax"));
    struct logfmt_crit f[2] = {{"CrossEntropyWithSoftmax", 0.70804124 * 10000, 10000},
                               {"EvalClassificationError", 4938, 10000}};
    logfmt_epoch_end(buf, sizeof buf, 1, 4, f, 2, 10000, 0.02f, 0.910351);
    ck_assert_str_eq(
        buf, "Finished Epoch[ 1 of 4]: [Training] CrossEntropyWithSoftmax = 0.70804124 * 10000; "
             "EvalClassificationError = 0.49380000 * 10000; totalSamplesSeen = 10000; "
             "learningRatePerSample = 0.02; epochTime=0.910351s");
    struct logfmt_crit r[2] = {{"EvalClassificationError", 30, 603},
                               {"CrossEntropyWithSoftmax", 0.10813542 * 603, 603}};
    logfmt_final(buf, sizeof buf, 1, 2, r, 2, 1);
    ck_assert_str_eq(buf,
                     "Final Results: Minibatch[1-2]: EvalClassificationError = 0.04975124 * 603; "
                     "CrossEntropyWithSoftmax = 0.10813542 * 603; perplexity = 1.11419862");
}
END_TEST

START_TEST(criterion_forms)
{
    char buf[256];
    struct logfmt_crit tiny = {"SquareError", 1e-9 * 4, 4};
    logfmt_criterion(buf, sizeof buf, &tiny);
    ck_assert_str_eq(buf, "SquareError = 1.00000000e-09 * 4");
    struct logfmt_crit errs = {"errs", 1, 8};
    logfmt_criterion(buf, sizeof buf, &errs);
    ck_assert_str_eq(buf, "errs = 12.500% * 8");
    struct logfmt_crit big = {"SquareError", 3e9, 1};
    logfmt_criterion(buf, sizeof buf, &big);
    ck_assert_str_eq(buf, "SquareError = 3.00000000e+09 * 1");
    struct logfmt_crit none = {"CE", 0, 0};
    logfmt_criterion(buf, sizeof buf, &none);
    ck_assert_str_eq(buf, "CE = 0.00000000 * 0");
    /* learning rates are floats: 0.2/25 prints as 0.0080000004 */
    struct logfmt_crit c = {"CE", 1, 1};
    logfmt_epoch_end(buf, sizeof buf, 3, 10, &c, 1, 5, 0.2f / 25, 1.5);
    ck_assert_ptr_nonnull(strstr(buf, "learningRatePerSample = 0.0080000004; epochTime=1.5s"));
}
END_TEST

START_TEST(progress_digits)
{
    ck_assert_int_eq(logfmt_progress_digits(235, 10), 2);
    ck_assert_int_eq(logfmt_progress_digits(100000, 10), 2);
    ck_assert_int_eq(logfmt_progress_digits(100001, 10), 3); /* ceil(log10(10000.1)) - 2 */
    ck_assert_int_eq(logfmt_progress_digits(10, 10), 2);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("logfmt");
    TCase *t = tcase_create("logfmt");
    tcase_add_test(t, spec_lines);
    tcase_add_test(t, criterion_forms);
    tcase_add_test(t, progress_digits);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return run_suite(suite());
}
