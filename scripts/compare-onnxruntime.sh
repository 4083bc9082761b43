#!/usr/bin/env bash
# Times onnxruntime and `yolo bench` on the same machine, in the same run, at 1 and 2 threads,
# with OPENBLAS_CORETYPE as set in the environment and unset (OpenBLAS autodetects its kernel;
# allowed only in a benchmark command like this one), and prints a side-by-side table.
#
# Usage: scripts/compare-onnxruntime.sh [--runs N] [--warmup N] [--rounds R] [--threads 1,2] [--out DIR]
# With --rounds R (default 1) each engine runs R times in turn (ort, yolo, ort, yolo, ...) with N runs
# each, and the table pools all R·N passes: on a machine whose speed drifts (a shared VM), both
# engines then see the same conditions.
# Needs the reference tools in ../shared (next to the repository) and Weights/yolov3-tiny.{cfg,weights}.
# Environment: REF_VENV (default /tmp/yolo-reference-venv), SCRATCH (swift --scratch-path, default .build),
#   BUILD_FLAGS (`swift build` flags for the yolo binary; default: the Makefile's CPU flags, `make cpu-flags`,
#   which compile the own AVX-512 GEMM kernel on CPUs that have it, as `make build` and `make test` do).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
shared=$(cd "$root/.." && pwd)/shared
runs=40 warmup=5 rounds=1 threads=1,2 out=$root/out/compare-onnxruntime
while (($#)); do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "compare-onnxruntime: unknown argument $1" >&2; exit 2 ;;
  esac
done
if [[ ! -d $shared/reference ]]; then
  echo "compare-onnxruntime: $shared/reference is missing: this script needs the shared reference tools at ../shared next to the repository" >&2
  exit 1
fi
cfg=$root/Weights/yolov3-tiny.cfg weights=$root/Weights/yolov3-tiny.weights names=$root/Weights/coco.names
for f in "$cfg" "$weights"; do
  [[ -f $f ]] || { echo "compare-onnxruntime: $f is missing (run make weights, or Weights/fetch.sh)" >&2; exit 1; }
done
venv=${REF_VENV:-/tmp/yolo-reference-venv}
scratch=${SCRATCH:-$root/.build}
BUILD_FLAGS=${BUILD_FLAGS-$(make -s --no-print-directory -C "$root" cpu-flags)}
mkdir -p "$out"

echo "== reference venv ($venv)"
"$shared/reference/setup.sh" "$venv" >/dev/null
py=$venv/bin/python
echo "== ONNX model from the same cfg and weights"
"$py" "$shared/reference/onnx_reference.py" build --cfg "$cfg" --weights "$weights" --names "$names" \
  --out "$out/yolov3-tiny.onnx" >/dev/null
echo "== yolo (release build, $scratch${BUILD_FLAGS:+, flags: $BUILD_FLAGS})"
# shellcheck disable=SC2086 # BUILD_FLAGS is a list of flags
(cd "$root" && swift build -c release --scratch-path "$scratch" --product yolo ${BUILD_FLAGS:-} >/dev/null)
yolo=$scratch/release/yolo

coretype=${OPENBLAS_CORETYPE:-}
modes=(set unset)
[[ -n $coretype ]] || modes=(unset)
for mode in "${modes[@]}"; do
  if [[ $mode == set ]]; then envs=(env); else envs=(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE); fi
  echo "== OPENBLAS_CORETYPE $mode${coretype:+ (environment: $coretype)}: $rounds round(s) of onnxruntime, then yolo bench; load: $(cut -d' ' -f1-3 /proc/loadavg)"
  for ((round = 1; round <= rounds; round++)); do
    "${envs[@]}" "$py" "$shared/reference/onnx_reference.py" bench --model "$out/yolov3-tiny.onnx" \
      --threads "$threads" --runs "$runs" --warmup "$warmup" --json "$out/ort-$mode-$round.json" >/dev/null
    "${envs[@]}" "$yolo" bench --cfg "$cfg" --weights "$weights" --names "$names" \
      --threads "$threads" --runs "$runs" --warmup "$warmup" --format json >"$out/yolo-$mode-$round.json"
  done
done

RUNS=$runs "$py" - "$out" "$coretype" "$rounds" "${modes[@]}" <<'PY'
import json, sys, os, statistics
out, coretype, rounds, modes = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
def pooled(engine, mode):
    times, cores = {}, {}
    for r in range(1, rounds + 1):
        for result in json.load(open(os.path.join(out, '%s-%s-%d.json' % (engine, mode, r))))['results']:
            times.setdefault(result['threads'], []).extend(result['times_ms'])
            cores[result['threads']] = result.get('blas_core', '')
    return times, cores
print()
print('| OPENBLAS_CORETYPE | BLAS core | threads | onnxruntime median ms (min-max) | yolo median ms (min-max) | yolo / ort | bar <= 0.9 |')
print('|---|---|---|---|---|---|---|')
for mode in modes:
    ort, _ = pooled('ort', mode)
    ours, cores = pooled('yolo', mode)
    for threads in sorted(ours):
        if threads not in ort:
            continue
        o, y = ort[threads], ours[threads]
        ratio = statistics.median(y) / statistics.median(o)
        label = coretype if mode == 'set' else 'unset (autodetected)'
        print('| %s | %s | %d | %.2f (%.2f-%.2f) | %.2f (%.2f-%.2f) | %.2f | %s |' % (
            label, cores[threads], threads, statistics.median(o), min(o), max(o),
            statistics.median(y), min(y), max(y), ratio, 'met' if ratio <= 0.9 else 'not met'))
print('\n%d round(s) x %s runs per engine and thread count, pooled. JSON: %s/{ort,yolo}-MODE-ROUND.json; load average at the end: %s'
      % (rounds, os.environ.get('RUNS', '?'), out, open('/proc/loadavg').read().split()[:3]))
PY
