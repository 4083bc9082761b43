#!/usr/bin/env bash
# The test suite under ThreadSanitizer, one `swift test` run per group of suites, so that a run longer than a
# sitting still leaves a finished, logged result for every group done (a single `swift test` reports only at
# its end, and takes over two hours on two cores). Every suite of `swift test list` lands in exactly one
# group: the named heavy ones (forward passes ~50x slower under TSan) each alone, all the others together.
#
#   scripts/tsan-by-suite.sh [LOGDIR] [GROUP...]   # default /tmp/yolo-tsan; every group unless named
#
# Needs `make tsan`'s build (.build/tsan, or TSAN_SCRATCH=folder). A GROUP is `light` or a heavy suite's name.
#
# Per group: LOGDIR/NN-name.log, its exit status and wall time in LOGDIR/summary.txt, and the number of
# "WARNING: ThreadSanitizer" reports. Exit status 1 if any group failed or reported.
set -u -o pipefail
cd "$(dirname "$0")/.."
LOGDIR=${1:-/tmp/yolo-tsan}
shift || true
ONLY=("$@")
mkdir -p "$LOGDIR"
: >"$LOGDIR/summary.txt"
SCRATCH=${TSAN_SCRATCH:-.build/tsan}
FLAGS=(-c release -Xswiftc -enable-testing --scratch-path "$SCRATCH" --sanitize=thread)
export TSAN_OPTIONS="suppressions=$PWD/Tests/tsan.supp${TSAN_OPTIONS:+ $TSAN_OPTIONS}"

# The heavy suites: parity, evaluation, calibration and conversion (whole forward passes over many images).
HEAVY=(YOLOv4TinyEvalTests EvalCommandModelRunTests COCOEvaluatorTests YOLOv3FullTests YOLOv4TinyParityTests
       DetectionParityTests DetectionAgreementTests CalibratedConversionTests CalibratedAgreementTests
       LUTRefinementTests GPTQRoundingTests BiasCorrectionTests ModelConverterTests ConvertCommandTests
       ConvertDefaultSourceTests EdgeImageDetectionTests DetectCommandTests)

if [ ! -e "$SCRATCH/release/SwiftYOLOPackageTests.xctest" ]; then
    echo "tsan-by-suite: no TSan build in $SCRATCH (run: swift build --build-tests ${FLAGS[*]})" >&2
    exit 1
fi
suites=$(swift test list --skip-build "${FLAGS[@]}" 2>/dev/null | sed -E 's/^[^.]+\.([^/.]+).*/\1/' | sort -u)
[ -n "$suites" ] || { echo "tsan-by-suite: 'swift test list' gave no tests" >&2; exit 1; }
light=()
for s in $suites; do
    case " ${HEAVY[*]} " in *" $s "*) ;; *) light+=("$s") ;; esac
done
groups=("$(IFS='|'; echo "${light[*]}")")
labels=(light)
for s in "${HEAVY[@]}"; do
    grep -qx "$s" <<<"$suites" && groups+=("$s") && labels+=("$s")
done
# A misspelt group would otherwise run nothing and report success.
for wanted in "${ONLY[@]}"; do
    [[ " ${labels[*]} " == *" $wanted "* ]] || { echo "tsan-by-suite: unknown group '$wanted' (${labels[*]})" >&2; exit 1; }
done

status=0
n=0
for g in "${groups[@]}"; do
    n=$((n + 1))
    label=${labels[n - 1]}
    if [ ${#ONLY[@]} -gt 0 ] && [[ " ${ONLY[*]} " != *" $label "* ]]; then continue; fi
    name=$(printf '%02d-%s' "$n" "$label")
    log="$LOGDIR/$name.log"
    start=$(date +%s)
    echo "$(date +%T) $name: running" >&2
    # Either test target (YOLOTests, YOLOIntegrationTests); a suite name both use runs in both.
    swift test --skip-build "${FLAGS[@]}" --filter "^YOLO(Integration)?Tests\.($g)[/.]" >"$log" 2>&1
    rc=$?
    reports=$(grep -c 'WARNING: ThreadSanitizer' "$log")
    line=$(printf '%s exit %s, %s TSan reports, %s s' "$name" "$rc" "$reports" "$(( $(date +%s) - start ))")
    echo "$line" | tee -a "$LOGDIR/summary.txt" >&2
    [ "$rc" = 0 ] && [ "$reports" = 0 ] || status=1
done
exit $status
