/* tests/test_graph.c's gradient table (included once, by that file): one row per case,
 * so that adding a node kind is adding a row here. */
#ifndef PT_TESTS_TEST_GRAPH_CASES_H
#define PT_TESTS_TEST_GRAPH_CASES_H

/* One row per case: its name, its inputs and options, the BrainScriptNetworkBuilder text.
 * inputs: space-separated "NAME:DIM[:KIND]" (KIND rand: uniform in [-1, 1], the default;
 * hot: one-hot of a random class; prob: uniform in [0.05, 0.95], for soft targets,
 * Logistic's labels and positive inputs; bin: each entry 0 or 1; cls: 4 rows, a random
 * word's class descriptor, test_graph.h's class_label) and options: "seqs" (3
 * sequences of 3, 1 and 2 steps in one minibatch, garbage in the padding, which must not
 * count), "zeropad" (the same, padded with zeros as the reader pads), "away=X" (every value
 * of outputNodes at least X from 0: a ReLU's pre-activation out of a finite-difference
 * step's reach of its kink), "dropout=R" (training passes at rate R through one fixed
 * mask), "mvn" (feature statistics other than mean 0, invstd 1 for Mean and InvStdDev),
 * "train" (the criterion of training passes: batch normalization by the minibatch's own
 * statistics).
 * Adding a node is adding a row. */
struct grad_case {
    const char *name, *inputs, *body;
};

/* STD, IO, WB, HID, CE and SE: test_graph.h */

