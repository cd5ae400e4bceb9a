#!/bin/sh
# The man pages stay in step with the program: trainer.cfg(5)'s key reference is exactly
# what the schema tables print, and trainer(1) documents every option of --help.
set -u
. "${top_srcdir:-.}/tests/testlib.sh"
"$T" --man-keys >"$tmp/want"
sed -n '/^\.\\" BEGIN KEYS/,/^\.\\" END KEYS/p' "$S/man/trainer.cfg.5" | sed '1d;$d' >"$tmp/have"
if cmp -s "$tmp/want" "$tmp/have"; then
    pass=$((pass + 1))
else
    fail=$((fail + 1))
    echo "FAIL: man/trainer.cfg.5 is out of step with the schemas; run scripts/gen-man.sh"
    diff "$tmp/have" "$tmp/want" | head -20
fi
for opt in '\-\-help' '\-\-version' '\-\-print\-config' '\-\-man\-keys' 'configFile=' 'currentDirectory='; do
    if grep -qF -- "$opt" "$S/man/trainer.1"; then pass=$((pass + 1)); else
        fail=$((fail + 1)); echo "FAIL: trainer.1 does not document $opt"; fi
done
# every key name of every block appears in trainer.cfg.5
"$T" --man-keys | sed -n 's/^\.B //p' | while read -r k; do
    grep -qxF ".B $k" "$S/man/trainer.cfg.5" || echo "missing $k"
done >"$tmp/missing"
if [ -s "$tmp/missing" ]; then fail=$((fail + 1)); cat "$tmp/missing"; else pass=$((pass + 1)); fi
if command -v man >/dev/null && MANWIDTH=80 man -l "$S/man/trainer.cfg.5" >/dev/null 2>"$tmp/warn" && ! [ -s "$tmp/warn" ]; then
    pass=$((pass + 1))
elif command -v man >/dev/null; then
    fail=$((fail + 1)); echo "FAIL: man reports problems in trainer.cfg.5:"; cat "$tmp/warn"
fi
finish man
