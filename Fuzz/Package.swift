// swift-tools-version:6.2
// libFuzzer targets for SwiftYOLO's loaders: a separate package, so the main package's build is untouched.
//
// Build and run through `Fuzz/run.sh` (see Fuzz/README.md). The sanitizer flags are NOT set here: they
// must reach every module (YOLO included, or libFuzzer sees no coverage from the loaders), so run.sh
// passes them on the command line:
//
//     swift build -c debug --sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library
//
// (`--sanitize=fuzzer` makes SwiftPM link libFuzzer's `main`; the combined `-sanitize=fuzzer,address` must
// come last because swiftc keeps only the last `-sanitize=` flag.) A plain `swift build` here fails to link:
// the targets define only `LLVMFuzzerTestOneInput`, no `main`.
import Foundation
import PackageDescription

// A path dependency's identity is its directory name ("main" in /work/main, maybe "SwiftYOLO" in CI).
let mainPackage = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

let fuzzTargets = ["fuzz-cfg", "fuzz-weights", "fuzz-model", "fuzz-image", "fuzz-coco", "fuzz-npy", "fuzz-onnx"]

let package = Package(
    name: "SwiftYOLOFuzz",
    products: fuzzTargets.map { .executable(name: $0, targets: [$0]) },
    dependencies: [
        .package(path: ".."),
    ],
    targets: [
        .target(name: "FuzzSupport", dependencies: [.product(name: "YOLO", package: mainPackage)]),
    ] + fuzzTargets.map { name in
        .executableTarget(name: name, dependencies: ["FuzzSupport", .product(name: "YOLO", package: mainPackage)]
                          + (name == "fuzz-coco" ? [.product(name: "YOLOEvaluation", package: mainPackage)] : [])
                          + (name == "fuzz-onnx" ? [.product(name: "YOLOConversion", package: mainPackage)] : []))
    },
    swiftLanguageModes: [.v6]
)
