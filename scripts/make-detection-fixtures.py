#!/usr/bin/env python3
"""Collects the OpenCV DNN reference detections of ../shared/data/reference-outputs (photos and
coco-val2017-dev, modes letterbox_dn and stretch) into one compact fixture,
Tests/YOLOTests/Fixtures/reference-detections.json, so the parity tests carry their own expectations.

Each entry: set/mode/image -> width, height, image sha256 and the detections
(class_id, confidence, box [x1, y1, x2, y2] in float pixels, unclipped), as the reference wrote them.
With arguments SRC OUT MODE... it collects another reference folder of the same layout instead (what
scripts/make-yolov4-tiny-fixtures.sh does for yolov4-tiny). Standard library only."""
import glob
import json
import os
import sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
shared = os.environ.get("SHARED", os.path.join(root, "..", "shared"))
src = os.path.join(shared, "data", "reference-outputs")
dest = os.path.join(root, "Tests", "YOLOTests", "Fixtures", "reference-detections.json")
modes = ("letterbox_dn", "stretch")
if len(sys.argv) > 1:
    if len(sys.argv) < 4:
        sys.exit("usage: make-detection-fixtures.py [SRC OUT MODE...]")
    src, dest, modes = sys.argv[1], sys.argv[2], tuple(sys.argv[3:])
if not os.path.isdir(src):
    sys.exit("make-detection-fixtures: %s not found (set SHARED=...)" % src)

out = {}
for group in ("photos", "coco-val2017-dev"):
    for mode in modes:
        for path in sorted(glob.glob(os.path.join(src, group, mode, "*.json"))):
            with open(path) as f:
                ref = json.load(f)
            key = "%s/%s/%s" % (group, mode, ref["image"])
            out[key] = {
                "width": ref["width"], "height": ref["height"], "sha256": ref["image_sha256"],
                "conf_thresh": ref["conf_thresh"], "nms_iou": ref["nms_iou"],
                "detections": [{"class_id": d["class_id"], "confidence": d["confidence"], "box": d["box"]}
                               for d in ref["detections"]],
            }
with open(dest, "w") as f:
    json.dump(out, f, indent=0, sort_keys=True)
    f.write("\n")
print("make-detection-fixtures: %d images -> %s" % (len(out), dest))
