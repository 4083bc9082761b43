import Foundation
@_spi(Engine) import YOLO

/// The second moments of each convolution's inputs, `H = E[x xᵀ]` over im2col columns, measured by
/// running the float model on calibration inputs: the statistics `GPTQRounding` weighs errors with.
enum InputGram {
    /// For each convolution index in `layers`, `Σ x xᵀ / count` over every output position of every
    /// input: `n×n` row-major (`n = inChannels·size²`, both triangles), Float32 sums via BLAS.
    ///
    /// - Throws: `YOLOError` when an input does not fit the network.
    static func collect(model: Model, inputs: [Tensor], layers: Set<Int>) throws -> [Int: [Float]] {
        BLAS.keepSingleThreaded()
        var grams: [Int: [Float]] = [:]
        var counts: [Int: Int] = [:]
        for input in inputs {
            let network = try Network(model: model, width: input.shape.width, height: input.shape.height)
            let workspace = Workspace(for: network)
            _ = try network.forward(input, workspace: workspace)
            for index in network.layers.indices where layers.contains(index) {
                guard let c = network.convolution(at: index) else { continue }
                let n = c.patchLength, positions = c.outputShape.height * c.outputShape.width
                var columns = [Float](repeating: 0, count: n * positions)
                let source = c.inputs[0]
                let unfold = { (pointer: UnsafePointer<Float>) in
                    columns.withUnsafeMutableBufferPointer {
                        Im2col.unfold(pointer, shape: c.inputShape, size: c.size, stride: c.stride, padding: c.padding,
                                      outputHeight: c.outputShape.height, outputWidth: c.outputShape.width, into: $0.baseAddress!)
                    }
                }
                if source < 0 { input.values.withUnsafeBufferPointer { unfold($0.baseAddress!) } } else { unfold(workspace.output(of: source).baseAddress!) }
                var gram = grams[index] ?? [Float](repeating: 0, count: n * n)
                let first = grams[index] == nil
                columns.withUnsafeBufferPointer { x in
                    gram.withUnsafeMutableBufferPointer {
                        BLAS.gramUpper(n: n, k: positions, a: x.baseAddress!, lda: positions, c: $0.baseAddress!, ldc: n, beta: first ? 0 : 1)
                    }
                }
                grams[index] = gram
                counts[index, default: 0] += positions
            }
        }
        return grams.mapValues { $0 }.reduce(into: [:]) { result, entry in
            let (index, sums) = entry
            let n = Int(Double(sums.count).squareRoot().rounded())
            let scale = 1 / Float(counts[index]!)
            var full = sums
            for i in 0..<n {
                for j in i..<n {
                    full[i * n + j] = sums[i * n + j] * scale
                    full[j * n + i] = full[i * n + j]
                }
            }
            result[index] = full
        }
    }
}
