#!/bin/sh
# Regenerate the key reference of man/trainer.cfg.5 from the schema tables:
#   scripts/gen-man.sh [path/to/trainer]
# The page is man/trainer.cfg.5.in with `trainer --man-keys` between the KEYS markers.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
trainer=${1:-$here/trainer}
in="$here/man/trainer.cfg.5.in"
out="$here/man/trainer.cfg.5"
keys=$(mktemp)
trap 'rm -f "$keys"' EXIT
"$trainer" --man-keys >"$keys"
awk -v keys="$keys" '
    { print }
    /^\.\\" BEGIN KEYS/ { while ((getline line < keys) > 0) print line }
' "$in" >"$out.tmp"
mv "$out.tmp" "$out"
echo "wrote $out"
