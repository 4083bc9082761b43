#!/usr/bin/env bash
# Times each convolution of yolov4-tiny (or yolov3-tiny) alone, in yolo and in ncnn, engines taking turns,
# and prints a markdown table per layer: where a whole-network gap to ncnn comes from (scripts/compare-layers.py
# says how the single-layer networks are made and what each figure holds).
#
# Usage: scripts/compare-layers.sh [--model yolov4-tiny|yolov3-tiny] [--rounds 4] [--runs 40] [--warmup 5]
#          [--threads 1] [--layers 0,1,4] [--yolo PATH] [--out DIR]
# --yolo PATH: the yolo binary to time (default: `swift build -c release --product yolo`, then .build/release/yolo).
# Needs the reference tools in ../shared (their venv has ncnn; REF_VENV, default /tmp/yolo-reference-venv) and
# Weights/MODEL.cfg (make weights). Writes the single-layer networks and table.md to DIR (default
# out/compare-layers/MODEL).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
shared=$(cd "$root/.." && pwd)/shared
model=yolov4-tiny out='' yolo='' pass=()
while (($#)); do
  case $1 in
    --model | --rounds | --runs | --warmup | --threads | --layers | --yolo | --out)
      (($# >= 2)) || { echo "compare-layers: $1 needs a value" >&2; exit 2; } ;;&
    --model) model=$2; shift 2 ;;
    --yolo) yolo=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --rounds | --runs | --warmup | --threads | --layers) pass+=("$1" "$2"); shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "compare-layers: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ $model == yolov4-tiny || $model == yolov3-tiny ]] ||
  { echo "compare-layers: --model must be yolov4-tiny or yolov3-tiny, not $model" >&2; exit 2; }
[[ -d $shared/reference ]] ||
  { echo "compare-layers: $shared/reference is missing: this script needs the shared reference tools at ../shared" >&2; exit 1; }
cfg=$root/Weights/$model.cfg
[[ -f $cfg ]] || { echo "compare-layers: $cfg is missing (run make weights)" >&2; exit 1; }
out=${out:-$root/out/compare-layers/$model}
mkdir -p "$out"
venv=${REF_VENV:-/tmp/yolo-reference-venv}
if pgrep -f 'reference/setup\.sh' >/dev/null 2>&1; then
  echo "== waiting for a running reference/setup.sh to finish" >&2
  while pgrep -f 'reference/setup\.sh' >/dev/null 2>&1; do sleep 5; done
fi
"$shared/reference/setup.sh" "$venv" >/dev/null ||
  { echo "compare-layers: $shared/reference/setup.sh $venv failed (see its message above)" >&2; exit 1; }
if [[ -z $yolo ]]; then
  echo "== yolo (swift build -c release --product yolo)" >&2
  (cd "$root" && swift build -c release --product yolo >/dev/null)
  yolo=$root/.build/release/yolo
fi
[[ $yolo == /* ]] || yolo=$PWD/$yolo
[[ -x $yolo ]] || { echo "compare-layers: --yolo $yolo is not an executable file" >&2; exit 1; }
exec "$venv/bin/python" "$root/scripts/compare-layers.py" --yolo "$yolo" --cfg "$cfg" --out "$out" "${pass[@]}"
