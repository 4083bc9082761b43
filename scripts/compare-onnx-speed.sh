#!/usr/bin/env bash
# Times `yolo bench` on a model converted from ONNX against onnxruntime (CPU, fp32, ORT_ENABLE_ALL) on the
# original .onnx, engines interleaved: in each of R rounds, for each thread count, each engine runs once (a
# fresh process: W warm-up passes, N timed passes). Prints per engine and thread count the median of the
# rounds' medians and the min..max of all rounds' medians, and yolo / onnxruntime.
#
# Usage: scripts/compare-onnx-speed.sh MODEL.onnx MODEL.yolo [--threads 1,2] [--rounds 3] [--runs 20] [--warmup 5]
#          [--yolo PATH] [--kernel avx512|avx2|portable]
# Environment: REF_VENV (default /tmp/yolo-reference-venv). OPENBLAS_CORETYPE is left as set.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
(($# >= 2)) || { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; exit 2; }
onnx=$1 model=$2; shift 2
threads=1,2 rounds=3 runs=20 warmup=5 yolo=$root/.build/release/yolo kernel=()
while (($#)); do
  case $1 in
    --threads) threads=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --yolo) yolo=$2; shift 2 ;;
    --kernel) kernel=(--kernel "$2"); shift 2 ;;
    *) echo "compare-onnx-speed: unknown argument $1" >&2; exit 2 ;;
  esac
done
py=${REF_VENV:-/tmp/yolo-reference-venv}/bin/python
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for ((r = 1; r <= rounds; r++)); do
  for t in ${threads//,/ }; do
    "$yolo" bench --model "$model" --threads "$t" --runs "$runs" --warmup "$warmup" --format json "${kernel[@]}" \
      >"$work/yolo-t$t-r$r.json"
    "$py" - "$onnx" "$model" "$t" "$runs" "$warmup" >"$work/ort-t$t-r$r.json" <<'PY'
import json, statistics, sys, time
import numpy as np, onnxruntime as ort
path, _, t, runs, warmup = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
o = ort.SessionOptions(); o.intra_op_num_threads = t; o.inter_op_num_threads = 1
o.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
s = ort.InferenceSession(path, o, providers=["CPUExecutionProvider"])
i = s.get_inputs()[0]
meta = s.get_modelmeta().custom_metadata_map
size = json.loads(meta.get("imgsz", "[640, 640]"))
shape = [d if isinstance(d, int) else v for d, v in zip(i.shape, [1, 3] + size)]
x = np.random.default_rng(0).random(shape, dtype=np.float32)
for _ in range(warmup): s.run(None, {i.name: x})
ts = []
for _ in range(runs):
    t0 = time.perf_counter(); s.run(None, {i.name: x}); ts.append((time.perf_counter() - t0) * 1e3)
print(json.dumps({"median_ms": statistics.median(ts), "shape": shape}))
PY
  done
done
"$py" - "$work" "$threads" "$rounds" <<'PY'
import glob, json, os, statistics, sys
work, threads, rounds = sys.argv[1], sys.argv[2].split(","), int(sys.argv[3])
def yolo_median(path):
    data = json.load(open(path))
    rows = data if isinstance(data, list) else data.get("results", data.get("runs", [data]))
    for row in rows if isinstance(rows, list) else [rows]:
        for key in ("median_ms", "medianMs", "median"):
            if key in row: return float(row[key])
    raise SystemExit(f"compare-onnx-speed: no median in {path}: {json.dumps(data)[:300]}")
print("| threads | yolo median (min..max of rounds), ms | onnxruntime, ms | yolo / onnxruntime |")
print("|---|---|---|---|")
for t in threads:
    y = [yolo_median(f"{work}/yolo-t{t}-r{r}.json") for r in range(1, rounds + 1)]
    o = [json.load(open(f"{work}/ort-t{t}-r{r}.json"))["median_ms"] for r in range(1, rounds + 1)]
    ym, om = statistics.median(y), statistics.median(o)
    print(f"| {t} | {ym:.2f} ({min(y):.2f}..{max(y):.2f}) | {om:.2f} ({min(o):.2f}..{max(o):.2f}) | {ym / om:.2f} |")
PY
