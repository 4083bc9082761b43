import Foundation
import Testing
@_spi(Engine) @testable import YOLO
import YOLOTestSupport

/// Subnormal floats are flushed to zero while the engine computes (`DenormalMode`): a model whose
/// activations decay below 1.2e-38 would otherwise run every layer about 100× slower on x86.
@Suite struct DenormalModeTests {
    /// 1e-20 read at run time, so the compiler cannot fold the products below.
    let tiny = Float("1e-20")!

    @Test(.enabled(if: DenormalModeTests.isX86, "flush-to-zero is set only on x86-64 (arm64 is not built yet)"))
    func flushingHoldsOnlyInsideTheScope() {
        #expect(!DenormalMode.isFlushing)
        let outside = tiny * tiny
        #expect(outside > 0 && outside.isSubnormal)
        let inside = DenormalMode.withFlushedDenormals { (DenormalMode.isFlushing, tiny * tiny) }
        #expect(inside.0)
        #expect(inside.1 == 0)
        // The calling thread's own mode comes back afterwards.
        #expect(!DenormalMode.isFlushing)
        #expect((tiny * tiny).isSubnormal)
    }

    @Test(.enabled(if: DenormalModeTests.isX86, "flush-to-zero is set only on x86-64 (arm64 is not built yet)"))
    func workerThreadsFlushForTheirWholeLife() {
        let caller = pthread_self()
        let seen = UnsafeMutableBufferPointer<(onWorker: Bool, flushing: Bool)>.allocate(capacity: 64)
        defer { seen.deallocate() }
        // Outside any scope: parts the caller runs do not flush, parts a worker runs do.
        for _ in 0..<20 {
            Parallel.forEach(64, threads: 2) { part in
                seen[part] = (pthread_equal(pthread_self(), caller) == 0, DenormalMode.isFlushing)
            }
            for entry in seen { #expect(entry.flushing == entry.onWorker) }
        }
    }

    /// A 1×1 convolution with weight 1e-20 on inputs of 1e-20: the product 1e-40 would be subnormal;
    /// the network's forward pass gives exactly 0 instead, whichever kernel runs it.
    @Test(.enabled(if: DenormalModeTests.isX86, "flush-to-zero is set only on x86-64 (arm64 is not built yet)"))
    func forwardPassFlushesSubnormalActivations() throws {
        let description = try parse("""
            [net]
            width=16
            height=16
            channels=3
            [convolutional]
            filters=8
            size=1
            stride=1
            pad=0
            activation=linear
            """)
        let parameters = ConvolutionParameters(weights: FloatBuffer([Float](repeating: tiny, count: 8 * 3)),
                                               biases: FloatBuffer([Float](repeating: 0, count: 8)))
        let model = Model(description: description, convolutions: [0: parameters], labels: [])
        let network = try Network(model: model)
        let workspace = Workspace(for: network)
        let input = [Float](repeating: tiny, count: network.inputShape.count)
        input.withUnsafeBufferPointer { network.forward($0.baseAddress!, workspace: workspace) }
        let output = Array(workspace.output(of: 0))
        #expect(output.count == 8 * 16 * 16)
        #expect(output.allSatisfy { $0 == 0 })
        #expect(!DenormalMode.isFlushing)
    }

    static var isX86: Bool {
        #if arch(x86_64)
        true
        #else
        false
        #endif
    }
}
