#!/usr/bin/env bash
# Makes the yolov4-tiny parity fixtures with the workplace's OpenCV DNN reference (../shared/reference,
# its venv from setup.sh): OpenCV 4.14 runs AlexeyAB's yolov4-tiny.cfg/.weights (Weights/fetch.sh) and the
# shared reference decode + NMS give the detections.
#   Fixtures/reference-detections-yolov4-tiny.json  ../shared/data/photos and coco-val2017-dev, modes
#       stretch_dn (AlexeyAB's detector test) and letterbox_dn (pjreddie's detect), conf 0.25, NMS 0.45
#   Fixtures/reference-heads-yolov4-tiny/           raw conv_29 (13x13) and conv_36 (26x26) heads of the three
#       scikit-image PNGs in stretch_dn, and inputs.json: the sha256 of each input blob's float32 values
#       (the blobs themselves, 2 MB each, are not kept: the test rebuilds them and checks the hash)
#   Fixtures/eval/yolov4-tiny.<mode>.metrics.json    pycocotools stats on coco-val2017-dev, conf 0.005
# Usage: scripts/make-yolov4-tiny-fixtures.sh [WORK_DIR]   (env SHARED, REF_VENV)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
shared=${SHARED:-$root/../shared}
py=${REF_VENV:-/tmp/yolo-reference-venv}/bin/python
out=${1:-$(mktemp -d)}
fixtures=$root/Tests/YOLOTests/Fixtures
[[ -d $shared/reference ]] || { echo "make-yolov4-tiny-fixtures: $shared/reference not found (set SHARED=...)" >&2; exit 1; }
[[ -x $py ]] || { echo "make-yolov4-tiny-fixtures: no reference venv at $py (run $shared/reference/setup.sh)" >&2; exit 1; }
bash "$root/Weights/fetch.sh"
w=$root/Weights
model=(--cfg "$w/yolov4-tiny.cfg" --weights "$w/yolov4-tiny.weights" --names "$w/coco.names")
cd "$shared/data"
for mode in stretch_dn letterbox_dn; do
  "$py" ../reference/opencv_reference.py detect "${model[@]}" --mode $mode --conf 0.25 --nms 0.45 \
    --out "$out/photos/$mode" photos/*.jpg photos/*.png
  "$py" ../reference/opencv_reference.py detect "${model[@]}" --mode $mode --conf 0.25 --nms 0.45 \
    --out "$out/coco-val2017-dev/$mode" coco-val2017-dev/images/*.jpg
  "$py" ../reference/opencv_reference.py coco "${model[@]}" --mode $mode --conf 0.005 --nms 0.45 \
    --images coco-val2017-dev/images --annotations coco-val2017-dev/annotations.json \
    --out "$out/map/$mode.results.json" --metrics "$fixtures/eval/yolov4-tiny.$mode.metrics.json"
done
"$py" ../reference/opencv_reference.py detect "${model[@]}" --mode stretch_dn --conf 0.25 --nms 0.45 \
  --dump-raw --raw-layers input,conv_29,conv_36 --out "$out/photos/stretch_dn" \
  photos/skimage_coffee.png photos/skimage_camera.png photos/skimage_astronaut.png
python3 "$root/scripts/make-detection-fixtures.py" "$out" "$fixtures/reference-detections-yolov4-tiny.json" stretch_dn letterbox_dn
heads=$fixtures/reference-heads-yolov4-tiny
mkdir -p "$heads"
"$py" - "$out/photos/stretch_dn/raw" "$heads" <<'PY'
import hashlib, json, shutil, sys
import numpy as np
raw, dest = sys.argv[1], sys.argv[2]
inputs = {}
for stem in ("skimage_astronaut", "skimage_camera", "skimage_coffee"):
    blob = np.load("%s/%s.input.npy" % (raw, stem))
    inputs[stem] = {"shape": list(blob.shape), "float32_sha256": hashlib.sha256(blob.astype("<f4").tobytes()).hexdigest()}
    for head in ("conv_29", "conv_36"):
        shutil.copy("%s/%s.%s.npy" % (raw, stem, head), "%s/%s.%s.npy" % (dest, stem, head))
with open(dest + "/inputs.json", "w") as f:
    json.dump(inputs, f, indent=1, sort_keys=True)
    f.write("\n")
PY
(cd "$heads" && sha256sum ./*.npy > SHA256SUMS)
echo "make-yolov4-tiny-fixtures: fixtures written (reference outputs in $out)"
