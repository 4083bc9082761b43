"""Ultralytics' post-processing of an exported detector's decoded output, for the scripts that check our ONNX
import against onnxruntime (onnx-parity.py, make-onnx-fixtures.py) and compare detection sets
(agreement-across-inputs.py): IoU of corner boxes and class-aware greedy NMS as Ultralytics' non_max_suppression
does it (confidence above `conf`, best class per anchor, at most `max_nms` candidates by score, `max_det` kept)."""
import numpy as np


def iou(a, b):
    """IoU of corner boxes (x1, y1, x2, y2), areas without +1."""
    w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = w * h
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def suppress(output, conf=0.25, iou_threshold=0.7, max_det=300, max_nms=30000):
    """NMS of one image's decoded output (4 + nc rows: cx, cy, w, h, class scores): (class, score, corner box) kept."""
    p = output.T.astype(np.float64)
    scores = p[:, 4:]
    best = scores.argmax(1)
    score = scores.max(1)
    keep = np.nonzero(score > conf)[0]
    order = keep[np.argsort(-score[keep], kind="stable")][:max_nms]
    boxes = np.stack([p[:, 0] - p[:, 2] / 2, p[:, 1] - p[:, 3] / 2, p[:, 0] + p[:, 2] / 2, p[:, 1] + p[:, 3] / 2], 1)
    kept = []
    for i in order:
        if all(best[j] != best[i] or iou(boxes[i], boxes[j]) <= iou_threshold for j in kept):
            kept.append(i)
        if len(kept) == max_det:
            break
    return [(int(best[i]), float(score[i]), boxes[i]) for i in kept]
