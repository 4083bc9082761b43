#!/usr/bin/env python3
"""Makes the fixture of the full-yolov3 test: darknet's yolov3 topology (106 layers: 23 residual blocks with
[shortcut], routes over two layers, three heads) with every convolution's filters divided by 8 (so the weights
stay small), at 96x96, and OpenCV DNN 4.14's three head outputs for one input. The weights are not stored:
they come from a seeded xorshift64 generator that the Swift test repeats bit for bit (SeededRandom in
Tests/YOLOTestSupport/TestSupport.swift), in darknet's order (biases, then scales / rolling mean / rolling variance for
batch-normalized layers, then weights). Run with the reference venv:
    /tmp/yolo-reference-venv/bin/python scripts/make-yolov3-fixtures.py
Writes Tests/YOLOTests/Fixtures/yolov3-full/{yolov3-narrow.cfg, input.npy, head0.npy, head1.npy, head2.npy}."""
import os
import tempfile
import cv2
import numpy as np

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
dest = os.path.join(root, "Tests", "YOLOTests", "Fixtures", "yolov3-full")
os.makedirs(dest, exist_ok=True)
W = 8  # width divisor

sections = ["[net]\nwidth=96\nheight=96\nchannels=3"]
convs = []  # (in channels, filters, size, batch-normalized, residual second conv)
shapes = []  # channels after each layer

def conv(filters, size, stride=1, bn=True, activation="leaky", residual=False):
    c = shapes[-1] if shapes else 3
    text = "[convolutional]\n" + ("batch_normalize=1\n" if bn else "") + \
        "filters=%d\nsize=%d\nstride=%d\npad=1\nactivation=%s" % (filters, size, stride, activation)
    sections.append(text)
    convs.append((c, filters, size, bn, residual))
    shapes.append(filters)

def shortcut():
    sections.append("[shortcut]\nfrom=-3\nactivation=linear")
    shapes.append(shapes[-1])

def route(*layers):
    sections.append("[route]\nlayers=" + ",".join(str(l) for l in layers))
    n = len(shapes)
    shapes.append(sum(shapes[l if l >= 0 else n + l] for l in layers))

def upsample():
    sections.append("[upsample]\nstride=2")
    shapes.append(shapes[-1])

anchors = "anchors = 10,13, 16,30, 33,23, 30,61, 62,45, 59,119, 116,90, 156,198, 373,326"
def yolo(mask):
    sections.append("[yolo]\nmask=%s\n%s\nclasses=80\nnum=9" % (mask, anchors))
    shapes.append(shapes[-1])

conv(32 // W, 3)
for filters, blocks in [(64, 1), (128, 2), (256, 8), (512, 8), (1024, 4)]:
    conv(filters // W, 3, stride=2)
    for _ in range(blocks):
        conv(filters // 2 // W, 1)
        conv(filters // W, 3, residual=True)
        shortcut()
assert len(shapes) == 75
for _ in range(3):
    conv(512 // W, 1); conv(1024 // W, 3)
conv(255, 1, bn=False, activation="linear"); yolo("6,7,8")          # layers 81, 82
route(-4); conv(256 // W, 1); upsample(); route(-1, 61)
for _ in range(3):
    conv(256 // W, 1); conv(512 // W, 3)
conv(255, 1, bn=False, activation="linear"); yolo("3,4,5")          # 93, 94
route(-4); conv(128 // W, 1); upsample(); route(-1, 36)
for _ in range(3):
    conv(128 // W, 1); conv(256 // W, 3)
conv(255, 1, bn=False, activation="linear"); yolo("0,1,2")          # 105, 106
assert len(shapes) == 107, len(shapes)

cfg = os.path.join(dest, "yolov3-narrow.cfg")
with open(cfg, "w") as f:
    f.write("# Written by scripts/make-yolov3-fixtures.py (SwiftYOLO): yolov3's topology, filters / 8.\n")
    f.write("\n\n".join(sections) + "\n")

class XorShift:
    """The test suite's SeededRandom: xorshift64 (13, 7, 17); a float is lower + (upper - lower) * (next >> 40) / 2^24
    in float32."""
    def __init__(self, seed):
        self.state = seed
    def next(self):
        s = self.state
        s ^= (s << 13) & 0xFFFFFFFFFFFFFFFF
        s ^= s >> 7
        s ^= (s << 17) & 0xFFFFFFFFFFFFFFFF
        self.state = s
        return s
    def floats(self, count, lower, upper):
        raw = np.array([self.next() >> 40 for _ in range(count)], dtype=np.float32)
        return np.float32(lower) + (np.float32(upper) - np.float32(lower)) * (raw / np.float32(1 << 24))

def weights_bytes(seed=3):
    random = XorShift(seed)
    parts = [np.array([0, 2, 0], dtype="<i4").tobytes(), np.array([0], dtype="<i8").tobytes()]
    for c, n, k, bn, residual in convs:
        parts.append(random.floats(n, -0.1, 0.1).astype("<f4").tobytes())
        if bn:
            parts.append(random.floats(n, 0.5, 1.0).astype("<f4").tobytes())
            parts.append(random.floats(n, -0.1, 0.1).astype("<f4").tobytes())
            parts.append(random.floats(n, 0.5, 2.0).astype("<f4").tobytes())
        # He-uniform bound sqrt(6 / fan-in); the second convolution of a residual block a third of it, so
        # 23 shortcuts do not blow the activations up.
        bound = float(np.float32(np.sqrt(6.0 / (c * k * k)) * (1 / 3 if residual else 1)))
        parts.append(random.floats(n * c * k * k, -bound, bound).astype("<f4").tobytes())
    return b"".join(parts)

data = weights_bytes()
with tempfile.NamedTemporaryFile(suffix=".weights") as f:
    f.write(data)
    f.flush()
    net = cv2.dnn.readNetFromDarknet(cfg, f.name)
blob = XorShift(4).floats(3 * 96 * 96, 0, 1).reshape(1, 3, 96, 96).astype(np.float32)
np.save(os.path.join(dest, "input.npy"), blob)
net.setInput(blob)
outs = net.forward(["conv_81", "conv_93", "conv_105"])
for i, o in enumerate(outs):
    np.save(os.path.join(dest, "head%d.npy" % i), o.astype(np.float32))
    print("head%d" % i, o.shape, "range %.3f..%.3f, rms %.3f" % (o.min(), o.max(), np.sqrt((o ** 2).mean())))
print("weights: %d bytes, %d convolutions" % (len(data), len(convs)))
