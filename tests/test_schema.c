/* Schemas (parsers/schema.c) and whole-config validation (src/train/actions.c). */
#include <math.h>

#include "parsers/schema.h"
#include "testutil.h"
#include "train/train.h"

static int valid_even(const struct cfg_val *v, char *why, size_t size)
{
    if (v->i % 2 == 0)
        return 0;
    snprintf(why, size, "%lld is odd; an even number is needed", v->i);
    return 1;
}

static const struct cfg_key inner_keys[] = {
    {.name = "dim", .type = CFG_INT, .flags = CFG_REQUIRED | CFG_HAS_MIN, .min = 1, .help = "size"},
    {.name = NULL},
};
static const struct cfg_schema inner = {
    .name = "Inner", .where = "inside Demo", .help = "i", .keys = inner_keys};

static const struct cfg_key demo_keys[] = {
    {.name = "epochs",
     .type = CFG_INT,
     .flags = CFG_REQUIRED | CFG_HAS_MIN,
     .min = 1,
     .help = "how many"},
    {.name = "rate",
     .type = CFG_REAL_SCHED,
     .def = "0.5*2:0.1",
     .flags = CFG_HAS_MIN | CFG_MIN_EXCL,
     .help = "rates"},
    {.name = "sizes", .type = CFG_INT_SCHED, .def = "256", .help = "sizes"},
    {.name = "flag", .type = CFG_BOOL, .def = "false", .help = "a flag"},
    {.name = "kind",
     .type = CFG_ENUM,
     .def = "alpha",
     .choices = "alpha|beta",
     .unsupported = "gamma",
     .help = "a kind"},
    {.name = "ratio",
     .type = CFG_REAL,
     .def = "0.5",
     .flags = CFG_HAS_MIN | CFG_HAS_MAX | CFG_MAX_EXCL,
     .min = 0,
     .max = 1,
     .help = "r"},
    {.name = "even", .type = CFG_INT, .def = "2", .valid = valid_even, .help = "even"},
    {.name = "perMB", .type = CFG_REAL, .group = 1, .help = "one way"},
    {.name = "perSample", .type = CFG_REAL, .group = 1, .help = "other way"},
    {.name = "period", .type = CFG_INT, .def = "10", .help = "period"},
    {.name = "syncPeriod", .type = CFG_INT, .alias_of = "period", .help = "alias"},
    {.name = "oldPeriod",
     .type = CFG_INT,
     .alias_of = "period",
     .flags = CFG_DEPRECATED,
     .help = "old alias"},
    {.name = "words", .type = CFG_STRING_LIST, .def = "a", .choices = "a|b", .help = "w"},
    {.name = "Inner", .type = CFG_BLOCK, .sub = &inner, .help = "a block"},
    {.name = "streams", .type = CFG_BLOCK_MAP, .sub = &inner, .help = "named blocks"},
    {.name = "legacyThing", .type = CFG_UNSUPPORTED, .help = "legacy things are gone"},
    {.name = "script", .type = CFG_TEXT, .help = "kept as text"},
    {.name = "own", .type = CFG_STRING, .flags = CFG_LOCAL, .help = "this block's own"},
    {.name = NULL},
};
static const struct cfg_schema demo = {
    .name = "Demo", .where = "at top level", .help = "d", .keys = demo_keys};
static const struct cfg_schema *const all[] = {&demo, &inner, NULL};

/* Check block `path` of text against demo; returns the code, message in *e. */
static int check(const char *text, const char *path, int strict, struct cfg **out, struct pt_err *e)
{
    struct cfg *c = load("s.cfg", text, e);
    ck_assert_msg(e->code == 0, "%s", e->msg);
    struct cfg_check ck = {.cfg = c, .strict = strict, .all = all};
    int rc = cfg_schema_check(&ck, node_at(c, path), &demo, e);
    if (out)
        *out = c;
    else
        cfg_free(c);
    return rc;
}

#define CHECK_ERR(text, expected)                                                                  \
    do {                                                                                           \
        struct pt_err e_;                                                                          \
        ck_assert_int_eq(check(text, "d", 0, NULL, &e_), PT_EUSER);                                \
        ck_assert_str_eq(e_.msg, expected);                                                        \
    } while (0)

START_TEST(valid_block_passes)
{
    struct pt_err e;
    struct cfg *c;
    ck_assert_int_eq(check("d=[epochs=3; rate=0.1:0.2; flag=T; kind=BETA; Inner=[dim=4];"
                           "streams=[a=[dim=1]; b=[dim=2]]; script={ anything (goes) here }]",
                           "d", 0, &c, &e),
                     0);
    ck_assert_uint_eq(cfg_warning_count(c), 0);
    cfg_free(c);
}
END_TEST

