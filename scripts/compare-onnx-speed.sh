#!/usr/bin/env bash
# Times `yolo bench` on a model converted from ONNX against the peer engines on the original .onnx, fp32:
# onnxruntime (CPU, ORT_ENABLE_ALL), OpenVINO (CPU, LATENCY hint, one stream, INFERENCE_PRECISION_HINT f32 so no
# bf16 on CPUs that have it) and ncnn (the .param/.bin pnnx makes from the .onnx; packed layouts, no fp16/bf16).
# Engines interleaved: in each of R rounds, for each thread count, each engine runs once (a fresh process:
# W warm-up passes, N timed passes, the median kept). Prints per engine and thread count the median of the
# rounds' medians with the min..max of the rounds' medians, and yolo over the best peer.
# The peers run the whole exported graph (with its decode chain); yolo bench times the network without decoding.
#
# Usage: scripts/compare-onnx-speed.sh MODEL.onnx MODEL.yolo [--threads 1,2] [--rounds 3] [--runs 20] [--warmup 5]
#          [--yolo PATH] [--kernel avx512|avx2|portable] [--engines onnxruntime,openvino,ncnn]
# Environment: REF_VENV (default /tmp/yolo-reference-venv: ../shared/reference/setup.sh makes it, with pnnx).
# OPENBLAS_CORETYPE is left as set.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
(($# >= 2)) || { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; exit 2; }
onnx=$1 model=$2; shift 2
threads=1,2 rounds=3 runs=20 warmup=5 yolo=$root/.build/release/yolo kernel=() engines=onnxruntime,openvino,ncnn
while (($#)); do
  case $1 in
    --threads) threads=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --yolo) yolo=$2; shift 2 ;;
    --kernel) kernel=(--kernel "$2"); shift 2 ;;
    --engines) engines=$2; shift 2 ;;
    *) echo "compare-onnx-speed: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -f $onnx ]] || { echo "compare-onnx-speed: $onnx: no such file" >&2; exit 1; }
[[ -f $model ]] || { echo "compare-onnx-speed: $model: no such file" >&2; exit 1; }
venv=${REF_VENV:-/tmp/yolo-reference-venv}
py=$venv/bin/python
[[ -x $py ]] || { echo "compare-onnx-speed: $py missing: run ../shared/reference/setup.sh (or set REF_VENV)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The input size: the ONNX input's, or for a dynamic one the imgsz metadata (as yolo convert --onnx reads it).
read -r width height < <("$py" - "$onnx" <<'PY'
import json, sys, onnx
m = onnx.load(sys.argv[1], load_external_data=False)
dims = [d.dim_value if d.HasField("dim_value") else None for d in m.graph.input[0].type.tensor_type.shape.dim]
meta = {p.key: p.value for p in m.metadata_props}
size = json.loads(meta.get("imgsz", "[640, 640]")) if None in dims[2:] else dims[2:]
print(size[1], size[0])
PY
)

if [[ ,$engines, == *,ncnn,* ]]; then
  # pnnx writes beside its input: convert a copy in the work folder.
  cp "$onnx" "$work/model.onnx"
  (cd "$work" && "$venv/bin/pnnx" model.onnx "inputshape=[1,3,$height,$width]" >pnnx.log 2>&1) ||
    { echo "compare-onnx-speed: pnnx failed on $onnx (see below)" >&2; tail -5 "$work/pnnx.log" >&2; exit 1; }
fi

peer() {  # engine threads output.json
  "$py" - "$1" "$onnx" "$work" "$width" "$height" "$2" "$runs" "$warmup" >"$3" <<'PY'
import json, statistics, sys, time
import numpy as np
engine, path, work = sys.argv[1], sys.argv[2], sys.argv[3]
w, h, t, runs, warmup = (int(v) for v in sys.argv[4:9])
x = np.random.default_rng(0).random((1, 3, h, w), dtype=np.float32)
if engine == "onnxruntime":
    import onnxruntime as ort
    o = ort.SessionOptions(); o.intra_op_num_threads = t; o.inter_op_num_threads = 1
    o.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    s = ort.InferenceSession(path, o, providers=["CPUExecutionProvider"])
    name = s.get_inputs()[0].name
    run = lambda: s.run(None, {name: x})
elif engine == "openvino":
    import openvino as ov
    core = ov.Core(); m = core.read_model(path); m.reshape([1, 3, h, w])
    c = core.compile_model(m, "CPU", {"INFERENCE_NUM_THREADS": t, "PERFORMANCE_HINT": "LATENCY", "NUM_STREAMS": 1,
                                      "INFERENCE_PRECISION_HINT": "f32"})
    req = c.create_infer_request()
    run = lambda: req.infer({0: x})
elif engine == "ncnn":
    import ncnn
    net = ncnn.Net(); net.opt.num_threads = t; net.opt.use_packing_layout = True
    net.opt.use_fp16_storage = False; net.opt.use_fp16_arithmetic = False; net.opt.use_bf16_storage = False
    net.load_param(f"{work}/model.ncnn.param"); net.load_model(f"{work}/model.ncnn.bin")
    mat = ncnn.Mat(x[0])
    def run():
        ex = net.create_extractor(); ex.input(net.input_names()[0], mat)
        for n in net.output_names(): ex.extract(n)
else:
    raise SystemExit(f"compare-onnx-speed: unknown engine {engine}")
for _ in range(warmup): run()
ts = []
for _ in range(runs):
    t0 = time.perf_counter(); run(); ts.append((time.perf_counter() - t0) * 1e3)
print(json.dumps({"median_ms": statistics.median(ts)}))
PY
}

for ((r = 1; r <= rounds; r++)); do
  for t in ${threads//,/ }; do
    "$yolo" bench --model "$model" --threads "$t" --runs "$runs" --warmup "$warmup" --format json "${kernel[@]}" \
      >"$work/yolo-t$t-r$r.json"
    for e in ${engines//,/ }; do peer "$e" "$t" "$work/$e-t$t-r$r.json"; done
  done
done
"$py" - "$work" "$threads" "$rounds" "$engines" <<'PY'
import json, statistics, sys
work, threads, rounds, engines = sys.argv[1], sys.argv[2].split(","), int(sys.argv[3]), sys.argv[4].split(",")
def median_of(path):
    data = json.load(open(path))
    if "median_ms" in data: return float(data["median_ms"])
    rows = data if isinstance(data, list) else data.get("results", data.get("runs", [data]))
    for row in rows if isinstance(rows, list) else [rows]:
        for key in ("median_ms", "medianMs", "median"):
            if key in row: return float(row[key])
    raise SystemExit(f"compare-onnx-speed: no median in {path}: {json.dumps(data)[:300]}")
print("| threads | " + " | ".join(["yolo"] + engines) + " | yolo / best peer |")
print("|---" * (len(engines) + 3) + "|")
for t in threads:
    cells, peers = [], {}
    for e in ["yolo"] + engines:
        v = [median_of(f"{work}/{e}-t{t}-r{r}.json") for r in range(1, rounds + 1)]
        m = statistics.median(v)
        if e != "yolo": peers[e] = m
        else: ym = m
        cells.append(f"{m:.2f} ({min(v):.2f}..{max(v):.2f})")
    best = min(peers, key=peers.get)
    print(f"| {t} | " + " | ".join(cells) + f" | {ym / peers[best]:.2f} ({best}) |")
print("ms: median of the rounds' medians (min..max of the rounds' medians)")
PY
