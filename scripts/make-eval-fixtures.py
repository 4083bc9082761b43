#!/usr/bin/env python3
"""Make the COCO-evaluation fixtures under Tests/YOLOTests/Fixtures/eval/.

Each case is a small synthetic COCO annotations file, a results file, and the numbers pycocotools
(the independent reference) computes for them: the 12 `COCOeval.stats` and, per category, the mean
precision over IoU .50:.95 and at IoU .50 (area all, maxDets 100).
Also writes params.json (numpy's own iouThrs / recThrs) and copies the reference mAP figures of
shared/data/reference-outputs/coco-val2017-dev-map/ when shared/ is next to the package.

Usage (pycocotools 2.0.11 from the reference venv):
    /work/shared/reference/setup.sh /tmp/yolo-reference-venv
    /tmp/yolo-reference-venv/bin/python scripts/make-eval-fixtures.py
Deterministic: the random cases use fixed seeds, so a rerun writes identical files.
"""
import contextlib
import io
import json
import os
import random
import shutil

import numpy as np
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, 'Tests', 'YOLOTests', 'Fixtures', 'eval')
SHARED_MAP = os.path.join(ROOT, '..', 'shared', 'data', 'reference-outputs', 'coco-val2017-dev-map')


def dump(path, obj):
    with open(path, 'w') as f:
        json.dump(obj, f, indent=None, separators=(',', ':'))
        f.write('\n')


def evaluate(annotations_path, results_path):
    """pycocotools bbox evaluation; returns the 12 stats and per-category (AP, AP50)."""
    quiet, printed = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(quiet):
        gt = COCO(annotations_path)
        dt = gt.loadRes(results_path)
        ev = COCOeval(gt, dt, 'bbox')
        ev.evaluate()
        ev.accumulate()
    with contextlib.redirect_stdout(printed):
        ev.summarize()
    precision = ev.eval['precision']  # [T, R, K, A, M]
    per_class = {}
    for k, cat in enumerate(ev.params.catIds):
        s = precision[:, :, k, 0, -1]
        s50 = precision[0, :, k, 0, -1]
        ap = float(np.mean(s[s > -1])) if np.any(s > -1) else -1.0
        ap50 = float(np.mean(s50[s50 > -1])) if np.any(s50 > -1) else -1.0
        per_class[str(cat)] = {'ap': ap, 'ap50': ap50}
    return {'stats': [float(x) for x in ev.stats], 'perClass': per_class, 'summary': printed.getvalue()}


def write_case(name, images, annotations, categories, results, note):
    ann_path = os.path.join(OUT, name + '.annotations.json')
    res_path = os.path.join(OUT, name + '.results.json')
    dump(ann_path, {'images': images, 'annotations': annotations, 'categories': categories})
    dump(res_path, results)
    expected = evaluate(ann_path, res_path)
    expected['note'] = note
    dump(os.path.join(OUT, name + '.expected.json'), expected)
    print('%-22s AP=%.4f AP50=%.4f' % (name, expected['stats'][0], expected['stats'][1]))


def image(i, w=640, h=480):
    return {'id': i, 'file_name': '%012d.jpg' % i, 'width': w, 'height': h}


def gt(aid, img, cat, box, area=None, crowd=0):
    return {'id': aid, 'image_id': img, 'category_id': cat, 'bbox': box,
            'area': box[2] * box[3] if area is None else area, 'iscrowd': crowd}


def det(img, cat, box, score):
    return {'image_id': img, 'category_id': cat, 'bbox': box, 'score': score}


CATS = [{'id': 1, 'name': 'person'}, {'id': 3, 'name': 'car'}, {'id': 18, 'name': 'dog'}]


