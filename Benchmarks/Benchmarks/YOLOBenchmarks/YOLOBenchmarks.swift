import Benchmark
import Foundation
@_spi(Engine) import YOLO

// Suites: the whole forward pass per algorithm and thread count (float, and the default lut8 model in
// both weight residencies), the 13 convolution products of yolov3-tiny at 416x416 on the im2col path
// (the engine's GEMM, whichever it compiled in, and OpenBLAS's sgemm), decode + letterbox of a
// 4000x3000 JPEG (full decode and DCT-scaled), NMS over many candidates, ByteTrack, and ten object trackers.
// `make bench` builds with the Makefile's CPU flags, so the engine's own GEMM kernel is measured where
// the CPU has AVX-512; the first line printed names the GEMM in use.

let weightsFolder = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("Weights")

let benchmarks: @Sendable () -> Void = {
    // mallocCountTotal checks that the forward pass allocates nothing (expected 0 per iteration).
    Benchmark.defaultConfiguration = .init(metrics: [.wallClock, .cpuTotal, .mallocCountTotal], warmupIterations: 3,
                                           maxDuration: .seconds(5), maxIterations: 200)
    print("YOLOBenchmarks: GEMM \(GEMM.kernelDescription); OpenBLAS core \(BLAS.coreName)")
    forwardPassBenchmarks()
    quantizedForwardBenchmarks()
    gemmBenchmarks()
    imageBenchmarks()
    nmsBenchmarks()
    trackerBenchmarks()
    objectTrackerBenchmarks()
}

/// A fixed pseudo-random input in [0, 1].
func pseudoRandom(_ count: Int, seed: UInt32 = 1) -> [Float] {
    var state = seed
    return (0..<count).map { _ in
        state = state &* 1_664_525 &+ 1_013_904_223
        return Float(state >> 8) / Float(1 << 24)
    }
}

func forwardPassBenchmarks() {
    let cfg = weightsFolder.appendingPathComponent("yolov3-tiny.cfg").path
    let weights = weightsFolder.appendingPathComponent("yolov3-tiny.weights").path
    guard let model = try? Model(cfg: cfg, weights: weights) else {
        print("YOLOBenchmarks: \(weights) not found: skipping the forward-pass benchmarks (run make weights)")
        return
    }
    for algorithm in [ConvolutionAlgorithm.auto, .im2col] {
        guard let network = try? Network(model: model, algorithm: algorithm) else { continue }
        for threads in [1, 2] { forwardBenchmark("forward 416x416 \(algorithm.rawValue) \(threads) thread(s)", network, threads) }
    }
}

/// The default lut8 model (`make model`), weights expanded at load and kept as codes.
func quantizedForwardBenchmarks() {
    let path = weightsFolder.appendingPathComponent("yolov3-tiny-lut8.yolo").path
    for residency in [WeightResidency.expanded, .codes] {
        guard let model = try? Model(contentsOf: path, residency: residency),
              let network = try? Network(model: model) else {
            print("YOLOBenchmarks: \(path) not found: skipping the lut8 forward pass (run make model)")
            return
        }
        for threads in [1, 2] { forwardBenchmark("forward 416x416 lut8 \(residency) \(threads) thread(s)", network, threads) }
    }
}

/// One forward-pass benchmark. The workspace is built once here, outside the measured closure; the
/// box carries the (non-Sendable) workspace into the benchmark, which runs its closure on one thread
/// at a time.
func forwardBenchmark(_ name: String, _ network: Network, _ threads: Int) {
    let state = ForwardState(network: network, threads: threads)
    Benchmark(name) { benchmark in
        state.run()
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations { state.run() }
    }
}

/// A network with its workspace and input, ready to run.
final class ForwardState: @unchecked Sendable {
    let network: Network
    let workspace: Workspace
    let input: [Float]

    init(network: Network, threads: Int) {
        self.network = network
        workspace = Workspace(for: network, threads: threads, keeping: Set(network.headIndices))
        input = pseudoRandom(network.inputShape.count)
    }

    func run() {
        input.withUnsafeBufferPointer { network.forward($0.baseAddress!, workspace: workspace) }
    }
}

/// (layer, M = filters, N = output pixels, K = inChannels·size²) of yolov3-tiny's convolutions at 416.
let gemmShapes: [(Int, Int, Int, Int)] = [
    (0, 16, 173_056, 27), (2, 32, 43_264, 144), (4, 64, 10_816, 288), (6, 128, 2_704, 576),
    (8, 256, 676, 1_152), (10, 512, 169, 2_304), (12, 1_024, 169, 4_608), (13, 256, 169, 1_024),
    (14, 512, 169, 2_304), (15, 255, 169, 512), (18, 128, 169, 256), (21, 256, 676, 3_456), (22, 255, 676, 256),
]

