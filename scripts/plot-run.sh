#!/bin/sh
# Plots of training runs, with gnuplot (Debian's gnuplot-nox), as PNG:
#
#   scripts/plot-run.sh [-o PREFIX] [-p PERF]... LOG...
#
#   PREFIX-curves.png  the training criterion and the evaluation criterion (in % for a
#                      classification error) per epoch, one curve per LOG side by side:
#                      [Training] solid, [Validate] (cvReader) dashed; from the
#                      "Finished Epoch[ E of N]: [Training] ..." lines every run writes
#   PREFIX-syncs.png   with -p (a perfStatsFile, or its .rank<k> file; repeatable): one panel
#                      per file, a stacked bar per synchronization: compute since the last
#                      one, communication, and waiting (wait_s: the part the engine spent
#                      waiting for other ranks or for a transfer in flight), milliseconds;
#                      dotted lines where an epoch starts
#
# PREFIX defaults to "run". Each LOG is labelled with its path as given. PLOT_RUN_DATA=DIR
# keeps the data gnuplot read in DIR (rK.t / rK.v: "epoch criterion eval" of the K-th LOG's
# [Training] / [Validate] lines; pK: "sync compute communication wait" of the K-th -p).
# Exit status: 0 when the PNGs were written, 1 when an input cannot be used (a log without
# epoch lines, a perfStatsFile without sync lines) or gnuplot fails, 2 for a usage error.
set -u

me=plot-run.sh
die() { echo "$me: $*" >&2; exit 1; }
usage() {
    echo "usage: $me [-o PREFIX] [-p PERF_STATS_FILE]... LOG..." >&2
    exit 2
}

prefix=run
perfs=""
np=0
while [ $# -gt 0 ]; do
    case $1 in
        -o) [ $# -ge 2 ] || usage; prefix=$2; shift 2 ;;
        -p) [ $# -ge 2 ] || usage; np=$((np + 1)); eval "perf_$np=\$2"; shift 2 ;;
        -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        --) shift; break ;;
        -*) echo "$me: unknown option $1" >&2; usage ;;
        *) break ;;
    esac
done
[ $# -ge 1 ] || usage
command -v gnuplot >/dev/null 2>&1 || die "gnuplot not found (Debian: apt-get install gnuplot-nox)"

mkdir -p "$(dirname "$prefix")" || die "cannot create the directory of '$prefix'"
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT

# gnuplot string literal: single quotes, a quote doubled
gq() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/''/g")"; }

# parse_log LOG OUT: OUT.t and OUT.v get "epoch criterion eval" lines (Training, Validate);
# OUT.names the two criteria's names and whether the second is shown in percent
parse_log() {
    awk -v out="$2" '
    function value(item, pct,   v) {
        sub(/^[^=]*= */, "", item)
        v = item + 0
        if (item ~ /^[^*]*%/) return v           # "12.345% * 600": a percentage already
        return pct ? 100 * v : v
    }
    function name(item) { sub(/ *=.*/, "", item); sub(/^ */, "", item); return item }
    /Finished Epoch\[ *[0-9]+ of [0-9]+\]: \[(Training|Validate)\] / {
        s = $0
        sub(/.*Finished Epoch\[ */, "", s)
        epoch = s + 0
        kind = index($0, "[Training] ") ? "t" : "v"
        s = $0
        sub(/.*\[(Training|Validate)\] /, "", s)
        n = split(s, part, "; ")
        if (n < 2) next
        if (crit == "") {
            crit = name(part[1]); ev = name(part[2])
            pct = ev ~ /(Classification|Prediction)?Error$/ && ev !~ /SquareError$/
        }
        print epoch, value(part[1], 0), value(part[2], pct) >(out "." kind)
        seen[kind]++
    }
    END {
        if (!seen["t"]) exit 3
        printf "%s\n%s\n%d\n", crit, ev, pct >(out ".names")
    }' "$1"
}

# ---------------------------------------------------------------- curves
i=0
plots_loss="" plots_eval=""
for log in "$@"; do
    i=$((i + 1))
    [ -r "$log" ] && [ -f "$log" ] || die "cannot read log '$log'"
    parse_log "$log" "$work/r$i"
    case $? in
        0) ;;
        3) die "'$log' has no 'Finished Epoch[ E of N]: [Training] ...' lines: not a trainer log, or the run stopped before its first epoch ended" ;;
        *) die "cannot parse '$log'" ;;
    esac
    [ $i -eq 1 ] && { crit=$(sed -n 1p "$work/r1.names"); ev=$(sed -n 2p "$work/r1.names"); pct=$(sed -n 3p "$work/r1.names"); }
    title=$(gq "$log")
    for panel in loss eval; do
        col=2
        [ $panel = eval ] && col=3
        p="'$work/r$i.t' using 1:$col with linespoints lt $i lw 2 pt 7 title $title"
        [ -s "$work/r$i.v" ] && p="$p, '$work/r$i.v' using 1:$col with linespoints lt $i lw 2 dt 2 pt 6 title $(gq "$log [Validate]")"
        if [ $panel = loss ]; then plots_loss="${plots_loss:+$plots_loss, }$p"; else plots_eval="${plots_eval:+$plots_eval, }$p"; fi
    done
