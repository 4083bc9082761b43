#!/usr/bin/env python3
"""Parity of `yolo` on a converted Ultralytics YOLOv8 ONNX model against onnxruntime.

For each image: `yolo forward` writes the exact input blob SwiftYOLO feeds (letterboxed, 114 grey) and its
raw head outputs; onnxruntime runs the original .onnx on that same blob, with the head Concat tensors (box
distribution logits + class logits per scale) added as graph outputs. Then:
  - raw heads: max |yolo - onnxruntime| over every head element (bar 1e-3);
  - detections: `yolo detect --format json --iou 0.7 --max-det 300 --full-decode` (full-size JPEG decoding, so
    its input is the blob `yolo forward` wrote; images with an EXIF rotation are not comparable) against the ONNX model's own decoded
    output (output0: xywh in input pixels, sigmoid class scores) suppressed the way Ultralytics documents
    its NMS (best class per box, score > conf, class-aware greedy IoU suppression, at most max_det), boxes
    mapped back to the image with SwiftYOLO's letterbox inverse and clipped; same count and classes, box
    corners within 0.5 px, confidences within 1e-4 (bars).
The decoding is written here from the documented behaviour; no Ultralytics code is used.

Usage: onnx-parity.py MODEL.onnx MODEL.yolo IMAGE... [--yolo PATH] [--write-fixture DIR]
Needs numpy, onnx and onnxruntime (the reference venv /tmp/yolo-reference-venv has them).
--write-fixture DIR writes DIR/<model>.<image>.json per image for the integration test (ONNXParityTests): the
sha256 of the input blob, onnxruntime's head values at 1000 seeded positions per head, and the reference detections.
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort

from ultralytics_reference import iou, suppress


def head_concats(model):
    """Names of the head Concat outputs: axis 1, two Conv inputs, read by a Reshape (as the converter finds them)."""
    producer = {o: n for n in model.graph.node for o in n.output}
    readers = {}
    for n in model.graph.node:
        for i in n.input:
            readers.setdefault(i, []).append(n)
    names = []
    for n in model.graph.node:
        if n.op_type != "Concat" or len(n.input) != 2:
            continue
        axis = [a.i for a in n.attribute if a.name == "axis"]
        if axis != [1]:
            continue
        if not all(i in producer and producer[i].op_type == "Conv" for i in n.input):
            continue
        if any(r.op_type == "Reshape" for r in readers.get(n.output[0], [])):
            names.append(n.output[0])
    return names


def session(path, extra):
    model = onnx.load(path)
    have = {o.name for o in model.graph.output}
    for name in extra:
        if name not in have:
            model.graph.output.append(onnx.helper.make_empty_tensor_value_info(name))
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def letterbox_inverse(box, image_w, image_h, net_w, net_h):
    """SwiftYOLO's scaleFit inverse (Geometry.plan): network pixels to image pixels, then clipped."""
    if np.float32(net_w) / np.float32(image_w) < np.float32(net_h) / np.float32(image_h):
        new_w, new_h = net_w, max(1, image_h * net_w // image_w)
    else:
        new_w, new_h = max(1, image_w * net_h // image_h), net_h
    ox, oy = (net_w - new_w) / 2, (net_h - new_h) / 2
    sx, sy = image_w / new_w, image_h / new_h
    x1, y1, x2, y2 = (box[0] - ox) * sx, (box[1] - oy) * sy, (box[2] - ox) * sx, (box[3] - oy) * sy
    return [min(max(x1, 0), image_w), min(max(y1, 0), image_h), min(max(x2, 0), image_w), min(max(y2, 0), image_h)]


def run(command):
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"onnx-parity: {' '.join(command)} failed: {result.stderr.strip()}")
    return result.stdout


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("onnx")
    parser.add_argument("yolo_model")
    parser.add_argument("images", nargs="+")
    parser.add_argument("--yolo", default=".build/release/yolo")
    parser.add_argument("--yolo-args", default="", help="more arguments for yolo forward and detect, e.g. '--kernel portable'")
    parser.add_argument("--write-fixture")
    args = parser.parse_args()

    names = head_concats(onnx.load(args.onnx))
    sess = session(args.onnx, names)
    input_name = sess.get_inputs()[0].name
    worst_head, worst_box, worst_conf, failures, total = 0.0, 0.0, 0.0, 0, 0
    with tempfile.TemporaryDirectory() as work:
        for image in args.images:
            stem = os.path.splitext(os.path.basename(image))[0]
            out = os.path.join(work, stem)
            extra = args.yolo_args.split()
            run([args.yolo, "forward", "--model", args.yolo_model, "--input", image, "--out", out] + extra)
            blob = np.load(os.path.join(out, "input.npy")).astype(np.float32)
            if blob.ndim == 3:
                blob = blob[None]
            results = sess.run(["output0"] + names, {input_name: blob})
            ours = sorted((f for f in os.listdir(out) if f.startswith("layer")), key=lambda f: int(f[5:-4]))
            if len(ours) != len(names):
                sys.exit(f"onnx-parity: {image}: yolo has {len(ours)} heads, the ONNX graph {len(names)}")
            head_diff = 0.0
            for f, reference in zip(ours, results[1:]):
                mine = np.load(os.path.join(out, f)).reshape(reference.shape)
                head_diff = max(head_diff, float(np.abs(mine - reference).max()))
            report = json.loads(run([args.yolo, "detect", "--model", args.yolo_model, image, "--format", "json",
                                     "--iou", "0.7", "--max-det", "300", "--full-decode"] + extra))
            if isinstance(report, list):
                report = report[0]
            W, H = report["width"], report["height"]
            net_h, net_w = blob.shape[2], blob.shape[3]
            reference = [(c, s, letterbox_inverse(b, W, H, net_w, net_h)) for c, s, b in suppress(results[0][0])]
            mine = [(d["classIndex"], d["confidence"], d["box"]) for d in report["detections"]]
            problems = []
            if len(mine) != len(reference):
                problems.append(f"{len(mine)} detections, onnxruntime {len(reference)}")
            box_diff, conf_diff = 0.0, 0.0
            unmatched = list(range(len(mine)))
            for c, s, b in reference:
                candidates = [i for i in unmatched if mine[i][0] == c]
                if not candidates:
                    problems.append(f"no class {c} detection for onnxruntime's {s:.4f} at {np.round(b, 1).tolist()}")
                    continue
                i = max(candidates, key=lambda i: iou(mine[i][2], b))
                unmatched.remove(i)
                box_diff = max(box_diff, max(abs(x - y) for x, y in zip(mine[i][2], b)))
                conf_diff = max(conf_diff, abs(mine[i][1] - s))
            if box_diff > 0.5:
                problems.append(f"box corners differ by {box_diff:.3f} px")
            if conf_diff > 1e-4:
                problems.append(f"confidences differ by {conf_diff:.2e}")
            if head_diff > 1e-3:
                problems.append(f"raw heads differ by {head_diff:.2e}")
            worst_head, worst_box, worst_conf = max(worst_head, head_diff), max(worst_box, box_diff), max(worst_conf, conf_diff)
            total += 1
            failures += bool(problems)
            print(f"{image}: {len(reference)} detections, heads max diff {head_diff:.2e}, boxes {box_diff:.4f} px, "
                  f"confidences {conf_diff:.2e}" + ("  FAIL: " + "; ".join(problems) if problems else ""))
            if args.write_fixture:
                os.makedirs(args.write_fixture, exist_ok=True)
                model_stem = os.path.splitext(os.path.basename(args.onnx))[0]
                picks = np.random.default_rng(38)
                heads = []
                for r in results[1:]:
                    flat = r.reshape(-1)
                    index = np.sort(picks.choice(flat.size, size=min(1000, flat.size), replace=False))
                    heads.append({"shape": list(r.shape[1:]), "indices": index.tolist(), "values": [float(v) for v in flat[index]]})
                fixture = {
                    "image": os.path.basename(image), "onnxruntime": ort.__version__,
                    "input_sha256": hashlib.sha256(blob.astype("<f4").tobytes()).hexdigest(),
                    "heads": heads,
                    "detections": [{"classIndex": c, "confidence": s, "box": [round(float(x), 4) for x in b]} for c, s, b in reference],
                }
                with open(os.path.join(args.write_fixture, f"{model_stem}.{stem}.json"), "w") as f:
                    json.dump(fixture, f)
    print(f"{total} images, {failures} failing; worst: heads {worst_head:.2e}, boxes {worst_box:.4f} px, confidences {worst_conf:.2e}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