func gemmBenchmarks() {
    for (layer, m, n, k) in gemmShapes {
        Benchmark("gemm layer \(layer) \(m)x\(n)x\(k)",
                  configuration: .init(metrics: [.wallClock], warmupIterations: 2, maxDuration: .seconds(2))) { benchmark in
            let a = PackedMatrix(rowMajor: FloatBuffer(pseudoRandom(m * k, seed: 2)), rows: m, columns: k)
            let b = pseudoRandom(k * n, seed: 3), bias = pseudoRandom(m, seed: 4)
            var c = [Float](repeating: 0, count: m * n)
            var scratch = [Float](repeating: 0, count: max(GEMM.scratchCount, 1))
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                GEMM.multiply(a, rows: 0..<m, b: b, ldb: n, n: n, c: &c, ldc: n, bias: bias, activation: .leaky,
                              scratch: &scratch)
            }
        }
        Benchmark("sgemm layer \(layer) \(m)x\(n)x\(k)",
                  configuration: .init(metrics: [.wallClock], warmupIterations: 2, maxDuration: .seconds(2))) { benchmark in
            BLAS.threads = 1
            let a = pseudoRandom(m * k, seed: 2), b = pseudoRandom(k * n, seed: 3)
            var c = [Float](repeating: 0, count: m * n)
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                a.withUnsafeBufferPointer { a in
                    b.withUnsafeBufferPointer { b in
                        c.withUnsafeMutableBufferPointer { c in
                            BLAS.sgemm(m: m, n: n, k: k, a: a.baseAddress!, lda: k, b: b.baseAddress!, ldb: n,
                                       c: c.baseAddress!, ldc: n)
                        }
                    }
                }
            }
        }
    }
}

/// A 4000x3000 JPEG (a smooth gradient with noise, encoded once into a temporary file): full decode +
/// letterbox to 416x416, and the DCT-scaled decode `yolo detect` uses (`Detector.decodingOptions`).
func imageBenchmarks() {
    let (width, height) = (4000, 3000)
    var pixels = [UInt8](repeating: 0, count: width * height * 3)
    var state: UInt32 = 7
    for y in 0..<height {
        for x in 0..<width {
            state = state &* 1_664_525 &+ 1_013_904_223
            let noise = Int(state >> 28)
            let i = (y * width + x) * 3
            pixels[i] = UInt8((x * 255 / width + noise) & 255)
            pixels[i + 1] = UInt8((y * 255 / height + noise) & 255)
            pixels[i + 2] = UInt8(((x + y) * 127 / (width + height) + noise) & 255)
        }
    }
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("yolo-bench-4000x3000.jpg").path
    guard (try? Image(width: width, height: height, pixels: pixels).write(to: path, jpegQuality: 90)) != nil else {
        print("YOLOBenchmarks: cannot write \(path): skipping the image benchmarks")
        return
    }
    let plan = Geometry.plan(imageWidth: width, imageHeight: height, crop: PixelRegion(x: 0, y: 0, width: width, height: height),
                             scaling: .scaleFit, resampling: .darknet, networkWidth: 416, networkHeight: 416)
    let scaled = ImageDecodingOptions(minimumSize: (416, 416))
    for (name, options) in [("full decode", ImageDecodingOptions()), ("DCT-scaled decode", scaled)] {
        Benchmark("jpeg 4000x3000 \(name) + letterbox 416",
                  configuration: .init(metrics: [.wallClock, .peakMemoryResident], warmupIterations: 1,
                                       maxDuration: .seconds(5))) { benchmark in
            var input = [Float](repeating: 0, count: 3 * 416 * 416)
            for _ in benchmark.scaledIterations {
                guard let image = try? Image(contentsOf: path, options: options) else { continue }
                let plan = image.width == width ? plan
                    : Geometry.plan(imageWidth: image.width, imageHeight: image.height,
                                    crop: PixelRegion(x: 0, y: 0, width: image.width, height: image.height),
                                    scaling: .scaleFit, resampling: .darknet, networkWidth: 416, networkHeight: 416)
                input.withUnsafeMutableBufferPointer { Geometry.makeInput(image, plan: plan, into: $0.baseAddress!) }
            }
        }
    }
}

/// Darknet's per-class NMS over 10,000 candidates with 80 classes (3 classes each above zero: about
/// 375 per class).
func nmsBenchmarks() {
    var random: UInt32 = 11
    func next() -> Double {
        random = random &* 1_664_525 &+ 1_013_904_223
        return Double(random >> 8) / Double(1 << 24)
    }
    var template = Candidates(classes: 80)
    for _ in 0..<10_000 {
        template.boxes.append(Rect(x: next(), y: next(), width: 0.02 + 0.2 * next(), height: 0.02 + 0.2 * next()))
        let objectness = Float(next())
        template.objectness.append(objectness)
        var row = [Float](repeating: 0, count: 80)
        for _ in 0..<3 { row[Int(next() * 80) % 80] = objectness * Float(next()) }
        template.probabilities += row
    }
    Benchmark("nms per class 10000 candidates x 80 classes",
              configuration: .init(metrics: [.wallClock], warmupIterations: 2, maxDuration: .seconds(3))) { benchmark in
        for _ in benchmark.scaledIterations {
            var candidates = template
            NonMaximumSuppression.perClass(&candidates, threshold: 0.45)
            blackHole(candidates.count)
        }
    }
}
