#!/usr/bin/env bash
# "Nothing GPL linked": Debian 12's FFmpeg libraries are built under the GPL (version 2 or later;
# docs/THIRD_PARTY.md), so only the yolo-video helper may load them. Checks with ldd (every library the loader
# resolves, direct or not) that none of PROGRAMs loads an FFmpeg library (libav*, libsw*, libpostproc) or the
# GPL encoders they bring (libx264, libx265), and that HELPER does load libavcodec and libswscale, so that the
# check cannot pass on a build whose helper links nothing.
# Usage: scripts/check-no-gpl.sh HELPER PROGRAM...
#   e.g. scripts/check-no-gpl.sh .build/release/yolo-video .build/release/yolo
set -euo pipefail
(($# >= 2)) || { echo "usage: $0 HELPER PROGRAM..." >&2; exit 2; }
helper=$1
shift
gpl='lib(av(codec|format|util|device|filter)|sw(scale|resample)|postproc|x26[45])\.so'
[[ -x $helper ]] || { echo "check-no-gpl: $helper is missing (build the yolo-video product)" >&2; exit 1; }
helper_libs=$(ldd "$helper")
for lib in libavcodec libavformat libswscale; do
  grep -q "$lib\.so" <<<"$helper_libs" || { echo "check-no-gpl: the helper $helper does not load $lib: not the FFmpeg helper?" >&2; exit 1; }
done
status=0
for program in "$@"; do
  [[ -x $program ]] || { echo "check-no-gpl: $program is missing" >&2; exit 1; }
  found=$(ldd "$program" | grep -Eo "$gpl[^ ]*" | sort -u | tr '\n' ' ' || true)
  if [[ -n $found ]]; then
    echo "check-no-gpl: $program loads GPL-built libraries: $found" >&2
    status=1
  else
    echo "check-no-gpl: $program: no FFmpeg or other GPL library ($(ldd "$program" | wc -l) libraries)"
  fi
done
((status == 0)) && echo "check-no-gpl: ok: only $helper loads FFmpeg"
exit $status
