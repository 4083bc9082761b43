#!/bin/bash
# Runs on the many-core device machine, from the project root, with .dev/ carried:  bash .dev/device-scale.sh
# (kit made by scripts/device-kit.sh; recipe in /work/shared/scale/README.md). Output: JSON lines on stdout and in
# $OUT/scale.jsonl. Files: .dev/libs.tar.xz (scale-base.bin, scale-new.bin and their libraries), .dev/onnx.tar.xz
# (v4.int8.onnx; v4-fp32-weightless.onnx + .json: the fp32 graph whose weights ort_scale.py --init fills with random
# values of the real magnitudes, scripts/onnx_weightless.py), .dev/ort_scale.py. The yolo model is
# .dev/yolov4-tiny-lut8.yolo if there, else the bundled Sources/YOLOModels/Resources/yolov4-tiny-lut8.yolo (same
# recipe); the image .dev/coffee.png if there, else Samples/coffee.png; the fp32 ONNX model .dev/v4-f16store.onnx (real
# weights) if there, else the weightless one. The travelling tree (project + .dev) must stay under 64 MiB.
#   machine: lscpu (with lscpu -e: which CPUs are SMT siblings), nproc, onnxruntime version, the kit's builds
#   parity: each Scale binary's detections on coffee.png, and whether base and new agree
#   latency: for t in $THREADS, interleaved scale-base, scale-new, ort-fp32 ($RUNS runs after $WARMUP); ort-int8 at $INT8_THREADS
#   layers: scale-new --layers at $LAYER_THREADS
#   throughput: P processes x T threads ($PT; default nproc x 1, nproc/2 x 2, nproc/4 x 4, nproc/8 x 8), each $TP_RUNS
#     passes after $WARMUP: base, new, ort-fp32, then new again once per setting in $VARIANTS; images/s = sum of 1000/median
# Knobs (environment): RUNS=30 WARMUP=5 TP_RUNS=60 THREADS="1 2 4 8 16" INT8_THREADS="1 16" LAYER_THREADS="1 16"
#   PT="16 1 8 2 4 4 2 8" TP_ENGINES="base new ort-fp32" (ort-int8 also possible) NEWARGS="" (extra arguments for the new binary only) VARIANTS="" (space-separated env
#   settings, e.g. "YOLO_SPIN_US=0 YOLO_X=1": the new binary's throughput rows again with that setting, tag new+SETTING)
#   PYTHON=python3 STEP_TIMEOUT=40 (seconds per process; a hung process is killed and reported, the rest goes on)
#   DEADLINE=280 (seconds: later steps get what is left, none once it has passed, so a hang cannot eat the device call)
# Expected on 16 cores: ~90 s, plus ~15 s per setting in VARIANTS.
set -u
start=$SECONDS
K=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUNS=${RUNS:-30}; WARMUP=${WARMUP:-5}; TP_RUNS=${TP_RUNS:-$((RUNS * 2))}
THREADS=${THREADS:-"1 2 4 8 16"}; INT8_THREADS=${INT8_THREADS:-"1 16"}; LAYER_THREADS=${LAYER_THREADS:-"1 16"}
TP_ENGINES=${TP_ENGINES:-"base new ort-fp32"}; NEWARGS=${NEWARGS:-}; VARIANTS=${VARIANTS:-}; PY=${PYTHON:-python3}; STEP_TIMEOUT=${STEP_TIMEOUT:-40}; DEADLINE=${DEADLINE:-280}
n=$(nproc)
if [[ -z ${PT:-} ]]; then PT=""; for T in 1 2 4 8; do ((n / T >= 1)) && PT+="$((n / T)) $T "; done; fi
OUT=${OUT:-/tmp}; mkdir -p "$OUT"; log=$OUT/scale.jsonl; : > "$log"
work=$(mktemp -d "${TMPDIR:-/tmp}/device-scale.XXXXXX"); trap 'rm -rf "$work"' EXIT
ROOT=$(cd "$K/.." && pwd)
M=${MODEL:-$K/yolov4-tiny-lut8.yolo}; [[ -f $M ]] || M=$ROOT/Sources/YOLOModels/Resources/yolov4-tiny-lut8.yolo
IMG=$K/coffee.png; [[ -f $IMG ]] || IMG=$ROOT/Samples/coffee.png
S=$K/ort_scale.py; INT8=$work/v4.int8.onnx
if [[ -f $K/v4-f16store.onnx ]]; then FP32=("$K/v4-f16store.onnx"); else FP32=("$work/v4-fp32-weightless.onnx" --init "$work/v4-fp32-weightless.json"); fi
BASE=$work/lib/scale-base.bin; NEW=$work/lib/scale-new.bin

