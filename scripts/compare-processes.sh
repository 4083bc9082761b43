#!/usr/bin/env bash
# Throughput of several yolo processes side by side: P processes × T threads each, for every "PxT" given, the
# configurations taking turns round after round. Each process is a `yolo bench` of the float model (W warm-up
# passes, then N timed); a configuration's images/s is the sum over its processes of 1000 / median ms.
# Prints each configuration's median images/s over the rounds and its ratio to the best (the 2-core proxy of
# the many-core bar: 2x1 and 1x2 each >= 0.9 x the best), and the quiet 1 → 2-thread speed-up of one process.
#
# Usage: scripts/compare-processes.sh [--configs "2x1 1x2"] [--rounds 6] [--runs 30] [--warmup 5]
#          [--model yolov4-tiny|yolov3-tiny] [--yolo PATH] [--out DIR] [-- EXTRA yolo bench ARGS]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
configs="2x1 1x2" rounds=6 runs=30 warmup=5 model=yolov4-tiny yolo='' out='' extra=()
while (($#)); do
  case $1 in
    --configs | --rounds | --runs | --warmup | --model | --yolo | --out)
      (($# >= 2)) || { echo "compare-processes: $1 needs a value" >&2; exit 2; } ;;&
    --configs) configs=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --model) model=$2; shift 2 ;;
    --yolo) yolo=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    -h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "compare-processes: unknown argument $1" >&2; exit 2 ;;
  esac
done
for c in $configs; do
  [[ $c =~ ^[1-9][0-9]*x[1-9][0-9]*$ ]] || { echo "compare-processes: a configuration is PxT, e.g. 2x1, not $c" >&2; exit 2; }
done
for pair in "rounds:$rounds" "runs:$runs"; do
  [[ ${pair#*:} =~ ^[1-9][0-9]*$ ]] || { echo "compare-processes: --${pair%%:*} must be a positive integer, not ${pair#*:}" >&2; exit 2; }
done
cfg=$root/Weights/$model.cfg weights=$root/Weights/$model.weights names=$root/Weights/coco.names
for f in "$cfg" "$weights" "$names"; do
  [[ -f $f ]] || { echo "compare-processes: $f is missing (run make weights)" >&2; exit 1; }
done
if [[ -z $yolo ]]; then
  (cd "$root" && swift build -c release --product yolo >/dev/null)
  yolo=$root/.build/release/yolo
fi
[[ -x $yolo ]] || { echo "compare-processes: --yolo $yolo is not an executable file" >&2; exit 1; }
out=${out:-$root/out/compare-processes/$model}
mkdir -p "$out"
rm -f "$out"/*.json
echo "== $rounds round(s) of: $configs (processes x threads), $runs runs after $warmup warm-up each"
for ((round = 1; round <= rounds; round++)); do
  printf '   round %d/%d:' "$round" "$rounds"
  for c in $configs; do
    p=${c%x*} t=${c#*x}
    for ((i = 0; i < p; i++)); do
      (cd "$root" && "$yolo" bench --cfg "$cfg" --weights "$weights" --names "$names" --threads "$t" --runs "$runs" \
        --warmup "$warmup" --format json "${extra[@]}" >"$out/$c-r$round-p$i.json") &
    done
    wait
    printf ' %s' "$c"
  done
  printf '\n'
done
python3 - "$out" "$rounds" "$configs" <<'PY' | tee "$out/table.md"
import json, os, statistics, sys
out, rounds, configs = sys.argv[1], int(sys.argv[2]), sys.argv[3].split()
machine, rate, lat = {}, {}, {}
for c in configs:
    p = int(c.split('x')[0])
    for r in range(1, rounds + 1):
        total = 0
        for i in range(p):
            doc = json.load(open(os.path.join(out, '%s-r%d-p%d.json' % (c, r, i))))
            machine = doc.get('machine', machine)
            median = statistics.median(doc['results'][0]['times_ms'])
            lat.setdefault(c, []).append(median)
            total += 1000 / median
        rate.setdefault(c, []).append(total)
print('CPU: %s; kernel %s' % (machine.get('cpu', '?'), machine.get('kernel', '?')))
print()
print('| processes x threads | images/s, median of rounds (min–max) | per-process median ms (min–max) |')
print('|---|---|---|')
best = max(statistics.median(rate[c]) for c in configs)
for c in configs:
    m = statistics.median(rate[c])
    print('| %s | %.1f (%.1f–%.1f), %.3f of the best | %.2f (%.2f–%.2f) |' % (c, m, min(rate[c]), max(rate[c]), m / best,
          statistics.median(lat[c]), min(lat[c]), max(lat[c])))
PY
