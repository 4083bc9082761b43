#!/usr/bin/env bash
# Threads on a busy machine: `yolo bench --threads 1` against `--threads N` while CPU-bound processes run
# beside it (by default one per core minus one: on 2 cores, one busy loop takes one core, as in issue 11's
# bar "with one CPU-bound process running beside it, --threads 2 is no slower than --threads 1").
#
# Usage: scripts/compare-busy.sh [--model yolov4-tiny|yolov3-tiny] [--rounds 6] [--runs 20] [--warmup 5]
#          [--threads 2] [--hogs 1] [--yolo PATH] [--kernel avx512|avx2|portable] [--out DIR]
# The two thread counts take turns (a fresh `yolo bench` process each, W warm-up then N timed passes of the
# float darknet model, as scripts/compare-engines.sh times it); the hogs (`--hogs 0` for a quiet-machine
# control) run the whole time. Prints the pooled medians (min–max) and the ratio N threads / 1 thread
# (bar: <= 1.00). Writes every run's JSON and table.md to DIR (default out/compare-busy/MODEL).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
model=yolov4-tiny rounds=6 runs=20 warmup=5 threads=2 hogs=1 yolo='' kernel='' out=''
while (($#)); do
  case $1 in
    --model | --rounds | --runs | --warmup | --threads | --hogs | --yolo | --kernel | --out)
      (($# >= 2)) || { echo "compare-busy: $1 needs a value" >&2; exit 2; } ;;&
    --model) model=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --hogs) hogs=$2; shift 2 ;;
    --yolo) yolo=$2; shift 2 ;;
    --kernel) kernel=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "compare-busy: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ $model == yolov4-tiny || $model == yolov3-tiny ]] || { echo "compare-busy: --model must be yolov4-tiny or yolov3-tiny, not $model" >&2; exit 2; }
for pair in "rounds:$rounds" "runs:$runs" "threads:$threads"; do
  [[ ${pair#*:} =~ ^[1-9][0-9]*$ ]] || { echo "compare-busy: --${pair%%:*} must be a positive integer, not ${pair#*:}" >&2; exit 2; }
done
[[ $warmup =~ ^[0-9]+$ ]] || { echo "compare-busy: --warmup must be a non-negative integer, not $warmup" >&2; exit 2; }
[[ $hogs =~ ^[0-9]+$ ]] || { echo "compare-busy: --hogs must be a non-negative integer, not $hogs" >&2; exit 2; }
case $kernel in
  '' | avx512 | avx2 | portable) ;;
  *) echo "compare-busy: --kernel must be avx512, avx2 or portable, not $kernel" >&2; exit 2 ;;
esac
cfg=$root/Weights/$model.cfg weights=$root/Weights/$model.weights names=$root/Weights/coco.names
for f in "$cfg" "$weights" "$names"; do
  [[ -f $f ]] || { echo "compare-busy: $f is missing (run make weights)" >&2; exit 1; }
done
if [[ -z $yolo ]]; then
  (cd "$root" && swift build -c release --product yolo >/dev/null)
  yolo=$root/.build/release/yolo
fi
[[ -x $yolo ]] || { echo "compare-busy: --yolo $yolo is not an executable file" >&2; exit 1; }
out=${out:-$root/out/compare-busy/$model}
mkdir -p "$out"
kargs=()
[[ -z $kernel ]] || kargs=(--kernel "$kernel")

pids=()
stop_hogs() { ((${#pids[@]})) && kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null || true; }
trap stop_hogs EXIT
for ((h = 0; h < hogs; h++)); do
  bash -c 'while :; do :; done' &
  pids+=($!)
done
echo "== $hogs CPU-bound process(es) beside yolo; $rounds round(s) x threads 1,$threads, $runs runs after $warmup warm-up"
for ((round = 1; round <= rounds; round++)); do
  printf '   round %d/%d:' "$round" "$rounds"
  for t in 1 "$threads"; do
    (cd "$root" && "$yolo" bench --cfg "$cfg" --weights "$weights" --names "$names" "${kargs[@]}" \
      --threads "$t" --runs "$runs" --warmup "$warmup" --format json >"$out/t$t-r$round.json")
    printf ' %s' "$t"
  done
  printf '\n'
done
stop_hogs
trap - EXIT

python3 - "$out" "$rounds" "$threads" "$hogs" <<'PY' | tee "$out/table.md"
import json, os, statistics, sys
out, rounds, threads, hogs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
times, machine = {}, {}
for t in (1, threads):
    for r in range(1, rounds + 1):
        doc = json.load(open(os.path.join(out, 't%d-r%d.json' % (t, r))))
        machine = doc.get('machine', machine)
        for row in doc['results']:
            if int(row['threads']) == t:
                times.setdefault(t, []).extend(float(x) for x in row['times_ms'])
print('CPU: %s; kernel %s; %s CPU-bound process(es) beside' % (
    machine.get('cpu', '?'), machine.get('kernel', '?'), hogs))
print()
print('| threads | median ms (min–max) | passes |')
print('|---|---|---|')
med = {}
for t in (1, threads):
    ts = times[t]
    med[t] = statistics.median(ts)
    print('| %d | %.2f (%.2f–%.2f) | %d |' % (t, med[t], min(ts), max(ts), len(ts)))
print()
print('%d threads / 1 thread: %.3f (bar <= 1.00: %s)' % (threads, med[threads] / med[1], 'yes' if med[threads] <= med[1] else 'no'))
PY