done

term="pngcairo noenhanced font 'sans,10'"
gnuplot -e "set terminal pngcairo" >/dev/null 2>&1 || term="png noenhanced"
evlabel=$ev
[ "$pct" = 1 ] && evlabel="$ev (%)"
cat >"$work/curves.gp" <<GP
set terminal $term size 1200,500
set output $(gq "$prefix-curves.png")
set multiplot layout 1,2 title 'Training runs per epoch (solid: [Training], dashed: [Validate])'
set grid
set key top right
set xlabel 'epoch'
set mxtics
set ylabel $(gq "$crit")
set title $(gq "$crit")
plot $plots_loss
set ylabel $(gq "$evlabel")
set title $(gq "$evlabel")
plot $plots_eval
unset multiplot
GP
keep() { [ -z "${PLOT_RUN_DATA:-}" ] || { mkdir -p "$PLOT_RUN_DATA" && cp "$@" "$PLOT_RUN_DATA/"; }; }
keep "$work"/r*.t
[ -z "$(ls "$work"/r*.v 2>/dev/null)" ] || keep "$work"/r*.v
gnuplot "$work/curves.gp" 2>"$work/err" || die "gnuplot failed on the curves: $(cat "$work/err")"
echo "$me: wrote $prefix-curves.png"

# ---------------------------------------------------------------- syncs
[ "$np" -gt 0 ] || exit 0
panels=""
k=0
while [ $k -lt "$np" ]; do
    k=$((k + 1))
    eval "pf=\$perf_$k"
    [ -r "$pf" ] && [ -f "$pf" ] || die "cannot read perfStatsFile '$pf'"
    # sync compute communication wait (ms); communication = comm_s - wait_s
    awk '
    function field(key,   s) {
        if (!match($0, "\"" key "\":[-0-9.eE+]+")) return ""
        s = substr($0, RSTART, RLENGTH); sub(/^[^:]*:/, "", s); return s + 0
    }
    /"compute_s":/ {
        n++
        sync = field("sync"); if (sync == "") sync = n
        c = field("compute_s"); t = field("comm_s"); w = field("wait_s")
        if (w == "") w = 0
        if (t == "") t = 0
        comm = t - w; if (comm < 0) comm = 0
        printf "%s %.6f %.6f %.6f\n", sync, 1000 * c, 1000 * comm, 1000 * w
        e = field("epoch")
        if (e != epoch && n > 1)   # a dotted line where an epoch starts
            printf "set arrow from %s - 0.5, graph 0 to %s - 0.5, graph 1 nohead dt 3 lc rgb \"#888888\"\n", sync, sync >arrows
        epoch = e
        if (method == "" && match($0, /"method":"[^"]*"/)) method = substr($0, RSTART + 10, RLENGTH - 11)
    }
    END { if (!n) exit 3; print method >"/dev/stderr" }' arrows="$work/p$k.arrows" "$pf" >"$work/p$k" 2>"$work/p$k.method"
    [ $? -eq 0 ] || die "'$pf' has no perfStatsFile lines (JSON objects with \"compute_s\")"
    method=$(cat "$work/p$k.method")
    f="'$work/p$k'"
    touch "$work/p$k.arrows"
    panels="$panels
unset arrow
load '$work/p$k.arrows'
set title $(gq "$pf ($method)")
plot $f using 1:(\$2+\$3+\$4) with boxes lc rgb '#d62728' title 'wait', \\
     $f using 1:(\$2+\$3) with boxes lc rgb '#1f77b4' title 'communication', \\
     $f using 1:2 with boxes lc rgb '#2ca02c' title 'compute'"
done
cat >"$work/syncs.gp" <<GP
set terminal $term size 1200,$((120 + 300 * np))
set output $(gq "$prefix-syncs.png")
set multiplot layout $np,1 title 'Time per synchronization (stacked): compute since the last sync, communication, waiting'
set grid ytics
set key outside right top
set style fill solid 1.0 noborder
set boxwidth 0.9 relative
set xlabel 'synchronization'
set ylabel 'milliseconds'
set yrange [0:*]
$panels
unset multiplot
GP
k=0
while [ $k -lt "$np" ]; do k=$((k + 1)); keep "$work/p$k"; done
gnuplot "$work/syncs.gp" 2>"$work/err" || die "gnuplot failed on the syncs: $(cat "$work/err")"
echo "$me: wrote $prefix-syncs.png"
