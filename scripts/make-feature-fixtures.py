#!/usr/bin/env python3
"""Makes the fixture for the darknet-features test: a small cfg that uses the features of AlexeyAB's darknet the
engine runs (mish, swish and logistic convolutions, route groups, routes over several layers, a shortcut, an SPP
block of stride-1 max-pools 5/9/13, upsample, [yolo] new_coords=1 and scale_x_y, nms_kind=diounms, letter_box),
seeded random weights for it in darknet's format, one random input blob, and OpenCV DNN's outputs of the two
convolutions that feed the heads. Run with the reference venv (OpenCV 4.14):
    /tmp/yolo-reference-venv/bin/python scripts/make-feature-fixtures.py
Writes Tests/YOLOTests/Fixtures/darknet-features/{features.cfg, features.weights, input.npy, head0.npy, head1.npy}."""
import os
import cv2
import numpy as np

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
dest = os.path.join(root, "Tests", "YOLOTests", "Fixtures", "darknet-features")
os.makedirs(dest, exist_ok=True)

anchors = "anchors = 10,14, 23,27, 37,58, 81,82, 135,169, 344,319"
sections = [
    "[net]\nwidth=64\nheight=64\nchannels=3\nletter_box=1",
    "[convolutional]\nbatch_normalize=1\nfilters=8\nsize=3\nstride=1\npad=1\nactivation=mish",      # 0  64x64x8
    "[maxpool]\nsize=2\nstride=2",                                                                   # 1  32x32x8
    "[convolutional]\nbatch_normalize=1\nfilters=16\nsize=3\nstride=1\npad=1\nactivation=swish",     # 2  32x32x16
    "[route]\nlayers=-1\ngroups=2\ngroup_id=1",                                                      # 3  32x32x8
    "[convolutional]\nbatch_normalize=1\nfilters=8\nsize=3\nstride=1\npad=1\nactivation=leaky",      # 4  32x32x8
    "[route]\nlayers=-1,-2",                                                                         # 5  32x32x16
    "[convolutional]\nbatch_normalize=1\nfilters=16\nsize=1\nstride=1\npad=1\nactivation=logistic",  # 6  32x32x16
    "[shortcut]\nfrom=-2\nactivation=linear",                                                        # 7  32x32x16
    "[maxpool]\nsize=2\nstride=2",                                                                   # 8  16x16x16
    "[convolutional]\nbatch_normalize=1\nfilters=16\nsize=1\nstride=1\npad=1\nactivation=leaky",     # 9  16x16x16
    "[maxpool]\nstride=1\nsize=5",                                                                   # 10 SPP
    "[route]\nlayers=-2",                                                                            # 11
    "[maxpool]\nstride=1\nsize=9",                                                                   # 12
    "[route]\nlayers=-4",                                                                            # 13
    "[maxpool]\nstride=1\nsize=13",                                                                  # 14
    "[route]\nlayers=-1,-3,-5,-6",                                                                   # 15 16x16x64
    "[convolutional]\nbatch_normalize=1\nfilters=32\nsize=3\nstride=1\npad=1\nactivation=mish",      # 16 16x16x32
    "[convolutional]\nsize=1\nstride=1\npad=1\nfilters=21\nactivation=logistic",                     # 17 head 0
    "[yolo]\nmask=3,4,5\n%s\nclasses=2\nnum=6\nscale_x_y=2.0\nnew_coords=1\nnms_kind=diounms\nbeta_nms=0.6" % anchors,  # 18
    "[route]\nlayers=-3",                                                                            # 19 16x16x32
    "[upsample]\nstride=2",                                                                          # 20 32x32x32
    "[route]\nlayers=-1,7",                                                                          # 21 32x32x48
    "[convolutional]\nsize=1\nstride=1\npad=1\nfilters=21\nactivation=linear",                       # 22 head 1
    "[yolo]\nmask=0,1,2\n%s\nclasses=2\nnum=6\nscale_x_y=1.05\nnms_kind=diounms\nbeta_nms=0.6" % anchors,  # 23
]
with open(os.path.join(dest, "features.cfg"), "w") as f:
    f.write("# Written by scripts/make-feature-fixtures.py (SwiftYOLO): darknet features on a tiny network.\n")
    f.write("\n\n".join(sections) + "\n")

# Weights: per convolution, biases[n] (+ scales, rolling mean, rolling variance when batch-normalized), then
# weights[n][c][k][k]; header int32 major 0, minor 2, revision 0, int64 seen. He-style scales keep activations O(1).
convs = [(3, 8, 3, True), (8, 16, 3, True), (8, 8, 3, True), (16, 16, 1, True), (16, 16, 1, True),
         (64, 32, 3, True), (32, 21, 1, False), (48, 21, 1, False)]
rng = np.random.default_rng(20261125)
parts = [np.array([0, 2, 0], dtype="<i4").tobytes(), np.array([0], dtype="<i8").tobytes()]
for c, n, k, bn in convs:
    parts.append(rng.uniform(-0.2, 0.2, n).astype("<f4").tobytes())
    if bn:
        parts.append(rng.uniform(0.5, 1.5, n).astype("<f4").tobytes())     # scales
        parts.append(rng.uniform(-0.1, 0.1, n).astype("<f4").tobytes())    # rolling mean
        parts.append(rng.uniform(0.5, 2.0, n).astype("<f4").tobytes())     # rolling variance
    parts.append((rng.standard_normal(n * c * k * k) * np.sqrt(2.0 / (c * k * k))).astype("<f4").tobytes())
with open(os.path.join(dest, "features.weights"), "wb") as f:
    f.write(b"".join(parts))

blob = rng.uniform(0, 1, (1, 3, 64, 64)).astype(np.float32)
np.save(os.path.join(dest, "input.npy"), blob)
net = cv2.dnn.readNetFromDarknet(os.path.join(dest, "features.cfg"), os.path.join(dest, "features.weights"))
net.setInput(blob)
names = net.getLayerNames()
outs = net.forward(["logistic_18", "conv_22"])  # head 0 after its logistic activation
for i, o in enumerate(outs):
    np.save(os.path.join(dest, "head%d.npy" % i), o.astype(np.float32))
    print("head%d" % i, o.shape, "range %.3f..%.3f" % (o.min(), o.max()))
print("OpenCV", cv2.__version__, "layers:", len(names))
