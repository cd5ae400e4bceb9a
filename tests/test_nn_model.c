/* Model files (src/nn/model_io.c): round trips, loading into a configured network, and
 * every way a file can be wrong. */
#define _GNU_SOURCE /* memmem */
#include <fcntl.h>

#include "test_nn_util.h"

#define MLP_BODY                                                                                   \
    "layerSizes=5:7:4\nlayerTypes=Tanh\ntrainingCriterion=CrossEntropyWithSoftmax\n"               \
    "evalCriterion=ErrorPrediction\napplyMeanVarNorm=true\nneedPrior=true\ninitValueScale=9"
#define LSTM_BODY                                                                                  \
    "rnnType=LSTM\nlayerSizes=3:6:4\ntrainingCriterion=SquareError\n"                              \
    "evalCriterion=ClassificationError\nforgetGateInitVal=0.25\ndefaultHiddenActivity=0.2\n"       \
    "uniformInit=false"

static void batch(struct minibatch *mb, int in, int out, size_t steps, uint64_t seed)
{
    static const uint32_t len[4] = {3, 1, 2, 3};
    fill_input(mb, "features", in, 4, steps, steps > 1 ? len : NULL, 0, &seed);
    fill_input(mb, "labels", out, 4, 1, NULL, 1, &seed);
}

/* Output and criteria of net on mb. */
static void outputs(struct nn *net, struct minibatch *mb, float *out, struct nn_stats *st)
{
    struct pt_err e = {0};
    size_t rows, cols;
    ck_assert_msg(nn_evaluate(net, mb, st, &e) == 0, "%s", e.msg);
    ck_assert_int_eq(nn_get_output(net, out, 16, &rows, &cols, &e), 0);
    ck_assert_uint_eq(rows * cols, 16);
}

static struct nn *saved_mlp(struct backend *b, const char *path)
{
    struct pt_err e = {0};
    struct nn *net = make_net(b, MLP_BODY, 4);
    float mean[5] = {0.5f, 0, -1, 2, 0.25f}, inv[5] = {1, 2, 3, 0.5f, 4};
    float prior[4] = {0.1f, 0.2f, 0.3f, 0.4f};
    ck_assert_int_eq(nn_set_mean_var(net, mean, inv, 5, &e), 0);
    ck_assert_int_eq(nn_set_prior(net, prior, 4, &e), 0);
    ck_assert_int_eq(nn_set_prior(net, prior, 3, &e), PT_EUSER);
    ck_assert_msg(nn_save(net, path, &e) == 0, "%s", e.msg);
    return net;
}

START_TEST(round_trip_mlp)
{
    enter_tmpdir();
    struct backend *b = make_backend();
    struct nn *net = saved_mlp(b, "m.dnn"), *back = NULL;
    struct pt_err e = {0};
    ck_assert_int_eq(access("m.dnn.tmp", F_OK), -1); /* renamed into place */
    ck_assert_msg(nn_load("m.dnn", b, &back, &e) == 0, "%s", e.msg);
    const struct nn_config *c1 = nn_get_config(net), *c2 = nn_get_config(back);
    ck_assert_int_eq(c2->nsizes, 3);
    ck_assert_int_eq(c2->sizes[1], 7);
    ck_assert_int_eq(c2->acts[0], BK_ACT_TANH);
    ck_assert_str_eq(c2->eval_name, "ErrorPrediction");
    ck_assert(c2->init_scale == c1->init_scale && c2->need_prior && c2->mean_var_norm);
    const float *m1, *s1, *m2, *s2;
    nn_get_mean_var(net, &m1, &s1);
    nn_get_mean_var(back, &m2, &s2);
    ck_assert(memcmp(m1, m2, 5 * 4) == 0 && memcmp(s1, s2, 5 * 4) == 0);
    int dim = 0;
    const float *prior = nn_get_prior(back, &dim);
    ck_assert_int_eq(dim, 4);
    ck_assert(prior[3] == 0.4f);
    struct minibatch mb = {0};
    batch(&mb, 5, 4, 1, 3);
    float o1[16], o2[16];
    struct nn_stats a, d;
    outputs(net, &mb, o1, &a);
    outputs(back, &mb, o2, &d);
    ck_assert(memcmp(o1, o2, sizeof o1) == 0);
    ck_assert(a.train_crit == d.train_crit);
    mb_free(&mb);
    nn_free(net);
    nn_free(back);
    backend_free(b);
}
END_TEST

