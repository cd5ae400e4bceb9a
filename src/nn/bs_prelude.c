/* The definitions of CNTK's CNTK.core.bs that are written in BrainScript itself and that
 * partrain takes as they are: the NDL book's macros that CNTK keeps for its older configs
 * (BFF, SBFF, MeanVarNorm, LogPrior), the layers CNTK defines as them, Scale, and its
 * numeric helpers. bs_build_graph() evaluates a network inside this record, so a network's own
 * definition of one of these names wins, as it does in CNTK. */
#include "nn/bs_eval_internal.h"

const char bs_prelude_file[] = "CNTK.core.bs (built into partrain)";

const char bs_prelude[] =
    "# an affine layer: z = W in + B, B starting at zero\n"
    "BFF (in, rows, cols) = [\n"
    "    B = Parameter (rows, 1, initValue = 0)\n"
    "    W = Parameter (rows, cols)\n"
    "    z = W * in + B\n"
    "]\n"
    "# the same through a sigmoid\n"
    "SBFF (in, rows, cols) = [ Eh = Sigmoid (BFF (in, rows, cols).z) ]\n"
    "# the features' mean and deviation over the corpus, before the first epoch\n"
    "MeanVarNorm (feat) = PerDimMeanVarNormalization (feat, Mean (feat), InvStdDev (feat))\n"
    "# the log of the labels' mean over the corpus\n"
    "LogPrior (labels) = Log (Mean (labels))\n"
    "FeatureMVNLayer {} = MeanVarNorm\n"
    "LogPriorLayer {} = LogPrior\n"
    "# a node times a scalar (a number or a one-value Constant)\n"
    "Scale (scalarScalingFactor, matrix, tag = '') =\n"
    "    ElementTimes (scalarScalingFactor, matrix, tag = tag)\n"
    "# CNTK's ElementDivide, a product with the reciprocal\n"
    "ElementDivide (_, y, tag = '') = ElementTimes (_, Reciprocal (y), tag = tag)\n"
    "Sign (x) = if x > 0 then 1 else if x < 0 then -1 else 0\n"
    "Min (a, b) = if a < b then a else b\n"
    "Max (a, b) = if a > b then a else b\n"
    "Fac (n) = if n > 1 then Fac (n - 1) * n else 1\n"
    "# d .* X with d a column: each row of X times its entry of d\n"
    "DiagTimes (diagonalMatrixAsColumnVector, matrix, tag = '') =\n"
    "    ElementTimes (diagonalMatrixAsColumnVector, matrix, tag = tag)\n"
    "# BS.Parameters' (CNTK sets randomSeed=1 on the random ones; partrain draws them from\n"
    "# the network's seed, as every parameter)\n"
    "WeightParam (outputDim, inputDim) =\n"
    "    ParameterTensor ((outputDim : inputDim), init = 'uniform', initValueScale = 1)\n"
    "DiagWeightParam (outputDim) = ParameterTensor ((outputDim), init = 'uniform', initValueScale "
    "= 1)\n"
    "BiasParam (dim) = ParameterTensor ((dim), initValue = 0.0)\n"
    "ScalarParam () = BiasParam (1)\n"
    "# n layers in sequence, the i-th made by c (i), i from 0\n"
    "LayerStack {n, c} = Sequential (array[0..n-1] (c))\n";
