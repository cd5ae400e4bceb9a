#!/bin/sh
# Convert Debian's dataset-fashion-mnist to CTF under data/fashion-mnist/ (idempotent):
#   train.ctf, test.ctf            dense: |labels <10 one-hot> |features <784 pixels/255>
#   train-seq.ctf, test-seq.ctf    sequences: 28 rows of 28 pixels, label on the first row
# Needs a built tree (scripts/setup.sh builds scripts/idx2ctf).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
src=${FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}
out=${1:-$here/data/fashion-mnist}
conv=$here/scripts/idx2ctf
[ -x "$conv" ] || { echo "prepare-fashion-mnist: build first (scripts/setup.sh)" >&2; exit 2; }
[ -f "$src/train-images-idx3-ubyte.gz" ] \
    || { echo "prepare-fashion-mnist: $src has no data (apt-get install dataset-fashion-mnist)" >&2; exit 1; }
mkdir -p "$out"
for part in train:train t10k:test; do
    idx=${part%%:*} name=${part##*:}
    img="$src/$idx-images-idx3-ubyte.gz" lab="$src/$idx-labels-idx1-ubyte.gz"
    [ "$out/$name.ctf" -nt "$img" ] || "$conv" "$img" "$lab" "$out/$name.ctf"
    [ "$out/$name-seq.ctf" -nt "$img" ] || "$conv" --sequence "$img" "$lab" "$out/$name-seq.ctf"
done