# ------------------------------------------------------------------------------------ hand-made cases
def crowd_case():
    images = [image(1), image(2)]
    anns = [gt(1, 1, 1, [0, 0, 300, 300], crowd=1, area=60000.0),  # a crowd region: many dets may land in it
            gt(2, 1, 1, [400, 50, 100, 200]),
            gt(3, 2, 1, [10, 10, 50, 100]),
            gt(4, 2, 1, [5, 5, 200, 200], crowd=1, area=30000)]
    res = [det(1, 1, [10, 10, 80, 150], 0.9), det(1, 1, [100, 100, 50, 60], 0.8), det(1, 1, [200, 200, 150, 150], 0.7),
           det(1, 1, [402, 48, 98, 205], 0.6), det(1, 1, [0, 0, 300, 300], 0.5), det(2, 1, [12, 8, 50, 100], 0.95),
           det(2, 1, [20, 20, 40, 80], 0.85), det(2, 1, [300, 300, 40, 40], 0.4)]
    write_case('crowd', images, anns, CATS[:1], res, 'crowd regions swallow several detections; IoU uses the detection area')


def duplicates_case():
    images = [image(1), image(2)]
    anns = [gt(1, 1, 3, [100, 100, 120, 80]), gt(2, 1, 3, [300, 200, 60, 40]), gt(3, 2, 3, [50, 60, 200, 150])]
    res = [det(1, 3, [100, 100, 120, 80], 0.9), det(1, 3, [101, 99, 120, 82], 0.88), det(1, 3, [98, 102, 118, 80], 0.7),
           det(1, 3, [300, 200, 60, 40], 0.6), det(1, 3, [300, 200, 60, 40], 0.6), det(2, 3, [55, 60, 190, 150], 0.5),
           det(2, 3, [50, 60, 200, 150], 0.3), det(2, 3, [50, 60, 200, 150], 0.3)]
    write_case('duplicates', images, anns, [CATS[1]], res, 'duplicate detections of one object become false positives')


def empty_images_case():
    images = [image(1), image(2), image(3), image(4)]
    anns = [gt(1, 1, 1, [10, 20, 100, 200]), gt(2, 1, 18, [200, 100, 150, 100]), gt(3, 4, 18, [0, 0, 640, 480])]
    # image 2: no ground truth, no detections; image 3: no ground truth, only false positives;
    # category 3 (car): no ground truth anywhere but detections.
    res = [det(1, 1, [12, 22, 98, 195], 0.8), det(1, 18, [205, 100, 140, 100], 0.7), det(3, 1, [0, 0, 50, 50], 0.99),
           det(3, 18, [100, 100, 100, 100], 0.6), det(1, 3, [10, 20, 100, 200], 0.9), det(4, 18, [0, 0, 600, 470], 0.2)]
    write_case('empty-images', images, anns, CATS, res, 'images without ground truth, a category without ground truth')


def missing_category_case():
    images = [image(1), image(2)]
    anns = [gt(1, 1, 1, [10, 20, 100, 200]), gt(2, 2, 3, [50, 50, 80, 60]), gt(3, 2, 18, [300, 300, 30, 20])]
    res = [det(1, 1, [10, 20, 100, 200], 0.7), det(2, 1, [50, 50, 80, 60], 0.6)]  # no car or dog detections
    write_case('no-detections-for-category', images, anns, CATS, res, 'categories with ground truth and no detections')


def equal_scores_case():
    images = [image(1), image(2), image(3)]
    anns = [gt(1, 1, 1, [0, 0, 100, 100]), gt(2, 1, 1, [150, 0, 100, 100]), gt(3, 2, 1, [0, 0, 50, 50]),
            gt(4, 3, 1, [10, 10, 60, 60])]
    res = [det(2, 1, [300, 300, 40, 40], 0.5), det(1, 1, [0, 0, 100, 100], 0.5), det(1, 1, [400, 400, 50, 50], 0.5),
           det(3, 1, [10, 10, 60, 60], 0.5), det(2, 1, [0, 0, 50, 50], 0.5), det(1, 1, [150, 0, 100, 100], 0.5),
           det(3, 1, [12, 10, 60, 60], 0.5), det(1, 1, [0, 0, 100, 100], 0.4), det(2, 1, [0, 0, 52, 50], 0.4)]
    # equal IoU with two ground truths: the later one in ground-truth order wins
    images.append(image(4))
    anns += [gt(5, 4, 1, [0, 0, 100, 100]), gt(6, 4, 1, [50, 0, 100, 100])]
    res += [det(4, 1, [25, 0, 100, 100], 0.5)]
    write_case('equal-scores', images, anns, [CATS[0]], res, 'ties in score keep file order (stable sort); ties in IoU')


