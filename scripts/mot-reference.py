#!/usr/bin/env python3
"""Reference figures of py-motmetrics 1.4.0 for `yolo eval-mot` and its tests.

Usage:
  scripts/mot-reference.py                  writes Tests/YOLOTests/Fixtures/mot/motmetrics-1.4.0-tud.json:
                                            every figure of the TUD-Campus and TUD-Stadtmitte files the
                                            motmetrics 1.4.0 wheel ships (motmetrics/data/TUD-*/gt.txt, test.txt)
  scripts/mot-reference.py --compare GT RES prints the figures of any MOTChallenge pair as JSON (to cross-check
                                            `yolo eval-mot --format json`, or a hand-built test case)
  scripts/mot-reference.py --crosscheck [CASES [SEED [ties]]]
                                            random sequences (objects moving, gaps, ignored rows, id switches,
                                            duplicate ids, false positives, frames in one file only) through
                                            py-motmetrics and .build/release/yolo eval-mot; prints the cases whose
                                            figures differ (by more than 1e-9). `ties` puts every box on a coarse
                                            grid, so equal distances are common: there the two may differ where
                                            an assignment has several optima (scipy and LinearAssignment break
                                            ties differently)

Runs py-motmetrics as its MOTChallenge evaluation does: loadtxt(fmt='mot15-2D', min_confidence=1) for the
ground truth, loadtxt(fmt='mot15-2D') for the results, compare_to_groundtruth(gt, res, 'iou', distth=0.5),
then compute_many with motchallenge_metrics plus the counts that list leaves out.

py-motmetrics runs in its own virtual environment, made on first use in $MOT_REFERENCE_VENV (default
/tmp/swiftyolo-motmetrics-1.4.0), with pinned packages from PyPI: the motmetrics wheel (its sha256 checked)
and numpy<2 (motmetrics 1.4.0 calls np.asfarray, which NumPy 2 removed), pandas, scipy and xmltodict. With
only scipy installed, motmetrics' linear assignments use scipy.optimize.linear_sum_assignment.
"""
import hashlib, json, os, subprocess, sys, tempfile

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
fixture = os.path.join(root, 'Tests/YOLOTests/Fixtures/mot/motmetrics-1.4.0-tud.json')
venv = os.environ.get('MOT_REFERENCE_VENV', '/tmp/swiftyolo-motmetrics-1.4.0')

WHEEL = 'motmetrics-1.4.0-py3-none-any.whl'
WHEEL_SHA256 = 'cd4d691bd787360f1cd0a2127fe8a14d0646fb2912b344a9498719e132b25738'
PINS = ['numpy==1.26.4', 'pandas==2.2.3', 'scipy==1.13.1', 'xmltodict==0.13.0']
SEQUENCES = ['TUD-Campus', 'TUD-Stadtmitte']
# motchallenge_metrics, then the counts it leaves out.
EXTRA_METRICS = ['num_frames', 'num_objects', 'num_predictions', 'num_matches', 'num_detections',
                 'idtp', 'idfp', 'idfn']
RATIOS = {'idf1', 'idp', 'idr', 'recall', 'precision', 'mota', 'motp'}


def sha256(path):
    with open(path, 'rb') as f:
        return hashlib.sha256(f.read()).hexdigest()


# MARK: Outside the virtual environment

def ensure_venv():
    """Makes the virtual environment once; a half-made one (no marker) is made again."""
    python = os.path.join(venv, 'bin/python')
    marker = os.path.join(venv, '.complete')
    if os.path.exists(marker):
        return python
    subprocess.run([sys.executable, '-m', 'venv', '--clear', venv], check=True)
    with tempfile.TemporaryDirectory() as work:
        subprocess.run([python, '-m', 'pip', 'download', '--quiet', '--no-deps', 'motmetrics==1.4.0', '-d', work],
                       check=True)
        wheel = os.path.join(work, WHEEL)
        if sha256(wheel) != WHEEL_SHA256:
            sys.exit(f'mot-reference: {WHEEL} has sha256 {sha256(wheel)}, expected {WHEEL_SHA256}')
        # The wheel itself (checked above) and the pins; pip adds their own dependencies (dateutil, pytz, ...).
        subprocess.run([python, '-m', 'pip', 'install', '--quiet', '--only-binary', ':all:', wheel] + PINS, check=True)
    open(marker, 'w').close()
    return python


