#!/usr/bin/env python3
"""Detection agreement of quantized models with the float model under other network inputs than the
one the lut4 settings were chosen on (letterbox at 416): stretch (`--scale fill`), and letterbox at
608 and 320. A check of how far a choice made on the 48 evaluation images carries over.

Usage: scripts/agreement-across-inputs.py FLOAT.yolo MODEL.yolo... [--iou 0.8]
Runs `.build/release/yolo detect --format json` on ../shared/data/photos + coco-val2017-dev. Counts float
detections (one per box, its best class) matched one-to-one by a detection of the same class at IoU >= the
threshold, greedily by IoU, so its totals differ from `yolo compare`, which counts (box, class) pairs.
"""
import glob, json, os, subprocess, sys

from ultralytics_reference import iou

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
yolo = os.path.join(root, '.build/release/yolo')
shared = os.path.join(os.path.dirname(root), 'shared/data')
images = sorted(glob.glob(shared + '/photos/*.jpg') + glob.glob(shared + '/photos/*.png')
                + glob.glob(shared + '/coco-val2017-dev/images/*.jpg'))

def detect(model, extra):
    out = subprocess.run([yolo, 'detect', '--model', model, '--format', 'json'] + extra + images,
                         capture_output=True, text=True, check=True).stdout
    return {r['image']: [(d['classIndex'], d['box']) for d in r['detections']] for r in json.loads(out)}

def agreement(reference, candidate, threshold):
    matched = total = 0
    for image, boxes in reference.items():
        used = set()
        for cls, box in boxes:
            total += 1
            best, best_iou = None, threshold
            for j, (c, b) in enumerate(candidate.get(image, [])):
                if c == cls and j not in used and iou(box, b) >= best_iou:
                    best, best_iou = j, iou(box, b)
            if best is not None:
                used.add(best)
                matched += 1
    return matched, total

args = sys.argv[1:]
threshold = 0.8
if '--iou' in args:
    i = args.index('--iou'); threshold = float(args[i + 1]); del args[i:i + 2]
if len(args) < 2:
    sys.exit(__doc__)
reference_model, models = args[0], args[1:]
print('| input | ' + ' | '.join(os.path.basename(m) for m in models) + ' |')
print('|---|' + '---|' * len(models))
for label, extra in [('letterbox 416 (default)', []), ('stretch 416', ['--scale', 'fill']),
                     ('letterbox 608', ['--size', '608x608']), ('letterbox 320', ['--size', '320x320'])]:
    reference = detect(reference_model, extra)
    cells = []
    for m in models:
        a, n = agreement(reference, detect(m, extra), threshold)
        cells.append('%d/%d (%.1f%%)' % (a, n, 100.0 * a / n))
    print('| %s | %s |' % (label, ' | '.join(cells)), flush=True)
