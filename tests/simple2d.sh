# Sourced by the DataParallelASGD convergence checks: CNTK's Simple2d data (CNTK's
# Tests/EndToEndTests/Simple2d/AdditionalFiles/MakeData.m, MIT license), generated here:
# x, y uniform in [-1, 1], class 1 where 0.25 sin(pi x) > y, written as CNTK's
# SimpleDataTrain_cntk_text.txt writes them ("|labels 0 1" for class 1).
# simple2d_ctf N SEED: N samples from the Park-Miller generator seeded with SEED (exact in
# awk's doubles, so the same file on every machine).
simple2d_ctf() {
    awk -v n="$1" -v s="$2" 'BEGIN { pi = atan2(0, -1)
        for (i = 0; i < n; i++) {
            s = (s * 16807) % 2147483647; x = 2 * (s / 2147483647 - 0.5)
            s = (s * 16807) % 2147483647; y = 2 * (s / 2147483647 - 0.5)
            c = 0.25 * sin(pi * x) > y
            printf "|labels %d %d\t|features %.6g %.6g\n", 1 - c, c, x, y } }'
}
# simple2d_err LOG: the test error of the Final Results line
simple2d_err() { sed -n 's/^Final Results: .*EvalClassificationError = \([0-9.]*\) \* .*/\1/p' "$1"; }
