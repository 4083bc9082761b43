#!/usr/bin/env bash
# Times yolo's int8 model against the int8 peers (onnxruntime and OpenVINO running the static QDQ file of
# ../shared/reference/int8_peers.py) and the fp32 rows of both, engines taking turns in one run.
#
# Usage: scripts/compare-int8.sh [--model yolov4-tiny|yolov3-tiny] [--runs 20] [--warmup 5] [--rounds 3]
#          [--threads 1,2] [--out DIR] [--yolo PATH] [--peers DIR] [--calib IMG...]
# Rows: yolo int8 (the int8 kernel the CPU's best family picks), yolo int8 with YOLO_INT8_KERNEL=avx2 (the AVX2
# path forced), yolo int8ymm (the 6x16 ymm VNNI kernel forced: avxvnni where the CPU has AVX-VNNI, else its EVEX build
# avxvnni-evex where it has AVX512-VNNI; no row without either), yolo fp32 (the darknet cfg/weights), and int8_peers.py's engines (ort-fp32, ort-int8, ov-fp32,
# ov-int8, ov-bf16 where the CPU has BF16). In each round, for each thread count, each yolo row is a fresh
# process (W warm-up passes, N timed ones) and the peers one process (W + N per engine); all rounds' passes are
# pooled per row and thread count. The bar of issue 35: yolo int8 / ov-int8 <= 0.9.
# Needs Weights/MODEL-int8.yolo (make model), Weights/MODEL.{cfg,weights}, the reference venv (REF_VENV, default
# /tmp/yolo-reference-venv) with openvino; the QDQ file is made in --peers DIR (default out/compare-int8/MODEL/peers)
# from --calib images (default: ../shared/data/coco-val2017-dev/images/*.jpg, as int8_peers.py's usage says)
# unless DIR/model.int8.onnx exists.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
shared=$(cd "$root/.." && pwd)/shared
model=yolov4-tiny runs=20 warmup=5 rounds=3 threads=1,2 out='' yolo='' peers='' calib=()
while (($#)); do
  case $1 in
    --model | --runs | --warmup | --rounds | --threads | --out | --yolo | --peers)
      (($# >= 2)) || { echo "compare-int8: $1 needs a value" >&2; exit 2; } ;;&
    --model) model=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --yolo) yolo=$2; shift 2 ;;
    --peers) peers=$2; shift 2 ;;
    --calib) shift; while (($#)) && [[ $1 != --* ]]; do calib+=("$1"); shift; done ;;
    -h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "compare-int8: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ $model == yolov4-tiny || $model == yolov3-tiny ]] || { echo "compare-int8: --model must be yolov4-tiny or yolov3-tiny, not $model" >&2; exit 2; }
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "compare-int8: --runs must be a positive integer, not $runs" >&2; exit 2; }
[[ $warmup =~ ^[0-9]+$ ]] || { echo "compare-int8: --warmup must be a non-negative integer, not $warmup" >&2; exit 2; }
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "compare-int8: --rounds must be a positive integer, not $rounds" >&2; exit 2; }
[[ $threads =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || { echo "compare-int8: --threads must be a comma-separated list, not $threads" >&2; exit 2; }
IFS=, read -r -a tlist <<<"$threads"
cfg=$root/Weights/$model.cfg weights=$root/Weights/$model.weights int8=$root/Weights/$model-int8.yolo
for f in "$cfg" "$weights" "$int8"; do
  [[ -f $f ]] || { echo "compare-int8: $f is missing (run make weights, make model)" >&2; exit 1; }
done
out=${out:-$root/out/compare-int8/$model}
peers=${peers:-$out/peers}
mkdir -p "$out" "$peers"
out=$(cd "$out" && pwd) peers=$(cd "$peers" && pwd)
yolo=${yolo:-$root/.build/release/yolo}
[[ -x $yolo ]] || { echo "compare-int8: $yolo is not an executable (swift build -c release --product yolo)" >&2; exit 1; }
py=${REF_VENV:-/tmp/yolo-reference-venv}/bin/python
"$py" -c 'import openvino, onnxruntime' 2>/dev/null || { echo "compare-int8: $py lacks openvino or onnxruntime (../shared/reference/setup.sh)" >&2; exit 1; }
if [[ ! -f $peers/model.int8.onnx ]]; then
  ((${#calib[@]})) || calib=("$shared"/data/coco-val2017-dev/images/*.jpg)
  echo "== QDQ int8 file: $peers/model.int8.onnx (${#calib[@]} calibration images)"
  "$py" "$shared/reference/int8_peers.py" make --cfg "$cfg" --weights "$weights" --out "$peers" --calib "${calib[@]}" >/dev/null
fi

run_yolo() {  # JSON THREADS INT8_KERNEL yolo-bench-arguments... (INT8_KERNEL empty: the CPU's choice)
  local json=$1 t=$2 kernel=$3; shift 3
  rm -f "$json"
  YOLO_INT8_KERNEL=$kernel "$yolo" bench "$@" --threads "$t" --runs "$runs" --warmup "$warmup" --format json >"$json.tmp" ||
    { echo; echo "compare-int8: yolo bench $* failed at $t thread(s)" >&2; return 1; }
  mv "$json.tmp" "$json"
}

ymm=''
if grep -qw avx_vnni /proc/cpuinfo; then ymm=avxvnni; elif grep -qw avx512_vnni /proc/cpuinfo; then ymm=avxvnni-evex; fi
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
echo "== $rounds round(s) x threads $threads; $runs runs after $warmup warm-up; load: $load_start"
for ((round = 1; round <= rounds; round++)); do
  for t in "${tlist[@]}"; do
    printf '   round %d/%d, %s thread(s):' "$round" "$rounds" "$t"
    run_yolo "$out/int8-t$t-r$round.json" "$t" '' --model "$int8"
    printf ' int8'
    run_yolo "$out/int8avx2-t$t-r$round.json" "$t" avx2 --model "$int8"
    printf ' int8-avx2'
    if [[ -n $ymm ]]; then
      run_yolo "$out/int8ymm-t$t-r$round.json" "$t" "$ymm" --model "$int8"
      printf ' int8-%s' "$ymm"
    fi
    run_yolo "$out/fp32-t$t-r$round.json" "$t" '' --cfg "$cfg" --weights "$weights" --names "$root/Weights/coco.names"
    printf ' fp32'
    "$py" "$shared/reference/int8_peers.py" bench --dir "$peers" --threads "$t" --runs "$runs" --warmup "$warmup" --rounds 1 \
      --json "$out/peers-t$t-r$round.json" >/dev/null
    printf ' peers\n'
  done
done
load_end=$(cut -d' ' -f1-3 /proc/loadavg)
"$py" - "$out" "$rounds" "$threads" "$load_start" "$load_end" "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)" <<'PY' | tee "$out/table.md"
import glob, json, os, statistics, sys
out, rounds, threads, load_start, load_end, cpu = sys.argv[1], int(sys.argv[2]), [int(t) for t in sys.argv[3].split(',')], *sys.argv[4:7]
times = {}
for t in threads:
    for r in range(1, rounds + 1):
        for row in ('int8', 'int8avx2', 'int8ymm', 'fp32'):
            path = os.path.join(out, f'{row}-t{t}-r{r}.json')
            if not os.path.exists(path):
                continue
            for res in json.load(open(path))['results']:
                if int(res['threads']) == t:
                    times.setdefault((f'yolo {row}', t), []).extend(res['times_ms'])
        path = os.path.join(out, f'peers-t{t}-r{r}.json')
        for name, res in json.load(open(path)).items():
            engine = name.rsplit(' t', 1)[0]
            times.setdefault((engine, t), []).extend(res['times_ms'])
rows = sorted({e for e, _ in times}, key=lambda e: (not e.startswith('yolo'), e))
print(f'CPU {cpu.strip()}; load average {load_start} at start, {load_end} at end; {rounds} rounds')
print()
print('| engine | ' + ' | '.join(f'{t} thread{"s" if t > 1 else ""}: median ms (min-max)' for t in threads) + ' |')
print('|---|' + '---|' * len(threads))
for e in rows:
    cells = []
    for t in threads:
        v = times.get((e, t))
        cells.append(f'{statistics.median(v):.2f} ({min(v):.2f}-{max(v):.2f})' if v else '-')
    print(f'| {e} | ' + ' | '.join(cells) + ' |')
print()
for t in threads:
    y, ov = times.get(('yolo int8', t)), times.get(('ov-int8', t))
    ya = times.get(('yolo int8avx2', t))
    if y and ov:
        line = f'{t} thread(s): yolo int8 / ov-int8 = {statistics.median(y) / statistics.median(ov):.3f} (bar <= 0.9)'
        if ya:
            line += f'; yolo int8 (avx2 forced) / ov-int8 = {statistics.median(ya) / statistics.median(ov):.3f}'
        yy = times.get(('yolo int8ymm', t))
        if yy:
            line += f'; yolo int8 (ymm VNNI forced) / ov-int8 = {statistics.median(yy) / statistics.median(ov):.3f}'
        print(line)
PY
