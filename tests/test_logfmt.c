/* Log lines (src/train/logfmt.c) against SPEC 9's sample lines, byte for byte. */
#include "testutil.h"
#include "core/log.h"
#include "train/logfmt.h"

#include <unistd.h>

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
    /* several evaluation nodes: the perplexity right after the cross entropy (CNTK's
     * BatchNormalization/NonSpatial baseline's line) */
    struct logfmt_crit m[3] = {
        {"ce", 0.29395443 * 10000, 10000}, {"errs", 844, 10000}, {"top5Errs", 56, 10000}};
    logfmt_final(buf, sizeof buf, 1, 10, m, 3, 0);
    ck_assert_str_eq(buf, "Final Results: Minibatch[1-10]: ce = 0.29395443 * 10000; perplexity = "
                          "1.34172276; errs = 8.440% * 10000; top5Errs = 0.560% * 10000");
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

/* CNTK.cpp's log file names, as CNTK's test drivers see them (timestamping=true):
 * ParallelBM's baseline redirects rank 0 to .../stderr_speechTrain.logrank0 */
START_TEST(log_names)
{
    char buf[256];
    const char *one[] = {"speechTrain"}, *two[] = {"train", "test"};
    logfmt_log_name(buf, sizeof buf, "/tmp/r/stderr", 1, one, 1, 1, 0);
    ck_assert_str_eq(buf, "/tmp/r/stderr_speechTrain.logrank0");
    logfmt_log_name(buf, sizeof buf, "/tmp/r/stderr", 1, one, 1, 1, 1);
    ck_assert_str_eq(buf, "/tmp/r/stderr_speechTrain.logrank1");
    logfmt_log_name(buf, sizeof buf, "out/log", 1, two, 2, 0, 0);
    ck_assert_str_eq(buf, "out/log_train_test.log");
    /* without timestamping: the file itself, .rank<k> on the other ranks */
    logfmt_log_name(buf, sizeof buf, "out/log", 0, two, 2, 1, 0);
    ck_assert_str_eq(buf, "out/log");
    logfmt_log_name(buf, sizeof buf, "out/log", 0, two, 2, 1, 3);
    ck_assert_str_eq(buf, "out/log.rank3");
    /* parallelTrain=false on several ranks: rank k > 0 keeps a name of its own */
    logfmt_log_name(buf, sizeof buf, "out/log", 1, two, 2, 0, 2);
    ck_assert_str_eq(buf, "out/log_train_test.logrank2");
    logfmt_log_name(buf, sizeof buf, "out/log", 0, two, 2, 0, 2);
    ck_assert_str_eq(buf, "out/log.rank2");
}
END_TEST

/* The banner, the action box and the network summary against CNTK's baseline logs
 * (Tests/EndToEndTests/Speech/DNN/ParallelBM/baseline.cpu.txt) */
START_TEST(banners_and_summary)
{
    char buf[1024];
    char *argv[] = {"/bin/cntk", "configFile=cntk.cntk", "timestamping=true"};
    logfmt_banner(buf, sizeof buf, "CNTK 2.3.1+", "HEAD f4f0f8, Dec 11 2017 18:34:12",
                  "2017/12/12 15:17:58", 3, argv);
    ck_assert_str_eq(buf, "CNTK 2.3.1+ (HEAD f4f0f8, Dec 11 2017 18:34:12) at 2017/12/12 "
                          "15:17:58\n\n/bin/cntk  configFile=cntk.cntk  timestamping=true\n");
    logfmt_action_banner(buf, sizeof buf, "speechTrain", "train");
    ck_assert_str_eq(buf,
                     "##########################################################################"
                     "####\n"
                     "#                                                                     "
                     "       #\n"
                     "# speechTrain command (train action)                                  "
                     "       #\n"
                     "#                                                                     "
                     "       #\n"
                     "##########################################################################"
                     "####");
    logfmt_parameters(buf, sizeof buf, 516740, 6, 6, 15, 1);
    ck_assert_str_eq(buf, "Training 516740 parameters in 6 out of 6 parameter tensors and 15 "
                          "nodes with gradient:");
    logfmt_parameters(buf, sizeof buf, 516740, 6, 6, 15, 0);
    ck_assert_str_eq(buf, "Training 516740 parameters in 6 parameter tensors.");
    logfmt_parameter_node(buf, sizeof buf, "W0", 512, 363);
    ck_assert_str_eq(buf, "\tNode 'W0' (LearnableParameter operation) : [512 x 363]");
}
END_TEST

static const char *contents(const char *path)
{
    static char buf[4096];
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

/* pt_log_often (a step's aggregation time, progress lines): a line soon after a flush waits
 * for the next line that flushes and comes out before it, stamped when it was printed; one
 * later than PT_LOG_HOLD_SECONDS after the last flush goes out at once; pt_log_check and
 * pt_log_close write what is held. */
START_TEST(often_lines_held)
{
    enter_tmpdir();
    struct pt_log l;
    struct pt_err e;
    pt_err_clear(&e);
    pt_log_init(&l);
    ck_assert_int_eq(pt_log_open(&l, "log", "log", &e), 0);
    pt_log_printf(&l, "a\n");
    pt_log_often(&l, "b\n");
    pt_log_often(&l, "c %d\n", 3);
    ck_assert_str_eq(contents("log"), "a\n");
    pt_log_printf(&l, "d\n");
    ck_assert_str_eq(contents("log"), "a\nb\nc 3\nd\n");
    usleep((useconds_t)(PT_LOG_HOLD_SECONDS * 1.5e6));
    pt_log_often(&l, "e\n");
    ck_assert_str_eq(contents("log"), "a\nb\nc 3\nd\ne\n");
    pt_log_often(&l, "f\n");
    ck_assert_int_eq(pt_log_check(&l, &e), 0);
    ck_assert_str_eq(contents("log"), "a\nb\nc 3\nd\ne\nf\n");
    /* more than the hold keeps: written as it fills, nothing lost, in order */
    char many[4096 * 8], line[32];
    size_t at = 0;
    for (int i = 0; i < 2000; i++) {
        snprintf(line, sizeof line, "often %d\n", i);
        pt_log_often(&l, "%s", line);
        at += (size_t)snprintf(many + at, sizeof many - at, "%s", line);
    }
    l.timestamping = 1;
    pt_log_often(&l, "g\n");
    pt_log_close(&l);
    FILE *f = fopen("log", "r");
    ck_assert_ptr_nonnull(f);
    static char all[65536];
    size_t n = fread(all, 1, sizeof all - 1, f);
    fclose(f);
    all[n] = '\0';
    const char *tail = strstr(all, "often 0\n");
    ck_assert_ptr_nonnull(tail);
    ck_assert_int_eq(strncmp(tail, many, at), 0);
    /* the held line has its stamp: "MM/DD/YYYY HH:MM:SS: g" */
    const char *g = tail + at;
    ck_assert_uint_eq(strlen(g), 23);
    ck_assert_str_eq(g + 19, ": g\n");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("logfmt");
    TCase *t = tcase_create("logfmt");
    tcase_add_test(t, spec_lines);
    tcase_add_test(t, criterion_forms);
    tcase_add_test(t, progress_digits);
    tcase_add_test(t, log_names);
    tcase_add_test(t, banners_and_summary);
    tcase_add_test(t, often_lines_held);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return run_suite(suite());
}
