#!/bin/sh
# make check-gpu: the network tests on GPU 0 - the gradient checks of every layer and node
# (finite differences against the backward pass), the LSTM's, the BrainScript graph's and
# the model files' tests (tests/test_nn, test_nn_lstm, test_graph, test_nn_model with
# PT_TEST_BACKEND=cuda: tests/test_nn_util.h's make_backend). Networks with nodes the GPU's
# backend has not (convolution, pooling) are not run there, and listed. Skipped (77)
# without a GPU.
set -u
. "${top_srcdir:-.}/tests/testlib.sh"
if ! "$T" --version 2>&1 | grep -q '^cuda backend: cuBLAS'; then
    echo "skipped: no GPU: $("$T" --version 2>&1 | grep '^cuda backend')"
    exit 77
fi
B=$(cd "${top_builddir:-.}" && pwd)/tests
for t in test_nn test_nn_lstm test_graph test_nn_model; do
    PT_TEST_BACKEND=cuda "$B/$t" >"$tmp/$t.out" 2>&1 && ok || { no "$t on the GPU"; grep -v '^Running\|^[0-9]*%:\|^# .*: not run on' "$tmp/$t.out" | head -60; }
    echo "# $t on the GPU: $(grep -E '^[0-9]+%: Checks' "$tmp/$t.out")"
    # networks of nodes the GPU's backend has not (convolution, pooling, batch normalization)
    n=$(grep -c '^# .*: not run on' "$tmp/$t.out")
    [ "$n" -eq 0 ] || echo "# $t: $n of them not run on the GPU (its backend refuses their networks): $(sed -n 's/^# \(.*\): not run on.*/\1/p' "$tmp/$t.out" | tr '\n' ' ')"
done
finish gpu_nn
