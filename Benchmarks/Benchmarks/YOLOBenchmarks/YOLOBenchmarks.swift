import Benchmark
import Foundation
import YOLO

// Suites: the whole forward pass (float) per algorithm and thread count, and the 13 convolution GEMMs
// of yolov3-tiny at 416x416 as BLAS sees them on the im2col path.
// To add when the lead lands them on main: NMS over many candidates, image decode + letterbox, and the
// LUT (quantized) forward pass.

let weightsFolder = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("Weights")

let benchmarks: @Sendable () -> Void = {
    // mallocCountTotal checks that the forward pass allocates nothing (expected 0 per iteration).
    Benchmark.defaultConfiguration = .init(metrics: [.wallClock, .cpuTotal, .mallocCountTotal], warmupIterations: 3,
                                           maxDuration: .seconds(5), maxIterations: 200)
    forwardPassBenchmarks()
    gemmBenchmarks()
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
        for threads in [1, 2] {
            // Built once here, outside the measured closure; the box carries the (non-Sendable)
            // workspace into the benchmark, which runs its closure on one thread at a time.
            let state = ForwardState(network: network, threads: threads)
            Benchmark("forward 416x416 \(algorithm.rawValue) \(threads) thread(s)") { benchmark in
                state.run()
                benchmark.startMeasurement()
                for _ in benchmark.scaledIterations { state.run() }
            }
        }
    }
}

/// A network with its workspace and input, ready to run.
final class ForwardState: @unchecked Sendable {
    let network: Network
    let workspace: Workspace
    let input: [Float]

    init(network: Network, threads: Int) {
        self.network = network
        workspace = Workspace(for: network, threads: threads)
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
