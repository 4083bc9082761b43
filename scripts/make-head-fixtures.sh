#!/usr/bin/env bash
# Copies the OpenCV DNN reference tensors the whole-network test needs into the test fixtures:
# for skimage_{astronaut,camera,coffee}.png, the exact 416x416 letterbox_dn input blob and the raw
# conv_15 / conv_22 head outputs (see ../shared/data/reference-outputs/MANIFEST.md for how they were made),
# checked against the reference set's SHA256SUMS.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
shared=${SHARED:-$root/../shared}
src=$shared/data/reference-outputs/photos/letterbox_dn/raw
dest=$root/Tests/YOLOTests/Fixtures/reference-heads
[[ -d $src ]] || { echo "make-head-fixtures: $src not found (set SHARED=...)" >&2; exit 1; }
mkdir -p "$dest"
for stem in skimage_astronaut skimage_camera skimage_coffee; do
  for part in input conv_15 conv_22; do
    f=$stem.$part.npy
    want=$(grep " ./photos/letterbox_dn/raw/$f\$" "$shared/data/reference-outputs/SHA256SUMS" | cut -d' ' -f1)
    got=$(sha256sum "$src/$f" | cut -d' ' -f1)
    [[ $want == "$got" ]] || { echo "make-head-fixtures: $f does not match SHA256SUMS" >&2; exit 1; }
    cp "$src/$f" "$dest/$f"
  done
done
(cd "$dest" && sha256sum ./*.npy > SHA256SUMS)
echo "make-head-fixtures: copied to $dest"
