#!/usr/bin/env python3
"""Times each convolution of a darknet model alone, in yolo and in ncnn, engines taking turns.

Usage (normally through scripts/compare-layers.sh, which provides the venv and the yolo binary):
  compare-layers.py --yolo BIN --cfg MODEL.cfg [--rounds 4] [--runs 40] [--warmup 5] [--threads 1]
                    [--layers 0,1,4] --out DIR

Each convolution of the model becomes a network of that one layer (same input shape, filters, size, stride,
padding, activation; seeded random weights): a darknet .cfg/.weights pair that `yolo bench` runs, and an ncnn
.param/.bin pair with the same layer as pnnx writes it for the whole model (Convolution with the bias and the
activation fused). In each round every layer is timed once per engine, yolo first: `yolo bench` as a fresh
process (W warm-up, N timed passes), ncnn in this process (W warm-up, N timed extractor runs). The table pools
the rounds' passes. What the two figures hold differs a little: yolo's pass copies its input into its
workspace; ncnn's run converts its input into its packed layout and its output back (ncnn keeps activations
8 channels to a vector), so ncnn's figure carries two layout conversions a network run would mostly not have.
"""
import argparse
import json
import os
import re
import statistics
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np


def fail(message):
    print(f"compare-layers: {message}", file=sys.stderr)
    sys.exit(1)


def conv_layers(yolo, cfg):
    """(index, in_c, in_h, in_w, filters, size, stride) for each convolution, from `yolo info`."""
    result = subprocess.run([yolo, "info", cfg], capture_output=True, text=True)
    if result.returncode != 0:
        fail(f"{yolo} info {cfg} failed: {result.stderr.strip()}")
    pattern = re.compile(r"^\s*(\d+)\s+conv\s+(\d+)\s+(\d+) x \d+ / (\d+)\s+(\d+)x(\d+)x(\d+)\s+->")
    layers = []
    for line in result.stdout.splitlines():
        m = pattern.match(line)
        if m:
            index, filters, size, stride, w, h, c = map(int, m.groups())
            layers.append((index, c, h, w, filters, size, stride))
    if not layers:
        fail(f"{yolo} info {cfg} listed no convolution")
    return layers


def conv_sections(cfg):
    """The [convolutional] sections of `cfg` in order, as dicts of their keys."""
    sections, current = [], None
    for raw in open(cfg):
        line = raw.split("#")[0].strip()
        if not line:
            continue
        if line.startswith("["):
            current = {} if line.lower() == "[convolutional]" else None
            if current is not None:
                sections.append(current)
        elif current is not None and "=" in line:
            key, value = line.split("=", 1)
            current[key.strip()] = value.strip()
    return sections


def write_layer(out, index, layer, section, rng):
    """Writes L<index>.cfg/.weights (darknet) and L<index>.param/.bin (ncnn); returns the four paths."""
    _, c, h, w, filters, size, stride = layer
    pad = size // 2 if section.get("pad", "0") != "0" else int(section.get("padding", "0"))
    activation = section.get("activation", "linear")
    if activation not in ("leaky", "linear"):
        fail(f"layer {index}: activation {activation} is not one this script writes for ncnn")
    normalized = section.get("batch_normalize", "0") == "1"
    weights = (rng.standard_normal(filters * c * size * size) * np.sqrt(2.0 / (c * size * size))).astype(np.float32)
    biases = (rng.standard_normal(filters) * 0.1).astype(np.float32)
    base = os.path.join(out, f"L{index}")
    with open(base + ".cfg", "w") as f:
        f.write(f"[net]\nwidth={w}\nheight={h}\nchannels={c}\n\n[convolutional]\n")
        f.write(f"batch_normalize={int(normalized)}\nfilters={filters}\nsize={size}\nstride={stride}\n")
        f.write(f"pad={int(pad > 0)}\nactivation={activation}\n")
    with open(base + ".weights", "wb") as f:
        f.write(struct.pack("<iiiQ", 0, 2, 0, 0))
        f.write(biases.tobytes())
        if normalized:   # scales 1, means 0, variances 1: the weights stand as they are
            f.write(np.ones(filters, np.float32).tobytes() + np.zeros(filters, np.float32).tobytes()
                    + np.ones(filters, np.float32).tobytes())
        f.write(weights.tobytes())
    act = " 9=2 -23310=1,0.1" if activation == "leaky" else ""
    with open(base + ".param", "w") as f:
        f.write(f"7767517\n2 2\nInput in0 0 1 in0 0={w} 1={h} 2={c}\n")
        f.write(f"Convolution conv 1 1 in0 out0 0={filters} 1={size} 11={size} 2=1 12=1 3={stride} 13={stride} "
                f"4={pad} 14={pad} 5=1 6={weights.size}{act}\n")
    with open(base + ".bin", "wb") as f:
        f.write(struct.pack("<I", 0))   # tag 0: the weights follow as float32
        f.write(weights.tobytes())
        f.write(biases.tobytes())
    return base


def time_yolo(yolo, base, threads, runs, warmup):
    with tempfile.NamedTemporaryFile(suffix=".json") as tmp:
        result = subprocess.run([yolo, "bench", "--cfg", base + ".cfg", "--weights", base + ".weights",
                                 "--threads", str(threads), "--runs", str(runs), "--warmup", str(warmup),
                                 "--format", "json"], stdout=tmp, stderr=subprocess.PIPE, text=True)
        if result.returncode != 0:
            fail(f"yolo bench on {base}.cfg failed: {result.stderr.strip()}")
        tmp.seek(0)
        report = json.load(tmp)
    return report["results"][0]["times_ms"], report["machine"]