emit() { printf '%s\n' "$1" | tee -a "$log"; }
jstr() { local s=${1//\\/\\\\}; s=${s//\"/\\\"}; s=${s//$'\t'/ }; printf '"%s"' "${s//$'\r'/}"; }
section() { emit "{\"section\":$(jstr "$1"),\"elapsed_s\":$((SECONDS - start))}"; }
# step NAME CMD...: runs CMD (with STEP_TIMEOUT); its JSON lines are logged as they are, other lines as {"step","text"};
# a failure adds {"step","rc","stderr"} and the script goes on.
# limit: seconds a process may run now (STEP_TIMEOUT, less near DEADLINE; 0 once it has passed).
limit() { local left=$((DEADLINE - (SECONDS - start))); ((left < 3)) && left=0; echo $((left < STEP_TIMEOUT ? left : STEP_TIMEOUT)); }
step() {
  local name=$1 rc line lim; shift
  lim=$(limit)
  if ((lim == 0)); then emit "{\"step\":$(jstr "$name"),\"skipped\":\"DEADLINE\"}"; : > "$work/out"; return 1; fi
  timeout -k 5 "$lim" "$@" > "$work/out" 2> "$work/err"; rc=$?
  while IFS= read -r line; do
    if [[ $line == '{'* ]]; then emit "$line"; else emit "{\"step\":$(jstr "$name"),\"text\":$(jstr "$line")}"; fi
  done < "$work/out"
  if ((rc != 0)); then
    emit "{\"step\":$(jstr "$name"),\"rc\":$rc,\"stderr\":$(jstr "$(tail -c 600 "$work/err" | tr '\n' '|')")}"
  fi
  return $rc
}

section machine
tar xJf "$K/libs.tar.xz" -C "$work" || emit '{"error":"could not unpack libs.tar.xz"}'
tar xJf "$K/onnx.tar.xz" -C "$work" || emit '{"error":"could not unpack onnx.tar.xz"}'
emit "{\"model\":$(jstr "${M#$ROOT/}"),\"model_sha256\":\"$(sha256sum "$M" | cut -c1-16)\",\"image\":$(jstr "${IMG#$ROOT/}"),\"ort_fp32\":$(jstr "${FP32[*]#$work/}")}"
export LD_LIBRARY_PATH=$work/lib OPENBLAS_NUM_THREADS=1
lscpu | grep -E "Model name|^CPU\(s\)|On-line|Thread|Core|Socket|NUMA|L1d|L2|L3|MHz|Hypervisor|Flags" | cut -c1-400 | while IFS= read -r l; do emit "{\"lscpu\":$(jstr "$l")}"; done
lscpu -e=CPU,CORE,SOCKET,NODE,ONLINE 2>/dev/null | while IFS= read -r l; do emit "{\"lscpu_e\":$(jstr "$l")}"; done
emit "{\"nproc\":$n,\"affinity\":$(jstr "$(taskset -cp $$ 2>/dev/null)"),\"loadavg\":$(jstr "$(cat /proc/loadavg)")}"
step ort-version "$PY" -c "import json, onnxruntime, numpy; print(json.dumps(dict(ort=onnxruntime.__version__, numpy=numpy.__version__)))"
emit "{\"env\":$(jstr "$(env | grep -E '^(YOLO_|OPENBLAS_|OMP_|GOMP_)' | sort | tr '\n' ' ')"),\"NEWARGS\":$(jstr "$NEWARGS"),\"VARIANTS\":$(jstr "$VARIANTS"),\"RUNS\":$RUNS,\"TP_RUNS\":$TP_RUNS,\"PT\":$(jstr "$PT"),\"TP_ENGINES\":$(jstr "$TP_ENGINES")}"
for b in base new; do
  emit "{\"ldd\":\"$b\",\"libs\":$(jstr "$(ldd "$work/lib/scale-$b.bin" 2>&1 | awk '{ print $1 "=" $3 }' | sed "s|$work/|KIT/|" | tr '\n' ' ')")}"
  [[ -f $K/build-$b.txt ]] && emit "{\"build\":\"$b\",\"info\":$(jstr "$(tr '\n' '|' < "$K/build-$b.txt")")}"
  [[ -x $work/lib/scale-$b.bin ]] || emit "{\"error\":\"scale-$b.bin missing from libs.tar.xz\"}"
done

section parity
step parity-base "$BASE" "$M" --detect "$IMG" --threads 1 --runs 1 --warmup 0 --tag base; pb=$?; cp "$work/out" "$work/det-base"
# shellcheck disable=SC2086
step parity-new "$NEW" "$M" $NEWARGS --detect "$IMG" --threads 1 --runs 1 --warmup 0 --tag new; pn=$?; cp "$work/out" "$work/det-new"
if ((pb != 0 || pn != 0)); then same=null; elif cmp -s <(grep '^DET' "$work/det-base") <(grep '^DET' "$work/det-new"); then same=true; else same=false; fi
emit "{\"parity_equal\":$same,\"detections\":$(grep -c '^DET' "$work/det-new")}"

section latency
for t in $THREADS; do
  step "lat-base-$t" "$BASE" "$M" --threads "$t" --runs "$RUNS" --warmup "$WARMUP" --tag base
  # shellcheck disable=SC2086
  step "lat-new-$t" "$NEW" "$M" $NEWARGS --threads "$t" --runs "$RUNS" --warmup "$WARMUP" --tag new
  step "lat-ort-fp32-$t" "$PY" "$S" "${FP32[@]}" --threads "$t" --runs "$RUNS" --warmup "$WARMUP" --tag ort-fp32
  [[ " $INT8_THREADS " == *" $t "* ]] && step "lat-ort-int8-$t" "$PY" "$S" "$INT8" --threads "$t" --runs "$RUNS" --warmup "$WARMUP" --tag ort-int8
done

section layers
# shellcheck disable=SC2086
step layers-new "$NEW" "$M" $NEWARGS --threads "$(echo $LAYER_THREADS | tr ' ' ',')" --runs "$RUNS" --warmup "$WARMUP" --tag new-layers --layers

section throughput
# throughput ENGINE P T [ENV-SETTING]: P processes at once, each T threads; one JSON line from their medians.
throughput() {
  local eng=$1 P=$2 T=$3 setting=${4:-} i tag=$1 t0=$SECONDS lim
  [[ -n $setting ]] && tag="$eng+$setting"
  lim=$(limit)
  if ((lim == 0)); then emit "{\"throughput\":$(jstr "$tag"),\"procs\":$P,\"threads\":$T,\"skipped\":\"DEADLINE\"}"; return; fi
  rm -rf "$work/tp"; mkdir -p "$work/tp"
  for ((i = 0; i < P; i++)); do
    case $eng in
      base) timeout -k 5 "$lim" "$BASE" "$M" --threads "$T" --runs "$TP_RUNS" --warmup "$WARMUP" --tag base > "$work/tp/$i" 2>&1 & ;;
      # shellcheck disable=SC2086
      new) env ${setting:+"$setting"} timeout -k 5 "$lim" "$NEW" "$M" $NEWARGS --threads "$T" --runs "$TP_RUNS" --warmup "$WARMUP" --tag "$tag" > "$work/tp/$i" 2>&1 & ;;
      ort-fp32) timeout -k 5 "$lim" "$PY" "$S" "${FP32[@]}" --threads "$T" --runs "$TP_RUNS" --warmup "$WARMUP" --tag ort-fp32 > "$work/tp/$i" 2>&1 & ;;
      ort-int8) timeout -k 5 "$lim" "$PY" "$S" "$INT8" --threads "$T" --runs "$TP_RUNS" --warmup "$WARMUP" --tag ort-int8 > "$work/tp/$i" 2>&1 & ;;
    esac
  done
  wait
  "$PY" - "$work/tp" "$tag" "$P" "$T" "$((SECONDS - t0))" <<'PY' | while IFS= read -r l; do emit "$l"; done
import glob, json, sys
rows, bad = [], []
for f in sorted(glob.glob(sys.argv[1] + '/*')):
    ok = [json.loads(l) for l in open(f, errors='replace') if l.startswith('{')]
    rows += ok
    if not ok: bad.append(open(f, errors='replace').read()[-300:])
r = dict(throughput=sys.argv[2], procs=int(sys.argv[3]), threads=int(sys.argv[4]), ok=len(rows), wall_s=int(sys.argv[5]))
if rows:
    m = [x['median_ms'] for x in rows]
    r.update(images_per_s=round(sum(1000 / x for x in m), 1), worst_median_ms=max(m), best_median_ms=min(m))
if bad: r['failed'] = bad[:2]
print(json.dumps(r))
PY
}
read -r -a pt <<< "$PT"
for ((i = 0; i + 1 < ${#pt[@]}; i += 2)); do
  P=${pt[i]}; T=${pt[i + 1]}
  ((P >= 1 && T >= 1)) || continue
  for eng in $TP_ENGINES; do throughput "$eng" "$P" "$T"; done
  for v in $VARIANTS; do throughput new "$P" "$T" "$v"; done
done

section done
emit "{\"elapsed_s\":$((SECONDS - start)),\"log\":$(jstr "$log")}"
