#!/usr/bin/env bash
# Measures the quantization bars for yolov3-tiny: file sizes, conversion and load times, resident
# memory of a forward pass in both weight residencies, and detection agreement with the float model
# on ../shared/data (photos + coco-val2017-dev). Usage: scripts/measure-quantization.sh [OUT_DIR]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
OUT=${1:-/tmp/yolo-quantization}
mkdir -p "$OUT"
SCRATCH=${SCRATCH:-.build}
swift build -c release --product yolo --scratch-path "$SCRATCH" >/dev/null
Y="$SCRATCH/release/yolo"
# yolov3-tiny explicitly: with no model named, yolo convert starts from the default model, yolov4-tiny.
V3="--cfg Weights/yolov3-tiny.cfg --weights Weights/yolov3-tiny.weights --names Weights/coco.names"
DATA=../shared/data
IMAGES=$(ls $DATA/photos/*.jpg $DATA/photos/*.png $DATA/coco-val2017-dev/images/*.jpg)
RAW=$(ls $DATA/reference-outputs/photos/letterbox_dn/raw/*.input.npy)
BLOB=$(ls $DATA/reference-outputs/photos/letterbox_dn/raw/skimage_coffee.input.npy)

echo "== conversions (bars: lut8 <= 8900000, lut6 <= 6800000, lut4 <= 4600000 bytes)"
$Y convert $V3 -o "$OUT/float.yolo" --quantize none 2>/dev/null
for q in lut8 lut6 lut4; do
  for lut in per-channel per-layer; do
    $Y convert $V3 -o "$OUT/$q-$lut.yolo" --quantize $q --lut $lut 2>/dev/null
  done
done
$Y convert $V3 -o "$OUT/lut8-again.yolo" 2>/dev/null
cmp "$OUT/lut8-per-channel.yolo" "$OUT/lut8-again.yolo" && echo "converting twice: byte-identical"
# Calibration: the fetched calibration photos (Weights/CALIBRATION.md; never evaluation images),
# in byte order of their names, as `make model` passes them.
bash Weights/fetch-calibration.sh
CALIBRATION=$(ls Weights/calibration/*.jpg Weights/calibration/*.png | LC_ALL=C sort)
for q in lut8 lut6 lut4; do
  for lut in per-channel per-layer; do
    $Y convert $V3 -o "$OUT/$q-$lut-calibrated.yolo" --quantize $q --lut $lut --calibrate $CALIBRATION 2>/dev/null
  done
done
# lut4 with the last 16 KB of its size budget spent on 8-bit codes for layer 18 (the 1x1 convolution
# before the upsample), the best lut4 measured.
$Y convert $V3 -o "$OUT/lut4-per-channel-calibrated-18.yolo" --quantize lut4 --lut8-layers first3,heads,18 --calibrate $CALIBRATION 2>/dev/null
# The best lut4 measured: 6-bit codes for layers 6 and 13 paid by 6-bit heads and layer 4, and more
# views (mirrored, 608, 704) of the same calibration photos for the deep layers' input statistics.
$Y convert $V3 -o "$OUT/lut4-best.yolo" --quantize lut4 --lut6-layers 4,6,13,heads \
  --calibration-views mirror,608,608-mirror,704,704-mirror --calibrate $CALIBRATION 2>/dev/null
$Y convert $V3 -o "$OUT/lut8-calibrated-again.yolo" --calibrate $CALIBRATION 2>/dev/null
cmp "$OUT/lut8-per-channel-calibrated.yolo" "$OUT/lut8-calibrated-again.yolo" && echo "converting twice with calibration: byte-identical"

echo "== load and verify (best of 20, yolo info)"
for f in float lut8-per-channel lut6-per-channel lut4-per-channel; do
  best=$(for i in $(seq 20); do $Y info "$OUT/$f.yolo" | tail -1 | sed 's/.* in \([0-9.]*\) ms/\1/'; done | sort -n | head -1)
  echo "$f.yolo: $best ms"
done

echo "== memory of one forward pass (yolo forward)"
$Y forward --memory --input $BLOB --out "$OUT/fw" 2>&1 >/dev/null | sed 's/^/darknet: /'
$Y forward --memory --model "$OUT/float.yolo" --input $BLOB --out "$OUT/fw" 2>&1 >/dev/null | sed 's/^/float.yolo: /'
for r in expanded codes; do
  $Y forward --memory --model "$OUT/lut8-per-channel.yolo" --residency $r --input $BLOB --out "$OUT/fw" 2>&1 >/dev/null | sed "s/^/lut8 $r: /"
done

echo "== agreement with the float model"
for q in lut8 lut6 lut4; do
  for lut in per-channel per-layer per-channel-calibrated per-layer-calibrated; do
    echo "-- $q $lut"
    $Y compare "$OUT/float.yolo" "$OUT/$q-$lut.yolo" $RAW $IMAGES | grep -E "^(raw heads|detections|unmatched)"
  done
done
echo "-- lut4 per-channel-calibrated, layer 18 in lut8"
$Y compare "$OUT/float.yolo" "$OUT/lut4-per-channel-calibrated-18.yolo" $RAW $IMAGES | grep -E "^(raw heads|detections|unmatched)"
echo "-- lut4 best (4, 6, 13 and heads in lut6; calibration views mirror,608,608-mirror,704,704-mirror)"
$Y compare "$OUT/float.yolo" "$OUT/lut4-best.yolo" $RAW $IMAGES | grep -E "^(raw heads|detections|unmatched)"

echo "== COCO mAP of the default (calibrated lut8) model on coco-val2017-dev (OpenCV: fit 0.1489 / 0.2689, fill 0.1705 / 0.2936)"
for scale in fit fill; do
  echo "-- $scale: $($Y eval --images $DATA/coco-val2017-dev/images --annotations $DATA/coco-val2017-dev/annotations.json \
    --model "$OUT/lut8-per-channel-calibrated.yolo" --scale $scale --format json 2>/dev/null | grep -E '"AP(50)?"' | tr -d ' \n')"
done
