#!/usr/bin/env python3
"""Makes the ONNX import fixtures in Tests/YOLOTests/Fixtures/onnx (run with the reference venv:
/tmp/yolo-reference-venv/bin/python scripts/make-onnx-fixtures.py).

yolov8-tiny-random.onnx: a graph with the structure Ultralytics exports for a YOLOv8 detector (Conv + SiLU as
Sigmoid/Mul, C2f with Split/Add/Concat, SPPF with MaxPool k5 s1 p2, nearest Resize x2, a two-scale Detect head
and the exported decode chain: Reshape, Concat, Split, DFL Reshape/Transpose/Softmax/Conv, anchor Sub/Add/Div,
stride Mul, class Sigmoid), narrow (8-64 channels) with seeded random weights, input 1x3x64x64, 3 classes.
onnxruntime's outputs for a seeded input blob are the reference: input.npy, head0.npy / head1.npy (the head
Concat tensors: 64 box logits + 3 class logits per cell), and detections.json, output0 suppressed the way
Ultralytics documents its NMS (best class per box, score > 0.25, class-aware greedy IoU 0.7, at most 300), in
network pixels (x1, y1, x2, y2).
yolo11-tiny-random.onnx: a graph with the structure Ultralytics exports for a YOLO11 detector (ultralytics/nn/modules
block.py and head.py, yolo11.yaml): C3k2 as C2f (Split/Concat) with Bottleneck(c, c, e=0.5) blocks (c3k False) or
C3k blocks (c3k True: C3 = cv1 and cv2 1x1, two Bottleneck(e=1.0) 3x3 pairs on cv1's branch, Concat, cv3);
SPPF; C2PSA with one PSABlock: x + Attention(x), x + ffn(x) (Conv SiLU, Conv linear), where Attention is the qkv
1x1 Conv (linear), Reshape to [1, heads, 2 key_dim + head_dim, N], Split along axis 2 into q, k, v, Transpose(q)
MatMul k, Mul by key_dim^-0.5, Softmax(axis -1), v MatMul Transpose(attn), Reshape to [1, C, H, W], Add pe (the
depthwise 3x3 Conv of v reshaped to [1, C, H, W], linear), proj 1x1 Conv (linear); the three-scale Detect head
whose class branch is DWConv 3x3 -> Conv 1x1 -> DWConv 3x3 -> Conv 1x1 (SiLU each, DWConv = Conv with group = its
channels) -> Conv2d 1x1, and the same decode chain as the YOLOv8 fixture. Static shapes (the export default).
Narrow (8-64 channels), input 1x3x96x96, 3 classes, seeded random weights. Where it departs from an export of
YOLO11n: the widths, the box branch's 16 hidden channels (Ultralytics: max(16, ch/4, 64)), and the C2PSA's
num_heads: Ultralytics sets c // 64 (YOLO11n: c 128, 2 heads of 64 channels, key_dim 32); here c is 16 with 2
heads (head_dim 8, key_dim 4) so the file stays small. Its references: yolo11-input.npy, yolo11-head0..2.npy,
yolo11-detections.json, made as the YOLOv8 ones.
Fuzz/Corpus/fuzz-onnx/yolov8-mini.onnx: the fuzz seed, every mapped operator once with 1x1 convolutions (4 KB).
Fuzz/Corpus/fuzz-onnx/yolo11-mini.onnx: the YOLO11 fuzz seed: C3k2 with C3k, C2PSA, a one-scale YOLO11 head.
unsupported-leaky.onnx: a one-scale head whose first convolution is followed by LeakyRelu (not supported).
unsupported-attention.onnx: a C2PSA with attn_ratio 0.25 (key_dim = head_dim / 4; not supported).
"""
import json
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from ultralytics_reference import suppress

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "YOLOTests", "Fixtures", "onnx")
rng = np.random.default_rng(38)