START_TEST(round_trip_lstm_and_load_params)
{
    enter_tmpdir();
    struct backend *b = make_backend();
    struct pt_err e = {0};
    struct nn *net = make_net(b, LSTM_BODY, 8), *other = make_net(b, LSTM_BODY, 9), *back = NULL;
    ck_assert_int_eq(nn_save(net, "l.dnn", &e), 0);
    ck_assert_msg(nn_load("l.dnn", b, &back, &e) == 0, "%s", e.msg);
    ck_assert(nn_get_config(back)->gate_init[1] == 0.25);
    ck_assert(nn_get_config(back)->hidden_activity == 0.2);
    struct minibatch mb = {0};
    batch(&mb, 3, 4, 3, 5);
    float o1[16], o2[16], o3[16];
    struct nn_stats st;
    outputs(net, &mb, o1, &st);
    outputs(back, &mb, o2, &st);
    outputs(other, &mb, o3, &st);
    ck_assert(memcmp(o1, o2, sizeof o1) == 0);
    ck_assert(memcmp(o1, o3, sizeof o1) != 0); /* another seed */
    ck_assert_msg(nn_load_params(other, "l.dnn", &e) == 0, "%s", e.msg);
    outputs(other, &mb, o3, &st);
    ck_assert(memcmp(o1, o3, sizeof o1) == 0);
    struct nn *mlp = make_net(b, MLP_BODY, 1);
    pt_err_clear(&e);
    ck_assert_int_eq(nn_load_params(mlp, "l.dnn", &e), PT_EUSER);
    ck_assert_msg(strstr(e.msg, "l.dnn: error: the model file holds a different network") &&
                      strstr(e.msg, "configured at n.cfg:2:12"),
                  "%s", e.msg);
    mb_free(&mb);
    nn_free(net);
    nn_free(other);
    nn_free(back);
    nn_free(mlp);
    backend_free(b);
}
END_TEST

/* Contents of a file. */
static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *p = malloc(*n);
    ck_assert_uint_eq(fread(p, 1, *n, f), *n);
    fclose(f);
    return p;
}

static void spit(const char *path, const unsigned char *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(p, 1, n, f), n);
    fclose(f);
}

/* nn_load of path fails with PT_EUSER and a message holding want. */
static void expect_refused(struct backend *b, const char *path, const char *want)
{
    struct pt_err e = {0};
    struct nn *net = (struct nn *)&e; /* nn_load must set it to NULL */
    pt_err_clear(&e);
    ck_assert_int_eq(nn_load(path, b, &net, &e), PT_EUSER);
    ck_assert_ptr_null(net);
    char prefix[256];
    snprintf(prefix, sizeof prefix, "%s: error: ", path);
    ck_assert_msg(strncmp(e.msg, prefix, strlen(prefix)) == 0, "%s", e.msg);
    ck_assert_msg(strstr(e.msg, want) != NULL, "want \"%s\" in: %s", want, e.msg);
}

START_TEST(truncated_files)
{
    enter_tmpdir();
    struct backend *b = make_backend();
    nn_free(saved_mlp(b, "m.dnn"));
    size_t n;
    unsigned char *p = slurp("m.dnn", &n);
    const size_t cuts[] = {4, 8, 20, 24, 31, n / 2, n - 9, n - 8, n - 1};
    spit("t.dnn", p, 0);
    expect_refused(b, "t.dnn", "empty model file");
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        spit("t.dnn", p, cuts[i]);
        expect_refused(b, "t.dnn", "truncated model file");
    }
    free(p);
    backend_free(b);
}
END_TEST

