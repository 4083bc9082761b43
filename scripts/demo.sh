#!/usr/bin/env bash
# The main job of `make demo`: show the model, then run it on the shipped samples.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
yolo=.build/release/yolo
$yolo info
mkdir -p out
$yolo forward --input Tests/YOLOTests/Fixtures/reference-heads/skimage_coffee.input.npy --out out/forward
