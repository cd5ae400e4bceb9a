/* tests/test_schema's second part: the trainer's own tables (src/train: every command's
 * schema), whole configs checked by train_check_config. */
#include "parsers/schema.h"
#include "testutil.h"
#include "train/train.h"

TCase *schema_trainer_tcase(void);

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
                              "write, dumpNode, dumpNodes, edit, cv, trainRNN, plot, "
                              "writeWordAndClass, SVD)"},
        {"eval.action=write", "t.cfg:13:1: error: eval: set outputPath (the outputs as text, "
                              "outputPath.NODE) or a writer block (writerType = HTKMLFWriter: "
                              "HTK feature files)"},
        {"eval.action=dance",
         "<command line>:arg1: error: unknown action \"dance\" (supported: "
         "train, test, eval, write, dumpNode, dumpNodes, edit, cv, trainRNN, plot, "
         "writeWordAndClass, SVD)"},
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
         "(supported: CNTKTextFormatReader|ImageReader|HTKMLFReader|HTKDeserializers|"
         "LMSequenceReader)"},
        {"train.SimpleNetworkBuilder.rnnType=NCELSTM",
         "<command line>:arg1: error: rnnType=NCELSTM is not supported by partrain (supported: "
         "SIMPLENET|LSTM|CLASSLSTM|CLASSLM)"},
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

TCase *schema_trainer_tcase(void)
{
    TCase *t = tcase_create("trainer");
    tcase_add_test(t, trainer_config_valid);
    tcase_add_test(t, trainer_config_errors);
    tcase_add_test(t, builder_precedence);
    tcase_add_test(t, parallel_train_switch);
    tcase_add_test(t, trainer_missing_parts);
    tcase_add_test(t, trainer_unknown_keys);
    tcase_add_test(t, help_text_covers_every_key);
    return t;
}