# MARK: Inside the virtual environment

def compare(mm, gt_path, res_path):
    gt = mm.io.loadtxt(gt_path, fmt='mot15-2D', min_confidence=1)
    res = mm.io.loadtxt(res_path, fmt='mot15-2D')
    return mm.utils.compare_to_groundtruth(gt, res, 'iou', distth=0.5)


def figures(mm, accumulators, names):
    host = mm.metrics.create()
    metrics = mm.metrics.motchallenge_metrics + EXTRA_METRICS
    table = host.compute_many(accumulators, names=names, metrics=metrics)
    result = {}
    for name in names:
        row = {}
        for metric in metrics:
            value = float(table.loc[name, metric])
            # Counts as integers; ratios at full precision (json writes the shortest round-trip form),
            # an undefined ratio (0/0) as null.
            row[metric] = value if metric in RATIOS else int(value)
            if metric in RATIOS and value != value:
                row[metric] = None
        result[name] = row
    return result


def versions(mm):
    import numpy, pandas, scipy
    return {'motmetrics': mm.__version__, 'numpy': numpy.__version__, 'pandas': pandas.__version__,
            'scipy': scipy.__version__, 'solver': str(mm.lap.default_solver),
            'python': sys.version.split()[0]}


def random_case(rng, ties):
    """Ground-truth and result rows (frame, id, x, y, w, h, confidence) of one random sequence."""
    frames = rng.randint(1, 25)
    gt, res = [], []
    for obj in range(1, rng.randint(1, 6) + 1):
        start = rng.randint(1, frames)
        end = rng.randint(start, frames)
        if ties:
            x, y, w, h, vx, vy = rng.randint(0, 4) * 10, rng.randint(0, 4) * 10, 20, 20, 0, 0
        else:
            x, y, w, h = rng.uniform(0, 200), rng.uniform(0, 200), rng.uniform(10, 60), rng.uniform(10, 60)
            vx, vy = rng.uniform(-5, 5), rng.uniform(-5, 5)
        for f in range(start, end + 1):
            if rng.random() < 0.1:
                continue
            bx, by = x + vx * f, y + vy * f
            gt.append((f, obj, bx, by, w, h, 0 if rng.random() < 0.05 else 1))
            if rng.random() < 0.8:
                hid = obj if rng.random() < 0.85 else rng.choice([1, obj + 100])
                jitter = (lambda: 0) if ties else (lambda: rng.uniform(-8, 8))
                res.append((f, hid, bx + jitter(), by + jitter(), w * (1 if ties else rng.uniform(0.8, 1.2)), h, -1))
    for _ in range(rng.randint(0, 8)):
        f = rng.randint(1, frames + 3)
        if ties:
            res.append((f, rng.randint(50, 60), rng.randint(0, 4) * 10, rng.randint(0, 4) * 10, 20, 20, -1))
        else:
            res.append((f, rng.randint(50, 60), rng.uniform(0, 200), rng.uniform(0, 200), 30, 30, -1))
    if gt and rng.random() < 0.2:
        f, o, x, y, w, h, c = gt[0]
        gt[0] = (f, o, x, y, -w, h, c)
    return sorted(gt, key=lambda r: r[0]), sorted(res, key=lambda r: r[0])


def write_rows(path, rows):
    with open(path, 'w') as f:
        for row in rows:
            f.write(','.join(repr(v) for v in row) + ',-1,-1,-1\n')