def area_ranges_case():
    images = [image(1, 2000, 2000), image(2)]
    anns = [gt(1, 1, 1, [0, 0, 2, 3]),                      # tiny
            gt(2, 1, 1, [10, 10, 32, 32]),                  # area exactly 32^2: both small and medium
            gt(3, 1, 1, [100, 100, 96, 96]),                # exactly 96^2: both medium and large
            gt(4, 1, 1, [0, 500, 1999, 1400]),              # huge
            gt(5, 1, 1, [300, 300, 50, 50], area=900.0),    # box says medium, area field says small
            gt(6, 2, 1, [10, 10, 40, 40], area=2000.5),
            gt(7, 2, 1, [200, 10, 10, 10], area=100)]
    res = [det(1, 1, [0, 0, 2, 3], 0.9), det(1, 1, [10, 10, 32, 32], 0.8), det(1, 1, [100, 100, 96, 96], 0.7),
           det(1, 1, [0, 500, 1999, 1400], 0.6), det(1, 1, [302, 300, 48, 50], 0.5),
           det(1, 1, [1000, 0, 20, 20], 0.95),        # small false positive
           det(1, 1, [600, 0, 300, 300], 0.55),       # large false positive
           det(2, 1, [10, 10, 20, 20], 0.85),         # small detection on a medium object (IoU .25)
           det(2, 1, [11, 11, 39, 39], 0.45), det(2, 1, [200, 10, 10, 10], 0.3), det(2, 1, [0, 0, 0, 0], 0.2)]
    write_case('area-ranges', images, anns, [CATS[0]], res, 'boundaries 32^2 and 96^2, area field vs w*h')


def max_dets_case():
    rng = random.Random(7)
    images = [image(1), image(2)]
    anns, res, aid = [], [], 1
    for i in (1, 2):
        for k in range(15):
            x, y = rng.uniform(0, 560), rng.uniform(0, 400)
            box = [round(x, 2), round(y, 2), round(rng.uniform(10, 80), 2), round(rng.uniform(10, 80), 2)]
            anns.append(gt(aid, i, 1, box))
            aid += 1
            res.append(det(i, 1, [round(v + rng.uniform(-3, 3), 2) for v in box[:2]] + box[2:], round(rng.random(), 3)))
        for k in range(120):  # clutter, pushes the image past 100 detections
            box = [round(rng.uniform(0, 600), 2), round(rng.uniform(0, 440), 2), round(rng.uniform(2, 60), 2),
                   round(rng.uniform(2, 60), 2)]
            res.append(det(i, 1, box, round(rng.random() * 0.6, 3)))
    write_case('max-dets', images, anns, [CATS[0]], res, 'more than 100 detections per image: maxDets 1/10/100 truncation')


def gt_id_zero_case():
    images = [image(1)]
    anns = [gt(0, 1, 1, [0, 0, 100, 100]), gt(1, 1, 1, [200, 200, 100, 100])]
    res = [det(1, 1, [0, 0, 100, 100], 0.9), det(1, 1, [200, 200, 100, 100], 0.8)]
    write_case('gt-id-zero', images, anns, [CATS[0]], res,
               'pycocotools marks a match by the ground-truth id, so a match with id 0 counts as unmatched')