class Graph:
    def name(self, prefix):
        self.count += 1
        return f"/{prefix}_{self.count}"

    def const(self, array, prefix="c"):
        name = self.name(prefix)
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def node(self, op, inputs, outputs=1, **attrs):
        name = self.name(op)
        outs = [f"{name}_out{k}" for k in range(outputs)]
        self.nodes.append(helper.make_node(op, inputs, outs, name=name, **attrs))
        return outs if outputs > 1 else outs[0]

    def __init__(self, random=None):
        self.nodes, self.inits, self.count = [], [], 0
        self.rng = random or rng

    def conv(self, x, cin, cout, k=1, s=1, act=True, bias_scale=0.1, g=1):
        w = (self.rng.standard_normal((cout, cin // g, k, k)) * np.sqrt(2.0 / (cin // g * k * k)) * 0.7).astype(np.float32)
        b = (self.rng.standard_normal(cout) * bias_scale).astype(np.float32)
        y = self.node("Conv", [x, self.const(w, "w"), self.const(b, "b")], kernel_shape=[k, k], strides=[s, s],
                      pads=[k // 2] * 4, dilations=[1, 1], group=g)
        if not act:
            return y
        return self.node("Mul", [y, self.node("Sigmoid", [y])])

    def c2f(self, x, cin, cout, n=1, shortcut=True):
        c = cout // 2
        y = self.conv(x, cin, 2 * c)
        a, b = self.node("Split", [y, self.const(np.array([c, c], np.int64), "split")], outputs=2, axis=1)
        parts = [a, b]
        for _ in range(n):
            m = self.conv(self.conv(parts[-1], c, c, 3), c, c, 3)
            parts.append(self.node("Add", [parts[-1], m]) if shortcut else m)
        return self.conv(self.node("Concat", parts, axis=1), (2 + n) * c, cout)

    def sppf(self, x, cin, cout):
        c = cin // 2
        y = [self.conv(x, cin, c)]
        for _ in range(3):
            y.append(self.node("MaxPool", [y[-1]], kernel_shape=[5, 5], strides=[1, 1], pads=[2, 2, 2, 2], ceil_mode=0))
        return self.conv(self.node("Concat", y, axis=1), 4 * c, cout)

    def bottleneck(self, x, c, e=0.5, shortcut=True):
        """Ultralytics' Bottleneck(c, c, shortcut, k=(3, 3), e): two 3x3 Conv, the residual Add."""
        m = self.conv(self.conv(x, c, int(c * e), 3), int(c * e), c, 3)
        return self.node("Add", [x, m]) if shortcut else m

    def c3k(self, x, c, n=2, shortcut=True):
        """C3k(c, c, n): C3 with Bottleneck(c_, c_, k=3, e=1.0): cv3(cat(m(cv1(x)), cv2(x)))."""
        h = c // 2
        y = self.conv(x, c, h)
        for _ in range(n):
            y = self.bottleneck(y, h, e=1.0, shortcut=shortcut)
        return self.conv(self.node("Concat", [y, self.conv(x, c, h)], axis=1), 2 * h, c)

    def c3k2(self, x, cin, cout, n=1, c3k=False, e=0.5, shortcut=True):
        """C3k2: C2f's Split/Concat with Bottleneck(c, c, e=0.5) blocks, or C3k blocks when c3k."""
        c = int(cout * e)
        a, b = self.node("Split", [self.conv(x, cin, 2 * c), self.const(np.array([c, c], np.int64), "split")], outputs=2, axis=1)
        parts = [a, b]
        for _ in range(n):
            parts.append(self.c3k(parts[-1], c, shortcut=shortcut) if c3k else self.bottleneck(parts[-1], c, shortcut=shortcut))
        return self.conv(self.node("Concat", parts, axis=1), (2 + n) * c, cout)

    def attention(self, x, c, heads, side, ratio=0.5):
        """Ultralytics' Attention(c, num_heads=heads, attn_ratio=0.5) as torch.onnx exports it (static shapes)."""
        hd = c // heads
        kd = int(hd * ratio)
        hw = side * side
        qkv = self.conv(x, c, c + 2 * kd * heads, act=False)
        qkv = self.node("Reshape", [qkv, self.const(np.array([1, heads, 2 * kd + hd, hw], np.int64), "shape")])
        q, k, v = self.node("Split", [qkv, self.const(np.array([kd, kd, hd], np.int64), "split")], outputs=3, axis=2)
        attn = self.node("MatMul", [self.node("Transpose", [q], perm=[0, 1, 3, 2]), k])
        attn = self.node("Softmax", [self.node("Mul", [attn, self.const(np.array(kd ** -0.5, np.float32), "scale")])], axis=-1)
        out = self.node("MatMul", [v, self.node("Transpose", [attn], perm=[0, 1, 3, 2])])
        chw = np.array([1, c, side, side], np.int64)
        out = self.node("Reshape", [out, self.const(chw, "shape")])
        pe = self.conv(self.node("Reshape", [v, self.const(chw, "shape")]), c, c, 3, act=False, g=c)
        return self.conv(self.node("Add", [out, pe]), c, c, act=False)

    def c2psa(self, x, c1, heads, side, n=1, ratio=0.5):
        """C2PSA(c1, c1, n): cv1, Split, n PSABlocks (x + attn(x), x + ffn(x)), Concat, cv2."""
        c = c1 // 2
        a, b = self.node("Split", [self.conv(x, c1, 2 * c), self.const(np.array([c, c], np.int64), "split")], outputs=2, axis=1)
        for _ in range(n):
            b = self.node("Add", [b, self.attention(b, c, heads, side, ratio)])
            b = self.node("Add", [b, self.conv(self.conv(b, c, 2 * c), 2 * c, c, act=False)])
        return self.conv(self.node("Concat", [a, b], axis=1), 2 * c, c1)

    def upsample(self, x):
        scales = self.node("Constant", [], value=numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32)))
        return self.node("Resize", [x, "", scales], mode="nearest", coordinate_transformation_mode="asymmetric",
                         nearest_mode="floor")

    def head(self, features, channels, strides, size, nc, bins=16, c3=None):
        outs, anchors, stride_row = [], [], []
        for x, c, s in zip(features, channels, strides):
            box = self.conv(self.conv(self.conv(x, c, 16, 3), 16, 16, 3), 16, 4 * bins, act=False, bias_scale=1.0)
            if c3 is None:
                cls = self.conv(self.conv(self.conv(x, c, 16, 3), 16, 16, 3), 16, nc, act=False, bias_scale=1.0)
            else:  # YOLO11: DWConv 3x3 -> Conv 1x1 -> DWConv 3x3 -> Conv 1x1 (all SiLU) -> Conv2d 1x1
                y = self.conv(self.conv(x, c, c, 3, g=c), c, c3)
                y = self.conv(self.conv(y, c3, c3, 3, g=c3), c3, c3)
                cls = self.conv(y, c3, nc, act=False, bias_scale=1.0)
            cat = self.node("Concat", [box, cls], axis=1)
            outs.append(self.node("Reshape", [cat, self.const(np.array([1, 4 * bins + nc, -1], np.int64), "shape")]))
            g = size // s
            ys, xs = np.meshgrid(np.arange(g) + 0.5, np.arange(g) + 0.5, indexing="ij")
            anchors.append(np.stack([xs.ravel(), ys.ravel()]))
            stride_row.append(np.full(g * g, s))
        n = sum(a.shape[1] for a in anchors)
        cat = self.node("Concat", outs, axis=2)
        box, cls = self.node("Split", [cat, self.const(np.array([4 * bins, nc], np.int64), "split")], outputs=2, axis=1)
        d = self.node("Reshape", [box, self.const(np.array([1, 4, bins, n], np.int64), "shape")])
        d = self.node("Softmax", [self.node("Transpose", [d], perm=[0, 2, 1, 3])], axis=1)
        d = self.node("Conv", [d, self.const(np.arange(bins, dtype=np.float32).reshape(1, bins, 1, 1), "dfl")],
                      kernel_shape=[1, 1])
        d = self.node("Reshape", [d, self.const(np.array([1, 4, n], np.int64), "shape")])
        axes, one = self.const(np.array([1], np.int64)), self.const(np.array([0], np.int64))
        lt = self.node("Slice", [d, one, self.const(np.array([2], np.int64)), axes])
        rb = self.node("Slice", [d, self.const(np.array([2], np.int64)), self.const(np.array([4], np.int64)), axes])
        anchor = self.const(np.concatenate(anchors, 1)[None].astype(np.float32), "anchors")
        x1y1, x2y2 = self.node("Sub", [anchor, lt]), self.node("Add", [anchor, rb])
        centre = self.node("Div", [self.node("Add", [x1y1, x2y2]), self.const(np.array(2, np.float32))])
        wh = self.node("Sub", [x2y2, x1y1])
        boxes = self.node("Mul", [self.node("Concat", [centre, wh], axis=1),
                                  self.const(np.concatenate(stride_row)[None].astype(np.float32), "strides")])
        out = self.node("Concat", [boxes, self.node("Sigmoid", [cls])], axis=1)
        self.nodes[-1].output[0] = "output0"
        return n

    def model(self, size, nc, n, names, out_shape=None):
        graph = helper.make_graph(self.nodes, "main", [helper.make_tensor_value_info("images", TensorProto.FLOAT, [1, 3, size, size])],
                                  [helper.make_tensor_value_info("output0", TensorProto.FLOAT, out_shape or [1, 4 + nc, n])], self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="make-onnx-fixtures")
        model.ir_version = 8
        helper.set_model_props(model, {"names": names, "stride": "16", "imgsz": f"[{size}, {size}]"})
        onnx.checker.check_model(model)
        return model


def tiny_v8():
    g, size, nc = Graph(), 64, 3
    x = g.conv("images", 3, 8, 3, 2)          # 32
    x = g.conv(x, 8, 16, 3, 2)                # 16
    x = g.c2f(x, 16, 16)
    x = g.conv(x, 16, 32, 3, 2)               # 8
    p3 = g.c2f(x, 32, 32)
    x = g.conv(p3, 32, 32, 3, 2)              # 4
    x = g.c2f(x, 32, 32)
    p5 = g.sppf(x, 32, 32)
    x = g.node("Concat", [g.upsample(p5), p3], axis=1)
    n3 = g.c2f(x, 64, 32, shortcut=False)     # 8
    x = g.node("Concat", [g.conv(n3, 32, 32, 3, 2), p5], axis=1)
    n4 = g.c2f(x, 64, 32, shortcut=False)     # 4
    n = g.head([n3, n4], [32, 32], [8, 16], size, nc)
    return g.model(size, nc, n, "{0: 'cat', 1: 'dog', 2: \"it's\"}"), size


def tiny_yolo11():
    """YOLO11n's layout (yolo11.yaml), narrow: backbone Conv/C3k2(c3k False, e 0.25)/C3k2(c3k True), SPPF, C2PSA with
    two heads, the FPN/PAN neck with C3k2, and the three-scale YOLO11 Detect head; input 96x96, 3 classes."""
    g, size, nc = Graph(np.random.default_rng(11)), 96, 3
    x = g.conv("images", 3, 8, 3, 2)                      # 48
    x = g.conv(x, 8, 16, 3, 2)                            # 24
    x = g.c3k2(x, 16, 16, e=0.25)
    x = g.conv(x, 16, 24, 3, 2)                           # 12
    p3 = g.c3k2(x, 24, 24, e=0.25)
    x = g.conv(p3, 24, 32, 3, 2)                          # 6
    p4 = g.c3k2(x, 32, 32, c3k=True)
    x = g.conv(p4, 32, 32, 3, 2)                          # 3
    x = g.c3k2(x, 32, 32, c3k=True)
    x = g.sppf(x, 32, 32)
    p5 = g.c2psa(x, 32, heads=2, side=3)                  # c 16: 2 heads, head dim 8, key dim 4
    n4 = g.c3k2(g.node("Concat", [g.upsample(p5), p4], axis=1), 64, 24)              # 6
    o3 = g.c3k2(g.node("Concat", [g.upsample(n4), p3], axis=1), 48, 24)              # 12
    o4 = g.c3k2(g.node("Concat", [g.conv(o3, 24, 24, 3, 2), n4], axis=1), 48, 24)    # 6
    o5 = g.c3k2(g.node("Concat", [g.conv(o4, 24, 24, 3, 2), p5], axis=1), 56, 32, c3k=True)  # 3
    n = g.head([o3, o4, o5], [24, 24, 32], [8, 16, 32], size, nc, c3=max(24, min(nc, 100)))
    return g.model(size, nc, n, "{0: 'cat', 1: 'dog', 2: 'bird'}"), size


def mini_yolo11():
    """The YOLO11 fuzz seed: C3k2 (c3k), C2PSA (2 heads of 2 channels) and a one-scale YOLO11 head, 32x32 input."""
    g, size, nc = Graph(np.random.default_rng(12)), 32, 1
    x = g.conv("images", 3, 8, 3, 2)                      # 16
    x = g.conv(x, 8, 8, 3, 2)                             # 8
    x = g.c3k2(x, 8, 8, c3k=True)
    x = g.conv(x, 8, 8, 3, 2)                             # 4
    x = g.c2psa(x, 8, heads=2, side=4)
    n = g.head([x], [8], [8], size, nc, c3=8)
    return g.model(size, nc, n, "{0: 'thing'}")


def unsupported_attention():
    """mini_yolo11 with attn_ratio 0.25 (key_dim = head_dim / 4): not supported, the error names the Split."""
    g, size, nc = Graph(np.random.default_rng(13)), 32, 1
    x = g.conv("images", 3, 16, 3, 2)                     # 16
    x = g.conv(x, 16, 16, 3, 2)                           # 8
    x = g.conv(x, 16, 16, 3, 2)                           # 4
    x = g.c2psa(x, 16, heads=2, side=4, ratio=0.25)
    n = g.head([x], [16], [8], size, nc, c3=16)
    return g.model(size, nc, n, "{0: 'thing'}")


def unsupported():
    g, size, nc = Graph(), 32, 2
    x = g.conv("images", 3, 8, 3, 2, act=False)
    g.nodes[-1].name = "stem_conv"
    x = g.node("LeakyRelu", [x], alpha=0.1)
    g.nodes[-1].name = "stem_leaky"
    n = g.head([x], [8], [2], size, nc)
    return g.model(size, nc, n, "{0: 'a', 1: 'b'}")


def mini():
    """The fuzz seed: every mapped operator once, 1x1 convolutions, 32x32 input, one head of 1 class."""
    g, size, nc = Graph(), 32, 1
    x = g.conv("images", 3, 4, 1, 2)          # 16
    a, b = g.node("Split", [x, g.const(np.array([2, 2], np.int64), "split")], outputs=2, axis=1)
    x = g.node("Concat", [a, g.node("Add", [b, g.conv(b, 2, 2)])], axis=1)
    x = g.node("MaxPool", [g.conv(x, 4, 4, 1, 2)], kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1])  # 8
    x = g.node("Concat", [g.upsample(g.conv(x, 4, 4, 1, 2)), x], axis=1)  # 8
    box = g.conv(x, 8, 64, act=False)
    cls = g.conv(x, 8, nc, act=False)
    cat = g.node("Concat", [box, cls], axis=1)
    out = g.node("Reshape", [cat, g.const(np.array([1, 64 + nc, -1], np.int64), "shape")])
    g.nodes[-1].output[0] = "output0"
    return g.model(size, nc, 64, "{0: 'thing'}", out_shape=[1, "rows", "anchors"])


def reference(model, size, prefix):
    """onnxruntime's outputs for a seeded input blob: {prefix}input.npy, {prefix}headK.npy, {prefix}detections.json."""
    heads = [n.output[0] for n in model.graph.node if n.op_type == "Concat" and len(n.input) == 2
             and all(i.startswith("/Conv") for i in n.input)]
    for name in heads:
        model.graph.output.append(helper.make_empty_tensor_value_info(name))
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    blob = np.random.default_rng(7).random((1, 3, size, size), dtype=np.float32)
    results = session.run(["output0"] + heads, {"images": blob})
    np.save(os.path.join(OUT, f"{prefix}input.npy"), blob)
    for k, head in enumerate(results[1:]):
        np.save(os.path.join(OUT, f"{prefix}head{k}.npy"), head.astype(np.float32))
    detections = [{"classIndex": c, "confidence": score, "box": [float(v) for v in box]}
                  for c, score, box in suppress(results[0][0])]
    with open(os.path.join(OUT, f"{prefix}detections.json"), "w") as f:
        json.dump(detections, f, indent=1)
    print(f"{prefix or 'v8 '}{len(heads)} heads, {len(detections)} detections, onnxruntime {ort.__version__}", file=sys.stderr)


def main():
    os.makedirs(OUT, exist_ok=True)
    model, size = tiny_v8()
    onnx.save(model, os.path.join(OUT, "yolov8-tiny-random.onnx"))
    onnx.save(unsupported(), os.path.join(OUT, "unsupported-leaky.onnx"))
    onnx.save(unsupported_attention(), os.path.join(OUT, "unsupported-attention.onnx"))
    onnx.save(mini(), os.path.join(OUT, "..", "..", "..", "..", "Fuzz", "Corpus", "fuzz-onnx", "yolov8-mini.onnx"))
    reference(model, size, "")
    model11, size11 = tiny_yolo11()
    onnx.save(model11, os.path.join(OUT, "yolo11-tiny-random.onnx"))
    onnx.save(mini_yolo11(), os.path.join(OUT, "..", "..", "..", "..", "Fuzz", "Corpus", "fuzz-onnx", "yolo11-mini.onnx"))
    reference(model11, size11, "yolo11-")


if __name__ == "__main__":
    main()