START_TEST(type_and_range_errors)
{
    CHECK_ERR("d=[epochs=x]", "s.cfg:1:11: error: d.epochs: expected an integer, got \"x\"");
    CHECK_ERR("d=[epochs=0]", "s.cfg:1:11: error: epochs: 0 is out of range: must be >= 1");
    CHECK_ERR("d=[epochs=1; rate=0.1:0]",
              "s.cfg:1:19: error: rate: 0 is out of range: must be > 0");
    CHECK_ERR("d=[epochs=1; ratio=1]", "s.cfg:1:20: error: ratio: 1 is out of range: must be < 1");
    /* reals are finite, in a schedule as alone, however infinity is spelled */
    CHECK_ERR("d=[epochs=1; rate=0.1:1e400]",
              "s.cfg:1:19: error: d.rate: expected a finite number, got \"1e400\"");
    CHECK_ERR("d=[epochs=1; ratio=inf]",
              "s.cfg:1:20: error: d.ratio: expected a finite number, got \"inf\"");
    CHECK_ERR("d=[epochs=1; ratio=-1#INF]",
              "s.cfg:1:20: error: d.ratio: expected a finite number, got \"-1#INF\"");
    CHECK_ERR("d=[epochs=1; rate=1e39]",
              "s.cfg:1:19: error: d.rate: expected a finite number (at most 3.4e38 in magnitude: "
              "training uses 32-bit floats), got \"1e39\"");
    CHECK_ERR("d=[epochs=1; flag=maybe]",
              "s.cfg:1:19: error: d.flag: expected a boolean (true/false/t/f/1/0), got \"maybe\"");
    CHECK_ERR("d=[epochs=1; kind=delta]",
              "s.cfg:1:19: error: kind: expected one of alpha|beta, got \"delta\"");
    CHECK_ERR("d=[epochs=1; kind=gamma]",
              "s.cfg:1:19: error: kind=gamma is not supported by partrain (supported: alpha|beta)");
    CHECK_ERR("d=[epochs=1; even=3]",
              "s.cfg:1:19: error: even: 3 is odd; an even number is needed");
    CHECK_ERR("d=[epochs=1; words=a:c]",
              "s.cfg:1:20: error: words: expected one of a|b, got \"c\"");
    CHECK_ERR("d=[epochs=1; Inner=5]",
              "s.cfg:1:14: error: 'd.Inner' must be a block [ ... ], but it is a value");
    CHECK_ERR("d=[epochs=[x=1]]",
              "s.cfg:1:4: error: 'd.epochs' must be a value (integer), but it is a block");
    CHECK_ERR("d=[epochs=1; Inner=[dim=0]]",
              "s.cfg:1:25: error: dim: 0 is out of range: must be >= 1");
    CHECK_ERR("d=[epochs=1; Inner=[]]",
              "s.cfg:1:14: error: d.Inner: required key 'dim' is not set (size)");
    CHECK_ERR("d=[epochs=1; streams=[a=[dim=1]; b=2]]",
              "s.cfg:1:34: error: 'd.streams.b' must be a block [ ... ] describing one Inner, but "
              "it is a value");
    CHECK_ERR("d=[rate=1]", "s.cfg:1:1: error: d: required key 'epochs' is not set (how many)");
    CHECK_ERR(
        "d=[epochs=1; legacyThing=1]",
        "s.cfg:1:14: error: d.legacyThing: not supported by partrain: legacy things are gone");
}
END_TEST

START_TEST(exclusive_and_aliases)
{
    CHECK_ERR("d=[epochs=1; perMB=1\n perSample=2]",
              "s.cfg:2:2: error: Demo: 'perSample' and 'perMB' (set at s.cfg:1:14) exclude each "
              "other; give only one");
    CHECK_ERR("d=[epochs=1; period=1; syncPeriod=2]",
              "s.cfg:1:24: error: Demo: 'syncPeriod' and 'period' (set at s.cfg:1:14) are two "
              "names for the same setting; give only one");
    /* exclusion sees keys inherited from enclosing blocks too */
    struct pt_err e;
    struct cfg *c = load("s.cfg", "perMB=1\nd=[epochs=1; perSample=2]", &e);
    struct cfg_check ck = {.cfg = c, .all = all};
    ck_assert_int_eq(cfg_schema_check(&ck, node_at(c, "d"), &demo, &e), PT_EUSER);
    cfg_free(c);
    /* a deprecated alias warns and reads as its target */
    ck_assert_int_eq(check("d=[epochs=1; oldPeriod=7]", "d", 0, &c, &e), 0);
    ck_assert_uint_eq(cfg_warning_count(c), 1);
    ck_assert_str_eq(cfg_warning(c, 0),
                     "s.cfg:1:14: warning: 'oldPeriod' is deprecated; use 'period'");
    struct cfg_val v;
    ck_assert_int_eq(cfg_schema_get(node_at(c, "d"), &demo, "period", &v, &e), 0);
    ck_assert_int_eq(v.i, 7);
    ck_assert_int_eq(cfg_schema_get(node_at(c, "d"), &demo, "syncPeriod", &v, &e), 0);
    ck_assert_int_eq(v.i, 7);
    cfg_free(c);
}
END_TEST

