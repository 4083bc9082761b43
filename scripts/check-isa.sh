#!/usr/bin/env bash
# Checks a linked binary (default .build/release/yolo) for code compiled for a higher ISA outside the ISA
# kernel targets. Every function that uses an AVX/AVX2/AVX-512 instruction (VEX/EVEX: mnemonics starting
# with v, any ymm/zmm register) or a BMI1/BMI2/LZCNT/MOVBE instruction (not tzcnt: it is `rep bsf`, which
# baseline code uses on purpose and older CPUs run as bsf) must belong to YOLOKernelsAVX2 or
# YOLOKernelsAVX512 (their mangled names start with $s15YOLOKernelsAVX2 / $s17YOLOKernelsAVX512). Baseline
# code (x86-64, SSE2) never contains such instructions, so any other function that does is a generic
# specialization that an ISA module emitted with shared linkage and the linker then used for everyone: it
# would crash with SIGILL on a CPU without that ISA. Also checks that the ISA targets really were compiled
# for their ISA (ymm FMAs in the AVX2 kernel, zmm FMAs in the AVX-512 kernel), that the int8 kernels use their
# instructions (zmm vpdpbusd in YOLOKernelsVNNI, ymm vpmaddwd in YOLOKernelsAVX2, VEX-encoded ymm vpdpbusd in
# YOLOKernelsAVXVNNI), that no VNNI instruction lies outside the two VNNI targets, and that YOLOKernelsAVXVNNI, which
# runs on CPUs without AVX-512 and asks only for x86-64-v3 + avx_vnni, holds nothing EVEX-encoded (zmm, mask or
# upper-16 registers, embedded broadcasts) and none of alderlake's other extensions (GFNI, VAES, VPCLMULQDQ, SHA,
# MOVBE).
#
# Last, checks that no engine function (modules YOLO, YOLOKernels*) that is not itself generic over SIMD
# calls SIMD code unspecialized: a SIMD protocol witness (`SIMDStorage` subscripts, init, scalarCount) or a
# function still generic over `SIMD` (a call to a specialization of one is fine). That happens when an @inlinable/@_transparent body such as
# `Activation.callAsFunction<V: SIMD>` stops being serialized for other modules (it was made `package`
# once, and every layer ran 20-40x slower, 3.4 s instead of 79 ms per pass, with all tests green).
# Usage: scripts/check-isa.sh [BINARY]
set -euo pipefail
binary=${1:-.build/release/yolo}
[[ -f $binary ]] || { echo "check-isa: $binary not found (build it first)" >&2; exit 1; }
command -v objdump >/dev/null || { echo "check-isa: objdump not found (Debian package binutils)" >&2; exit 1; }
if [[ $(uname -m) != x86_64 ]]; then echo "check-isa: not an x86-64 machine, nothing to check"; exit 0; fi