def algorithm_of(yolo, base, threads):
    result = subprocess.run([yolo, "bench", "--cfg", base + ".cfg", "--weights", base + ".weights",
                             "--threads", str(threads), "--runs", "1", "--warmup", "0", "--layers"],
                            capture_output=True, text=True)
    for line in result.stdout.splitlines():
        fields = line.split()
        if fields[:2] == ["0", "conv"]:
            return " ".join(fields[7:])
    return "?"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--yolo", required=True)
    p.add_argument("--cfg", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--rounds", type=int, default=4)
    p.add_argument("--runs", type=int, default=40)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--layers", default="", help="comma-separated layer indices (default: every convolution)")
    a = p.parse_args()
    if a.rounds < 1 or a.runs < 1 or a.warmup < 0 or a.threads < 1:
        fail("--rounds, --runs and --threads must be positive, --warmup not negative")
    import ncnn

    layers = conv_layers(a.yolo, a.cfg)
    sections = conv_sections(a.cfg)
    if len(sections) != len(layers):
        fail(f"{a.cfg} has {len(sections)} [convolutional] sections, yolo info lists {len(layers)} convolutions")
    wanted = {int(x) for x in a.layers.split(",") if x} if a.layers else None
    os.makedirs(a.out, exist_ok=True)
    rng = np.random.default_rng(0)
    jobs = []
    for layer, section in zip(layers, sections):
        base = write_layer(a.out, layer[0], layer, section, rng)
        if wanted is None or layer[0] in wanted:
            jobs.append((layer, base))
    if not jobs:
        fail(f"--layers {a.layers}: no such convolution in {a.cfg}")

    nets, inputs = {}, {}
    for layer, base in jobs:
        net = ncnn.Net()
        net.opt.num_threads = a.threads
        net.opt.use_packing_layout = True
        net.opt.use_fp16_storage = False
        net.opt.use_fp16_arithmetic = False
        net.opt.use_bf16_storage = False
        if net.load_param(base + ".param") != 0 or net.load_model(base + ".bin") != 0:
            fail(f"ncnn could not load {base}.param/.bin")
        _, c, h, w = layer[:4]
        array = np.random.default_rng(1).random((c, h, w), dtype=np.float32)
        nets[base], inputs[base] = net, (array, ncnn.Mat(array))   # the Mat borrows the array: keep both

    def ncnn_times(base):
        net, x = nets[base], inputs[base][1]

        def run():
            ex = net.create_extractor()
            ex.input("in0", x)
            ex.extract("out0")
        for _ in range(a.warmup):
            run()
        times = []
        for _ in range(a.runs):
            t = time.perf_counter()
            run()
            times.append((time.perf_counter() - t) * 1e3)
        return times

    pooled = {base: {"yolo": [], "ncnn": []} for _, base in jobs}
    machine = None
    for r in range(a.rounds):
        print(f"round {r + 1}/{a.rounds}", file=sys.stderr, flush=True)
        for layer, base in jobs:
            times, machine = time_yolo(a.yolo, base, a.threads, a.runs, a.warmup)
            pooled[base]["yolo"] += times
            pooled[base]["ncnn"] += ncnn_times(base)

    lines = [f"CPU {machine['cpu']}; yolo kernel family {machine['gemm']}; "
             f"ncnn {ncnn.__version__} (fp32, packing layout); {a.threads} thread(s); OPENBLAS_CORETYPE "
             f"{os.environ.get('OPENBLAS_CORETYPE', 'unset')}; {a.rounds} rounds x {a.runs} passes per engine "
             f"and layer, engines taking turns; median ms (min-max)", "",
             "| layer | input | filters | k/s | yolo algorithm | yolo | ncnn | yolo / ncnn |",
             "|---|---|---|---|---|---|---|---|"]
    total = {"yolo": 0.0, "ncnn": 0.0}
    for layer, base in jobs:
        index, c, h, w, filters, size, stride = layer
        cells = []
        for engine in ("yolo", "ncnn"):
            t = pooled[base][engine]
            total[engine] += statistics.median(t)
            cells.append(f"{statistics.median(t):.3f} ({min(t):.3f}-{max(t):.3f})")
        ratio = statistics.median(pooled[base]["yolo"]) / statistics.median(pooled[base]["ncnn"])
        lines.append(f"| {index} | {w}x{h}x{c} | {filters} | {size}/{stride} | {algorithm_of(a.yolo, base, a.threads)} "
                     f"| {cells[0]} | {cells[1]} | {ratio:.2f} |")
    lines.append(f"| sum | | | | | {total['yolo']:.3f} | {total['ncnn']:.3f} | {total['yolo'] / total['ncnn']:.2f} |")
    report = "\n".join(lines) + "\n"
    with open(os.path.join(a.out, "table.md.tmp"), "w") as f:
        f.write(report)
    os.replace(os.path.join(a.out, "table.md.tmp"), os.path.join(a.out, "table.md"))
    print(report, end="")


if __name__ == "__main__":
    main()
