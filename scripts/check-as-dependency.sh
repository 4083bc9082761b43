#!/usr/bin/env bash
# Builds a tiny package that depends on SwiftYOLO by version, as an app would (`from: "99.0.0"`, through
# a local bare clone of this repository's HEAD, tagged there), with no extra flags; runs one detection
# on Samples/coffee.png and checks that it ran the best kernel family for this CPU (AVX-512, or AVX2 where AVX-512 is missing or
# split in halves as on Zen 4;
# code is in every build since the ISA targets carry their own -target-cpu, allowed in a versioned
# dependency since swift-tools-version 6.2) and found the cup; then that Detector(named: .yolov4Tiny), run
# outside any clone (no Weights/ folder), uses the model bundled in the YOLOModels product and finds the
# astronaut in Samples/astronaut.png; that the same binary away from its resources gets errors, not a trap;
# that every Swift code block of the docs compiles in that package (target Snippets); that a second app using
# YOLOVideo decodes a clip through the yolo-video helper built beside it, loads no FFmpeg or other GPL library
# (scripts/check-no-gpl.sh, which also checks that the helper does), and without the helper fails with one line
# naming where it looked; then runs scripts/check-isa.sh on the app.
# Usage: scripts/check-as-dependency.sh [WORK_DIR]     (commit first: the clone takes HEAD)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=${1:-$(mktemp -d /tmp/yolo-dependency.XXXXXX)}
for f in Weights/yolov3-tiny.cfg Weights/yolov3-tiny.weights Weights/coco.names Samples/coffee.png; do
  [[ -f $root/$f ]] || { echo "check-as-dependency: $root/$f is missing (run make weights)" >&2; exit 1; }
done
# AMD family 25 (Zen 4) runs AVX-512 as two 256-bit halves; the engine prefers its avx2 family there.
amd_family25=no
if grep -q '^vendor_id.*AuthenticAMD' /proc/cpuinfo && grep -Eq '^cpu family[[:space:]]*: 25$' /proc/cpuinfo; then amd_family25=yes; fi
if grep -qw avx512f /proc/cpuinfo && grep -qw avx512bw /proc/cpuinfo && grep -qw avx512vl /proc/cpuinfo && [[ $amd_family25 == no ]]; then expected=avx512
elif grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo; then expected=avx2
else expected=portable; fi

rm -rf "$work/SwiftYOLO.git" "$work/app"
git clone --quiet --bare "$root" "$work/SwiftYOLO.git"
git -C "$work/SwiftYOLO.git" tag 99.0.0 HEAD
mkdir -p "$work/app/Sources/app"
# The manifest is README.md's, with this check's URL and version, plus a target `Snippets` that compiles
# every ```swift block of README.md, docs/*.md, the DocC catalog and the doc comments (scripts/doc-snippets.py:
# each block becomes the body of a throwing function, sync and async, with the names the docs leave undeclared
# declared in a prelude; a block's own imports are its only imports).
python3 "$root/scripts/doc-snippets.py" manifest "file://$work/SwiftYOLO.git" 99.0.0 >"$work/app/Package.swift"
python3 "$root/scripts/doc-snippets.py" sources "$work/app/Sources/Snippets"
cat >"$work/app/Sources/app/main.swift" <<'SWIFT'
import Foundation
import YOLO
import YOLOModels
let arguments = CommandLine.arguments
if arguments.count == 3, arguments[1] == "missing" {
    // Run from a folder without the YOLOModels resources beside it: errors, never a trap.
    do { _ = try Detector(bundled: .yolov4Tiny); print("bundled: loaded") } catch { print("bundled error: \(error)") }
    do { _ = try Detector(); print("default: loaded") } catch { print("default error: \(error)") }
    exit(0)
}
if arguments.count == 2 {
    // The named default model with no files around: the YOLOModels bundle.
    let detector = try Detector(named: .yolov4Tiny)
    for d in try detector.detect(Image(contentsOf: arguments[1])) { print("named \(d.label) \(d.confidence)") }
    for d in try Detector(bundled: .yolov3Tiny).detect(Image(contentsOf: arguments[1])) { print("bundled-v3 \(d.label)") }
    exit(0)
}
let detector = try Detector(cfg: arguments[1], weights: arguments[2], names: arguments[3])
let detections = try detector.detect(Image(contentsOf: arguments[4]))
print("kernel \(KernelFamily.active.name.rawValue)")
for d in detections { print("\(d.label) \(d.confidence)") }
SWIFT
# The second app: YOLOVideo alone.
cat >>"$work/app/Package.swift" <<'SWIFT'

// An app using YOLOVideo (scripts/check-as-dependency.sh): no FFmpeg linked; the yolo-video helper beside it.
package.targets.append(.executableTarget(name: "videoapp", dependencies: [.product(name: "YOLOVideo", package: "SwiftYOLO")]))
SWIFT
mkdir -p "$work/app/Sources/videoapp"
cat >"$work/app/Sources/videoapp/main.swift" <<'SWIFT'
import Foundation
import YOLOVideo
do {
    let source = try VideoSource(CommandLine.arguments[1])
    var frames = 0
    while try source.nextFrame() != nil { frames += 1 }
    print("videoapp \(source.width)x\(source.height) \(frames) frames")
} catch {
    print("videoapp error: \(error)")
    exit(1)
}
SWIFT
echo "check-as-dependency: building $work/app (SwiftYOLO 99.0.0 = $(git -C "$root" rev-parse --short HEAD)), no extra flags"
if ! (cd "$work/app" && swift build -c release >"$work/build.log" 2>&1); then
  grep -E 'error:' -A3 "$work/build.log" | head -60 >&2 || tail -20 "$work/build.log" >&2
  echo "check-as-dependency: the package (the app, or a doc block in Sources/Snippets) does not build: $work/build.log" >&2; exit 1