START_TEST(unknown_keys)
{
    struct pt_err e;
    struct cfg *c;
    ck_assert_int_eq(check("d=[epochs=1; epoch=2; rates=1; dim=3; zzzzzz=1]", "d", 0, &c, &e), 0);
    ck_assert_uint_eq(cfg_warning_count(c), 4);
    ck_assert_str_eq(
        cfg_warning(c, 0),
        "s.cfg:1:14: warning: unknown key 'd.epoch' in Demo is ignored (did you mean 'epochs'?)");
    ck_assert_str_eq(
        cfg_warning(c, 1),
        "s.cfg:1:23: warning: unknown key 'd.rates' in Demo is ignored (did you mean 'rate'?)");
    ck_assert_str_eq(cfg_warning(c, 2), "s.cfg:1:32: warning: unknown key 'd.dim' in Demo is "
                                        "ignored ('dim' belongs in the Inner block)");
    ck_assert_str_eq(cfg_warning(c, 3),
                     "s.cfg:1:39: warning: unknown key 'd.zzzzzz' in Demo is ignored");
    cfg_free(c);
    ck_assert_int_eq(check("d=[epochs=1; epoch=2]", "d", 1, NULL, &e), PT_EUSER);
    ck_assert_str_eq(e.msg, "s.cfg:1:14: error: unknown key 'd.epoch' in Demo (did you mean "
                            "'epochs'?) (strictConfig=true)");
}
END_TEST

START_TEST(typed_reads_and_defaults)
{
    struct pt_err e;
    struct cfg *c =
        load("s.cfg", "sizes=128\nd=[epochs=4; rate=default; flag=1; kind=beta; words=a:b*2]", &e);
    struct cfg_node *d = node_at(c, "d");
    struct cfg_val v;
    ck_assert_int_eq(cfg_schema_get(d, &demo, "epochs", &v, &e), 0);
    ck_assert_int_eq(v.i, 4);
    ck_assert_ptr_nonnull(v.node);
    ck_assert_int_eq(cfg_schema_get(d, &demo, "rate", &v, &e), 0);
    ck_assert_ptr_null(v.node); /* "default" */
    ck_assert(cfg_sched_real(&v, 0) == 0.5);
    ck_assert(cfg_sched_real(&v, 1) == 0.5);
    ck_assert(cfg_sched_real(&v, 2) == 0.1);
    ck_assert(cfg_sched_real(&v, 99) == 0.1);
    cfg_val_free(&v);
    ck_assert_int_eq(cfg_schema_get(d, &demo, "sizes", &v, &e), 0); /* climbs to top level */
    ck_assert_int_eq(cfg_sched_int(&v, 5), 128);
    cfg_val_free(&v);
    ck_assert_int_eq(cfg_schema_get(d, &demo, "flag", &v, &e), 0);
    ck_assert_int_eq(v.b, 1);
    ck_assert_int_eq(cfg_schema_get(d, &demo, "kind", &v, &e), 0);
    ck_assert_int_eq(v.choice, 1);
    ck_assert_int_eq(cfg_schema_get(d, &demo, "words", &v, &e), 0);
    ck_assert_uint_eq(v.n, 3);
    ck_assert_str_eq(v.slist.items[2], "b");
    cfg_val_free(&v);
    ck_assert_int_eq(cfg_schema_get(d, &demo, "perMB", &v, &e), 0);
    ck_assert_ptr_null(v.node); /* optional, no default: absent */
    ck_assert_int_eq(cfg_schema_get(d, &demo, "ratio", &v, &e), 0);
    ck_assert(v.d == 0.5);
    ck_assert_int_eq(cfg_schema_get(node_at(c, "d"), &demo, "nonexistent", &v, &e), PT_EINTERNAL);
    cfg_free(c);
    /* CFG_LOCAL keys do not climb; ordinary ones do */
    c = load("s.cfg", "own=outer; flag=1\nd=[epochs=1; in=[own=inner]]", &e);
    ck_assert_int_eq(cfg_schema_get(node_at(c, "d"), &demo, "own", &v, &e), 0);
    ck_assert_ptr_null(v.node);
    ck_assert_int_eq(cfg_schema_get(node_at(c, "d.in"), &demo, "own", &v, &e), 0);
    ck_assert_str_eq(v.s, "inner");
    ck_assert_int_eq(cfg_schema_get(node_at(c, "d"), &demo, "flag", &v, &e), 0);
    ck_assert_int_eq(v.b, 1);
    cfg_free(c);
}
END_TEST

/* cfg_schema_read: rows store into a struct (types, given flags, setters, nested blocks). */
struct demo_inner {
    int dim;
};
struct demo_out {
    long long epochs;
    struct cfg_val rate;
    int flag, kind, kind_given, twice;
    double ratio;
    char own[8];
    struct demo_inner inner;
    int inner_given;
};

static int set_twice(void *out, struct cfg_val *v, struct cfg_node *block, struct pt_err *e)
{
    (void)block, (void)e;
    ((struct demo_out *)out)->twice = 2 * (int)v->i;
    return 0;
}

