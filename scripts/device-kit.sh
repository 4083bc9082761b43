#!/bin/bash
# Builds the Scale tool (Benchmarks/Scale) of the source tree SRC_ROOT and adds it, with every shared library it
# needs that a bare Debian 12 image lacks, to a device kit (/work/shared/scale/README.md):
#
#   bash scripts/device-kit.sh SRC_ROOT OUT_DIR NAME      e.g.  bash scripts/device-kit.sh /work/main .dev new
#
# Result: OUT_DIR/libs.tar.xz holding lib/scale-NAME.bin (stripped, static Swift stdlib) and the libraries (OpenBLAS,
# libgfortran, libquadmath, libpng16, libturbojpeg, ...), plus OUT_DIR/build-NAME.txt (source commit, local changes,
# sha256). Several NAMEs share the archive: an existing libs.tar.xz is unpacked first and packed again with the new
# binary; the unpacked OUT_DIR/lib is removed afterwards (KEEP_LIB=1 keeps it), so that only the archive is carried.
# Build folder: $SCALE_SCRATCH, default /tmp/scale-kit-build/NAME (outside SRC_ROOT, one per NAME). The kit's scripts
# (scripts/device-scale.sh, which runs on the device, and scripts/ort_scale.py) are copied from this checkout. The peer
# models (OUT_DIR/onnx.tar.xz) are made once, see Benchmarks/README.md ("Many-core runs").
# Size: each binary is ~60 MB stripped (34 MB of it Foundation's ICU data), but the two share most bytes; the archive is
# ~21 MB with both. The device tool's 64 MiB limit counts the whole checkout (~31 MiB here) plus the kit.
set -euo pipefail
(($# == 3)) || { echo "usage: $0 SRC_ROOT OUT_DIR NAME" >&2; exit 2; }
src=$(cd "$1" && pwd)
mkdir -p "$2"; out=$(cd "$2" && pwd)
name=$3
[[ $name =~ ^[A-Za-z0-9_-]+$ ]] || { echo "device-kit: NAME must be letters, digits, - or _" >&2; exit 2; }
scratch=${SCALE_SCRATCH:-/tmp/scale-kit-build/$name}
[[ -f $src/Benchmarks/Scale/main.swift ]] || { echo "device-kit: $src/Benchmarks/Scale/main.swift missing" >&2; exit 1; }

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cp "$here/device-scale.sh" "$here/ort_scale.py" "$out/"
echo "== device-kit: building Scale from $src (scratch $scratch)"
swift build --package-path "$src/Benchmarks" -c release --static-swift-stdlib --product Scale --scratch-path "$scratch"
bin=$scratch/release/Scale

# Unpack the shared archive (other NAMEs' binaries) unless lib/ is already there.
if [[ ! -d $out/lib && -f $out/libs.tar.xz ]]; then tar xJf "$out/libs.tar.xz" -C "$out"; fi
mkdir -p "$out/lib"
strip -o "$out/lib/scale-$name.bin" "$bin"

# Every library the binary loads, except those of libc6, libstdc++6, libgcc-s1 and zlib1g (in every Debian image).
# ldd follows the loader (and the alternatives symlinks: libopenblas.so.0 -> openblas-pthread/); cp -L stores the
# real file under the name the binary asks for.
echo "== libraries of scale-$name.bin"
ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' | while read -r soname path; do
  real=$(readlink -f "$path")
  pkg=$(dpkg -S "$real" 2>/dev/null | head -1 | cut -d: -f1) || pkg=
  [[ -n $pkg ]] || pkg=$(dpkg -S "$path" 2>/dev/null | head -1 | cut -d: -f1) || pkg=
  case $pkg in
    libc6|libstdc++6|libgcc-s1|zlib1g) printf '  system  %-28s %s (%s)\n' "$soname" "$real" "$pkg" ;;
    *) cp -L "$path" "$out/lib/$soname"; printf '  kit     %-28s %s (%s)\n' "$soname" "$real" "${pkg:-?}" ;;
  esac
done

# Check: with only the kit's folder added, every library outside the system packages resolves from it.
missing=$(LD_LIBRARY_PATH=$out/lib ldd "$out/lib/scale-$name.bin" | awk '/not found/ { print $1 }')
[[ -z $missing ]] || { echo "device-kit: not found: $missing" >&2; exit 1; }
LD_LIBRARY_PATH=$out/lib ldd "$out/lib/scale-$name.bin" | grep -v "$out/lib" | awk '{ print "  from the system:", $1 }'

{
  echo "name: $name"
  echo "source: $src"
  echo "commit: $(git -C "$src" rev-parse HEAD 2>/dev/null || echo '?')"
  echo "built: $(date -u +%FT%TZ)"
  echo "sha256: $(sha256sum "$out/lib/scale-$name.bin" | cut -d' ' -f1)"
  echo "local changes (git status --short):"
  git -C "$src" status --short 2>/dev/null | sed 's/^/  /'
  echo "Sources/ content hash (every file, sha256): $(cd "$src" && find Sources -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)"
} > "$out/build-$name.txt"

# Pack: the binaries first and next to each other, single-threaded xz -9e with a 192 MiB window, so that the second
# binary mostly compresses against the first.
echo "== packing $out/libs.tar.xz"
(cd "$out" && { ls lib/scale-*.bin; ls lib | grep -v '^scale-.*\.bin$' | sed 's|^|lib/|'; } > "$out/.libs.list"
 tar cf - -T "$out/.libs.list" | xz -T1 --lzma2=preset=9e,dict=192MiB > "$out/libs.tar.xz.tmp" && mv "$out/libs.tar.xz.tmp" "$out/libs.tar.xz")
rm -f "$out/.libs.list"
tar tvJf "$out/libs.tar.xz" | awk '{ printf "  %10d %s\n", $3, $6 }'
[[ ${KEEP_LIB:-0} == 1 ]] || rm -rf "$out/lib"
du -sh "$out"; ls -la "$out"
# What the device tool sends: the checkout's tracked and untracked-not-ignored files plus the carried kit, 64 MiB at most.
if repo=$(git -C "$out/.." rev-parse --show-toplevel 2>/dev/null); then
  tree=$(cd "$repo" && git ls-files -z --cached --others --exclude-standard | xargs -0 stat -c %s 2>/dev/null | awk '{ s += $1 } END { print s + 0 }')
  kit=$(find "$out" -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
  echo "travelling: tree of $repo $((tree / 1048576)) MiB + kit $((kit / 1048576)) MiB = $(((tree + kit) / 1048576)) MiB (limit 64 MiB)"
  (((tree + kit) < 62 * 1048576)) || echo "device-kit: WARNING: over 62 MiB, the device call may be refused" >&2
fi