fi
tail -1 "$work/build.log"
# The helper is a product of the dependency: an app builds it and ships it beside its executable.
if ! (cd "$work/app" && swift build -c release --product yolo-video >>"$work/build.log" 2>&1); then
  tail -20 "$work/build.log" >&2; echo "check-as-dependency: the yolo-video helper does not build in the app package" >&2; exit 1
fi
output=$(env -u YOLO_KERNEL "$work/app/.build/release/app" "$root/Weights/yolov3-tiny.cfg" "$root/Weights/yolov3-tiny.weights" \
  "$root/Weights/coco.names" "$root/Samples/coffee.png")
echo "$output"
grep -qx "kernel $expected" <<<"$output" || { echo "check-as-dependency: expected kernel family $expected" >&2; exit 1; }
grep -q '^cup ' <<<"$output" || { echo "check-as-dependency: no cup found in Samples/coffee.png" >&2; exit 1; }
named=$(cd "$work" && env -u SWIFTYOLO_MODEL -u SWIFTYOLO_MODEL_DIR "$work/app/.build/release/app" "$root/Samples/astronaut.png")
echo "$named"
grep -q '^named person ' <<<"$named" || { echo "check-as-dependency: Detector(named: .yolov4Tiny) found no person in Samples/astronaut.png" >&2; exit 1; }
# The same binary copied away from its resources folder (and from any Weights/): Detector(bundled:) and
# Detector() throw, naming the missing folder, instead of stopping in SwiftPM's Bundle.module; and since the
# app links YOLOModels, the advice is not to link it.
mkdir -p "$work/elsewhere" && cp "$work/app/.build/release/app" "$work/elsewhere/app"
missing=$(cd "$work/elsewhere" && env -u SWIFTYOLO_MODEL -u SWIFTYOLO_MODEL_DIR ./app missing "$root/Samples/astronaut.png" 2>&1) \
  || { echo "$missing"; echo "check-as-dependency: the app stopped when its resources were missing" >&2; exit 1; }
echo "$missing"
grep -q '^bundled error: .*_YOLOModels.resources' <<<"$missing" || { echo "check-as-dependency: Detector(bundled:) did not throw the missing-resources error" >&2; exit 1; }
grep -q '^default error: .*links YOLOModels, but its resources are not beside the executable' <<<"$missing" \
  || { echo "check-as-dependency: Detector() did not say the linked YOLOModels' resources are missing" >&2; exit 1; }
if grep -q 'or link the YOLOModels product' <<<"$missing"; then
  echo "check-as-dependency: Detector() advises linking YOLOModels to an app that links it" >&2; exit 1
fi
# A program that uses only YOLO (and YOLOModels) links neither FFmpeg (YOLOVideo) nor the server (YOLOServe).
if ldd "$work/app/.build/release/app" | grep -q libavformat; then
  echo "check-as-dependency: the app links FFmpeg, though it uses only YOLO" >&2; exit 1
fi
if nm "$work/app/.build/release/app" | grep -q -e Hummingbird -e 9YOLOServe; then
  echo "check-as-dependency: the app contains Hummingbird or YOLOServe code, though it uses only YOLO" >&2; exit 1
fi
# Nor the offline tools: conversion and LUT quantization (with LAPACK), COCO evaluation, MOT metrics.
tools=$(nm "$work/app/.build/release/app" | grep -E -e 'YOLOConversion|YOLOEvaluation|YOLOMOTMetrics' -e ' U? ?dpot(rf|ri)_' | head -3 || true)
if [[ -n $tools ]]; then
  echo "check-as-dependency: the app contains code of the offline tools or LAPACK, though it uses only YOLO: $tools" >&2; exit 1
fi
# The video app: decodes a clip through the helper beside it, links no GPL library, and without a helper
# (copied elsewhere, PATH without one) fails in one line naming where it looked.
ffmpeg -loglevel error -y -f lavfi -i testsrc=size=160x120:rate=10:duration=1 -pix_fmt yuv420p "$work/clip.mp4"
video=$("$work/app/.build/release/videoapp" "$work/clip.mp4")
echo "$video"
grep -qx 'videoapp 160x120 10 frames' <<<"$video" || { echo "check-as-dependency: the video app did not decode the clip" >&2; exit 1; }
bash "$root/scripts/check-no-gpl.sh" "$work/app/.build/release/yolo-video" "$work/app/.build/release/videoapp" "$work/app/.build/release/app"
cp "$work/app/.build/release/videoapp" "$work/elsewhere/videoapp"
alone=$(cd "$work/elsewhere" && env PATH=/usr/bin:/bin ./videoapp "$work/clip.mp4" 2>&1) && { echo "$alone"; echo "check-as-dependency: the video app ran without its helper" >&2; exit 1; }
echo "$alone"
grep -q "^videoapp error: $work/clip.mp4: cannot read: the video helper yolo-video .* is not at $work/elsewhere/yolo-video (beside this executable) nor in PATH" <<<"$alone" \
  || { echo "check-as-dependency: no one-line error naming where the helper was looked for" >&2; exit 1; }
[[ $(wc -l <<<"$alone") == 1 ]] || { echo "check-as-dependency: the missing-helper error is not one line" >&2; exit 1; }
# The app's binary gets the same disassembly checks as ours: kernels compiled for their ISA, nothing
# higher-ISA outside them, and no SIMD code left unspecialized across the module boundary.
bash "$root/scripts/check-isa.sh" "$work/app/.build/release/app"
echo "check-as-dependency: ok: a package depending on SwiftYOLO by version runs the $expected family"
