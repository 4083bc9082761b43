#!/usr/bin/env bash
# Fetches the MOTChallenge sequences the MOT-metrics tests score into Weights/mot/ (or the folder given as $1)
# and checks each file's sha256: TUD-Campus and TUD-Stadtmitte, ground truth (gt.txt) and a tracker's results
# (test.txt), as py-motmetrics ships them for its own tests.
#
# Taken out of one registry package: the PyPI motmetrics 1.4.0 wheel (MIT licence; the data are the
# MOTChallenge 2015 TUD sequences' annotations and a tracker's output on them), files
# motmetrics/data/TUD-{Campus,Stadtmitte}/{gt,test}.txt. The wheel is pure Python (py3-none-any), so every
# host gets the same archive; its sha256 is checked too. Tests/YOLOTests/Fixtures/mot holds py-motmetrics'
# figures for these files (scripts/mot-reference.py). Idempotent: when every file is present and verifies,
# nothing is downloaded. Each file is written beside its target and renamed (no half-written files).
set -euo pipefail
dest=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/mot}

# file in $dest -> sha256 (the same as the fixture's provenance.input_sha256)
declare -A want=(
  [TUD-Campus/gt.txt]=6e6db5a416f59b1837bc5bfc90502f5d767e869806e1257e4b735f742a90809c
  [TUD-Campus/test.txt]=efbfaa766c4c27a07561e2d48f3538cadd73c7c583c5fc82f2992e9874261e28
  [TUD-Stadtmitte/gt.txt]=275e53717f0397c19484fd42198fc5c4dc7b3de7ba5ca15ef53e2b8188696650
  [TUD-Stadtmitte/test.txt]=454611aef78f84dea47ed22369fe518e76c3625871835270eaee0ea36fd387f3
)
# The wheel pin (archive sha256 checked too); each file's path inside it is motmetrics/data/<file>.
wheel=motmetrics-1.4.0-py3-none-any.whl
wheel_sha=cd4d691bd787360f1cd0a2127fe8a14d0646fb2912b344a9498719e132b25738

sha() { sha256sum "$1" | cut -d' ' -f1; }
verified() { [[ -f $dest/$1 ]] && [[ $(sha "$dest/$1") == "${want[$1]}" ]]; }
fail() { echo "fetch-mot: $*" >&2; exit 1; }

need=()
for f in "${!want[@]}"; do verified "$f" || need+=("$f"); done
((${#need[@]} == 0)) && exit 0

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/x"

echo "fetch-mot: downloading motmetrics==1.4.0 from PyPI" >&2
python3 -m pip download --quiet --no-deps --only-binary :all: motmetrics==1.4.0 -d "$work" >"$work/log" 2>&1 \
  || { cat "$work/log" >&2; fail "pip download of motmetrics==1.4.0 failed"; }
[[ -f $work/$wheel ]] || fail "pip gave no $wheel"
[[ $(sha "$work/$wheel") == "$wheel_sha" ]] || fail "$wheel has sha256 $(sha "$work/$wheel"), expected $wheel_sha"
python3 -m zipfile -e "$work/$wheel" "$work/x" || fail "cannot unpack $wheel"

for f in "${need[@]}"; do
  source="$work/x/motmetrics/data/$f"
  [[ -f $source ]] || fail "$f: motmetrics/data/$f is missing from the wheel"
  got=$(sha "$source")
  [[ $got == "${want[$f]}" ]] || fail "$f has sha256 $got, expected ${want[$f]}"
  folder=$(dirname "$dest/$f")
  mkdir -p "$folder"
  cp "$source" "$folder/.$(basename "$f").tmp"
  mv "$folder/.$(basename "$f").tmp" "$dest/$f"
done
echo "fetch-mot: ${#need[@]} MOTChallenge files verified in $dest" >&2
