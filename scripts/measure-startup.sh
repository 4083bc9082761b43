#!/usr/bin/env bash
# Start-up cost as a shell user feels it: wall time and peak RSS of whole `yolo detect` processes on
# one image (default model, expanded weights, darknet's float files, a 4000x3000 JPEG with and without
# DCT-scaled decoding), beside an onnxruntime Python process doing one forward pass of the same model.
#
# Usage: scripts/measure-startup.sh [--runs N]   (default 7; prints median (min-max) seconds and MiB)
# Needs `make model` (default model) and, for the onnxruntime row and the large JPEG, the reference
# tools in ../shared (venv at $REF_VENV, default /tmp/yolo-reference-venv, made by
# scripts/compare-engines.sh or ../shared/reference/setup.sh).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
runs=7
while (($#)); do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    *) echo "measure-startup: unknown argument $1" >&2; exit 2 ;;
  esac
done
make -s build >/dev/null
yolo=$root/.build/release/yolo
W=$root/Weights
out=$root/out/startup
mkdir -p "$out"
venv=${REF_VENV:-/tmp/yolo-reference-venv}
py=$venv/bin/python

# Runs "$@" $runs times; prints median (min-max) wall seconds and median peak RSS in MiB.
measure() {
  local label=$1; shift
  : >"$out/times"
  for ((i = 0; i < runs; i++)); do
    /usr/bin/time -f "%e %M" -a -o "$out/times" "$@" >/dev/null 2>&1
  done
  python3 - "$label" "$out/times" <<'PY'
import sys, statistics
rows = [line.split() for line in open(sys.argv[2]) if line.strip() and line[0].isdigit()]
wall = [float(r[0]) for r in rows]; rss = [int(r[1]) / 1024 for r in rows]
print('| %s | %.2f (%.2f-%.2f) | %.0f |' % (sys.argv[1], statistics.median(wall), min(wall), max(wall), statistics.median(rss)))
PY
}

echo "| command | wall s, median (min-max) of $runs | peak RSS MiB (median) |"
echo "|---|---|---|"
measure "yolo detect Samples/coffee.png (default model)" "$yolo" detect Samples/coffee.png
measure "same, --residency expanded" "$yolo" detect Samples/coffee.png --residency expanded
measure "same, darknet's float files" "$yolo" detect Samples/coffee.png --cfg "$W/yolov4-tiny.cfg" \
  --weights "$W/yolov4-tiny.weights" --names "$W/coco.names"
if [[ -x $py ]]; then
  big=$out/large-4000x3000.jpg
  [[ -f $big ]] || "$py" -c "import cv2, sys; i = cv2.imread('Samples/astronaut.png'); cv2.imwrite(sys.argv[1], cv2.resize(i, (4000, 3000), interpolation=cv2.INTER_CUBIC), [cv2.IMWRITE_JPEG_QUALITY, 90])" "$big"
  measure "yolo detect 4000x3000 JPEG (DCT-scaled decode, default)" "$yolo" detect "$big"
  measure "same, --full-decode" "$yolo" detect "$big" --full-decode
  onnx=$root/out/compare-engines/yolov4-tiny/yolov4-tiny.onnx   # scripts/compare-engines.sh makes it
  if [[ -f $onnx ]]; then
    measure "onnxruntime Python process: load the model, one forward pass (no decode, no NMS)" "$py" -c "
import numpy as np, onnxruntime as ort
s = ort.InferenceSession('$onnx', providers=['CPUExecutionProvider'])
i = s.get_inputs()[0]
s.run(None, {i.name: np.random.rand(1, 3, 416, 416).astype(np.float32)})"
  else
    echo "(no $onnx: run scripts/compare-engines.sh first for the onnxruntime row)"
  fi
else
  echo "(no reference venv at $venv: large-JPEG and onnxruntime rows skipped)"
fi
