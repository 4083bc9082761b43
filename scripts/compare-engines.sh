#!/usr/bin/env bash
# Times `yolo bench` against three peer engines (ncnn, OpenVINO, onnxruntime) on the same machine, in the
# same run, on the same network (yolov4-tiny by default, or yolov3-tiny), and prints a markdown table with the ratio yolo / best peer.
#
# Usage: scripts/compare-engines.sh [--model yolov4-tiny|yolov3-tiny] [--runs 20] [--warmup 5] [--rounds 3] [--threads 1,2] [--out DIR]
#          [--yolo PATH] [--kernel avx512|avx2|portable] [--engines yolo,ncnn,openvino,onnxruntime]
# The engines take turns: in each of R rounds, for each thread count, each engine runs once (a fresh process:
# W warm-up passes, then N timed passes, every pass time saved as JSON `times_ms`). The table pools all
# rounds' passes per engine and thread count: on a machine whose speed drifts (a shared VM), all engines then
# see the same conditions. "best peer" is the peer with the lowest pooled median; the bar is yolo / best <= 0.9.
# --yolo PATH: the yolo binary to time (default: `swift build -c release --product yolo` in the repository,
#   then .build/release/yolo). --kernel K: passed on as `yolo bench --kernel K` (only when given).
# OPENBLAS_CORETYPE is left as set in the environment (all engines see the same value).
# Needs the reference tools in ../shared (next to the repository) and Weights/MODEL.{cfg,weights} (make weights).
# Environment: REF_VENV (default /tmp/yolo-reference-venv), BUILD_FLAGS (extra `swift build` flags for the
#   default build; default none).
# Writes to DIR (default out/compare-engines/MODEL): MODEL.onnx, MODEL_WITH_UNDERSCORES.ncnn.{param,bin} (remade only
#   when older than their inputs), ENGINE-tT-rR.json per run, and table.md (the printed report).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
shared=$(cd "$root/.." && pwd)/shared
model=yolov4-tiny runs=20 warmup=5 rounds=3 threads=1,2 out='' yolo='' kernel='' engines=yolo,ncnn,openvino,onnxruntime
while (($#)); do
  case $1 in
    --model | --runs | --warmup | --rounds | --threads | --out | --yolo | --kernel | --engines)
      (($# >= 2)) || { echo "compare-engines: $1 needs a value" >&2; exit 2; } ;;&
    --model) model=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --yolo) yolo=$2; shift 2 ;;
    --kernel) kernel=$2; shift 2 ;;
    --engines) engines=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "compare-engines: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ $model == yolov4-tiny || $model == yolov3-tiny ]] || { echo "compare-engines: --model must be yolov4-tiny or yolov3-tiny, not $model" >&2; exit 2; }
out=${out:-$root/out/compare-engines/$model}
stem=${model//-/_}
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "compare-engines: --runs must be a positive integer, not $runs" >&2; exit 2; }
[[ $warmup =~ ^[0-9]+$ ]] || { echo "compare-engines: --warmup must be a non-negative integer, not $warmup" >&2; exit 2; }
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "compare-engines: --rounds must be a positive integer, not $rounds" >&2; exit 2; }
[[ $threads =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || { echo "compare-engines: --threads must be a comma-separated list of thread counts, not $threads" >&2; exit 2; }
case $kernel in
  '' | avx512 | avx2 | portable) ;;
  *) echo "compare-engines: --kernel must be avx512, avx2 or portable, not $kernel" >&2; exit 2 ;;
esac
IFS=, read -r -a tlist <<<"$threads"
IFS=, read -r -a elist <<<"$engines"
peers=()
for e in "${elist[@]}"; do
  case $e in
    yolo) ;;
    ncnn | openvino | onnxruntime) peers+=("$e") ;;
    *) echo "compare-engines: unknown engine $e in --engines (known: yolo, ncnn, openvino, onnxruntime)" >&2; exit 2 ;;
  esac
