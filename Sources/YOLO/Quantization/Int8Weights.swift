import YOLOKernels

// MARK: - Linear int8 quantization

/// Per-tensor affine u8 quantization of activations: a value `x` is stored as the byte
/// `q = roundToNearestEven(min(max(x / scale + zeroPoint, 0), 255))` and stands for `scale · (q − zeroPoint)`.
/// `zeroPoint` is the code of 0, so zero padding and ReLU-like zeros are exact.
@_spi(Engine) public struct ActivationQuantization: Sendable, Hashable, CustomStringConvertible {
    /// Real units per code step (> 0).
    public var scale: Float
    /// The code of 0.0.
    public var zeroPoint: UInt8

    public init(scale: Float, zeroPoint: UInt8) {
        precondition(scale > 0 && scale.isFinite, "ActivationQuantization: scale \(scale)")
        self.scale = scale
        self.zeroPoint = zeroPoint
    }

    /// The quantization whose codes cover `[low, high]` (widened to include 0) in 255 steps, the zero point
    /// rounded to a code.
    public init(covering low: Float, _ high: Float) {
        let (low, high) = (min(low, 0), max(high, 0))
        let scale = high > low ? (high - low) / 255 : 1
        let zero = (-low / scale).rounded(.toNearestOrEven)
        self.init(scale: scale, zeroPoint: UInt8(min(max(zero, 0), 255)))
    }

    /// The code of `x`: `Int8Epilogue.code(x · reciprocal, zeroPoint)`, what every path that quantizes computes.
    @inlinable public func code(_ x: Float) -> UInt8 {
        Int8Epilogue.code(x * reciprocal, zeroPoint: Float(zeroPoint))
    }

    /// `1 / scale`, rounded once.
    @inlinable public var reciprocal: Float { 1 / scale }

    /// The value code `q` stands for.
    @inlinable public func value(_ q: UInt8) -> Float { scale * Float(Int(q) - Int(zeroPoint)) }

    /// The values `[low, high]` the codes cover.
    public var range: (low: Float, high: Float) { (value(0), value(255)) }

    public var description: String { "u8 scale \(scale) zero \(zeroPoint)" }
}

/// The weights of one convolution as linear int8: `ŵ[r, k] = scales[r] · values[r, k]`, symmetric (no zero
/// point), one float32 scale per output channel, values in −127…127 (−128 is never written, so negating a
/// weight is exact and every kernel's sums stay in range).
///
/// The linear counterpart of `LUTWeights`: where a LUT type maps codes through a table, this type's codes are the
/// integers the int8 kernels multiply (`Int8Kernel`), so a layer runs on them without expanding anything.
@_spi(Engine) public struct Int8Weights: Sendable {
    /// Output channels.
    public let rows: Int
    /// Weights per row: `inChannels · size²`.
    public let rowLength: Int
    /// `rows × rowLength`, row-major.
    public let values: SharedBuffer<Int8>
    /// `rows` scales (≥ 0).
    public let scales: FloatBuffer

    /// The most a code may be: 127.
    public static let maximum: Int8 = 127

    public init(rows: Int, rowLength: Int, values: SharedBuffer<Int8>, scales: FloatBuffer) {
        precondition(rows > 0 && rowLength > 0, "Int8Weights: empty layer")
        precondition(values.count == rows * rowLength, "Int8Weights: \(values.count) values for \(rows)x\(rowLength)")
        precondition(scales.count == rows, "Int8Weights: \(scales.count) scales for \(rows) rows")
        (self.rows, self.rowLength, self.values, self.scales) = (rows, rowLength, values, scales)
    }

    /// The reference quantizer (deterministic, for model files): each row's scale is its largest magnitude
    /// over 127, each weight rounded to the nearest code (ties to even). A row of zeros gets scale 0.
    public init(quantizing weights: UnsafeBufferPointer<Float>, rows: Int) {
        let rowLength = weights.count / rows
        precondition(rowLength * rows == weights.count, "Int8Weights: \(weights.count) weights for \(rows) rows")
        let scales = (0..<rows).map { r in
            weights[(r * rowLength)..<((r + 1) * rowLength)].reduce(Float(0)) { max($0, $1.magnitude) } / Float(Self.maximum)
        }
        let values = SharedBuffer<Int8>(count: weights.count) { out in
            for r in 0..<rows {
                for k in 0..<rowLength { out[r * rowLength + k] = Int8Weights.code(weights[r * rowLength + k], scale: scales[r]) }
            }
        }
        self.init(rows: rows, rowLength: rowLength, values: values, scales: FloatBuffer(scales))
    }

    /// The nearest code of `weight` at `scale` (0 when the scale is 0), clamped to ±127.
    public static func code(_ weight: Float, scale: Float) -> Int8 {
        guard scale > 0 else { return 0 }
        let q = (weight / scale).rounded(.toNearestOrEven)
        return Int8(min(max(q, -Float(maximum)), Float(maximum)))
    }

    /// Number of weights.
    public var count: Int { rows * rowLength }

    /// Bytes a model file stores for these weights (values and scales).
    public var storedByteCount: Int { count + 4 * rows }

    /// The float weights, `[rows][rowLength]`.
    public func expanded() -> FloatBuffer {
        FloatBuffer(count: count) { out in
            for r in 0..<rows {
                let scale = scales[r]
                for k in 0..<rowLength { out[r * rowLength + k] = scale * Float(values[r * rowLength + k]) }
            }
        }
    }

    /// `Σₖ values[r, k]` per row (what the zero-point compensation multiplies).
    public func rowSums() -> [Int32] {
        (0..<rows).map { r in (0..<rowLength).reduce(Int32(0)) { $0 + Int32(values[r * rowLength + $1]) } }
    }
}

/// The parameters of one convolution stored as linear int8 (`yolo convert --quantize int8`): weights, float
/// biases, and the quantization of its input and output activations chosen at calibration.
@_spi(Engine) public struct Int8ConvolutionParameters: Sendable {
    public var weights: Int8Weights
    /// `[filters]`.
    public var biases: FloatBuffer
    /// How the layer's input is quantized (the quantization of the tensor it reads, when that is u8).
    public var input: ActivationQuantization
    /// How the layer's output is quantized when its readers take u8; nil: float output only.
    public var output: ActivationQuantization?

    public init(weights: Int8Weights, biases: FloatBuffer, input: ActivationQuantization, output: ActivationQuantization?) {
        precondition(biases.count == weights.rows, "Int8ConvolutionParameters: \(biases.count) biases for \(weights.rows) filters")
        (self.weights, self.biases, self.input, self.output) = (weights, biases, input, output)
    }

    /// The float parameters the weights stand for (biases shared).
    public func expanded() -> ConvolutionParameters {
        ConvolutionParameters(weights: weights.expanded(), biases: biases)
    }
}
