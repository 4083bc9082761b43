#!/usr/bin/env bash
# The main job of `make demo`: detect objects in the shipped sample images with the default model,
# print them, and write annotated copies to out/annotated/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
yolo=.build/release/yolo
$yolo detect Samples --save out/annotated
echo "annotated copies: out/annotated/"