done
((${#elist[@]})) || { echo "compare-engines: --engines is empty" >&2; exit 2; }

if [[ ! -d $shared/reference ]]; then
  echo "compare-engines: $shared/reference is missing: this script needs the shared reference tools at ../shared next to the repository" >&2
  exit 1
fi
cfg=$root/Weights/$model.cfg weights=$root/Weights/$model.weights names=$root/Weights/coco.names
for f in "$cfg" "$weights" "$names"; do
  [[ -f $f ]] || { echo "compare-engines: $f is missing (run make weights, or Weights/fetch.sh)" >&2; exit 1; }
done
if [[ -n $yolo ]]; then
  [[ $yolo == /* ]] || yolo=$PWD/$yolo
  [[ -x $yolo ]] || { echo "compare-engines: --yolo $yolo is not an executable file" >&2; exit 1; }
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
venv=${REF_VENV:-/tmp/yolo-reference-venv}
py=$venv/bin/python

# The venv: wait for a setup.sh that is already installing (a second concurrent pip install into the same venv
# would corrupt it), then let setup.sh check the pins (quick when the venv is up to date).
if pgrep -f 'reference/setup\.sh' >/dev/null 2>&1; then
  echo "== waiting for a running reference/setup.sh to finish"
  while pgrep -f 'reference/setup\.sh' >/dev/null 2>&1; do sleep 5; done
fi
echo "== reference venv ($venv)"
"$shared/reference/setup.sh" "$venv" >/dev/null ||
  { echo "compare-engines: $shared/reference/setup.sh $venv failed (see its message above)" >&2; exit 1; }
for e in "${peers[@]}"; do
  case $e in
    ncnn) module=ncnn ;;
    openvino) module=openvino ;;
    onnxruntime) module=onnxruntime ;;
  esac
  "$py" -c "import $module" 2>/dev/null ||
    { echo "compare-engines: Python module $module is missing in $venv (rerun $shared/reference/setup.sh $venv)" >&2; exit 1; }
done

# Models for the peers, made from the same cfg and weights; remade only when older than their inputs.
onnx=$out/$model.onnx param=$out/$stem.ncnn.param bin=$out/$stem.ncnn.bin
if ((${#peers[@]})); then
  if [[ -f $onnx && $onnx -nt $cfg && $onnx -nt $weights ]]; then
    echo "== ONNX model: $onnx is up to date"
  else
    echo "== ONNX model from the same cfg and weights: $onnx"
    "$py" "$shared/reference/onnx_reference.py" build --cfg "$cfg" --weights "$weights" --names "$names" \
      --out "$out/$model.tmp.onnx" >/dev/null
    mv "$out/$model.tmp.onnx" "$onnx"
  fi
fi
if [[ " ${peers[*]} " == *" ncnn "* ]]; then
  if [[ -f $param && -f $bin && $param -nt $onnx && $bin -nt $onnx ]]; then
    echo "== ncnn model: $param is up to date"
  else
    echo "== ncnn model (pnnx): $param, $bin"
    [[ -x $venv/bin/pnnx ]] || { echo "compare-engines: $venv/bin/pnnx is missing (rerun $shared/reference/setup.sh $venv)" >&2; exit 1; }
    # pnnx writes its by-products (pnnx.param/.bin/.onnx, *_pnnx.py, *.pnnxsim.onnx) next to its input, so it
    # converts a link to the model in a scratch directory, which is then removed.
    work=$out/pnnx-work
    rm -rf "$work" && mkdir -p "$work"
    ln -s "$onnx" "$work/$model.onnx"
    (cd "$work" && "$venv/bin/pnnx" "$work/$model.onnx" 'inputshape=[1,3,416,416]' \
      "ncnnparam=$work/$stem.ncnn.param" "ncnnbin=$work/$stem.ncnn.bin" >"$work/pnnx.log" 2>&1) ||
      { echo "compare-engines: pnnx failed converting $onnx (log: $work/pnnx.log)" >&2; exit 1; }
    [[ -s $work/$stem.ncnn.param && -s $work/$stem.ncnn.bin ]] ||
      { echo "compare-engines: pnnx wrote no $stem.ncnn.param/.bin (log: $work/pnnx.log)" >&2; exit 1; }
    mv "$work/$stem.ncnn.bin" "$bin"
    mv "$work/$stem.ncnn.param" "$param"
    rm -rf "$work"
  fi
fi

if [[ " ${elist[*]} " == *" yolo "* && -z $yolo ]]; then
  echo "== yolo (swift build -c release --product yolo${BUILD_FLAGS:+ $BUILD_FLAGS})"
  # shellcheck disable=SC2086 # BUILD_FLAGS is a list of flags
  (cd "$root" && swift build -c release --product yolo ${BUILD_FLAGS:-} >/dev/null)
  yolo=$root/.build/release/yolo
fi
kargs=()
[[ -z $kernel ]] || kargs=(--kernel "$kernel")

run_engine() {  # ENGINE THREADS JSON
  local e=$1 t=$2 json=$3
  rm -f "$json"
  case $e in
    yolo)
      (cd "$root" && "$yolo" bench --cfg "$cfg" --weights "$weights" --names "$names" "${kargs[@]}" \
        --threads "$t" --runs "$runs" --warmup "$warmup" --format json >"$json.tmp") ;;
    ncnn)
      "$py" "$shared/reference/ncnn_bench.py" "$param" "$bin" \
        --threads "$t" --runs "$runs" --warmup "$warmup" --json "$json.tmp" >/dev/null ;;
    openvino)
      "$py" "$shared/reference/openvino_bench.py" "$onnx" \
        --threads "$t" --runs "$runs" --warmup "$warmup" --json "$json.tmp" >/dev/null ;;
    onnxruntime)
      "$py" "$shared/reference/onnx_reference.py" bench --model "$onnx" \
        --threads "$t" --runs "$runs" --warmup "$warmup" --json "$json.tmp" >/dev/null ;;
  esac || { printf '\n'; echo "compare-engines: $e failed at $t thread(s) (its message is above)" >&2; return 1; }
  mv "$json.tmp" "$json"
}

load_start=$(cut -d' ' -f1-3 /proc/loadavg)
echo "== $rounds round(s) x threads $threads x engines ${elist[*]}, $runs runs after $warmup warm-up each; OPENBLAS_CORETYPE ${OPENBLAS_CORETYPE:-unset}; load: $load_start"
for ((round = 1; round <= rounds; round++)); do
  for t in "${tlist[@]}"; do
    printf '   round %d/%d, %s thread(s):' "$round" "$rounds" "$t"
    for e in "${elist[@]}"; do
      run_engine "$e" "$t" "$out/$e-t$t-r$round.json"
      printf ' %s' "$e"
    done
    printf '\n'
  done
done
load_end=$(cut -d' ' -f1-3 /proc/loadavg)

"$py" - "$out" "$rounds" "$runs" "$warmup" "$threads" "$engines" "${OPENBLAS_CORETYPE:-unset}" "$load_start" "$load_end" "$kernel" <<'PY' | tee "$out/table.md"
import json, os, statistics, sys
out, rounds, runs, warmup = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
threads = [int(t) for t in sys.argv[5].split(',')]
engines = sys.argv[6].split(',')
coretype, load_start, load_end, kernel_flag = sys.argv[7:11]
peers = [e for e in engines if e != 'yolo']

def load(engine, t, r):
    return json.load(open(os.path.join(out, '%s-t%d-r%d.json' % (engine, t, r))))

def runs_of(engine, doc, t):
    # yolo bench and onnx_reference.py bench: {"results": [{"threads", "times_ms"}, ...]};
    # ncnn_bench.py and openvino_bench.py: one {"threads", "times_ms"} object.
    rows = doc['results'] if 'results' in doc else [doc]
    return [row for row in rows if int(row['threads']) == t]

times, versions, kernels, gemms, cores = {}, {}, [], [], []
for e in engines:
    for t in threads:
        for r in range(1, rounds + 1):
            doc = load(e, t, r)
            for row in runs_of(e, doc, t):
                times.setdefault((e, t), []).extend(float(x) for x in row['times_ms'])
                if row.get('blas_core') and row['blas_core'] not in cores:
                    cores.append(row['blas_core'])
            if e == 'yolo':
                machine = doc.get('machine', {})
                k = machine.get('kernel') and '%s (%s)' % (machine['kernel'], machine.get('kernel_reason', '')) or doc.get('kernel', 'unknown')
                k = ', '.join('%s=%s' % kv for kv in k.items()) if isinstance(k, dict) else str(k)
                if k not in kernels:
                    kernels.append(k)
                g = doc.get('machine', {}).get('gemm')
                if g and g not in gemms:
                    gemms.append(g)
            elif e == 'onnxruntime':
                versions[e] = 'onnxruntime ' + doc.get('onnxruntime', '?')
            else:
                versions[e] = doc.get('engine', e).split('-')[0]

cpu, flags = {}, set()
for line in open('/proc/cpuinfo'):
    key, _, value = line.partition(':')
    key, value = key.strip(), value.strip()
    if key in ('cpu family', 'model', 'model name') and key not in cpu:
        cpu[key] = value
    elif key == 'flags' and not flags:
        flags = set(value.split())
    elif not key and cpu:
        break

print('CPU: %s (family %s model %s, %d logical CPUs); avx512f %s, avx2 %s, fma %s' % (
    cpu.get('model name', '?'), cpu.get('cpu family', '?'), cpu.get('model', '?'), os.cpu_count(),
    *('yes' if f in flags else 'no' for f in ('avx512f', 'avx2', 'fma'))))
print('Load average (1, 5, 15 min): %s at start, %s at end' % (load_start, load_end))
print('OPENBLAS_CORETYPE: %s' % coretype)
if 'yolo' in engines:
    print('yolo kernel: %s%s' % ('; '.join(kernels), ' (--kernel %s)' % kernel_flag if kernel_flag else ''))
    if gemms:
        print('yolo GEMM: %s' % '; '.join(gemms))
    if cores:
        print('OpenBLAS core (yolo reports): %s' % ', '.join(cores))
if versions:
    print('Peers: %s' % ', '.join(versions[e] for e in peers if e in versions))
print()
print('| engine | threads | median ms (min–max) | passes | yolo / best peer | bar <= 0.9 |')
print('|---|---|---|---|---|---|')
for t in threads:
    med = {e: statistics.median(times[(e, t)]) for e in engines if times.get((e, t))}
    ranked = sorted((med[e], e) for e in peers if e in med)
    best = ranked[0][1] if ranked else None
    for e in engines:
        ts = times.get((e, t))
        if not ts:
            print('| %s | %d | no passes | 0 | | |' % (e, t))
            continue
        ratio = bar = ''
        name = e + (' (best peer)' if e == best else '')
        if e == 'yolo' and best:
            q = med['yolo'] / med[best]
            ratio, bar = '%.2f (vs %s)' % (q, best), 'yes' if q <= 0.9 else 'no'
        print('| %s | %d | %.2f (%.2f–%.2f) | %d | %s | %s |' % (name, t, med[e], min(ts), max(ts), len(ts), ratio, bar))
print()
print('%d round(s) x %s runs (after %s warm-up) per engine and thread count, engines taking turns, passes pooled.'
      % (rounds, runs, warmup))
print('JSON: %s/ENGINE-tTHREADS-rROUND.json' % out)
PY
echo "(table saved to $out/table.md)"
