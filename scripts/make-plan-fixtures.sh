#!/usr/bin/env bash
# The expected network plans of PlannerTests: `yolo info --plan` for yolov3-tiny and yolov4-tiny (416x416, float
# weights), every kernel family, 1 and 2 threads, into Tests/YOLOTests/Fixtures/plans/MODEL-FAMILY-tT.txt (the
# table only). Run after a deliberate change of a planner rule, and review the diff: each changed line is a layer
# that now runs differently. Needs a CPU that runs every family (AVX-512) and `make weights`.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
yolo=${YOLO:-$root/.build/release/yolo}
out=$root/Tests/YOLOTests/Fixtures/plans
mkdir -p "$out"
for model in yolov3-tiny yolov4-tiny; do
  for family in avx512 avx2 portable; do
    for threads in 1 2; do
      "$yolo" info --plan "$root/Weights/$model.cfg" --kernel "$family" --threads "$threads" | sed '/^planned for /,$d' \
        > "$out/$model-$family-t$threads.txt"
    done
  done
done
ls -l "$out"
