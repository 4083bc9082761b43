@_spi(Engine) import YOLO
/// Bias correction for quantized convolutions: removes the mean output shift the weight errors cause.
///
/// A filter's output error is `Σ_p (ŵ_p − w_p) · x_p`. Its mean over typical inputs is
/// `Σ_p (ŵ_p − w_p) · E[x_p]`, a constant per filter that the bias can absorb exactly; only the
/// zero-mean part of the error remains. `E[x_p]` (the mean of each im2col row: input channel `c`
/// seen at kernel tap `(ky, kx)`, zero padding included) is measured by running the float model on
/// calibration inputs, as in data-aware post-training quantization.
enum BiasCorrection {
    /// For each convolution, the mean of each im2col row (`inChannels·size²` values) of its input,
    /// over `inputs`, from the float model `model`.
    ///
    /// - Throws: `YOLOError` when an input does not fit the network.
    static func tapMeans(model: Model, inputs: [Tensor]) throws -> [Int: [Double]] {
        var sums: [Int: [Double]] = [:]
        for input in inputs {
            let network = try Network(model: model, width: input.shape.width, height: input.shape.height)
            let workspace = Workspace(for: network)
            _ = try network.forward(input, workspace: workspace)
            for index in network.layers.indices {
                guard let convolution = network.convolution(at: index) else { continue }
                let source = convolution.inputs[0]
                let values = source < 0 ? input.values : Array(workspace.output(of: source))
                let means = tapMeans(values, convolution: convolution)
                sums[index] = sums[index].map { zip($0, means).map { $0 + $1 } } ?? means
            }
        }
        return sums.mapValues { $0.map { $0 / Double(max(inputs.count, 1)) } }
    }

    /// The mean of each im2col row of `input` for `convolution`.
    static func tapMeans(_ input: [Float], convolution c: Convolution) -> [Double] {
        let (height, width) = (c.inputShape.height, c.inputShape.width)
        let (outH, outW) = (c.outputShape.height, c.outputShape.width)
        var means: [Double] = []
        means.reserveCapacity(c.patchLength)
        for channel in 0..<c.inputShape.channels {
            let plane = channel * height * width
            for ky in 0..<c.size {
                for kx in 0..<c.size {
                    var sum = 0.0
                    for oy in 0..<outH {
                        let y = oy * c.stride + ky - c.padding
                        guard y >= 0 && y < height else { continue }
                        for ox in 0..<outW {
                            let x = ox * c.stride + kx - c.padding
                            if x >= 0 && x < width { sum += Double(input[plane + y * width + x]) }
                        }
                    }
                    means.append(sum / Double(outH * outW))
                }
            }
        }
        return means
    }

    /// `quantized` with the biases of its LUT layers corrected: `b′_f = b_f − Σ_p (ŵ_fp − w_fp) · E[x_p]`,
    /// where `w` are the float weights of `reference` and `E[x]` comes from `tapMeans`.
    static func correct(_ quantized: Model, reference: Model, tapMeans: [Int: [Double]]) -> Model {
        var result = quantized
        for (index, q) in quantized.quantizedConvolutions {
            guard let means = tapMeans[index], let original = reference.convolutions[index] else { continue }
            let biases = corrected(q.biases, restored: q.weights.expanded(), original: original.weights, means: means)
            result.quantizedConvolutions[index] = QuantizedConvolution(weights: q.weights, biases: FloatBuffer(biases))
        }
        return result
    }

    /// `b′_f = b_f − Σ_p (restored_fp − original_fp) · means[p]` for every filter `f` (rows of `means.count` weights).
    static func corrected(_ biases: FloatBuffer, restored: FloatBuffer, original: FloatBuffer, means: [Double]) -> [Float] {
        let rowLength = means.count
        precondition(restored.count == biases.count * rowLength, "BiasCorrection: \(means.count) tap means for rows of \(restored.count / biases.count)")
        return (0..<biases.count).map { f -> Float in
            var shift = 0.0
            for p in 0..<rowLength {
                shift += Double(restored[f * rowLength + p] - original[f * rowLength + p]) * means[p]
            }
            return biases[f] - Float(shift)
        }
    }
}