static const struct cfg_key read_inner_keys[] = {
    {.name = "dim", .type = CFG_INT, .def = "3", .help = "d", CFG_OUT(struct demo_inner, dim)},
    {.name = NULL},
};
static const struct cfg_schema read_inner = {.name = "Inner", .keys = read_inner_keys};
static const struct cfg_key read_keys[] = {
    {.name = "epochs", .type = CFG_INT, .flags = CFG_REQUIRED, CFG_OUT(struct demo_out, epochs)},
    {.name = "rate", .type = CFG_REAL_SCHED, .def = "0.5*2:0.1", CFG_OUT(struct demo_out, rate)},
    {.name = "flag", .type = CFG_BOOL, .def = "false", CFG_OUT(struct demo_out, flag)},
    {.name = "kind",
     .type = CFG_ENUM,
     .def = "alpha",
     .choices = "alpha|beta",
     CFG_OUT(struct demo_out, kind),
     CFG_GIVEN(struct demo_out, kind_given)},
    {.name = "period", .type = CFG_INT, .def = "10", .set = set_twice},
    {.name = "syncPeriod", .type = CFG_INT, .alias_of = "period"},
    {.name = "ratio",
     .type = CFG_REAL,
     .def = "0.5",
     .flags = CFG_HAS_MAX,
     .max = 1,
     CFG_OUT(struct demo_out, ratio)},
    {.name = "own", .type = CFG_STRING, .flags = CFG_LOCAL, CFG_OUT(struct demo_out, own)},
    {.name = "Inner",
     .type = CFG_BLOCK,
     .sub = &read_inner,
     CFG_OUT(struct demo_out, inner),
     CFG_GIVEN(struct demo_out, inner_given)},
    {.name = NULL},
};
static const struct cfg_schema read_demo = {.name = "Demo", .keys = read_keys};

START_TEST(schema_read_fills_structs)
{
    struct pt_err e;
    struct cfg *c =
        load("s.cfg", "flag=1\nd=[epochs=4; kind=beta; syncPeriod=7; own=x; Inner=[dim=5]]", &e);
    struct demo_out o;
    memset(&o, 0, sizeof o);
    ck_assert_int_eq(cfg_schema_read(node_at(c, "d"), &read_demo, &o, &e), 0);
    ck_assert_int_eq(o.epochs, 4);
    ck_assert(cfg_sched_real(&o.rate, 2) == 0.1);
    ck_assert_int_eq(o.flag, 1); /* climbs */
    ck_assert_int_eq(o.kind, 1);
    ck_assert_int_eq(o.kind_given, 1);
    ck_assert_int_eq(o.twice, 14); /* through the alias, into the setter */
    ck_assert(o.ratio == 0.5);
    ck_assert_str_eq(o.own, "x");
    ck_assert_int_eq(o.inner.dim, 5);
    ck_assert_int_eq(o.inner_given, 1);
    cfg_schema_free(&read_demo, &o);
    ck_assert_ptr_null(o.rate.dlist);
    /* errors as cfg_schema_get reports them; NULL block: the defaults only */
    cfg_free(c);
    c = load("s.cfg", "d=[epochs=1; ratio=2]", &e);
    memset(&o, 0, sizeof o);
    ck_assert_int_eq(cfg_schema_read(node_at(c, "d"), &read_demo, &o, &e), PT_EUSER);
    ck_assert_str_eq(e.msg, "s.cfg:1:20: error: ratio: 2 is out of range: must be <= 1");
    cfg_schema_free(&read_demo, &o);
    memset(&o, 0, sizeof o);
    ck_assert_int_eq(cfg_schema_read(NULL, &read_demo, &o, &e), 0);
    ck_assert_int_eq(o.epochs, 0);
    ck_assert_int_eq(o.kind_given, 0);
    ck_assert_int_eq(o.twice, 20);
    ck_assert_int_eq(o.inner.dim, 3);
    ck_assert_int_eq(o.inner_given, 0);
    cfg_schema_free(&read_demo, &o);
    cfg_free(c);
}
END_TEST

START_TEST(edit_distance)
{
    ck_assert_uint_eq(cfg_edit_distance("maxEpochs", "maxepochs"), 0);
    ck_assert_uint_eq(cfg_edit_distance("maxEpoch", "maxEpochs"), 1);
    ck_assert_uint_eq(cfg_edit_distance("kitten", "sitting"), 3);
    ck_assert_uint_eq(cfg_edit_distance("", "abc"), 3);
}
END_TEST

/* ------------------------------------------------------------------ the trainer's tables */

static int check_trainer(const char *text, struct cfg **out, struct pt_err *e)
{
    struct cfg *c = load("t.cfg", text, e);
    ck_assert_msg(e->code == 0, "%s", e->msg);
    struct train_command cmds[8];
    size_t n = 0;
    int rc = train_check_config(c, cmds, 8, &n, e);
    if (out)
        *out = c;
    else
        cfg_free(c);
    return rc;
}

