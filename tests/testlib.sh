# Shared helpers of the shell tests (sourced). Sets T (the trainer), S (the source tree),
# tmp (a scratch directory removed at exit) and counts checks in pass/fail.
T=$(cd "${top_builddir:-.}" && pwd)/trainer
S=$(cd "${top_srcdir:-.}" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
no() { fail=$((fail + 1)); echo "FAIL: $*"; }
# expect STATUS CMD...: run CMD, keep its output in $tmp/out and $tmp/err, check the status
expect() {
    want=$1; shift
    "$@" >"$tmp/out" 2>"$tmp/err"
    got=$?
    if [ "$got" -eq "$want" ]; then ok; else no "exit $got, wanted $want: $*"; cat "$tmp/err"; fi
}
# has FILE TEXT / hasnt FILE TEXT: a fixed string is (not) in FILE
has() { if grep -qF -- "$2" "$1"; then ok; else no "$1 lacks: $2"; sed 's/^/  | /' "$1" | head -20; fi; }
hasnt() { if grep -qF -- "$2" "$1"; then no "$1 has: $2"; else ok; fi; }
# count FILE TEXT: lines of FILE holding TEXT
count() { grep -cF -- "$2" "$1"; }
# finish NAME: print the summary lines and exit with the verdict
finish() {
    echo "# $1: $pass checks passed, $fail failed"
    echo "$pass passed, $fail failed"
    [ "$fail" -eq 0 ]
    exit $?
}
