/* Shared by tests/test_graph.c (gradient checks, padding) and tests/test_graph_values.c
 * (forward values by hand, shapes, errors): BrainScript networks from config text and
 * access to their tensors and inputs. */
#ifndef PT_TESTS_TEST_GRAPH_H
#define PT_TESTS_TEST_GRAPH_H

#include "test_nn_util.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Pieces of network text the cases and the value tests share. */
#define STD   "features:3 labels:4:hot" /* the inputs IO defines */
#define IO    "features = Input (3)\nlabels = Input (4)\n"
#define WB    "W = Parameter (4, 3)\nb = Parameter (4, 1)\n"
#define HID   "V = Parameter (4, 4)\nc = Parameter (4)\n"
#define IMG   "features:40 labels:4:hot" /* IMGIO's: images of 5 x 4 pixels, 2 channels */
#define IMGIO "features = Input {5:4:2}\nlabels = Input (4)\n"
#define CE(z) "ce = CrossEntropyWithSoftmax (labels, " z ")\ncriterionNodes = (ce)\n"
#define SE(z) "se = SquareError (labels, " z ")\ncriterionNodes = (se)\n"

/* Parse "BrainScriptNetworkBuilder = [ body ]" (file "g.cfg": the body starts on line 2,
 * column 1) into *out. Returns the error code; the message is in *e. */
static inline int parse_bs(const char *body, struct nn_config *out, struct pt_err *e)
{
    size_t n = strlen(body) + 64;
    char *text = malloc(n);
    ck_assert_ptr_nonnull(text);
    snprintf(text, n, "BrainScriptNetworkBuilder = [\n%s\n]\n", body);
    struct cfg *c = load("g.cfg", text, e);
    free(text);
    ck_assert_msg(e->code == 0, "%s", e->msg);
    int rc = nn_bs_config_read(node_at(c, "BrainScriptNetworkBuilder"), out, e);
    cfg_free(c);
    return rc;
}

/* The network of body on b, or NULL where b cannot run one of its nodes (PT_EDEVICE: the
 * GPU's backend has no convolution, pooling or batch normalization in this version), which
 * is said on stdout ("# NAME: not run on the cuda backend: ..."). */
static inline struct nn *try_bs_net(struct backend *b, const char *name, const char *body,
                                    uint64_t seed)
{
    static struct nn_config cfg;
    struct pt_err e = {0};
    pt_err_clear(&e);
    ck_assert_msg(parse_bs(body, &cfg, &e) == 0, "%s: %s", name, e.msg);
    struct nn *net = NULL;
    int rc = nn_new(&cfg, b, seed, &net, &e);
    if (rc == PT_EDEVICE && !b->host_memory) {
        printf("# %s: not run on the %s backend: %s\n", name, b->ops->name, e.msg);
        return NULL;
    }
    ck_assert_msg(rc == 0, "%s: %s", name, e.msg);
    return net;
}

/* A test of convolutional networks on a backend without convolution (the GPU's in this
 * version, which refuses such networks: tests/test_gpu_train.sh (f)): not run, and said
 * so on stdout; b is freed. */
static inline int conv_not_here(struct backend *b, const char *test)
{
    if (b->ops->conv_forward)
        return 0;
    printf("# %s: not run on the %s backend: it has no convolution\n", test, b->ops->name);
    backend_free(b);
    return 1;
}

static inline struct nn *make_bs_net(struct backend *b, const char *body, uint64_t seed)
{
    static struct nn_config cfg; /* 16 KiB of description: not on the stack */
    struct pt_err e = {0};
    pt_err_clear(&e);
    ck_assert_msg(parse_bs(body, &cfg, &e) == 0, "%s", e.msg);
    struct nn *net = NULL;
    ck_assert_msg(nn_new(&cfg, b, seed, &net, &e) == 0, "%s", e.msg);
    return net;
}

/* The error message of a description that must fail to build. */
static inline const char *bs_error_of(const char *body)
{
    static struct nn_config cfg;
    static struct pt_err e;
    pt_err_clear(&e);
    int rc = parse_bs(body, &cfg, &e);
    ck_assert_msg(rc == PT_EUSER, "%d (%s) from:\n%s", rc, e.msg, body);
    return e.msg;
}

/* The tensor called name (the BrainScript definition's name), or NULL. */
static inline const struct nn_tensor *tensor_named(struct nn *net, const char *name)
{
    size_t n = 0;
    const struct nn_tensor *t = nn_tensors(net, &n);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(t[i].name, name))
            return &t[i];
    return NULL;
}

/* Set tensor `name` (rows x cols, column-major) to vals. */
static inline void set_tensor(struct nn *net, const char *name, const float *vals)
{
    struct pt_err e = {0};
    const struct nn_tensor *t = tensor_named(net, name);
    ck_assert_msg(t != NULL, "no tensor %s", name);
    size_t n = nn_param_count(net);
    float *p = malloc(n * sizeof *p);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(nn_get_params(net, p, &e), 0);
    memcpy(p + t->offset, vals, (size_t)t->rows * (size_t)t->cols * sizeof *p);
    ck_assert_int_eq(nn_set_params(net, p, &e), 0);
    free(p);
}

/* Input `name` of mb: dim x ncols samples (one step each) holding data. */
static inline void set_input(struct minibatch *mb, const char *name, int dim, size_t ncols,
                             const float *data)
{
    uint64_t rng = 1;
    fill_input(mb, name, dim, ncols, 1, NULL, 0, &rng);
    memcpy(mb_find(mb, name)->data, data, (size_t)dim * ncols * sizeof(float));
}

/* The vocabulary of the ClassBasedCrossEntropyWithSoftmax tests: 9 words in 3 classes of
 * 2, 3 and 4 words ([0, 2), [2, 5), [5, 9)). col: word's label rows (the word, its class,
 * the class's first word and its end). */
static inline void class_label(int word, float *col)
{
    static const int first[4] = {0, 2, 5, 9};
    int c = word < 2 ? 0 : word < 5 ? 1 : 2;
    col[0] = (float)word;
    col[1] = (float)c;
    col[2] = (float)first[c];
    col[3] = (float)first[c + 1];
}

/* test_graph_values.c: its tests into tc. */
void graph_value_tests(TCase *tc);
void graph_more_tests(TCase *tc);    /* test_graph_shapes.c */
void graph_reduce_tests(TCase *tc);  /* test_graph_reduce.c */
void graph_classce_tests(TCase *tc); /* test_graph_classce.c */
void graph_ctc_tests(TCase *tc);     /* test_graph_ctc.c */
void graph_math_tests(TCase *tc);    /* test_graph_math.c */
void graph_lib_tests(TCase *tc);     /* test_graph_lib.c */

#endif