static const char *good_train =
    "command=train:eval\n"
    "train=[action=train; modelPath=m.dnn\n"
    " SimpleNetworkBuilder=[layerSizes=784:512*2:10; layerTypes=RectifiedLinear\n"
    "   trainingCriterion=CrossEntropyWithSoftmax; evalCriterion=ErrorPrediction]\n"
    " SGD=[maxEpochs=3; minibatchSize=256; learningRatesPerMB=0.1; momentumAsTimeConstant=2500\n"
    "   ParallelTrain=[parallelizationMethod=dataParallelSGD; syncPerfStats=10\n"
    "     DataParallelSGD=[gradientBits=1:32]\n"
    "     BlockMomentumSGD=[blockSize=1000; blockMomentumAsTimeConstant=4000]\n"
    "     ModelAveragingSGD=[syncFrequencyInFrames=100]\n"
    "     DataParallelASGD=[AdjustLearningRateAtBeginning=[adjustType=linearly; "
    "adjustNBMiniBatch=8]]]]\n"
    " reader=[readerType=CNTKTextFormatReader; file=x.ctf\n"
    "   input=[features=[dim=784; format=dense]; labels=[dim=10; format=dense; alias=y]]]]\n"
    "eval=[action=eval; modelPath=m.dnn; reader=$tr$]\n"
    "tr=[readerType=CNTKTextFormatReader; file=t.ctf; input=[f=[dim=1;format=sparse]]]\n"
    "ignored=[BrainScriptNetworkBuilder={ f(x) = x }]\n";

START_TEST(trainer_config_valid)
{
    struct pt_err e;
    struct cfg *c;
    struct train_command cmds[8];
    size_t n = 0;
    c = load("t.cfg", good_train, &e);
    ck_assert_msg(train_check_config(c, cmds, 8, &n, &e) == 0, "%s", e.msg);
    ck_assert_uint_eq(n, 2);
    ck_assert_str_eq(cmds[0].action->name, "train");
    ck_assert_str_eq(cmds[1].action->name, "eval");
    /* the only warning: the deprecated ModelAveraging alias */
    ck_assert_uint_eq(cfg_warning_count(c), 1);
    ck_assert_str_eq(
        cfg_warning(c, 0),
        "t.cfg:9:25: warning: 'syncFrequencyInFrames' is deprecated; use 'blockSizePerWorker'");
    cfg_free(c);
    /* the one real key that takes infinity, however it is spelled */
    const char *inf[] = {"train.SGD.clippingThresholdPerSample=1#INF",
                         "train.SGD.clippingThresholdPerSample=1e400"};
    for (size_t i = 0; i < 2; i++) {
        c = load("t.cfg", good_train, &e);
        ck_assert_int_eq(cfg_apply_arg(c, inf[i], 1, &e), 0);
        ck_assert_msg(train_check_config(c, cmds, 8, &n, &e) == 0, "%s", e.msg);
        cfg_free(c);
    }
}
END_TEST

