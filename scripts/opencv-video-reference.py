#!/usr/bin/env python3
"""OpenCV's VideoCapture + cv2.dnn on a clip, sequentially in one process: the peer figure for
`yolo bench-video` (docs/VIDEO.md). Usage: opencv-video-reference.py CLIP [--model yolov4-tiny|yolov3-tiny]
[--threads N]. Needs opencv-python (the reference venv of ../shared/reference has it)."""
import argparse
import statistics
import time
from pathlib import Path

import cv2
import numpy as np

root = Path(__file__).resolve().parent.parent
parser = argparse.ArgumentParser()
parser.add_argument("clip")
parser.add_argument("--model", default="yolov4-tiny")
parser.add_argument("--threads", type=int, default=2)
args = parser.parse_args()
cv2.setNumThreads(args.threads)

net = cv2.dnn.readNetFromDarknet(str(root / f"Weights/{args.model}.cfg"), str(root / f"Weights/{args.model}.weights"))
net.setPreferableBackend(cv2.dnn.DNN_BACKEND_OPENCV)
outputs = net.getUnconnectedOutLayersNames()

def detect(frame):
    blob = cv2.dnn.blobFromImage(frame, 1 / 255.0, (416, 416), swapRB=True, crop=False)
    net.setInput(blob)
    heads = net.forward(outputs)
    boxes, scores = [], []
    h, w = frame.shape[:2]
    for head in heads:
        for row in head:
            classes = row[5:]
            k = int(np.argmax(classes))
            score = float(classes[k])
            if score > 0.25:
                cx, cy, bw, bh = row[:4] * [w, h, w, h]
                boxes.append([int(cx - bw / 2), int(cy - bh / 2), int(bw), int(bh)])
                scores.append(score)
    return cv2.dnn.NMSBoxes(boxes, scores, 0.25, 0.45)

# Decoding alone.
capture = cv2.VideoCapture(args.clip)
start = time.perf_counter()
frames = []
while True:
    ok, frame = capture.read()
    if not ok:
        break
    if len(frames) < 30:
        frames.append(frame)
count = capture.get(cv2.CAP_PROP_POS_FRAMES)
decode = (time.perf_counter() - start) / max(count, 1)
# Detection alone (3 warm-up passes).
for frame in frames[:3]:
    detect(frame)
times = []
for frame in frames:
    t = time.perf_counter()
    detect(frame)
    times.append(time.perf_counter() - t)
# Both, one after the other, as a plain OpenCV loop does.
capture = cv2.VideoCapture(args.clip)
start = time.perf_counter()
n = 0
while True:
    ok, frame = capture.read()
    if not ok:
        break
    detect(frame)
    n += 1
total = time.perf_counter() - start
print(f"opencv {cv2.__version__} {args.model}, {args.threads} threads, {n} frames")
print(f"decode only       {decode * 1000:7.2f} ms/frame  {1 / decode:7.1f} frames/s")
print(f"detect only       {statistics.median(times) * 1000:7.2f} ms/frame  (median of {len(times)})")
print(f"decode + detect   {total / n * 1000:7.2f} ms/frame  {n / total:7.1f} frames/s")