disassembly=$(mktemp)
trap 'rm -f "$disassembly"' EXIT
objdump -d --no-show-raw-insn "$binary" >"$disassembly"
report=$(awk '
  /^[0-9a-f]+ <.*>:$/ { sub(/^[0-9a-f]+ </, ""); sub(/>:$/, ""); symbol = $0; next }
  /^ +[0-9a-f]+:\t/ {
    split($0, field, "\t"); insn = field[2]; split(insn, word, " "); op = word[1]
    higher = op ~ /^v[a-z]/ || insn ~ /%[yz]mm/ || op ~ /^(andn|bextr|blsi|blsmsk|blsr|bzhi|mulx|pdep|pext|rorx|sarx|shlx|shrx|lzcnt|movbe)$/
    if (higher && !(symbol in seen)) { seen[symbol] = op; print symbol "\t" op }
    if (op ~ /^vfmadd/ && insn ~ /%ymm/) ymm[symbol] = 1
    if (op ~ /^vfmadd/ && insn ~ /%zmm/) zmm[symbol] = 1
    if (op ~ /^vpdpbusd/ && insn ~ /%zmm/) vnni[symbol] = 1
    if (op == "{vex}") { op = word[2]; if (op == "vpdpbusd" && symbol ~ /^\$s18YOLOKernelsAVXVNNI/) vexvnni[symbol] = 1 }
    if (op ~ /^vpdp(bu|ws)s?d/ && symbol !~ /^\$s(15YOLOKernelsVNNI|18YOLOKernelsAVXVNNI)/) print "VNNI-OUTSIDE\t" symbol
    if (symbol ~ /^\$s18YOLOKernelsAVXVNNI/ && (insn ~ /%zmm|%k[0-7]|%[xy]mm(1[6-9]|2[0-9]|3[01])|\{1to/ || op ~ /^(gf2p8|vgf2p8|vaes|aes|vpclmul|pclmul|sha|movbe)/)) print "NOT-AVXVNNI\t" symbol "\t" op
    if (op ~ /^vpmaddwd/ && insn ~ /%ymm/) madd[symbol] = 1
  }
  END {
    for (s in ymm) if (s ~ /^\$s15YOLOKernelsAVX2/) print "OK-AVX2\t" s
    for (s in zmm) if (s ~ /^\$s17YOLOKernelsAVX512/) print "OK-AVX512\t" s
    for (s in vnni) if (s ~ /^\$s15YOLOKernelsVNNI/) print "OK-VNNI\t" s
    for (s in madd) if (s ~ /^\$s15YOLOKernelsAVX2/) print "OK-MADD\t" s
    for (s in vexvnni) print "OK-AVXVNNI\t" s
  }' "$disassembly")
if grep -q '^NOT-AVXVNNI' <<<"$report"; then
  echo "check-isa: $binary: YOLOKernelsAVXVNNI uses instructions beyond x86-64-v3 + AVX-VNNI:" >&2
  grep '^NOT-AVXVNNI' <<<"$report" | cut -f2,3 | sort -u | sed 's/^/  /' >&2
  exit 1
fi
if grep -q '^VNNI-OUTSIDE' <<<"$report"; then
  echo "check-isa: $binary: VNNI instructions outside YOLOKernelsVNNI and YOLOKernelsAVXVNNI:" >&2
  grep '^VNNI-OUTSIDE' <<<"$report" | cut -f2 | sort -u | sed 's/^/  /' >&2
  exit 1
fi
isa='^\$s(15YOLOKernelsAVX2|17YOLOKernelsAVX512|15YOLOKernelsVNNI|18YOLOKernelsAVXVNNI)'
outside=$(grep -v -E '^(OK-|VNNI-OUTSIDE|NOT-AVXVNNI)' <<<"$report" | grep -v -E "$isa" || true)
inside=$(grep -v '^OK-' <<<"$report" | grep -c -E "$isa" || true)
if [[ -n $outside ]]; then
  echo "check-isa: $binary: functions outside the ISA kernel targets use higher-ISA instructions (would SIGILL on an older CPU):" >&2
  while IFS=$'\t' read -r symbol op; do
    echo "  $op in $(swift demangle --simplified --compact "$symbol" 2>/dev/null || echo "$symbol")" >&2
  done <<<"$outside"
  exit 1
fi
grep -q '^OK-AVX2' <<<"$report" || { echo "check-isa: $binary: no ymm FMA in YOLOKernelsAVX2 (was it compiled for haswell?)" >&2; exit 1; }
grep -q '^OK-AVX512' <<<"$report" || { echo "check-isa: $binary: no zmm FMA in YOLOKernelsAVX512 (was it compiled for skylake-avx512?)" >&2; exit 1; }
grep -q '^OK-VNNI' <<<"$report" || { echo "check-isa: $binary: no zmm vpdpbusd in YOLOKernelsVNNI (was it compiled for cascadelake?)" >&2; exit 1; }
grep -q '^OK-MADD' <<<"$report" || { echo "check-isa: $binary: no ymm vpmaddwd in YOLOKernelsAVX2's int8 kernel" >&2; exit 1; }
grep -q '^OK-AVXVNNI' <<<"$report" || { echo "check-isa: $binary: no VEX-encoded vpdpbusd in YOLOKernelsAVXVNNI (was it compiled for alderlake?)" >&2; exit 1; }
unspecialized=$(awk '
  /^[0-9a-f]+ <.*>:$/ { sub(/^[0-9a-f]+ </, ""); sub(/>:$/, ""); symbol = $0; next }
  /\tcall/ && symbol ~ /^\$s(4YOLO|11YOLOKernels|15YOLOKernelsAVX2|17YOLOKernelsAVX512|15YOLOKernelsVNNI|18YOLOKernelsAVXVNNI)/ && symbol !~ /s4SIMDRz/ {
    target = $NF; gsub(/[<>]/, "", target); sub(/@plt$/, "", target)
    # A target ending in Tg<N> is a specialization (generic code compiled for one concrete type): fine.
    if ((target ~ /SIMDStorage/ || target ~ /s4SIMDRz/) && target !~ /Tg[0-9]+$/) print symbol "\t" target
  }' "$disassembly" | sort -u)
if [[ -n $unspecialized ]]; then
  echo "check-isa: $binary: engine code calls SIMD code unspecialized (each call goes through the generic runtime, 20-40x slower; is an @inlinable or @_transparent body no longer public?):" >&2
  while IFS=$'\t' read -r symbol target; do
    echo "  $(swift demangle --simplified --compact "$symbol" 2>/dev/null || echo "$symbol")  calls  $(swift demangle --simplified --compact "$target" 2>/dev/null || echo "$target")" >&2
  done <<<"$unspecialized"
  exit 1
fi
echo "check-isa: $binary: higher-ISA instructions only in the ISA kernel targets ($inside functions); AVX2 kernel uses ymm FMAs and vpmaddwd, AVX-512 kernel zmm FMAs, VNNI kernel zmm vpdpbusd, AVX-VNNI kernel VEX ymm vpdpbusd and no EVEX (VNNI nowhere else); no unspecialized SIMD calls"