static const struct grad_case cases[] = {
    /* Times: parameter x input, and parameter x computed node (the right operand's gradient) */
    {"Times", STD, IO "W = Parameter (4, 3)\nz = W * features\n" CE("z")},
    {"Times_hidden", STD, IO WB HID "z = Times (V, Times (W, features) + b)\n" CE("z")},
    /* Plus, Minus, ElementTimes: per-sample with per-sample, and a column parameter
     * broadcast on either side */
    {"Plus_bias_right", STD, IO WB "z = W * features + b\n" CE("z")},
    {"Plus_bias_left", STD, IO WB "z = Plus (b, W * features)\n" CE("z")},
    {"Plus_per_sample", STD,
     IO WB "U = Parameter (4, 3)\nz = Tanh (W * features) + U * features\n" CE("z")},
    {"Minus_bias_right", STD, IO WB "z = W * features - b\n" CE("z")},
    {"Minus_bias_left", STD, IO WB "z = b - W * features\n" CE("z")},
    {"Minus_per_sample", STD,
     IO WB "U = Parameter (4, 3)\nz = Minus (U * features, Tanh (W * features))\n" CE("z")},
    {"ElementTimes_bias_right", STD, IO WB "z = (W * features) .* b\n" CE("z")},
    {"ElementTimes_bias_left", STD, IO WB "z = ElementTimes (b, W * features)\n" CE("z")},
    {"ElementTimes_per_sample", STD,
     IO WB "U = Parameter (4, 3)\nz = (W * features + b) .* (U * features)\n" CE("z")},
    {"ElementTimes_self", STD, IO WB "h = W * features + b\nz = h .* h\n" CE("z")},
    /* the unary nodes */
    {"Negate", STD, IO WB HID "z = -(V * Negate (W * features + b)) + c\n" CE("z")},
    {"Sigmoid", STD, IO WB HID "z = V * Sigmoid (W * features + b) + c\n" CE("z")},
    {"Tanh", STD, IO WB HID "z = V * Tanh (W * features + b) + c\n" CE("z")},
    {"ReLU", STD " away=2e-3",
     IO WB HID "a = W * features + b\nz = V * ReLU (a) + RectifiedLinear (a) .* c\n"
               "outputNodes = (a)\n" CE("z")},
    {"Exp", STD, IO WB HID "z = V * Exp (W * features + b) + c\n" CE("z")},
    {"Log", STD, IO WB HID "z = V * Log (Sigmoid (W * features + b)) + c\n" CE("z")},
    {"Log_Exp", STD, IO WB "z = Log (Exp (W * features + b) + 1)\n" CE("z")},
    {"Sqrt", STD, IO WB HID "z = V * Sqrt (Sigmoid (W * features + b)) + c\n" CE("z")},
    {"Abs", STD " away=2e-3",
     IO WB HID "a = W * features + b\nz = V * Abs (a) + c\noutputNodes = (a)\n" CE("z")},
    {"Reciprocal", STD,
     IO WB HID "z = V * Reciprocal (Sigmoid (W * features + b) + 1) + c\n" CE("z")},
    {"Sin", STD, IO WB HID "z = V * Sin (W * features + b) + c\n" CE("z")},
    {"Cosine", STD, IO WB HID "z = V * Cosine (W * features + b) + c\n" CE("z")},
    {"Sinh_Cosh", STD,
     IO WB HID "a = W * features + b\nz = V * Sinh (a) + Cosh (a) .* c\n" CE("z")},
    {"Atanh_Asinh", STD,
     IO WB HID "a = Tanh (W * features + b) .* 0.8\nz = V * Atanh (a) + Asinh (a) .* c\n" CE("z")},
    /* Clip: the values near a bound kept out of a step's reach (away) */
    {"Clip", STD " away=2e-3",
     IO WB HID "a = W * features + b\nz = V * Clip (-0.3, 0.3, a) + c\nk = Abs (a) - 0.3\n"
               "outputNodes = (k)\n" CE("z")},
    {"LogSoftmax", STD, IO WB HID "z = V * LogSoftmax (W * features + b) + c\n" CE("z")},
    {"TimeReverse", STD " seqs",
     IO WB HID "h = Tanh (W * features + b)\nz = V * TimeReverse (h) + h .* c\n" CE("z")},
    {"ReduceMax_Min", STD,
     IO WB HID
     "a = W * features + b\nz = (V * Tanh (a)) .* (ReduceMax (a) - ReduceMin (a))\n" CE("z")},
    {"CosDistance", STD,
     IO WB HID "U = Parameter (4, 3)\nd = CosDistance (W * features + b, U * features)\n"
               "z = (V * Tanh (W * features)) .* d\n" CE("z")},
    /* ElementDivide (CNTK.core.bs: times the Reciprocal) and '/' between nodes */
    {"ElementDivide", STD,
     IO WB HID "z = ElementDivide (W * features, Exp (V * Tanh (W * features)))\n" CE("z")},
    {"Divide_nodes", STD, IO WB "z = (W * features) / (Sigmoid (b) + 1)\n" CE("z")},
    {"Softmax", STD, IO WB "p = Softmax (W * features + b)\n" SE("p")},
    {"Log_Softmax", STD, IO WB "z = Log (Softmax (W * features + b))\n" CE("z")},
    /* Constants: numbers in expressions, and Constant with its rows inferred */
    {"Constants", STD,
     IO WB
     "z = (W * features) .* 0.5 + Constant (0.25) - (1 - Sigmoid (W * features)) .* b\n" CE("z")},
    /* nodes computed from parameters alone: fixed columns, broadcast into the samples */
    {"computed_column", STD, IO WB HID "z = W * features + Sigmoid (b) - Negate (V * c)\n" CE("z")},
    /* the training criteria */
    {"CrossEntropyWithSoftmax", STD,
     IO WB "z = W * features + b\nerr = ClassificationError (labels, z)\n"
           "evaluationNodes = (err)\n" CE("z")},
    {"CrossEntropyWithSoftmax_soft", "features:3 labels:4:prob",
     IO WB "z = W * features + b\n" CE("z")},
    {"SquareError", "features:3 labels:4", IO WB "z = Tanh (W * features + b)\n" SE("z")},
    {"Logistic", "features:3 labels:4:prob",
     IO WB "p = Sigmoid (W * features + b)\nlr = Logistic (labels, p)\n"
           "criterionNodes = (lr)\nevaluationNodes = (lr)\n"},
    {"Logistic_binary", "features:3 labels:1:bin",
     "features = Input (3)\nlabels = Input (1)\nw = Parameter (1, 3)\nb = Parameter (1, 1)\n"
     "p = Sigmoid (w * features + b)\nlr = Logistic (labels, p)\nerr = SquareError (labels, p)\n"
     "criterionNodes = (lr)\nevaluationNodes = (err)\noutputNodes = (p)\n"},
    /* one parameter used twice (gradients add up), directly and through functions */
    {"shared_parameter", "features:3 labels:3:hot",
     "features = Input (3)\nlabels = Input (3)\nW = Parameter (3, 3)\nb = Parameter (3)\n"
     "h = Tanh (W * features + b)\nz = W * h + b\n" CE("z")},
    {"shared_function", STD,
     IO "W = Parameter (3, 3)\nb = Parameter (3)\n" HID
        "f (x) = Sigmoid (W * x + b)\ng = x => Tanh (x)\n"
        "z = V * (Parameter (4, 3) * g (f (f (features)))) + c\n" CE("z")},
    /* two feature inputs, each bound by its name */
    {"two_inputs", STD " aux:2",
     IO "aux = Input (2)\n" WB "U = Parameter (4, 2)\nz = W * features + U * aux .* b\n" CE("z")},
    /* sequences of 3, 1 and 2 steps in one minibatch: the padding does not count */
    {"sequences", STD " seqs",
     IO WB HID "z = V * Tanh (W * features + b) + c\nerr = ClassificationError (labels, z)\n"
               "evaluationNodes = (err)\n" CE("z")},
    {"sequences_nodes", "features:3 labels:4 seqs",
     IO WB HID "h = Sigmoid (W * features + b) .* c\nz = Softmax (V * Exp (h) - c)\n" SE("z")},
    {"sequences_log_softmax", STD " seqs",
     IO WB HID
     "h = Sigmoid (W * features + b) .* c\nz = Log (Softmax (V * Exp (h) - c))\n" CE("z")},
    {"sequences_zero_padding", STD " zeropad",
     IO WB HID "z = V * Sigmoid (W * features + b) - c\n" CE("z")},
    /* Log of an input that is 0 in the padding: -inf there, which must not reach the
     * gradients (0 * inf) */
    {"sequences_log_input", "features:3:prob labels:4:hot zeropad",
     IO WB "z = W * Log (features) + b\n" CE("z")},
    /* Dropout through one fixed mask, and the identity when evaluating */
    {"Dropout", STD " dropout=0.3",
     IO WB HID "z = V * Dropout (Tanh (W * features + b)) + c\n" CE("z")},
    {"Dropout_evaluation", STD, IO WB "z = Dropout (W * features + b)\n" CE("z")},
    /* PerDimMeanVarNormalization with the network's feature statistics (no gradient) */
    {"PerDimMeanVarNormalization", STD " mvn",
     IO WB "n = PerDimMeanVarNormalization (features, Mean (features), InvStdDev (features))\n"
           "z = W * n + b\n" CE("z")},
    /* recurrence: sequences with padding, forwards, backwards, with peepholes */
    {"RecurrentLSTMLayer", STD " seqs",
     IO "h = RecurrentLSTMLayer {3} (features)\nz = LinearLayer {4} (h)\n" CE("z")},
    {"RecurrentLSTMLayer_backwards", STD " seqs",
     IO "h = RecurrentLSTMLayer {3, goBackwards = true} (features)\nz = LinearLayer {4} (h)\n" CE(
         "z")},
    {"RecurrentLSTMLayer_peepholes", STD " zeropad",
     IO "h = RecurrentLSTMLayer {3, usePeepholes = true} (features)\n"
        "z = LinearLayer {4} (h)\n" CE("z")},
    {"RecurrentLSTMLayer_stacked", STD " seqs",
     IO "model = Sequential (DenseLayer {3, activation = Tanh} : RecurrentLSTMLayer {3} :\n"
        "    RecurrentLSTMLayer {3, goBackwards = true} : LinearLayer {4})\n"
        "z = model (features)\n" CE("z")},
    /* delays: recurrent loops run step by step (PastValue forwards, FutureValue backwards,
     * through a function whose argument is evaluated lazily), a delay outside a loop with
     * its own step and default, a 3-step window (Parallel, DelayLayer, Splice) */
    {"PastValue_loop", STD " seqs",
     IO "W = Parameter (3, 3)\nR = Parameter (3, 3)\nb = Parameter (3, 1)\n"
        "h = Tanh (W * features + R * PastValue (0, h) + b)\nz = LinearLayer {4} (h)\n" CE("z")},
    {"FutureValue_loop", STD " zeropad",
     IO "W = Parameter (3, 3)\nR = Parameter (3, 3)\nb = Parameter (3, 1)\n"
        "h = Sigmoid (W * features + R * FutureValue (0, h, defaultHiddenActivation = 0.3) + b)\n"
        "z = LinearLayer {4} (h)\n" CE("z")},
    {"PastValue_through_function", STD " seqs",
     IO "prev (s) = PastValue (0, s)\nW = Parameter (3, 3)\nR = Parameter (3, 3)\n"
        "h = Tanh (W * features + R * prev (h))\nz = LinearLayer {4} (h)\n" CE("z")},
    {"PastValue_two_steps", STD " seqs",
     IO "d = PastValue (3, features, timeStep = 2, defaultHiddenActivation = 0.5)\n"
        "z = LinearLayer {4} (Splice (features : d))\n" CE("z")},
    {"DelayLayer_window", STD " zeropad",
     IO "model = Sequential (Parallel ((DelayLayer {T = 1} : Identity : DelayLayer {T = -1}),\n"
        "    Splice) : DenseLayer {5, activation = Tanh} : LinearLayer {4})\n"
        "z = model (features)\n" CE("z")},
    {"Splice", STD,
     IO WB "z = LinearLayer {4} (Splice ((W * features) : Tanh (features) : Sigmoid (b + W * "
           "features)))\n" CE("z")},
    /* BS.RNNs' LSTMs (bs_prelude.c): two layers, the first with a projection (cellDim 4
     * to h of 3); the bidirectional stack; a self-stabilizer (a scalar broadcast over a
     * loop's delay, whose rows come from the node reading it) */
    {"RecurrentLSTMPStack", STD " seqs",
     IO "s = BS.RNNs.RecurrentLSTMPStack ((3 : 2), cellDims = (4 : 2), features)\n"
        "z = LinearLayer {4} (s[1].h)\n" CE("z")},
    {"Stabilize_loop", STD " seqs",
     IO "W = Parameter (3, 3)\nR = Parameter (3, 3)\n"
        "h = Tanh (W * features + R * BS.Parameters.Stabilize (PastValue (0, h)))\n"
        "z = LinearLayer {4} (BS.Parameters.Stabilize (h))\n" CE("z")},
    {"StabilizerLayer", STD,
     IO "m = Sequential (DenseLayer {3, activation = Tanh} : StabilizerLayer {} : "
        "LinearLayer {4})\n"
        "z = m (features)\n" CE("z")},
    {"RecurrentBidirectionalLSTMPStack", STD " zeropad",
     IO "s = BS.RNNs.RecurrentBidirectionalLSTMPStack ((2 : 3), features)\n"
        "z = LinearLayer {4} (s[1].h)\n" CE("z")},
    {"BiRecurrentLSTMLayer", STD " seqs",
     IO "model = Sequential (BiRecurrentLSTMLayer {3} : LinearLayer {4})\n"
        "z = model (features)\n" CE("z")},
    /* BS.Sequences.Last / First: one column per sequence, against labels with one row per
     * sequence */
    {"Sequences_Last", "features:3 labels:4:hot:seq seqs",
     IO "h = RecurrentLSTMLayer {3} (features)\nz = LinearLayer {4} (BS.Sequences.Last (h))\n" CE(
         "z")},
    {"Sequences_First", "features:3 labels:4:prob:seq zeropad",
     IO "m = Sequential (DenseLayer {3, activation = Tanh} : BS.Sequences.First)\n"
        "z = Tanh (LinearLayer {4} (m (features)))\n" SE("z")},
    /* a node kind with no row of its own in bs_eval.c's builtins[], called by its kind name */
    {"kind_by_name", "features:3 labels:4:hot:seq seqs",
     IO "h = RecurrentLSTMLayer {3} (features)\nz = LinearLayer {4} (Last (h))\n" CE("z")},
    /* EmbeddingLayer: a learned Times on one-hot inputs */
    {"EmbeddingLayer", "features:5:hot labels:4:hot seqs",
     "features = Input (5)\nlabels = Input (4)\n"
     "model = Sequential (EmbeddingLayer {3} : RecurrentLSTMLayer {3} : DenseLayer {4})\n"
     "z = model (features)\n" CE("z")},
    /* the Layers library: input dimensions inferred from the data */
    {"DenseLayer", STD,
     IO "model = DenseLayer {4, activation = Tanh}\nz = model (features)\n" CE("z")},
    {"LinearLayer", STD, IO "z = LinearLayer {4} (features)\n" CE("z")},
    {"LinearLayer_no_bias", STD, IO "z = LinearLayer {4, bias = false} (features)\n" CE("z")},
    {"Sequential", STD,
     IO "model = Sequential (DenseLayer {5, activation = Tanh} :\n"
        "    DenseLayer {6, activation = Sigmoid} : LinearLayer {4})\n"
        "z = model (features)\n" CE("z")},
    {"Sequential_sequences", STD " seqs",
     IO "model = Sequential (DenseLayer {5, activation = Tanh} : LinearLayer {4})\n"
        "z = model (features)\n" CE("z")},
    /* convolution and pooling over images of 5 x 4 pixels, 2 channels (CNTK's layout):
     * padding, strides, a bias per map, two layers (the second's input gradient), windows
     * cut by the edge, and every pooling kind */
    {"ConvolutionalLayer", IMG,
     IMGIO "c = ConvolutionalLayer {3, (3:3), pad = true, activation = Tanh} (features)\n"
           "z = LinearLayer {4} (c)\n" CE("z")},
    {"ConvolutionalLayer_stride_no_bias", IMG,
     IMGIO "c = ConvolutionalLayer {3, (2:3), stride = (2:1), bias = false} (features)\n"
           "z = LinearLayer {4} (Tanh (c))\n" CE("z")},
    {"ConvolutionalLayer_two", IMG,
     IMGIO "m = Sequential (ConvolutionalLayer {3, (3:3), pad = true, activation = Tanh} :\n"
           "    ConvolutionalLayer {2, (3:2), stride = 2, pad = true} : Sigmoid : "
           "LinearLayer {4})\n"
           "z = m (features)\n" CE("z")},
    /* rows of a vector (CNTK's RowSlice and Slice, negative indices from the end); the
     * rows no slice takes get no gradient, overlapping slices add */
    {"RowSlice", STD,
     IO "W6 = Parameter (6, 3)\nh = Tanh (W6 * features)\n"
        "z = LinearLayer {4} (Splice (RowSlice (1, 4, h) : Slice (-3, 0, h) : "
        "Slice (0, 2, h)))\n" CE("z")},
    /* CNTK.core.bs's BS.Parameters and DiagTimes (the hand-written LSTMs' peepholes) */
    {"DiagTimes_BS_Parameters", STD,
     IO "d = BS.Parameters.DiagWeightParam (3)\n"
        "z = BS.Parameters.WeightParam (4, 3) * Tanh (DiagTimes (d, features)) + "
        "BS.Parameters.BiasParam (4)\n" CE("z")},
    /* a [1 x 1] parameter applied to every value, on either side (CNTK's Scale) */
    {"Scalar_times", STD,
     IO WB "s = Parameter (1, 1)\nz = Scale (s, W * features + b) + W * features .* s\n" CE("z")},
    {"Scalar_plus_minus", STD,
     IO WB "s = Parameter (1, 1)\nt = Parameter (1, 1)\n"
           "z = Tanh (s - W * features) + Tanh (W * features - t) .* (t + W * features)\n" CE("z")},
    /* CNTK's array constructor through CNTK.core.bs's LayerStack: layer i made by f (i) */
    {"LayerStack", STD,
     IO "z = LinearLayer {4} (LayerStack {2, i => DenseLayer {3 + i, activation = Tanh}} "
        "(features))\n" CE("z")},
    /* Inception's join of its branches: maps spliced along axis 3, convolved again */
    {"Splice_maps", IMG,
     IMGIO "a = ConvolutionalLayer {3, (3:3), pad = true, activation = Tanh} (features)\n"
           "b = ConvolutionalLayer {2, (1:1), activation = Sigmoid} (features)\n"
           "j = Splice (a : b : features, axis = 3)\n"
           "c = ConvolutionalLayer {2, (3:3), pad = true} (j)\n"
           "z = LinearLayer {4} (Tanh (c))\n" CE("z")},
    /* CNTK's primitive Convolution over a kernel of the config's (a Parameter (maps,
     * cells) as the older configs write it, or a ParameterTensor (kW:kH:C:maps)), a value
     * per map (1:1:C) broadcast over the image in +, - and .* on either side, the
     * reshapes (FlattenDimensions, SplitDimension) */
    {"Convolution_primitive", IMG,
     IMGIO "W = Parameter (3, 18)\n"
           "c = Convolution (W, features, (3:3:2), mapDims = 3, autoPadding = false)\n"
           "b = ParameterTensor ((1:1:3))\n"
           "z = LinearLayer {4} (Tanh (c + b))\n" CE("z")},
    {"Convolution_tensor_per_map", IMG,
     IMGIO "W = ParameterTensor ((2:2:2:3))\n"
           "c = Convolution (W, features, (2:2:2), stride = (2:2:2))\n"
           "m = ParameterTensor ((1:1:3))\nk = ParameterTensor ((1:1:3))\n"
           "f = FlattenDimensions (Tanh (c .* m - k) + Sigmoid (k - c), 1, 3)\n"
           "z = Parameter (4, 0) * f\n" CE("z")},
/* CNTK's local response normalization (ConvNetLRN, AlexNet): a Convolution along the
 * maps over a fixed kernel of one value (ChannelWindow), between reshapes; and
 * ResNet's zero maps, a ConstantTensor (1:1:C) spliced beside an image */
#define LRN_OF_A                                                                                   \
    "x2s = SplitDimension (a .* a, 3, 1)\n"                                                        \
    "W = ParameterTensor {(1:1:3:1), learningRateMultiplier = 0, initValue = 0.4}\n"               \
    "y = Convolution (W, x2s, (1:1:3), mapDims = 1, stride = 1, sharing = true, "                  \
    "autoPadding = true, lowerPad = 0, upperPad = 0)\n"                                            \
    "den = Exp (0.75 .* Log (1 + FlattenDimensions (y, 3, 2)))\n"                                  \
    "z = LinearLayer {4} (a .* Reciprocal (den))\n" CE("z")
    {"LRN_maps", IMG,
     IMGIO
     "a = ConvolutionalLayer {5, (3:3), pad = true, activation = Tanh} (features)\n" LRN_OF_A},
    {"Splice_constant_maps", IMG,
     IMGIO "a = ConvolutionalLayer {3, (3:3), pad = true, activation = Tanh} (features)\n"
           "j = Splice ((a : ConstantTensor (0.5, (1:1:2))), axis = 3)\n"
           "c = ConvolutionalLayer {2, (3:3), pad = true} (j)\n"
           "z = LinearLayer {4} (Tanh (c))\n" CE("z")},
    /* the same without convolutional layers, which the GPU's backend has not: there */
    {"LRN_maps_of_input", IMG,
     IMGIO "m = ParameterTensor ((1:1:2))\n"
           "a = Tanh (Splice ((features .* m : features), axis = 3))\n" LRN_OF_A},
    {"Splice_constant_maps_of_input", IMG,
     IMGIO "m = ParameterTensor ((1:1:2))\na = Tanh (features .* m)\n"
           "j = Splice ((a : ConstantTensor (0.5, (1:1:2))), axis = 3)\n"
           "z = LinearLayer {4} (Tanh (j))\n" CE("z")},
    {"Reshape_roundtrip", IMG,
     IMGIO "r = SplitDimension (FlattenDimensions (features, 1, 2), 1, 5)\n"
           "c = ConvolutionalLayer {2, (3:3), pad = true} (r)\n"
           "z = LinearLayer {4} (Tanh (c))\n" CE("z")},
    {"ConvolutionalLayer_lower_upper_pad", IMG,
     IMGIO "c = ConvolutionalLayer {2, (3:3), lowerPad = (1:0), upperPad = (2:1), stride = 2} "
           "(features)\n"
           "z = LinearLayer {4} (Tanh (c))\n" CE("z")},
    {"MaxPoolingLayer", IMG,
     IMGIO "c = ConvolutionalLayer {3, (3:3), pad = true, activation = Tanh} (features)\n"
           "p = MaxPoolingLayer {(2:2), stride = (2:2)} (c)\n"
           "z = LinearLayer {4} (p)\n" CE("z")},
    {"MaxPoolingLayer_padded_overlapping", IMG,
     IMGIO "c = ConvolutionalLayer {2, (2:2), activation = Tanh} (features)\n"
           "p = MaxPoolingLayer {(3:3), stride = 2, pad = true} (c)\n"
           "z = LinearLayer {4} (p)\n" CE("z")},
    {"AveragePoolingLayer", IMG,
     IMGIO "c = ConvolutionalLayer {3, (3:3), pad = true, activation = Tanh} (features)\n"
           "p = AveragePoolingLayer {(3:2), stride = (2:1), pad = true} (c)\n"
           "z = LinearLayer {4} (p)\n" CE("z")},
    {"Pooling_include_pad_ceil", IMG,
     IMGIO "c = ConvolutionalLayer {2, (3:3), pad = true, activation = Tanh} (features)\n"
           "p = Pooling (c, \"average\", (2:2), stride = 2, autoPadding = false,\n"
           "    ceilOutDim = true, includePad = true)\n"
           "q = Pooling (c, \"max\", (3:3), stride = 2, ceilOutDim = true, autoPadding = false)\n"
           "z = LinearLayer {4} (p) + LinearLayer {4} (q)\n" CE("z")},
    {"MaxPooling_legacy", IMG,
     IMGIO
     "c = ConvolutionalLayer {2, (3:3), activation = Tanh} (features)\n"
     "z = LinearLayer {4} (AveragePooling (MaxPooling (c, 2, 1, 1, 1), 2, 2, 1, 1))\n" CE("z")},
    /* the transposed convolution (a bias per output map, strides, padding, its kernel's
     * input channels inferred or given) and max unpooling (07_Deconvolution's network) */
    {"ConvolutionTransposeLayer", IMG,
     IMGIO
     "c = ConvolutionTransposeLayer {3, (3:3), 0, pad = true, initValueScale = 1} (features)\n"
     "z = LinearLayer {4} (Tanh (c))\n" CE("z")},
    {"ConvolutionTransposeLayer_stride", IMG,
     IMGIO "c = ConvolutionalLayer {3, (2:2), stride = 2, activation = Tanh} (features)\n"
           "d = ConvolutionTransposeLayer {2, (2:3), 3, stride = (2:1), bias = false,\n"
           "    initValueScale = 1, activation = Tanh} (c)\n"
           "z = LinearLayer {4} (d)\n" CE("z")},
    {"ConvolutionTransposeLayer_unpadded", IMG,
     IMGIO
     "c = ConvolutionTransposeLayer {2, (3:2), 2, stride = 2, initValueScale = 1} (features)\n"
     "z = LinearLayer {4} (Tanh (c))\n" CE("z")},
    {"MaxUnpoolingLayer", IMG,
     IMGIO "c = ConvolutionalLayer {2, (3:3), pad = true, activation = Tanh} (features)\n"
           "p = MaxPoolingLayer {(2:2), stride = (2:2)} (c)\n"
           "u = MaxUnpoolingLayer {(2:2), stride = (2:2)} (p, c)\n"
           "d = ConvolutionTransposeLayer {1, (3:3), 2, pad = true, initValueScale = 1} (u)\n"
           "z = LinearLayer {4} (Tanh (d))\n" CE("z")},
    /* batch normalization (training passes: the minibatch's statistics), per map after a
     * convolution and per row after a dense layer, and the node with parameters of its own */
    {"BatchNormalizationLayer", IMG " train",
     IMGIO "c = ConvolutionalLayer {3, (3:3), pad = true, bias = false} (features)\n"
           "n = BatchNormalizationLayer {spatialRank = 2, initialScale = 0.7} (c)\n"
           "h = BatchNormalizationLayer {normalizationTimeConstant = 10} (LinearLayer {5, bias = "
           "false} (Tanh (n)))\n"
           "z = LinearLayer {4} (Tanh (h))\n" CE("z")},
    {"BatchNormalization_node", STD " train",
     IO "s = ParameterTensor {5, initValue = 1.3} ; o = ParameterTensor {5, initValue = 0.2}\n"
        "m = ParameterTensor {5, initValue = 0, learningRateMultiplier = 0}\n"
        "v = ParameterTensor {5, initValue = 0, learningRateMultiplier = 0}\n"
        "h = BatchNormalization (LinearLayer {5, bias = false} (features), s, o, m, v, epsilon = "
        "0.01)\n"
        "z = LinearLayer {4} (Tanh (h))\n" CE("z")},
    /* a node of the network's own as the criterion (CNTK's 05_OneConvRegr: an RMSE through
     * ReduceSum and Sqrt), for training and evaluation alike */
    {"own_criterion", "features:3 labels:4",
     IO WB "d = labels - Tanh (W * features + b)\nr = Sqrt (ReduceSum (d .* d) / 4)\n"
           "criterionNodes = (r)\nevaluationNodes = (r)\n"},
    {"own_criterion_ReduceSum_axis", "features:3 labels:4:prob",
     IO WB "p = Sigmoid (W * features + b)\n"
           "nll = Negate (ReduceSum (labels .* Log (p) + (1 - labels) .* Log (1 - p), axis = 1))\n"
           "errs = SquareError (labels, p)\ncriterionNodes = (nll)\nevaluationNodes = (errs)\n"},
    /* criteria read by other nodes: each the minibatch's sum, one value (InceptionV3's
     * auxiliary head, `ce = auxWeight .* ceAux + ceZ`), with padding; SumElements as FCN's
     * normalized criterion (a ratio of two sums) and as a weight penalty */
    {"criteria_as_operands", STD " seqs",
     IO WB HID
     "p = W * features + b\nq = V * Tanh (p) + c\n"
     "ceA = CrossEntropyWithSoftmax (labels, p)\nceZ = CrossEntropyWithSoftmax (labels, q)\n"
     "se = SquareError (labels, Softmax (q))\nw = Constant (0.3)\n"
     "ce = w .* ceA + ceZ + 0.5 .* se\nerrs = ClassificationError (labels, q)\n"
     "criterionNodes = (ce)\nevaluationNodes = (errs : ceA)\n"},
    {"SumElements_ratio", "features:3 labels:4:prob",
     IO WB "d = labels - Tanh (W * features + b)\n"
           "r = SumElements (d .* d) .* Reciprocal (SumElements (labels))\n"
           "criterionNodes = (r)\n"},
    {"SumElements_penalty", STD,
     IO WB "z = W * features + b\nce = CrossEntropyWithSoftmax (labels, z)\n"
           "reg = ce + 0.05 .* SumElements (W .* W)\ncriterionNodes = (reg)\n"},
    /* the speech configs' hand-written cross entropy: SumElements (ReduceLogSum (z) -
     * TransposeTimes (labels, z)), with padding; their features read as {1 : dim} and
     * made a vector again by Transpose */
    {"ReduceLogSum_TransposeTimes", STD " seqs",
     IO WB "z = W * features + b\n"
           "ce = SumElements (ReduceLogSum (z) - TransposeTimes (labels, z))\n"
           "criterionNodes = (ce)\n"},
    {"Transpose", STD,
     "features = Input {1 : 3}\nlabels = Input (4)\n" WB
     "z = W * Transpose (features) + b\nzz = Transpose (Transpose (z))\n" CE("zz")},
    /* one value per sample broadcast over another's rows, on either side of each operator
     * (CNTK's x - ReduceMean (x)), and the Layers library's LayerNormalizationLayer */
    {"row_broadcast", STD " seqs",
     IO WB "h = Tanh (W * features + b)\nm = ReduceMean (h)\ns = Sigmoid (ReduceSum (h))\n"
           "z = (h - m) .* s + m - (s - h) + s .* h\n" CE("z")},
    {"LayerNormalizationLayer", STD " seqs",
     IO "h = DenseLayer {5, activation = Tanh} (features)\n"
        "n = LayerNormalizationLayer {initScale = 1.5, initBias = 0.1} (h)\n"
        "z = LinearLayer {4} (n)\n" CE("z")},
    /* RecurrentLSTMLayer with a projection (cellShape other than outputDim): CNTK's
     * LSTMBlock in BrainScript, forward and backward in time, with and without peepholes */
    {"LSTM_projection", STD " seqs",
     IO "h = RecurrentLSTMLayer {3, cellShape = 5} (features)\nz = LinearLayer {4} (h)\n" CE("z")},
    {"LSTM_projection_back_peep", STD " seqs",
     IO "h = RecurrentLSTMLayer {2, cellShape = 4, goBackwards = true, usePeepholes = true} "
        "(features)\nz = LinearLayer {4} (h)\n" CE("z")},
    {"ReduceMean", "features:3 labels:4",
     IO WB "d = labels - Tanh (W * features + b)\nr = ReduceMean (d .* d)\n"
           "criterionNodes = (r)\n"},
    {"Inferred", STD,
     IO "W = Parameter (4, Inferred)\nb = ParameterTensor (Inferred)\n"
        "z = W * features + b\n" CE("z")},
    /* ClassBasedCrossEntropyWithSoftmax (graph_classce.c): h reached by the words' path and
     * the classes' (z = Wc h), garbage labels in the padding; then the paths apart (A only
     * through the words', Wz only through the classes') */
    {"ClassBasedCrossEntropyWithSoftmax", "features:3 labels:4:cls seqs",
     "features = Input (3)\nlabels = Input (4)\nA = Parameter (5, 3)\nb = Parameter (5)\n"
     "h = Tanh (A * features + b)\nW = Parameter (5, 9)\nWc = Parameter (3, 5)\n"
     "ce = ClassBasedCrossEntropyWithSoftmax (labels, h, W, Wc * h)\ncriterionNodes = (ce)\n"},
    {"ClassBasedCrossEntropyWithSoftmax_apart", "features:3 labels:4:cls zeropad",
     "features = Input (3)\nlabels = Input (4)\nA = Parameter (5, 3)\nW = Parameter (5, 9)\n"
     "Wz = Parameter (3, 3)\nce = ClassBasedCrossEntropyWithSoftmax (labels, A * features, W, "
     "Wz * features)\ncriterionNodes = (ce)\n"},
    /* CNTK.core.bs's functions written over other nodes (bs_prelude.c, session o) */
    {"Asin_Acos", STD,
     IO WB HID "a = Tanh (W * features + b) .* 0.8\nz = V * Asin (a) + Acos (a) .* c\n" CE("z")},
    {"LogPlus", STD, IO WB HID "a = W * features + b\nz = LogPlus (a, V * a) + c\n" CE("z")},
    {"If", STD " away=5e-3",
     IO WB HID "a = W * features + b\nd = a - 0.3\n"
               "z = BS.Boolean.If (d > 0, V * a, a .* c)\noutputNodes = (d)\n" CE("z")},
    {"CrossEntropy", "features:3 labels:4:prob",
     IO WB "xe = CrossEntropy (labels, Softmax (W * features + b))\ncriterionNodes = (xe)\n"},
    {"WeightedLogistic", "features:3 labels:4:bin w:1:prob",
     IO WB "w = Input (1)\nwl = WeightedLogistic (labels, Sigmoid (W * features + b), w)\n"
           "criterionNodes = (wl)\n"},
    {"MatrixL1Reg_L2Reg", STD,
     IO WB "z = W * features + b\n"
           "r = SumElements (ReduceLogSum (z) - TransposeTimes (labels, z)) + MatrixL2Reg (W) + "
           "0.1 .* MatrixL1Reg (b)\ncriterionNodes = (r)\n"},
    {"RecurrentGRUStack", STD " seqs",
     IO
     "s = BS.RNNs.RecurrentGRUStack ((3 : 4), features)\nz = LinearLayer {4} (s[1].h)\n" CE("z")},
    {"RecurrentBidirectionalGRUStack", STD " seqs",
     IO "s = BS.RNNs.RecurrentBidirectionalGRUStack ((4 : 2), features, "
        "enableSelfStabilization = false)\nz = LinearLayer {4} (s[0].h)\n" CE("z")},
    {"RecurrentLSTMLayer_stabilized", STD " seqs",
     IO "h = RecurrentLSTMLayer {3, usePeepholes = true, enableSelfStabilization = true} "
        "(features)\nz = LinearLayer {4} (h)\n" CE("z")},
    {"RecurrentLSTMLayerStack", STD " seqs",
     IO "h = RecurrentLSTMLayerStack {(3 : 2), cellShapes = (4 : 2)} (features)\n"
        "z = LinearLayer {4} (h)\n" CE("z")},
    {"FoldL", "features:3 labels:4:hot:seq seqs",
     IO WB "f = BS.Sequences.FoldL (Plus, Constant (0.2), Tanh (W * features + b))\n"
           "z = LinearLayer {4} (f)\n" CE("z")},
    /* a delay's initialState: a learned column, one learned value over the rows, a value per
     * sequence; the Layers' trainInitialState (its h and c learned), both ways */
    {"PastValue_initialState", STD " seqs",
     IO WB HID "s0 = ParameterTensor {(4)}\n"
               "h = Tanh (W * features + b + V * PastValue (0, h, initialState = s0))\n"
               "z = h .* c\n" CE("z")},
    {"FutureValue_initialState_one", STD " zeropad",
     IO WB HID "s0 = Parameter (1, 1)\n"
               "h = Tanh (W * features + b + V * FutureValue (0, h, initialState = s0))\n"
               "z = h .* c\n" CE("z")},
    {"Previous_initialState_per_sequence", STD " seqs",
     IO WB HID "U = Parameter (4, 3)\ns0 = BS.Sequences.First (Tanh (U * features))\n"
               "h = Tanh (W * features + b + V * BS.Loop.Previous (h, initialState = s0))\n"
               "z = h .* c\n" CE("z")},
    {"RecurrentLSTMLayer_trainInitialState", STD " seqs",
     IO "m = Sequential (BiRecurrentLSTMLayer {3, trainInitialState = true} : LinearLayer {4})\n"
        "z = m (features)\n" CE("z")},
    {"BroadcastSequenceAs", STD " seqs",
     IO WB HID "h = Tanh (W * features + b)\nl = BS.Sequences.Last (h)\n"
               "z = V * (h + BS.Sequences.BroadcastSequenceAs (h, l)) + c\n" CE("z")},
    {"PreviousOrDefault", STD " seqs",
     IO WB
     "h = Tanh (W * features + b)\n"
     "z = LinearLayer {4} (BS.Loop.PreviousOrDefault (h, defaultValue = Constant (0.5)) + h)\n" CE(
         "z")},
};

#endif
