#!/bin/sh
# The dependency order of partrain's source folders, and the check that every
# `#include "..."` in parsers/ and src/ follows it.
#
#   tests/test_layers.sh [ROOT]        check ROOT (default: $top_srcdir, else .)
#   tests/test_layers.sh --table       print the layer table (the README shows it)
#
# A module (parsers/, src/<name>/, src/main.c) may include its own headers and those of
# modules on LOWER layers only: nothing upwards, and nothing sideways between two modules
# of one layer. Two modules that include each other are reported as such too. Run on the
# real tree, the script then proves it can fail: it checks small planted trees, one per
# rule, and expects each to fail with its message.
set -u

# The layer table, lowest first: the one place the order is written down.
LAYERS='core
parsers
math comm data
reader
nn learn
parallel
train
main'

print_table() {
    echo "$LAYERS" | awk '{ printf "    layer %d  %s\n", NR - 1, $0 }'
}

# check_tree ROOT: print one line per violation, exit 1 if there is any
check_tree() (
    cd "$1" || exit 2
    files=$(find parsers src -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' \) 2>/dev/null | LC_ALL=C sort)
    [ -n "$files" ] || { echo "test_layers: no sources under $1"; exit 2; }
    # shellcheck disable=SC2086
    awk -v layers="$LAYERS" '
    BEGIN {
        n = split(layers, rows, "\n")
        for (i = 1; i <= n; i++) {
            m = split(rows[i], mods, " ")
            for (j = 1; j <= m; j++) { layer[mods[j]] = i - 1; peers[mods[j]] = rows[i] }
        }
        bad = 0
    }
    function module_of(path,   p) {
        if (path ~ /^parsers\//) return "parsers"
        if (path == "src/main.c") return "main"
        split(path, p, "/")
        return p[2]
    }
    FNR == 1 {
        from = module_of(FILENAME)
        if (!(from in layer)) {
            printf "%s: module %s is not in the layer table (tests/test_layers.sh)\n", FILENAME, from
            bad = 1
        }
    }
    /^[ \t]*#[ \t]*include[ \t]*"/ {
        inc = $0
        sub(/^[ \t]*#[ \t]*include[ \t]*"/, "", inc)
        sub(/".*/, "", inc)
        if (inc == "config.h" || inc !~ /\//) next   # generated header; own folder
        split(inc, q, "/")
        to = q[1]
        if (to == from || !(from in layer)) next
        where = FILENAME ":" FNR ": " from " includes " inc
        if (!(to in layer)) {
            printf "%s (%s is not in the layer table)\n", where, to; bad = 1
        } else if (layer[to] > layer[from]) {
            printf "%s (%s is above %s)\n", where, to, from; bad = 1
        } else if (layer[to] == layer[from]) {
            printf "%s (%s and %s are one layer: %s)\n", where, to, from, peers[from]; bad = 1
        }
        if (!((from, to) in seen)) seen[from, to] = FILENAME ":" FNR
    }
    END {
        for (k in seen) {
            split(k, ft, SUBSEP)
            if (ft[1] < ft[2] && ((ft[2], ft[1]) in seen)) {
                printf "modules %s and %s include each other: %s includes %s, %s includes %s\n", \
                    ft[1], ft[2], seen[ft[1], ft[2]], ft[2], seen[ft[2], ft[1]], ft[1]
                bad = 1
            }
        }
        exit bad
    }' $files
)

# README's architecture section shows the table: keep the two the same
check_readme() {
    [ -f "$1/README.md" ] || return 0
    print_table | while IFS= read -r row; do
        grep -qxF -- "$row" "$1/README.md" || { echo "README.md lacks the layer table row: '$row'"; exit 1; }
    done
}

# planted ROOT FILE TEXT: a scratch tree file holding TEXT
planted() {
    mkdir -p "$(dirname "$1/$2")" && printf '%s\n' "$3" >"$1/$2"
}

# expect_fail NAME MESSAGE: the planted tree $tmp/NAME fails with MESSAGE
expect_fail() {
    if out=$(check_tree "$tmp/$1"); then
        echo "FAIL: self-test $1: the planted tree passed"; fail=1
    elif ! printf '%s\n' "$out" | grep -qF -- "$2"; then
        echo "FAIL: self-test $1: expected '$2', got:"; printf '%s\n' "$out"; fail=1
    fi
}

case ${1:-} in
--table) print_table; exit 0 ;;
esac
root=${1:-${top_srcdir:-.}}

echo "Layers (tests/test_layers.sh), lowest first:"
print_table
fail=0
check_tree "$root" || fail=1
check_readme "$root" || fail=1

# Self-test: a clean tree passes, and each rule catches its planted include.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for t in good up side loop unknown; do
    planted "$tmp/$t" src/core/err.h '/* error */'
    planted "$tmp/$t" parsers/cfg.c '#include "parsers/cfg.h"
#include "core/err.h"
#include "config.h"'
    planted "$tmp/$t" src/learn/learner.c '#include "learn.h"
  #  include "parsers/cfg.h"
#include "data/minibatch.h"'
    planted "$tmp/$t" src/main.c '#include "train/train.h"'
done
if out=$(check_tree "$tmp/good"); then :; else
    echo "FAIL: self-test good: a clean tree failed:"; printf '%s\n' "$out"; fail=1
fi
planted "$tmp/up" src/learn/sgd.c '/* SGD */
#include "parallel/parallel.h"'
expect_fail up "src/learn/sgd.c:2: learn includes parallel/parallel.h (parallel is above learn)"
planted "$tmp/side" src/nn/step.c '#include "learn/learn.h"'
expect_fail side "src/nn/step.c:1: nn includes learn/learn.h (learn and nn are one layer: nn learn)"
planted "$tmp/loop" src/comm/comm.c '#include "math/backend.h"'
planted "$tmp/loop" src/math/backend.c '#include "comm/comm.h"'
expect_fail loop "modules comm and math include each other: src/comm/comm.c:1 includes math, src/math/backend.c:1 includes comm"
planted "$tmp/unknown" src/gpu/kernels.c '#include "core/err.h"'
expect_fail unknown "src/gpu/kernels.c: module gpu is not in the layer table"

[ $fail -eq 0 ] && echo "test_layers: every include follows the order (self-test: 5 planted trees)"
exit $fail