def crosscheck(mm, arguments):
    import random
    cases = int(arguments[0]) if arguments else 300
    rng = random.Random(int(arguments[1]) if len(arguments) > 1 else 1)
    ties = arguments[2:3] == ['ties']
    yolo = os.path.join(root, '.build/release/yolo')
    work = tempfile.mkdtemp(prefix='mot-crosscheck-')
    compared = differing = 0
    for case in range(cases):
        gt_rows, res_rows = random_case(rng, ties)
        # py-motmetrics cannot load an empty file; with every ground-truth row ignored its frame count follows
        # pandas' index internals. Such cases are left out.
        if not res_rows or not any(row[6] >= 1 for row in gt_rows):
            continue
        gt_path, res_path = os.path.join(work, f'{case}-gt.txt'), os.path.join(work, f'{case}-res.txt')
        write_rows(gt_path, gt_rows)
        write_rows(res_path, res_rows)
        reference = figures(mm, [compare(mm, gt_path, res_path)], ['figures'])['figures']
        ours = json.loads(subprocess.run([yolo, 'eval-mot', '--gt', gt_path, '--results', res_path, '--format', 'json'],
                                         capture_output=True, text=True, check=True).stdout)
        compared += 1
        diffs = [(name, value, ours[name]) for name, value in reference.items()
                 if not (value is None and ours[name] is None)
                 and (value is None or ours[name] is None or abs(value - ours[name]) > 1e-9)]
        if diffs:
            differing += 1
            print(f'{gt_path} {res_path}: ' + ', '.join(f'{n} {a} (yolo {b})' for n, a, b in diffs))
        else:
            os.remove(gt_path)
            os.remove(res_path)
    print(f'mot-reference: {compared} random sequences compared, {differing} differ', file=sys.stderr)


def inside(arguments):
    import motmetrics as mm
    if arguments[:1] == ['--crosscheck']:
        crosscheck(mm, arguments[1:])
        return
    if arguments[:1] == ['--compare']:
        gt_path, res_path = arguments[1:3]
        print(json.dumps(figures(mm, [compare(mm, gt_path, res_path)], ['figures'])['figures'], indent=2))
        return
    data = os.path.join(os.path.dirname(mm.__file__), 'data')
    accumulators, files = [], {}
    for sequence in SEQUENCES:
        gt_path = os.path.join(data, sequence, 'gt.txt')
        res_path = os.path.join(data, sequence, 'test.txt')
        accumulators.append(compare(mm, gt_path, res_path))
        files[sequence] = {'gt.txt': sha256(gt_path), 'test.txt': sha256(res_path)}
    document = {
        'provenance': {
            'made_by': 'scripts/mot-reference.py',
            'wheel': WHEEL, 'wheel_sha256': WHEEL_SHA256, 'versions': versions(mm),
            'method': "loadtxt(gt, fmt='mot15-2D', min_confidence=1), loadtxt(test, fmt='mot15-2D'), "
                      "compare_to_groundtruth(gt, test, 'iou', distth=0.5), "
                      "compute_many(metrics=motchallenge_metrics + " + ', '.join(EXTRA_METRICS) + ')',
            'input_sha256': files,
        },
        'sequences': figures(mm, accumulators, SEQUENCES),
    }
    os.makedirs(os.path.dirname(fixture), exist_ok=True)
    with open(fixture + '.tmp', 'w') as f:
        json.dump(document, f, indent=2, allow_nan=False)
        f.write('\n')
    os.replace(fixture + '.tmp', fixture)
    print(f'mot-reference: wrote {os.path.relpath(fixture, root)}', file=sys.stderr)


if __name__ == '__main__':
    if os.environ.get('MOT_REFERENCE_INSIDE') == '1':
        inside(sys.argv[1:])
    else:
        python = ensure_venv()
        environment = dict(os.environ, MOT_REFERENCE_INSIDE='1')
        sys.exit(subprocess.run([python, os.path.abspath(__file__)] + sys.argv[1:], env=environment).returncode)
