// swift-tools-version:6.0
// SwiftYOLO: tiny YOLOv3 object detection in pure Swift on the CPU, OpenBLAS for matrix products.
import PackageDescription

let package = Package(
    name: "SwiftYOLO",
    products: [
        .library(name: "YOLO", targets: ["YOLO"]),
        .executable(name: "yolo", targets: ["yolo"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
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
        // glibc's malloc statistics, for the test that checks a forward pass allocates nothing.
        .systemLibrary(name: "CMallocInfo"),
        .target(name: "YOLO", dependencies: ["COpenBLAS", "CLAPACK", "CTurboJPEG", "CPNG"]),
        .executableTarget(
            name: "yolo",
            dependencies: ["YOLO", .product(name: "ArgumentParser", package: "swift-argument-parser")]),
        // Tests read their fixtures from Tests/YOLOTests/Fixtures by path; they also run the `yolo` binary.
        .testTarget(name: "YOLOTests", dependencies: ["YOLO", "yolo", "CMallocInfo"], exclude: ["Fixtures"]),
    ],
    swiftLanguageModes: [.v6]
)
