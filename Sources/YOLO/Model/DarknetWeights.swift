import Foundation

/// The learned parameters of one convolution, batch norm already folded in.
@_spi(Engine) public struct ConvolutionParameters: Sendable {
    /// `[filters][inChannels][size][size]`.
    public var weights: FloatBuffer
    /// `[filters]`.
    public var biases: FloatBuffer

    public init(weights: FloatBuffer, biases: FloatBuffer) {
        self.weights = weights
        self.biases = biases
    }
}

/// Reader for darknet `.weights` files.
///
/// Layout: int32 major, minor, revision; then `seen` as int64 when `major·10 + minor ≥ 2`
/// (and both are below 1000), else int32; then, for each convolution in cfg order, float32
/// biases[n], and when it has batch norm scales[n], rolling_mean[n], rolling_variance[n];
/// then weights[n·c·size²]. The file must hold exactly that many floats.
@_spi(Engine) public enum DarknetWeights {
    /// Darknet's batch-norm epsilon, added to the square root of the variance (not inside it).
    public static let batchNormEpsilon: Float = 0.000001

    /// Reads `path` and returns the parameters of every convolution, indexed by layer.
    ///
    /// - Throws: `YOLOError.weightCountMismatch` when the file holds more or fewer floats than
    ///   the description needs; `.invalidFile` for a header that does not fit.
    public static func load(_ path: String, for description: ModelDescription) throws -> [Int: ConvolutionParameters] {
        let data = try FileIO.read(path)
        let geometry = try description.geometry(width: description.inputShape.width, height: description.inputShape.height)
        return try data.withUnsafeBytes { raw in
            try parse(raw, path: path, description: description, geometry: geometry)
        }
    }

    /// Number of floats after the header that `description` needs.
    public static func floatCount(for description: ModelDescription, geometry: [LayerGeometry]) -> Int {
        var total = 0
        for (index, layer) in description.layers.enumerated() {
            guard case .convolution(let s) = layer else { continue }
            let inChannels = geometry[index].inputShapes[0].channels
            total += s.filters * (s.batchNormalize ? 4 : 1) + s.filters * inChannels * s.size * s.size
        }
        return total
    }

    static func parse(_ raw: UnsafeRawBufferPointer, path: String, description: ModelDescription,
                      geometry: [LayerGeometry]) throws -> [Int: ConvolutionParameters] {
        guard raw.count >= 16 else {
            throw YOLOError.invalidFile(path: path, message: "weights file is \(raw.count) bytes, shorter than its 16-byte header")
        }
        // Int, not Int32: `major · 10` of a hostile header would overflow 32 bits.
        let major = Int(Int32(littleEndian: raw.loadUnaligned(fromByteOffset: 0, as: Int32.self)))
        let minor = Int(Int32(littleEndian: raw.loadUnaligned(fromByteOffset: 4, as: Int32.self)))
        let wideSeen = major * 10 + minor >= 2 && major < 1000 && minor < 1000
        let headerSize = wideSeen ? 20 : 16
        guard major >= 0, minor >= 0, raw.count >= headerSize else {
            throw YOLOError.invalidFile(path: path, message: "weights file header is unreadable (version \(major).\(minor), \(raw.count) bytes)")
        }
        let expected = floatCount(for: description, geometry: geometry)
        let payload = raw.count - headerSize
        guard payload % 4 == 0, payload / 4 == expected else {
            if payload % 4 != 0 && payload / 4 == expected {
                throw YOLOError.invalidFile(path: path, message: "weights file has \(payload % 4) stray bytes after \(expected) floats")
            }
            throw YOLOError.weightCountMismatch(path: path, expected: expected, found: payload / 4)
        }
        var cursor = headerSize
        func take(_ count: Int) -> [Float] {
            var values = [Float](repeating: 0, count: count)
            values.withUnsafeMutableBytes { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: raw[cursor ..< cursor + count * 4])) }
            cursor += count * 4
            return values
        }
        var result: [Int: ConvolutionParameters] = [:]
        for (index, layer) in description.layers.enumerated() {
            guard case .convolution(let s) = layer else { continue }
            let patch = geometry[index].inputShapes[0].channels * s.size * s.size
            var biases = take(s.filters)
            var weights: [Float]
            if s.batchNormalize {
                let scales = take(s.filters), means = take(s.filters), variances = take(s.filters)
                weights = take(s.filters * patch)
                foldBatchNorm(weights: &weights, biases: &biases, scales: scales, means: means, variances: variances)
            } else {
                weights = take(s.filters * patch)
            }
            if let problem = WeightSanity.problem(weights: weights, biases: biases) {
                throw YOLOError.invalidFile(path: path, message: "layer \(index) [convolutional] (cfg line \(s.line)): \(problem)")
            }
            result[index] = ConvolutionParameters(weights: FloatBuffer(weights), biases: FloatBuffer(biases))
        }
        return result
    }

    /// Folds `y = scale · (x − mean) / (√variance + ε) + bias` into the convolution:
    /// `f = scale / (√variance + ε)`, `w′ = w · f`, `b′ = bias − mean · f`.
    public static func foldBatchNorm(weights: inout [Float], biases: inout [Float], scales: [Float],
                                     means: [Float], variances: [Float]) {
        let filters = biases.count
        let patch = weights.count / filters
        for f in 0..<filters {
            let factor = scales[f] / (variances[f].squareRoot() + batchNormEpsilon)
            for i in f * patch ..< (f + 1) * patch { weights[i] *= factor }
            biases[f] -= means[f] * factor
        }
    }
}

/// The check every loader applies to a convolution's parameters (after batch-norm folding).
///
/// Non-finite values, and values beyond ±`maximumMagnitude`, are rejected: they come from corrupted
/// files, and a forward pass over them overflows to infinities that decode as boxes with 100 %
/// confidence. The bound is far above trained detectors (yolov3-tiny's largest folded weight is 21.3)
/// and far below where float32 sums overflow.
@_spi(Engine) public enum WeightSanity {
    public static let maximumMagnitude: Float = 1e6

    /// A description of the first bad value, or nil when all are usable.
    public static func problem(weights: [Float], biases: [Float]) -> String? {
        if let message = problem(in: weights, name: "weight") { return message }
        return problem(in: biases, name: "bias")
    }

    public static func problem(in values: some Collection<Float>, name: String) -> String? {
        for value in values {
            // NaN fails both comparisons, so it also lands here.
            guard value.magnitude <= maximumMagnitude else {
                return value.isFinite ? "a \(name) of \(value) is beyond ±\(maximumMagnitude) (a corrupted file?)"
                                      : "a \(name) is \(value) (a corrupted file?)"
            }
        }
        return nil
    }
}
