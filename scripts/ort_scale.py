"""ort_scale.py MODEL.onnx --threads 1,2,4 --runs 30 --warmup 5 [--tag T] [--init WEIGHTS.json]: onnxruntime CPU latency
per intra-op thread count, one JSON line each (median/min/max ms). --init: MODEL is a graph from onnx_weightless.py (large
weights left out); they are handed over as normal(mean, std) float32 values of the real magnitudes through
SessionOptions.add_external_initializers (replaced before any graph optimization). Timing only: outputs meaningless."""
import argparse, json, statistics, time
import numpy as np, onnxruntime as ort
p = argparse.ArgumentParser(); p.add_argument('model'); p.add_argument('--threads', default='1')
p.add_argument('--runs', type=int, default=30); p.add_argument('--warmup', type=int, default=5); p.add_argument('--tag', default='ort')
p.add_argument('--init', default=None)
a = p.parse_args()
names, values = [], []
if a.init:
    rng = np.random.default_rng(1)
    for e in json.load(open(a.init)):
        names.append(e['name'])
        values.append(ort.OrtValue.ortvalue_from_numpy(rng.normal(e['mean'], e['std'], e['shape']).astype(np.float32)))
for t in [int(s) for s in a.threads.split(',')]:
    o = ort.SessionOptions(); o.intra_op_num_threads = t; o.inter_op_num_threads = 1
    o.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    if names: o.add_external_initializers(names, values)
    s = ort.InferenceSession(a.model, o, providers=['CPUExecutionProvider'])
    x = np.random.default_rng(0).random(s.get_inputs()[0].shape, dtype=np.float32)
    name = s.get_inputs()[0].name
    for _ in range(a.warmup): s.run(None, {name: x})
    ts = []
    for _ in range(a.runs):
        t0 = time.perf_counter(); s.run(None, {name: x}); ts.append((time.perf_counter() - t0) * 1e3)
    print(json.dumps(dict(engine=a.tag, threads=t, median_ms=round(statistics.median(ts), 3), min_ms=round(min(ts), 3),
                          max_ms=round(max(ts), 3), runs=a.runs, ort=ort.__version__)), flush=True)