# ------------------------------------------------------------------------------------ random cases
def random_case(name, seed, n_images, n_cats):
    rng = random.Random(seed)
    cats = [{'id': c, 'name': 'class%d' % c} for c in rng.sample(range(1, 91), n_cats)]
    images, anns, res, aid = [], [], [], 1
    for i in range(n_images):
        iid = rng.randint(1, 10 ** 6) * 10 + i  # unique, unsorted
        w, h = rng.choice([(640, 480), (480, 640), (1024, 768), (300, 200)])
        images.append(image(iid, w, h))
        for _ in range(rng.choice([0, 1, 3, 6, 12])):
            c = rng.choice(cats)['id']
            bw, bh = rng.uniform(1, w * 0.8) ** rng.choice([1, 0.8, 0.6]), rng.uniform(1, h * 0.8) ** rng.choice([1, 0.8, 0.6])
            box = [round(rng.uniform(0, w - bw), 2), round(rng.uniform(0, h - bh), 2), round(bw, 2), round(bh, 2)]
            crowd = 1 if rng.random() < 0.08 else 0
            anns.append(gt(aid, iid, c, box, area=round(box[2] * box[3] * rng.uniform(0.5, 1.0), 2), crowd=crowd))
            aid += 1
            for _ in range(rng.choice([0, 1, 1, 2, 3])):  # hits, near misses and duplicates
                j = [rng.gauss(0, 0.1 * box[2]), rng.gauss(0, 0.1 * box[3]), rng.gauss(0, 0.1 * box[2]), rng.gauss(0, 0.1 * box[3])]
                b = [round(box[0] + j[0], 3), round(box[1] + j[1], 3), round(max(box[2] + j[2], 0.5), 3),
                     round(max(box[3] + j[3], 0.5), 3)]
                cc = c if rng.random() < 0.85 else rng.choice(cats)['id']
                res.append(det(iid, cc, b, round(rng.random(), 2)))  # 2 decimals: plenty of equal scores
        for _ in range(rng.choice([0, 2, 5, 30])):  # false positives
            bw, bh = rng.uniform(2, w / 2), rng.uniform(2, h / 2)
            res.append(det(iid, rng.choice(cats)['id'],
                           [round(rng.uniform(0, w - bw), 3), round(rng.uniform(0, h - bh), 3), round(bw, 3), round(bh, 3)],
                           round(rng.random() * 0.5, 2)))
    rng.shuffle(res)
    write_case(name, images, anns, cats, res, 'random boxes, crowds, duplicates, ties (seed %d)' % seed)


def main():
    os.makedirs(OUT, exist_ok=True)
    p = COCOeval(iouType='bbox').params
    # numpy.mean sums pairwise; a plain left-to-right sum of these values ends in different bits.
    values = np.array([i / 7.0 + 1e-3 for i in range(1003)])
    naive = 0.0
    for v in values:
        naive += v
    dump(os.path.join(OUT, 'params.json'), {'iouThrs': [float(x) for x in p.iouThrs],
                                            'recThrs': [float(x) for x in p.recThrs],
                                            'meanCheck': {'values': 'i / 7.0 + 1e-3 for i in 0..<1003',
                                                          'numpyMean': float(np.mean(values)),
                                                          'plainMean': naive / len(values)}})
    crowd_case()
    duplicates_case()
    empty_images_case()
    missing_category_case()
    equal_scores_case()
    area_ranges_case()
    max_dets_case()
    gt_id_zero_case()
    random_case('random-a', 1, 12, 4)
    random_case('random-b', 2, 25, 8)
    random_case('random-c', 3, 40, 3)
    if os.path.isdir(SHARED_MAP):
        for mode in ('letterbox_dn', 'stretch'):
            shutil.copyfile(os.path.join(SHARED_MAP, mode + '.metrics.json'),
                            os.path.join(OUT, 'coco-val2017-dev-map.%s.metrics.json' % mode))
    else:
        print('note: %s not found; reference metrics not copied' % SHARED_MAP)


if __name__ == '__main__':
    main()
