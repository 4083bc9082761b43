#!/usr/bin/env bash
# Converts yolov4-tiny and yolov3-tiny again exactly as `make model` does (its rules, into a scratch folder)
# and says whether the results are byte-identical to the models bundled in Sources/YOLOModels/Resources.
# They are on the kernel family and OpenBLAS core type the bundled files were made on (avx2 and Zen:
# Sources/YOLOModels/PROVENANCE.md; elsewhere run it with YOLO_KERNEL=avx2 OPENBLAS_CORETYPE=Zen); on another
# family or core type calibration sums differ in the last bits, so the script then prints `yolo compare`'s summary.
# Needs `make model`'s inputs (weights, calibration photos, release build). Exit status 1 only on errors.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# The family that runs (info's last line), not the best one (`info --kernels` ignores YOLO_KERNEL).
echo "$(.build/release/yolo info Weights/yolov4-tiny.cfg | tail -n 1); OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}"
for name in yolov4-tiny yolov3-tiny; do
  # The rule's command (make -n prints it without running it), writing into the scratch folder instead.
  cmd=$(make --no-print-directory -n -B "Weights/$name-lut8.yolo" | sed "s|-o Weights/$name-lut8.yolo|-o $scratch/$name-lut8.yolo|")
  bash -c "$cmd" >/dev/null 2>&1
  bundled=Sources/YOLOModels/Resources/$name-lut8.yolo
  if cmp -s "$scratch/$name-lut8.yolo" "$bundled"; then
    echo "$name: byte-identical to $bundled"
  else
    echo "$name: differs from $bundled:"
    .build/release/yolo compare "$bundled" "$scratch/$name-lut8.yolo" Samples/*.png | tail -n 2
  fi
done
