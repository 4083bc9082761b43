// swift-tools-version:6.1
// SwiftYOLO benchmarks (ordo-one/benchmark), a separate package so the main package's test build stays light.
// Run from the repository root: `make bench`, or `cd Benchmarks && swift package benchmark`.
import Foundation
import PackageDescription

// A path dependency's identity is its folder name, which differs between clones and worktrees.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
let rootIdentity = root.lastPathComponent.lowercased()

let package = Package(
    name: "SwiftYOLOBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "YOLOBenchmarks",
            dependencies: [
                .product(name: "YOLO", package: rootIdentity),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/YOLOBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]),
        // 10,000 detections in one process (RSS at start and end) and 10,000 concurrent calls from 8
        // threads checked against serial results: `swift run -c release Soak` (see Soak/main.swift).
        .executableTarget(
            name: "Soak",
            dependencies: [.product(name: "YOLO", package: rootIdentity), "BenchSupport"],
            path: "Soak"),
        // What one Detector costs an embedding app in memory, step by step: `swift run -c release Embedder`.
        .executableTarget(
            name: "Embedder",
            dependencies: [.product(name: "YOLO", package: rootIdentity), "BenchSupport"],
            path: "Embedder"),
        // Forward-pass latency per thread count, one JSON line each (and per-layer times, detections for a
        // parity check), for scaling runs on many-core machines: scripts/device-kit.sh, Scale/main.swift.
        .executableTarget(
            name: "Scale",
            dependencies: [.product(name: "YOLO", package: rootIdentity)],
            path: "Scale"),
        // What the engine's threads do inside an embedding app: CPU masks, CPU time at 5 frames per second,
        // memory under 100 concurrent callers (`swift run -c release ThreadProbe`, docs/THREADS.md).
        .executableTarget(
            name: "ThreadProbe",
            dependencies: [.product(name: "YOLO", package: rootIdentity), "BenchSupport"],
            path: "ThreadProbe"),
        // A 1920×1080 NV12 frame into the network input against swscale's conversion to RGB alone, interleaved:
        // `swift run -c release CameraFrames` (see CameraFrames/main.swift).
        .executableTarget(
            name: "CameraFrames",
            dependencies: [.product(name: "YOLO", package: rootIdentity), "BenchSupport", "CSwScaleBench"],
            path: "CameraFrames"),
        // FFmpeg's swscale for CameraFrames (the main package's CSwScale is not a product).
        .systemLibrary(name: "CSwScaleBench", path: "CSwScaleBench", pkgConfig: "libswscale", providers: [.apt(["libswscale-dev"])]),
        // RSS and command-line flags for Soak, Embedder and ThreadProbe.
        .target(name: "BenchSupport", path: "BenchSupport"),
    ],
    swiftLanguageModes: [.v6]
)