START_TEST(corrupted_and_foreign_files)
{
    enter_tmpdir();
    struct backend *b = make_backend();
    nn_free(saved_mlp(b, "m.dnn"));
    size_t n;
    unsigned char *p = slurp("m.dnn", &n);
    p[n / 2] ^= 0x10; /* a bit of a parameter */
    spit("c.dnn", p, n);
    expect_refused(b, "c.dnn", "corrupted model file: checksum mismatch");
    p[n / 2] ^= 0x10;
    p[40] ^= 1; /* inside the description */
    spit("c.dnn", p, n);
    expect_refused(b, "c.dnn", "checksum mismatch");
    p[40] ^= 1;
    p[8] = 2; /* format version */
    spit("c.dnn", p, n);
    expect_refused(b, "c.dnn", "format version 2; this trainer reads version 1");
    p[8] = 1;
    unsigned char *q = malloc(n + 3);
    memcpy(q, p, n);
    memset(q + n, 0, 3);
    spit("c.dnn", q, n + 3);
    expect_refused(b, "c.dnn", "unexpected bytes after the checksum");
    spit("c.dnn", p, n); /* restored: loads again */
    struct nn *net = NULL;
    struct pt_err e = {0};
    ck_assert_msg(nn_load("c.dnn", b, &net, &e) == 0, "%s", e.msg);
    nn_free(net);
    write_file(".", "text.cfg", "command = train\ntrain = [ action = train ]\n");
    expect_refused(b, "text.cfg", "not a partrain model file");
    spit("png.dnn", (const unsigned char *)"\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16);
    expect_refused(b, "png.dnn", "not a partrain model file");
    expect_refused(b, "missing.dnn", "cannot open model file: No such file or directory");
    expect_refused(b, ".", "not a regular file");
    free(p);
    free(q);
    backend_free(b);
}
END_TEST

/* Replace text in a model file's description and give it a matching checksum (FNV-1a 64
 * of everything before the last 8 bytes), so only the content is wrong. */
static void rewrite_description(const char *from, const char *old, const char *new_text,
                                const char *to)
{
    size_t n;
    unsigned char *p = slurp(from, &n);
    unsigned char *at = memmem(p, n, old, strlen(old));
    ck_assert_ptr_nonnull(at);
    ck_assert_uint_eq(strlen(old), strlen(new_text));
    memcpy(at, new_text, strlen(new_text));
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n - 8; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    memcpy(p + n - 8, &h, 8);
    spit(to, p, n);
    free(p);
}

START_TEST(consistent_checksum_bad_content)
{
    enter_tmpdir();
    struct backend *b = make_backend();
    nn_free(saved_mlp(b, "m.dnn"));
    rewrite_description("m.dnn", "layerSizes=5:7:4", "layerSizes=5:9:4", "a.dnn");
    expect_refused(b, "a.dnn", "parameter count does not match the network description");
    rewrite_description("m.dnn", "layerSizes=5:7:4", "layerSizes=5:x:4", "b.dnn");
    struct pt_err e = {0};
    struct nn *net = NULL;
    ck_assert_int_eq(nn_load("b.dnn", b, &net, &e), PT_EUSER);
    ck_assert_msg(strstr(e.msg, "b.dnn:2:12: error: layerSizes") &&
                      strstr(e.msg, "in the network description of model file b.dnn"),
                  "%s", e.msg);
    rewrite_description("m.dnn", "layerTypes=Tanh", "layerTypes=Tanx", "c.dnn");
    ck_assert_int_eq(nn_load("c.dnn", b, &net, &e), PT_EUSER);
    ck_assert_ptr_null(net);
    rewrite_description("m.dnn", "layerTypes=Tanh", "layerTypes=None", "d.dnn");
    ck_assert_int_eq(nn_load("d.dnn", b, &net, &e), 0); /* same layout, other activation */
    ck_assert_int_eq(nn_get_config(net)->acts[0], BK_ACT_NONE);
    nn_free(net);
    backend_free(b);
}
END_TEST

START_TEST(save_errors_and_overwrite)
{
    const char *dir = enter_tmpdir();
    struct backend *b = make_backend();
    struct nn *a = make_net(b, LSTM_BODY, 1), *c = make_net(b, LSTM_BODY, 2), *back = NULL;
    struct pt_err e = {0};
    pt_err_clear(&e);
    ck_assert_int_eq(nn_save(a, "no/such/dir/m.dnn", &e), PT_ESYS);
    ck_assert_msg(strstr(e.msg, "no/such/dir/m.dnn: error: cannot write model file: No such "
                                "file or directory"),
                  "%s", e.msg);
    ck_assert_int_eq(nn_save(a, "m.dnn", &e), 0);
    ck_assert_int_eq(nn_save(c, "m.dnn", &e), 0); /* replaces the first */
    ck_assert_int_eq(nn_load("m.dnn", b, &back, &e), 0);
    size_t n = nn_param_count(c);
    float *p1 = malloc(n * 4), *p2 = malloc(n * 4);
    nn_get_params(c, p1, &e);
    nn_get_params(back, p2, &e);
    ck_assert(memcmp(p1, p2, n * 4) == 0);
    (void)dir;
    free(p1);
    free(p2);
    nn_free(a);
    nn_free(c);
    nn_free(back);
    backend_free(b);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("nn_model");
    TCase *tc = tcase_create("model");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, round_trip_mlp);
    tcase_add_test(tc, round_trip_lstm_and_load_params);
    tcase_add_test(tc, truncated_files);
    tcase_add_test(tc, corrupted_and_foreign_files);
    tcase_add_test(tc, consistent_checksum_bad_content);
    tcase_add_test(tc, save_errors_and_overwrite);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
