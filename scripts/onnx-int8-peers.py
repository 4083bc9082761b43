#!/usr/bin/env python3
"""Int8 peers for an imported Ultralytics ONNX detector, and how many of the fp32 detections each int8 model keeps.

  onnx-int8-peers.py make  MODEL.onnx OUT.int8.onnx --size 320 --calib IMG...
        onnxruntime static QDQ (per-channel s8 weights, u8 activations, MinMax calibration on the images letterboxed
        to SIZE on 114 grey, as SwiftYOLO feeds them); OpenVINO runs the same file in int8. The detection head's
        decode chain (Ultralytics' node names '/model.22/...' other than its cv2/cv3 convolutions: DFL, anchors, the
        class sigmoid, the output Concat) stays float: quantized, one u8 range over boxes in pixels and scores in
        [0, 1] rounds every score to 0.
  onnx-int8-peers.py agree --yolo BIN --yolo-model FLOAT.yolo MODEL.onnx OUT.int8.onnx IMG...
        onnxruntime runs both files on the blob `yolo forward` writes for each image; Ultralytics' NMS (conf 0.25,
        IoU 0.7); a fp32 detection is kept when the int8 model has one of its class with IoU >= 0.9 (and >= 0.5),
        as `yolo compare` counts.
Then time the peers against a yolo int8 file with scripts/compare-onnx-speed.sh OUT.int8.onnx MODEL-int8.yolo
--engines onnxruntime,openvino. Needs the reference venv (../shared/reference/setup.sh).
"""
import argparse
import glob
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def letterbox(rgb, size):
    import cv2
    h, w = rgb.shape[:2]
    r = min(size / h, size / w)
    nh, nw = round(h * r), round(w * r)
    canvas = np.full((size, size, 3), 114, np.uint8)
    top, left = (size - nh) // 2, (size - nw) // 2
    canvas[top:top + nh, left:left + nw] = cv2.resize(rgb, (nw, nh), interpolation=cv2.INTER_LINEAR)
    return (canvas.astype(np.float32) / 255).transpose(2, 0, 1)[None]


def make(a):
    import cv2
    import onnx
    from onnxruntime.quantization import CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType, quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process
    blobs = []
    for path in a.calib:
        bgr = cv2.imread(path, cv2.IMREAD_COLOR)
        if bgr is not None:
            blobs.append(letterbox(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB), a.size))
    if not blobs:
        sys.exit("onnx-int8-peers: no readable calibration image")
    model = onnx.load(a.model)
    name = model.graph.input[0].name
    for dim, value in zip(model.graph.input[0].type.tensor_type.shape.dim, [1, 3, a.size, a.size]):
        dim.ClearField("dim_param")
        dim.dim_value = value
    with tempfile.TemporaryDirectory() as work:
        fixed, pre = os.path.join(work, "fixed.onnx"), os.path.join(work, "pre.onnx")
        onnx.save(model, fixed)
        quant_pre_process(fixed, pre)
        tail = [n.name for n in onnx.load(pre).graph.node
                if "/model.22/" in n.name and "/cv2." not in n.name and "/cv3." not in n.name]

        class Reader(CalibrationDataReader):
            def __init__(self):
                self.it = iter(blobs)

            def get_next(self):
                blob = next(self.it, None)
                return None if blob is None else {name: blob}

        partial = a.out + ".part"
        quantize_static(pre, partial, Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                        calibrate_method=CalibrationMethod.MinMax, nodes_to_exclude=tail)
        os.replace(partial, a.out)
    print(f"wrote {a.out} ({len(blobs)} calibration images, {len(tail)} head nodes left float)")


def agree(a):
    import onnxruntime as ort
    from ultralytics_reference import iou, suppress
    sessions = [ort.InferenceSession(p, providers=["CPUExecutionProvider"]) for p in (a.model, a.int8)]
    kept = {0.9: 0, 0.5: 0}
    total = 0
    for image in a.images:
        with tempfile.TemporaryDirectory() as out:
            subprocess.run([a.yolo, "forward", "--model", a.yolo_model, "--input", image, "--out", out], check=True,
                           capture_output=True)
            blob = np.load(os.path.join(out, "input.npy")).astype(np.float32)
        if blob.ndim == 3:
            blob = blob[None]
        fp32, int8 = (suppress(s.run(["output0"], {s.get_inputs()[0].name: blob})[0][0]) for s in sessions)
        total += len(fp32)
        for threshold in kept:
            kept[threshold] += sum(1 for c, _, box in fp32 if any(cc == c and iou(box, b) >= threshold for cc, _, b in int8))
    print(" ".join(f"IoU >= {t}: {v}/{total} ({100 * v / max(total, 1):.1f} %)" for t, v in kept.items()))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    m = sub.add_parser("make")
    m.add_argument("model")
    m.add_argument("out")
    m.add_argument("--size", type=int, required=True)
    m.add_argument("--calib", nargs="+", required=True)
    g = sub.add_parser("agree")
    g.add_argument("--yolo", default=".build/release/yolo")
    g.add_argument("--yolo-model", required=True, help="the float .yolo converted from MODEL.onnx (for the input blobs)")
    g.add_argument("model")
    g.add_argument("int8")
    g.add_argument("images", nargs="+")
    a = parser.parse_args()
    make(a) if a.command == "make" else agree(a)


if __name__ == "__main__":
    main()
