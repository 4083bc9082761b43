// swift-tools-version:6.2
// SwiftYOLO: tiny YOLO object detection in pure Swift on the CPU.
//
// Tools 6.2: since then SwiftPM accepts `unsafeFlags` in a package consumed by version, which the ISA
// kernel targets need for their `-target-cpu`. Their code runs only after `KernelFamily` has checked
// the CPU at run time, so every build (`swift build`, `make`, a package depending on this one) carries
// every family and runs the best the machine supports.
import PackageDescription

let package = Package(
    name: "SwiftYOLO",
    products: [
        // The inference core: models, the planner, layers, kernels, images, detection, tracking.
        .library(name: "YOLO", targets: ["YOLO"]),
        // The offline tools, each its own product so an app depending on YOLO links none of them: model
        // conversion and LUT quantization (with LAPACK), COCO evaluation, MOT metrics.
        .library(name: "YOLOConversion", targets: ["YOLOConversion"]),
        .library(name: "YOLOEvaluation", targets: ["YOLOEvaluation"]),
        .library(name: "YOLOMOTMetrics", targets: ["YOLOMOTMetrics"]),
        // The converted yolov4-tiny and yolov3-tiny (lut8, 14.4 MB of resources), separate so YOLO stays small.
        .library(name: "YOLOModels", targets: ["YOLOModels"]),
        // Video files, cameras and network streams; separate so YOLO links nothing new. It links no FFmpeg
        // library either: it runs the yolo-video helper and exchanges frames with it over a socket.
        .library(name: "YOLOVideo", targets: ["YOLOVideo"]),
        .executable(name: "yolo", targets: ["yolo"]),
        // The helper that decodes and encodes video with FFmpeg for YOLOVideo: the only product linking FFmpeg,
        // which Debian builds under the GPL (docs/THIRD_PARTY.md).
        .executable(name: "yolo-video", targets: ["yolo-video"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // `swift package generate-documentation` for the DocC catalog in Sources/YOLO/YOLO.docc (make docs).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        // YOLOServe only: the HTTP server (default traits off: no swift-configuration), its service group
        // (graceful shutdown on SIGTERM/SIGINT), Prometheus metrics through swift-metrics, swift-log.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // Tests only: reads docs/openapi.yaml to check the server's answers against it.
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
    ],
    targets: [
        // C libraries come in only through system-library targets (module map + one-line shim header).
        .systemLibrary(name: "COpenBLAS", pkgConfig: "openblas", providers: [.apt(["libopenblas-dev"])]),
        // JPEG through libjpeg-turbo's TurboJPEG API: it reports errors as return codes, where the
        // classic libjpeg API longjmps (which Swift cannot survive).
        .systemLibrary(name: "CTurboJPEG", pkgConfig: "libturbojpeg", providers: [.apt(["libturbojpeg0-dev"])]),
        // LAPACK's C declarations (Debian's liblapacke-dev); the routines themselves come from libopenblas.
        .systemLibrary(name: "CLAPACK", providers: [.apt(["liblapacke-dev"])]),
        .systemLibrary(name: "CPNG", pkgConfig: "libpng", providers: [.apt(["libpng-dev"])]),
        // zlib's deflate for the PNG writer, which compresses strips of rows on several threads.
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        // KissFFT (BSD-3-Clause) for the object trackers' correlation filters: Debian's libkissfft-dev, float build.
        // No pkgConfig: its .pc file's -D flags are ones SwiftPM refuses (they only restate the header's defaults);
        // the shim includes <kissfft/…> and the module map links kissfft-float.
        .systemLibrary(name: "CKissFFT", providers: [.apt(["libkissfft-dev"])]),
        // FFmpeg 5.1 (Debian 12), one module per library, for the yolo-video helper only (and swscale for the
        // integration tests' references).
        .systemLibrary(name: "CAVFormat", pkgConfig: "libavformat", providers: [.apt(["libavformat-dev"])]),
        .systemLibrary(name: "CAVCodec", pkgConfig: "libavcodec", providers: [.apt(["libavcodec-dev"])]),
        .systemLibrary(name: "CAVUtil", pkgConfig: "libavutil", providers: [.apt(["libavutil-dev"])]),
        .systemLibrary(name: "CSwScale", pkgConfig: "libswscale", providers: [.apt(["libswscale-dev"])]),
        .systemLibrary(name: "CAVDevice", pkgConfig: "libavdevice", providers: [.apt(["libavdevice-dev"])]),
        // glibc's malloc statistics, for the test that checks a forward pass allocates nothing.
        .systemLibrary(name: "CMallocInfo"),
        // Software prefetch through LLVM's intrinsic (Builtin is only visible with -parse-stdlib).
        .target(name: "YOLOPrefetch", swiftSettings: [.unsafeFlags(["-parse-stdlib"])]),
        // Baseline code shared by every kernel family: the activations (generic over SIMD width) and
        // the micro-kernel entry-point types. No CPU flags.
        .target(name: "YOLOKernels", dependencies: ["YOLOPrefetch"]),
        // One target per ISA family, compiled for that ISA; entry points non-generic (docs/performance.md).
        // -parse-stdlib: the int8 kernels reach LLVM's intrinsics (`vpmaddwd`, conversions) through `Builtin`.
        .target(name: "YOLOKernelsAVX2", dependencies: ["YOLOKernels"],
                swiftSettings: [.unsafeFlags(["-target-cpu", "haswell", "-parse-stdlib"])]),
        .target(name: "YOLOKernelsAVX512", dependencies: ["YOLOKernels"],
                swiftSettings: [.unsafeFlags(["-target-cpu", "skylake-avx512"])]),
        // The AVX512-VNNI int8 kernel: cascadelake is skylake-avx512 plus VNNI (`vpdpbusd`, through `Builtin`).
        .target(name: "YOLOKernelsVNNI", dependencies: ["YOLOKernels"],
                swiftSettings: [.unsafeFlags(["-target-cpu", "cascadelake", "-parse-stdlib"])]),
        // The AVX-VNNI int8 kernel (`vpdpbusd` on ymm, VEX-encoded): alderlake is x86-64-v3 plus AVX-VNNI and no AVX-512.
        // Its tile file is also compiled into YOLOKernelsVNNI (a symbolic link: the EVEX twin the tests run), which
        // shares its quad helpers with it the same way (Int8TileYmm.swift, QuadLanes.swift).
        .target(name: "YOLOKernelsAVXVNNI", dependencies: ["YOLOKernels"],
                swiftSettings: [.unsafeFlags(["-target-cpu", "alderlake", "-parse-stdlib"])]),
        .target(name: "YOLO", dependencies: ["COpenBLAS", "CTurboJPEG", "CPNG", "CZlib", "CKissFFT", "YOLOKernels",
                                             "YOLOKernelsAVX2", "YOLOKernelsAVX512", "YOLOKernelsVNNI", "YOLOKernelsAVXVNNI",
                                             "YOLOPrefetch"]),
        .target(name: "YOLOConversion", dependencies: ["YOLO", "CLAPACK"]),
        .target(name: "YOLOEvaluation", dependencies: ["YOLO"]),
        .target(name: "YOLOMOTMetrics", dependencies: ["YOLO"]),
        .target(name: "YOLOModels", dependencies: ["YOLO"], exclude: ["PROVENANCE.md"],
                resources: [.copy("Resources/yolov4-tiny-lut8.yolo"), .copy("Resources/yolov3-tiny-lut8.yolo")]),
        // The records YOLOVideo and the yolo-video helper exchange (its source file describes them).
        .target(name: "YOLOVideoProtocol"),
        .target(name: "YOLOVideo", dependencies: ["YOLO", "YOLOVideoProtocol"]),
        .executableTarget(name: "yolo-video",
                          dependencies: ["YOLOVideoProtocol", "CAVFormat", "CAVCodec", "CAVUtil", "CSwScale", "CAVDevice"]),
        // What `yolo detect` prints for an image (text, JSON), shared by the command line and the server.
        .target(name: "YOLOReport", dependencies: ["YOLO"]),
        // `yolo serve`: the HTTP detection service on Hummingbird 2, a target of the yolo tool (no product: it has no
        // public API), so YOLO and its users link no server.
        .target(name: "YOLOServe", dependencies: [
            "YOLO", "YOLOReport",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            .product(name: "Prometheus", package: "swift-prometheus"),
            .product(name: "Metrics", package: "swift-metrics"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        .executableTarget(
            name: "yolo",
            dependencies: ["YOLO", "YOLOConversion", "YOLOEvaluation", "YOLOMOTMetrics", "YOLOModels", "YOLOVideo", "YOLOReport",
                           "YOLOServe", .product(name: "ArgumentParser", package: "swift-argument-parser")]),
        // Helpers both test targets share (paths, skip reasons, the real models, seeded data, running `yolo`, a
        // tiny model). A plain target, so public and SPI API only: no @testable import, which a release build
        // without -enable-testing could not compile.
        .target(name: "YOLOTestSupport", dependencies: ["YOLO"], path: "Tests/YOLOTestSupport"),
        // Unit tests (`make test-fast`): in process, on generated data and the committed fixtures; no model
        // weights, no `yolo` binary, no HTTP server, no FFmpeg. Fixtures in Tests/YOLOTests/Fixtures, read by path.
        .testTarget(name: "YOLOTests", dependencies: ["YOLO", "YOLOConversion", "YOLOEvaluation", "YOLOMOTMetrics",
                                                      "YOLOTestSupport", "CMallocInfo", "YOLOKernels",
                                                      "YOLOKernelsAVX2", "YOLOKernelsAVX512", "YOLOKernelsVNNI", "YOLOKernelsAVXVNNI",
                                                      "YOLOServe"],
                    exclude: ["Fixtures"]),
        // The slow suites: the real yolov3-tiny / yolov4-tiny weights and converted models, the `yolo` binary, the
        // HTTP server, FFmpeg clips; fixtures from Tests/YOLOTests/Fixtures by path. `make test` runs both targets.
        .testTarget(name: "YOLOIntegrationTests", dependencies: ["YOLO", "YOLOConversion", "YOLOEvaluation", "YOLOMOTMetrics",
                                                                 "YOLOTestSupport", "YOLOModels", "YOLOVideo", "yolo",
                                                                 "YOLOServe", "CSwScale", .product(name: "Yams", package: "Yams")]),
    ],
    swiftLanguageModes: [.v6]
)
