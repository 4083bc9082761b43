#!/usr/bin/env bash
# What `--save` costs: `yolo detect` on each image without and with --save, interleaved, N rounds (default
# 5); prints medians with min–max and the difference. The output goes to a temporary folder.
# Usage: [Y=path/to/yolo] [N=rounds] scripts/measure-png-save.sh IMAGE...
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
Y=${Y:-$root/.build/release/yolo}; N=${N:-5}
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
for img in "$@"; do
  a=(); b=()
  for i in $(seq $N); do
    rm -rf "$out/saved"
    s=$(date +%s.%N); $Y detect "$img" >/dev/null; e=$(date +%s.%N); a+=($(echo "$e - $s" | bc))
    s=$(date +%s.%N); $Y detect --save "$out/saved" "$img" >/dev/null; e=$(date +%s.%N); b+=($(echo "$e - $s" | bc))
  done
  python3 - "$img" "${a[*]}" "${b[*]}" <<'PY'
import sys, statistics as st
a=[float(x) for x in sys.argv[2].split()]; b=[float(x) for x in sys.argv[3].split()]
d=[y-x for x,y in zip(a,b)]
f=lambda v: "%.2f s (%.2f–%.2f)"%(st.median(v),min(v),max(v))
print(sys.argv[1], "without --save", f(a), "| with", f(b), "| save cost", f(d))
PY
done
