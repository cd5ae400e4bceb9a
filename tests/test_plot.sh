#!/bin/sh
# scripts/plot-run.sh on real runs: a 2-rank DataParallelSGD run with cvReader and
# perfStatsFile and a one-worker run with timestamped lines give two PNGs (checked by their
# signature, size and dimensions) from exactly the numbers of the logs' epoch lines; a log
# without epoch lines, a perfStatsFile without sync lines, a missing file and a bad command
# line fail clearly.
set -u
. "${top_srcdir:-.}/tests/testlib.sh"
MPIEXEC=${MPIEXEC:-mpiexec}
command -v "$MPIEXEC" >/dev/null || { echo "test_plot: mpiexec not found"; exit 99; }
command -v gnuplot >/dev/null || { echo "test_plot: gnuplot not found (scripts/setup.sh installs gnuplot-nox)"; exit 77; }
P=$S/scripts/plot-run.sh
cd "$tmp"
toy_with_cv 1

# png FILE WIDTH HEIGHT: a PNG (signature) of that size in pixels, more than 5 kB
png() {
    sig=$(od -An -tx1 -N8 "$1" 2>/dev/null | tr -d ' \n')
    [ "$sig" = 89504e470d0a1a0a ] && ok || no "$1: not a PNG (signature '$sig')"
    [ "$(wc -c <"$1")" -gt 5000 ] && ok || no "$1: only $(wc -c <"$1") bytes"
    # IHDR: width and height, big-endian, at bytes 16..23
    dims=$(od -An -tu1 -j16 -N8 "$1" | awk '{ printf "%d %d", (($1 * 256 + $2) * 256 + $3) * 256 + $4, (($5 * 256 + $6) * 256 + $7) * 256 + $8 }')
    [ "$dims" = "$2 $3" ] && ok || no "$1: $dims pixels, wanted $2 $3"
}

run dp 2 "$cv" $PT.perfStatsFile=dp/perf.jsonl
expect 0 "$T" configFile=p.cfg Dir=one $PT.parallelizationMethod=None timestamping=true train.SGD.maxEpochs=4
cp "$tmp/err" one.log
grep -q '^[0-9/]* [0-9:]*: Finished Epoch\[ 4 of 4\]: \[Training\]' one.log && ok || no "one.log has no timestamped epoch lines"

export PLOT_RUN_DATA=data
expect 0 "$P" -o plots/cmp -p dp/perf.jsonl -p dp/perf.jsonl.rank1 dp.err one.log
unset PLOT_RUN_DATA
has "$tmp/out" "plot-run.sh: wrote plots/cmp-curves.png"
has "$tmp/out" "plot-run.sh: wrote plots/cmp-syncs.png"
png plots/cmp-curves.png 1200 500
png plots/cmp-syncs.png 1200 720
# the plotted numbers are the logs': loss and error (in %) per epoch, training and validation
sed -n 's/^Finished Epoch\[ \([0-9]*\) of 3\]: \[Training\] CrossEntropyWithSoftmax = \([0-9.]*\) .*EvalClassificationError = \([0-9.]*\) .*/\1 \2 \3/p' dp.err |
    awk '{ print $1, $2 + 0, 100 * $3 }' >want.t
awk '{ print $1, $2 + 0, $3 + 0 }' data/r1.t >got.t
[ "$(wc -l <want.t)" -eq 3 ] && cmp -s want.t got.t && ok || { no "the plotted training numbers differ from the log's"; paste want.t got.t; }
sed -n 's/^Finished Epoch\[ \([0-9]*\) of 3\]: \[Validate\] CrossEntropyWithSoftmax = \([0-9.]*\) .*EvalClassificationError = \([0-9.]*\) .*/\1 \2 \3/p' dp.err |
    awk '{ print $1, $2 + 0, 100 * $3 }' >want.v
awk '{ print $1, $2 + 0, $3 + 0 }' data/r1.v >got.v
[ "$(wc -l <want.v)" -eq 3 ] && cmp -s want.v got.v && ok || { no "the plotted validation numbers differ from the log's"; paste want.v got.v; }
[ "$(wc -l <data/r2.t)" -eq 4 ] && [ ! -e data/r2.v ] && ok || no "one.log: wanted 4 training epochs and no validation"
# one bar per perfStatsFile line: compute, communication = comm_s - wait_s, wait (ms)
[ "$(wc -l <data/p2)" -eq "$(wc -l <dp/perf.jsonl.rank1)" ] && [ "$(wc -l <data/p1)" -eq 150 ] && ok || no "perfStatsFile: wrong number of bars"
awk '$1 != NR || $2 < 0 || $3 < 0 || $4 != 0 { bad = 1 } END { exit bad }' data/p1 && ok || no "perfStatsFile data: $(head -3 data/p1)"

# only curves without -p; a run's own directory is made
expect 0 "$P" -o plots2/deep/x one.log
png plots2/deep/x-curves.png 1200 500
[ ! -e plots2/deep/x-syncs.png ] && ok || no "syncs plotted without -p"

# clear failures: no epoch lines, no sync lines, a missing file, a bad command line
grep -v 'Finished Epoch' dp.err >noepochs.log
expect 1 "$P" -o bad/x dp.err noepochs.log
has "$tmp/err" "plot-run.sh: 'noepochs.log' has no 'Finished Epoch[ E of N]: [Training] ...' lines"
[ ! -e bad/x-curves.png ] && ok || no "a PNG was written for a log without epoch lines"
printf 'hello\n' >empty.jsonl
expect 1 "$P" -o bad/y -p empty.jsonl dp.err
has "$tmp/err" "plot-run.sh: 'empty.jsonl' has no perfStatsFile lines"
expect 1 "$P" -o bad/z nope.log
has "$tmp/err" "plot-run.sh: cannot read log 'nope.log'"
expect 2 "$P" -o
expect 2 "$P" --bogus dp.err
has "$tmp/err" "usage: plot-run.sh"
finish plot
