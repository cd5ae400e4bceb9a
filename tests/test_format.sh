#!/bin/sh
# Every C file of the tree matches the repository's .clang-format (Debian 12's
# clang-format 14). Skipped (77) only when clang-format is not installed.
#
#   tests/test_format.sh [ROOT]    check ROOT (default: $top_srcdir, else .)
#
# To fix a file: clang-format -i FILE (from the source tree, so .clang-format applies).
set -u
root=${1:-${top_srcdir:-.}}
command -v clang-format >/dev/null || {
    echo "test_format: clang-format not installed (apt-get install clang-format): skipped"
    exit 77
}
cd "$root" || exit 99
[ -f .clang-format ] || { echo "test_format: no .clang-format in $root"; exit 99; }
files=$(find parsers src tests bench scripts -type f \( -name '*.c' -o -name '*.h' \) | LC_ALL=C sort)
n=0 bad=0
for f in $files; do
    n=$((n + 1))
    if ! clang-format --style=file:.clang-format --dry-run -Werror "$f" >/dev/null 2>&1; then
        bad=$((bad + 1))
        echo "$f: not formatted (clang-format -i $f)"
    fi
done
echo "test_format: $((n - bad)) of $n files formatted ($(clang-format --version))"
[ $bad -eq 0 ]