START_TEST(trainer_config_errors)
{
    struct pt_err e;
    struct cfg *c = load("t.cfg", good_train, &e);
    struct train_command cmds[8];
    size_t n;
    const struct {
        const char *arg, *msg;
    } cases[] = {
        {"command=train:evl", "<command line>:arg1: error: command=train:evl: there is no "
                              "top-level block named 'evl' (did you mean 'eval'?)"},
        {"command=train:qqqqq", "<command line>:arg1: error: command=train:qqqqq: there is no "
                                "top-level block named 'qqqqq'"},
        {"eval.action=adapt", "<command line>:arg1: error: action=adapt is a CNTK action "
                              "that partrain does not support (supported: train, test, eval, "
                              "write, dumpNode, dumpNodes, edit)"},
        {"eval.action=write", "t.cfg:13:1: error: eval: required key 'outputPath' is not set "
                              "(node N is written to outputPath.N)"},
        {"eval.action=dance", "<command line>:arg1: error: unknown action \"dance\" (supported: "
                              "train, test, eval, write, dumpNode, dumpNodes, edit)"},
        {"train.SGD.learningRatesPerSample=0.1",
         "t.cfg:5:39: error: SGD: 'learningRatesPerMB' and 'learningRatesPerSample' (set at "
         "<command line>:arg1) exclude each other; give only one"},
        {"train.SGD.ParallelTrain.DataParallelSGD.gradientBits=3",
         "<command line>:arg1: error: gradientBits: 3 bits is not possible; each value must be 1, "
         "2, 4, 8, 16 or 32"},
        {"train.SGD.gradUpdateType=AdaDelta",
         "<command line>:arg1: error: gradUpdateType: expected one of "
         "None|Adam|AdaGrad|FSAdaGrad|RmsProp, got \"AdaDelta\""},
        {"precision=double", "<command line>:arg1: error: precision=double is not supported by "
                             "partrain (supported: float)"},
        {"train.reader.readerType=Kaldi2Reader",
         "<command line>:arg1: error: readerType=Kaldi2Reader is not supported by partrain "
         "(supported: CNTKTextFormatReader|ImageReader|HTKMLFReader|HTKDeserializers)"},
        {"train.SimpleNetworkBuilder.rnnType=CLASSLSTM",
         "<command line>:arg1: error: rnnType=CLASSLSTM is not supported by partrain (supported: "
         "SIMPLENET|LSTM)"},
        {"train.SGD.AutoAdjust=[autoAdjustMinibatch=true;minibatchSizeTuningMax=0]",
         "<command line>:arg1: error: minibatchSizeTuningMax: 0 is out of range: must be >= 1"},
        {"train.SGD.AutoAdjust=[autoAdjustLR=during]",
         "<command line>:arg1: error: autoAdjustLR: expected one of "
         "None|adjustAfterEpoch|afterEpoch|after|searchBeforeEpoch|beforeEpoch|before, got "
         "\"during\""},
        {"deviceId=gpu", "<command line>:arg1: error: deviceId: \"gpu\" is not a device: use auto, "
                         "cpu, -1 (CPU) or a GPU number"},
        {"train.SGD.momentumPerMB=0.5",
         "t.cfg:5:63: error: SGD: 'momentumAsTimeConstant' and 'momentumPerMB' (set at <command "
         "line>:arg1) exclude each other; give only one"},
        {"train.SGD.momentumPerMB=1",
         "<command line>:arg1: error: momentumPerMB: 1 is out of range: must be < 1"},
        {"train.SGD.ParallelTrain.BlockMomentumSGD.blockSizePerWorker=5",
         "t.cfg:8:24: error: BlockMomentumSGD: 'blockSize' and 'blockSizePerWorker' (set at "
         "<command line>:arg1) exclude each other; give only one"},
        {"train.reader.input.labels.format=csv",
         "<command line>:arg1: error: format: expected one of dense|sparse, got \"csv\""},
        {"train.SGD.dropoutRate=1",
         "<command line>:arg1: error: dropoutRate: 1 is out of range: must be < 1"},
        {"train.SGD.learningRatesPerMB=0.1:1e400",
         "<command line>:arg1: error: train.SGD.learningRatesPerMB: expected a finite number, got "
         "\"1e400\""},
        /* infinity is a value here (no clipping), so only the range refuses -1#INF */
        {"train.SGD.clippingThresholdPerSample=-1#INF",
         "<command line>:arg1: error: clippingThresholdPerSample: -inf is out of range: must be "
         "> 0"},
    };
    cfg_free(c);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        c = load("t.cfg", good_train, &e);
        ck_assert_int_eq(cfg_apply_arg(c, cases[i].arg, 1, &e), 0);
        pt_err_clear(&e);
        ck_assert_int_eq(train_check_config(c, cmds, 8, &n, &e), PT_EUSER);
        ck_assert_str_eq(e.msg, cases[i].msg);
        cfg_free(c);
    }
    /* no command at all (CNTK's include-only files): the default's miss said as such */
    c = load("t.cfg", "precision = float\ntrainer = [ action = train ]\n", &e);
    ck_assert_int_eq(train_check_config(c, cmds, 8, &n, &e), PT_EUSER);
    ck_assert_str_eq(e.msg, "error: the configuration sets no command (command = NAME[:NAME...] "
                            "names the top-level blocks to run), and the default, command=train, "
                            "finds no top-level block named 'train' (did you mean 'trainer'?)");
    cfg_free(c);
}
END_TEST

/* CNTK's builder precedence (NetworkFactory.cpp): createNetwork, SimpleNetworkBuilder,
 * NDLNetworkBuilder, BrainScriptNetworkBuilder / ExperimentalNetworkBuilder, each found
 * climbing; the first one found is the network, the others are inactive. */
