#!/usr/bin/env python3
"""How many of its own float model's detections an int8 model keeps, for yolo's int8 file and for the onnxruntime
QDQ file of ../shared/reference/int8_peers.py (issue 35 asks for the peer's figures beside ours), counted alike.

Usage: scripts/peer-agreement.py --peers DIR [--model yolov4-tiny] [--int8 FILE.yolo] [--iou 0.9]
DIR holds int8_peers.py make's model.onnx (fp32) and model.int8.onnx (scripts/compare-int8.sh makes them in
out/compare-int8/MODEL/peers). Images: ../shared/data/photos + coco-val2017-dev (the 48 of `yolo compare` in
docs/QUANTIZATION.md), darknet's stretch at the cfg's size, conf 0.25, NMS 0.45 for every engine. yolo's float
detections come from the darknet cfg and weights, onnxruntime's from model.onnx, both int8 files from their own
engine (onnxruntime runs the QDQ graph). Counting as `yolo compare` (DetectionAgreement.swift): (box, class) pairs,
reference pairs most confident first, each matched by the unmatched candidate pair of its class with the highest
IoU if that reaches --iou. Note: int8_peers.py's usage calibrates the QDQ file on the 30 COCO dev images, 30 of
these 48; yolo's int8 file is calibrated on Weights/calibration, none of them.
"""
import argparse, glob, json, os, subprocess, sys, tempfile

from ultralytics_reference import iou

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
shared = os.path.join(os.path.dirname(root), 'shared')
images = sorted(glob.glob(shared + '/data/photos/*.jpg') + glob.glob(shared + '/data/photos/*.png')
                + glob.glob(shared + '/data/coco-val2017-dev/images/*.jpg'))


def yolo_pairs(args):
    out = subprocess.run([os.path.join(root, '.build/release/yolo'), 'detect', '--format', 'json'] + args + images,
                         capture_output=True, text=True, check=True).stdout
    result = {}
    for r in json.loads(out):
        pairs = []
        for d in r['detections']:
            labels = d.get('labels') or [d]
            pairs += [(l['classIndex'], l['confidence'], d['box']) for l in labels]
        result[os.path.basename(r['image'])] = pairs
    return result


def ort_pairs(python, model, cfg, names):
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([python, os.path.join(shared, 'reference/onnx_reference.py'), 'detect', '--model', model,
                        '--cfg', cfg, '--names', names, '--mode', 'stretch_dn', '--out', out] + images,
                       capture_output=True, text=True, check=True)
        result = {}
        for path in glob.glob(out + '/*.json'):
            r = json.load(open(path))
            result[r['image']] = [(d['class_id'], d['confidence'], d['box']) for d in r['detections']]
        return result


def agreement(reference, candidate, threshold):
    matched = total = 0
    for image, pairs in reference.items():
        left = list(candidate.get(image, []))
        for cls, _, box in sorted(pairs, key=lambda p: -p[1]):
            total += 1
            best, best_iou = None, -1.0
            for j, (c, _, b) in enumerate(left):
                if c == cls and iou(box, b) > best_iou:
                    best, best_iou = j, iou(box, b)
            if best is not None and best_iou >= threshold:
                left.pop(best)
                matched += 1
    return matched, total


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--peers', required=True, help='directory with model.onnx and model.int8.onnx')
    ap.add_argument('--model', default='yolov4-tiny', help='darknet model under Weights/ (default yolov4-tiny)')
    ap.add_argument('--int8', help="yolo's int8 file (default Weights/MODEL-int8.yolo)")
    ap.add_argument('--iou', type=float, default=0.9)
    a = ap.parse_args()
    cfg, weights = (os.path.join(root, 'Weights', a.model + ext) for ext in ('.cfg', '.weights'))
    names = os.path.join(root, 'Weights/coco.names')
    int8 = a.int8 or os.path.join(root, 'Weights', a.model + '-int8.yolo')
    python = os.path.join(os.environ.get('REF_VENV', '/tmp/yolo-reference-venv'), 'bin/python')
    for path in (cfg, weights, int8, os.path.join(a.peers, 'model.onnx'), os.path.join(a.peers, 'model.int8.onnx'), python):
        if not os.path.exists(path):
            sys.exit(f'peer-agreement: {path} is missing')
    if not images:
        sys.exit(f'peer-agreement: no images under {shared}/data')
    runs = {
        'yolo float': yolo_pairs(['--cfg', cfg, '--weights', weights, '--names', names]),
        'yolo int8': yolo_pairs(['--model', int8]),
        'onnxruntime fp32': ort_pairs(python, os.path.join(a.peers, 'model.onnx'), cfg, names),
        'onnxruntime int8': ort_pairs(python, os.path.join(a.peers, 'model.int8.onnx'), cfg, names),
    }
    print(f'{len(images)} images, IoU >= {a.iou}: reference pairs kept by the candidate')
    for reference, candidate in [('yolo float', 'yolo int8'), ('onnxruntime fp32', 'onnxruntime int8'),
                                 ('yolo float', 'onnxruntime int8'), ('yolo float', 'onnxruntime fp32')]:
        m, t = agreement(runs[reference], runs[candidate], a.iou)
        print(f'{candidate:>17} against {reference:<17} {m}/{t} ({100 * m / max(t, 1):.1f} %)')


if __name__ == '__main__':
    main()