START_TEST(builder_precedence)
{
    struct pt_err e;
    const char *tail =
        " SGD=[maxEpochs=1; learningRatesPerSample=0.1]\n"
        " reader=[readerType=CNTKTextFormatReader; file=f; input=[a=[dim=1;format=dense]]]]\n";
    const char *snb = "SimpleNetworkBuilder=[layerSizes=1:2; trainingCriterion=SquareError; "
                      "evalCriterion=SquareError]\n";
    char text[2048];
    /* CNTK's speech configs: a BrainScript block marked "not active" beside the simple one */
    snprintf(text, sizeof text,
             "train=[action=train; modelPath=m\n %s"
             " ExperimentalNetworkBuilder=[ L = Length(layerSizes)-1 // not active\n ]\n"
             " BrainScriptNetworkBuilder={ z = Input(784) }\n"
             " NDLNetworkBuilder=[networkDescription=x.ndl]\n%s",
             snb, tail);
    ck_assert_msg(check_trainer(text, NULL, &e) == 0, "%s", e.msg);
    /* found climbing: a top-level SimpleNetworkBuilder wins over the command's BrainScript */
    snprintf(
        text, sizeof text,
        "%strain=[action=train; modelPath=m\n BrainScriptNetworkBuilder={ z = Input(784) }\n%s",
        snb, tail);
    ck_assert_msg(check_trainer(text, NULL, &e) == 0, "%s", e.msg);
    /* without one: the first of the others, in CNTK's order: NDL before BrainScript (read
     * when training starts), createNetwork before both, refused */
    snprintf(text, sizeof text,
             "train=[action=train; modelPath=m\n BrainScriptNetworkBuilder={ z = Input(784) }\n"
             " NDLNetworkBuilder=[networkDescription=x.ndl]\n%s",
             tail);
    ck_assert_msg(check_trainer(text, NULL, &e) == 0, "%s", e.msg);
    snprintf(text, sizeof text,
             "train=[action=train; modelPath=m\n BrainScriptNetworkBuilder={ z = Input(784) }\n"
             " createNetwork = x\n%s",
             tail);
    ck_assert_int_eq(check_trainer(text, NULL, &e), PT_EUSER);
    ck_assert_str_eq(e.msg, "t.cfg:3:2: error: train.createNetwork: not supported by "
                            "partrain: createNetwork is BrainScript's network lambda, which "
                            "CNTK's configFile= mode does not implement either; describe the "
                            "network with SimpleNetworkBuilder = [ layerSizes=...; ... ] or "
                            "BrainScriptNetworkBuilder = [ ... ] (next to either, this block is "
                            "inactive, as in CNTK)");
    snprintf(text, sizeof text,
             "ExperimentalNetworkBuilder=[ x = 1 ]\ntrain=[action=train; modelPath=m\n%s", tail);
    /* a BrainScript network is built (evaluated when training starts) */
    ck_assert_int_eq(check_trainer(text, NULL, &e), 0);
    /* createNetwork comes first in CNTK's order, and its configFile= mode refuses it */
    snprintf(text, sizeof text, "train=[action=train; modelPath=m; createNetwork=x\n %s%s", snb,
             tail);
    ck_assert_int_eq(check_trainer(text, NULL, &e), PT_EUSER);
    ck_assert_ptr_nonnull(strstr(e.msg, "t.cfg:1:35: error: train.createNetwork: not supported by "
                                        "partrain: createNetwork is BrainScript's network lambda"));
    /* action=test reads the model file: no builder needed; one in its block would make
     * the network CNTK evaluates, which is not built: refused */
    ck_assert_msg(check_trainer("t=[action=test; modelPath=m\n"
                                " reader=[readerType=CNTKTextFormatReader; file=f\n"
                                "  input=[a=[dim=1;format=dense]]]]\ncommand=t",
                                NULL, &e) == 0,
                  "%s", e.msg);
    ck_assert_int_eq(check_trainer("t=[action=test; modelPath=m; NDLNetworkBuilder=[x=1]\n"
                                   " reader=[readerType=CNTKTextFormatReader; file=f\n"
                                   "  input=[a=[dim=1;format=dense]]]]\ncommand=t",
                                   NULL, &e),
                     PT_EUSER);
    ck_assert_ptr_nonnull(strstr(e.msg, "t.cfg:1:30: error: t.NDLNetworkBuilder: not supported by "
                                        "partrain: a network builder in an action=test block"));
}
END_TEST

/* The top-level parallelTrain switch is not SGD's ParallelTrain block (CNTK reads the
 * switch, found climbing, as an empty block), and it says whether CNTK trains in parallel. */
START_TEST(parallel_train_switch)
{
    struct pt_err e;
    struct cfg *c = NULL;
#define SWITCH_BODY                                                                                \
    "train=[action=train; modelPath=m\n"                                                           \
    " SimpleNetworkBuilder=[layerSizes=1:2; trainingCriterion=SquareError; "                       \
    "evalCriterion=SquareError]\n"                                                                 \
    " SGD=[maxEpochs=1; learningRatesPerSample=0.1 %s]\n"                                          \
    " reader=[readerType=CNTKTextFormatReader; file=f; input=[a=[dim=1;format=dense]]]]\n"
    char text[1024];
    const char *fine[] = {"parallelTrain = true\n", "parallelTrain = false\n",
                          "parallelTrain = t\ntrain=[parallelTrain=1]\n"};
    for (size_t i = 0; i < 3; i++) {
        snprintf(text, sizeof text, "%s", fine[i]);
        snprintf(text + strlen(text), sizeof text - strlen(text), SWITCH_BODY, "");
        ck_assert_msg(check_trainer(text, &c, &e) == 0, "%s: %s", fine[i], e.msg);
        ck_assert_int_eq(train_parallel_switch(c, 1), i != 1);
        ck_assert_int_eq(train_parallel_switch(c, 4), i != 1);
        ck_assert_int_eq(train_parallel_off(c), i == 1);
        cfg_free(c);
    }
    /* auto (the default): parallel when the world has more than one rank */
    snprintf(text, sizeof text, SWITCH_BODY, "");
    ck_assert_msg(check_trainer(text, &c, &e) == 0, "%s", e.msg);
    ck_assert_int_eq(train_parallel_switch(c, 1), 0);
    ck_assert_int_eq(train_parallel_switch(c, 2), 1);
    ck_assert_int_eq(train_parallel_off(c), 0); /* one worker still runs the method */
    cfg_free(c);
    /* a value inside SGD itself is still a mistake */
    snprintf(text, sizeof text, SWITCH_BODY, "; ParallelTrain = DataParallelSGD");
#undef SWITCH_BODY
    ck_assert_int_eq(check_trainer(text, NULL, &e), PT_EUSER);
    ck_assert_str_eq(e.msg, "t.cfg:3:49: error: 'train.SGD.ParallelTrain' must be a block [ ... "
                            "], but it is a value");
}
END_TEST

START_TEST(trainer_missing_parts)
{
    struct pt_err e;
    ck_assert_int_eq(
        check_trainer(
            "train=[action=train; modelPath=m; SGD=[maxEpochs=1]\n"
            " reader=[readerType=CNTKTextFormatReader; file=f; input=[a=[dim=1;format=dense]]]]\n",
            NULL, &e),
        PT_EUSER);
    ck_assert_str_eq(
        e.msg,
        "t.cfg:1:1: error: train: missing the network: partrain builds networks described by "
        "SimpleNetworkBuilder = [ ... ], NDLNetworkBuilder = [ ... ] or "
        "BrainScriptNetworkBuilder = [ ... ]");
    ck_assert_int_eq(check_trainer("command=x\nx=5\n", NULL, &e), PT_EUSER);
    ck_assert_str_eq(
        e.msg, "t.cfg:2:1: error: command=x names 'x', which is a value, not a block [ ... ]");
    ck_assert_int_eq(check_trainer("t=[action=test]\ncommand=t", NULL, &e), PT_EUSER);
    ck_assert_str_eq(
        e.msg,
        "t.cfg:1:1: error: t: required key 'modelPath' is not set (the model file to evaluate)");
    /* shared blocks at top level are found by climbing and checked */
    ck_assert_int_eq(
        check_trainer(
            "reader=[readerType=CNTKTextFormatReader; file=f; input=[a=[dim=0;format=dense]]]\n"
            "t=[action=test; modelPath=m]\ncommand=t",
            NULL, &e),
        PT_EUSER);
    ck_assert_str_eq(e.msg, "t.cfg:1:64: error: dim: 0 is out of range: must be >= 1");
}
END_TEST

START_TEST(trainer_unknown_keys)
{
    struct pt_err e;
    struct cfg *c;
    ck_assert_int_eq(
        check_trainer("command=t\nt=[action=test; modelPath=m; myVar=1\n"
                      " reader=[readerType=CNTKTextFormatReader; file=f; maxEpochs=3\n"
                      "   input=[a=[dim=1;format=dense; dimm=2]]; ParallelTrain=[]]]\n",
                      &c, &e),
        0);
    ck_assert_uint_eq(cfg_warning_count(c), 3);
    ck_assert_str_eq(cfg_warning(c, 0), "t.cfg:3:51: warning: unknown key 't.reader.maxEpochs' in "
                                        "reader is ignored ('maxEpochs' belongs in the SGD block)");
    ck_assert_str_eq(cfg_warning(c, 1), "t.cfg:4:34: warning: unknown key 't.reader.input.a.dimm' "
                                        "in input stream is ignored (did you mean 'dim'?)");
    ck_assert_str_eq(cfg_warning(c, 2),
                     "t.cfg:4:44: warning: unknown key 't.reader.ParallelTrain' in reader is "
                     "ignored (a ParallelTrain block belongs inside SGD)");
    cfg_free(c);
}
END_TEST

START_TEST(help_text_covers_every_key)
{
    for (int i = 0; train_all_schemas()[i]; i++) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        cfg_schema_print_help(f, train_all_schemas()[i]);
        fclose(f);
        struct cfg_key_iter it;
        for (const struct cfg_key *k = cfg_key_first(train_all_schemas()[i], &it); k;
             k = cfg_key_next(&it))
            ck_assert_msg(strstr(buf, k->name), "--help of %s misses %s",
                          train_all_schemas()[i]->name, k->name);
        free(buf);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("schema");
    TCase *t = tcase_create("schema");
    tcase_add_test(t, valid_block_passes);
    tcase_add_test(t, type_and_range_errors);
    tcase_add_test(t, exclusive_and_aliases);
    tcase_add_test(t, unknown_keys);
    tcase_add_test(t, typed_reads_and_defaults);
    tcase_add_test(t, schema_read_fills_structs);
    tcase_add_test(t, edit_distance);
    tcase_add_test(t, trainer_config_valid);
    tcase_add_test(t, trainer_config_errors);
    tcase_add_test(t, builder_precedence);
    tcase_add_test(t, parallel_train_switch);
    tcase_add_test(t, trainer_missing_parts);
    tcase_add_test(t, trainer_unknown_keys);
    tcase_add_test(t, help_text_covers_every_key);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return run_suite(suite());
}
