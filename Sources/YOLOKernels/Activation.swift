import Foundation

/// A darknet activation function, applied element-wise: the one implementation the engine has, for
/// one value and for a SIMD vector of any width (the ISA kernel families and the Winograd transforms
/// all call it), so a new activation is added here and nowhere else.
public enum Activation: String, Sendable, CaseIterable {
    case linear, leaky, relu, logistic
    /// x · tanh(softplus(x)) (AlexeyAB's darknet; softplus is x above 20 and eˣ below −20, as there).
    case mish
    /// x · logistic(x) (AlexeyAB's darknet; SiLU).
    case swish

    /// The function on one value. Leaky uses darknet's slope 0.1.
    @inlinable @inline(__always)
    public func callAsFunction(_ x: Float) -> Float {
        switch self {
        case .linear: return x
        case .leaky: return x > 0 ? x : 0.1 * x
        case .relu: return x > 0 ? x : 0
        case .logistic: return 1 / (1 + Activation.exponential(-x))
        case .mish:
            let softplus = x > 20 ? x : (x < -20 ? expf(x) : logf(expf(x) + 1))
            return x * (2 / (1 + expf(-2 * softplus)) - 1)
        case .swish: return x / (1 + Activation.exponential(-x))
        }
    }

    /// True for the activations made of linear pieces (linear, leaky, relu): cheap in any kernel's epilogue,
    /// and non-decreasing, so a max-pool of the activated values equals the activation of the max-pool
    /// (the fused convolution + max-pool relies on both).
    @inlinable
    public var isPiecewiseLinear: Bool {
        switch self {
        case .linear, .leaky, .relu: return true
        case .logistic, .mish, .swish: return false
        }
    }

    /// The function on every lane of `x`, lane for lane what the scalar form computes. Leaky and relu
    /// are sign-mask selections (`x > 0 ? x : …` on the integer bits, which compile to vector
    /// instructions at every width, where `replacing(with:where:)` scalarizes on SSE); logistic and
    /// swish use the vector `exponential`; mish runs lane by lane through the scalar form. Transparent:
    /// always inlined into the caller, so no specialization of it is shared between modules compiled for
    /// different ISAs.
    @_transparent
    public func callAsFunction<V: SIMD>(_ x: V) -> V where V.Scalar == Float {
        switch self {
        case .linear: return x
        case .leaky: return Activation.positiveOr(x, x * 0.1)
        case .relu: return Activation.positiveOr(x, V())
        case .logistic: return Activation.logisticLanes(x)
        case .swish: return Activation.swishLanes(x)
        case .mish: return Activation.scalarLanes(self, x)
        }
    }

    /// Logistic on every lane, the operations of the scalar form.
    @_transparent
    public static func logisticLanes<V: SIMD>(_ x: V) -> V where V.Scalar == Float {
        1 / (1 + exponential(-x))
    }

    /// Swish (SiLU) on every lane, the operations of the scalar form.
    @_transparent
    public static func swishLanes<V: SIMD>(_ x: V) -> V where V.Scalar == Float {
        x / (1 + exponential(-x))
    }

    // e^x as 2ⁿ · e^r: x = n·ln 2 + r with n an integer (rounded by adding 1.5·2²³, which
    // leaves n in the low mantissa bits) and |r| ≤ ln 2 / 2, e^r by a degree-7 polynomial (Cephes' expf
    // coefficients), 2ⁿ built in the exponent field. x is first clamped to [−87, 88], where 2ⁿ stays a
    // normal float (NaN becomes one of the bounds or stays NaN, the same in both forms). Only additions, multiplications and bit operations, in the same order for one value
    // and for a vector, so every lane equals the scalar result bit for bit, in every kernel family (no
    // fused multiply-add: Swift does not contract). Within 0.98 ulp of e^x computed in double precision
    // (measured on every 7th float in [−87, 88]); the activation tests bound swish and logistic against their
    // definitions in double precision.
    /// e^x for one value (see the vector form).
    @inlinable @inline(__always)
    public static func exponential(_ x: Float) -> Float {
        // The clamp as the vector form does it, with sign masks: 88 where 88 − x is negative, −87 where x + 87 is.
        let high = Int32(bitPattern: (88 - x).bitPattern) &>> 31, low = Int32(bitPattern: (x + 87).bitPattern) &>> 31
        let clamped = (Int32(bitPattern: x.bitPattern) & ~(high | low)) | (Int32(bitPattern: Float(88).bitPattern) & high)
            | (Int32(bitPattern: Float(-87).bitPattern) & low)
        let x = Float(bitPattern: UInt32(bitPattern: clamped))
        let t = x * 1.442_695_04 + 12_582_912
        let n = t - 12_582_912
        let r = (x - n * 0.693_359_375) - n * -2.121_944_4e-4
        var p: Float = 1.987_569_15e-4
        p = p * r + 1.398_199_95e-3
        p = p * r + 8.333_451_9e-3
        p = p * r + 4.166_579_59e-2
        p = p * r + 1.666_666_55e-1
        p = p * r + 5.000_000_12e-1
        let y = (p * (r * r) + r) + 1
        let exponent = (Int32(bitPattern: t.bitPattern) &- Int32(bitPattern: Float(12_582_912).bitPattern) &+ 127) &<< 23
        return y * Float(bitPattern: UInt32(bitPattern: exponent))
    }

    /// e^x on every lane, the operations of the scalar `exponential(_:)` (so the same bits).
    @_transparent
    public static func exponential<V: SIMD>(_ x: V) -> V where V.Scalar == Float {
        // The clamp with sign masks (88 where 88 − x is negative, −87 where x + 87 is): lane comparisons
        // (`.>`, `replace(with:where:)`) go lane by lane through memory for 16 lanes on AVX2.
        typealias Bits = V.MaskStorage
        let high = unsafeBitCast(88 - x, to: Bits.self) &>> 31, low = unsafeBitCast(x + 87, to: Bits.self) &>> 31
        let clamped = (unsafeBitCast(x, to: Bits.self) & ~(high | low))
            | (Bits(repeating: .init(truncatingIfNeeded: Float(88).bitPattern)) & high)
            | (Bits(repeating: .init(truncatingIfNeeded: Float(-87).bitPattern)) & low)
        let x = unsafeBitCast(clamped, to: V.self)
        let t = x * 1.442_695_04 + 12_582_912
        let n = t - 12_582_912
        let r = (x - n * 0.693_359_375) - n * -2.121_944_4e-4
        var p = V(repeating: 1.987_569_15e-4)
        p = p * r + 1.398_199_95e-3
        p = p * r + 8.333_451_9e-3
        p = p * r + 4.166_579_59e-2
        p = p * r + 1.666_666_55e-1
        p = p * r + 5.000_000_12e-1
        let y = (p * (r * r) + r) + 1
        let magic = V.MaskStorage(repeating: .init(truncatingIfNeeded: Float(12_582_912).bitPattern))
        let exponent = (unsafeBitCast(t, to: V.MaskStorage.self) &- magic &+ 127) &<< 23
        return y * unsafeBitCast(exponent, to: V.self)
    }

    /// Lane-wise `x > 0 ? x : negative`, for `negative` = 0.1·x or 0 (a lane holding −0, a negative
    /// value or a negative NaN takes `negative`, which then equals what the scalar form gives).
    /// Runs `body` with this activation as a function on vectors, the choice made once: `body` is inlined
    /// into one copy per case, so code applying the activation to many vectors (the GEMM kernels' stores)
    /// branches once, not once per vector. (A switch per stored vector makes the AVX2 kernel's store
    /// sequence several KB long, with the accumulators spilled around it. The Winograd output transforms
    /// keep their switch per vector: eight copies of the row transform, one per activation and tile size,
    /// are slower.)
    @inlinable @inline(__always)
    public func withVectorFunction<V: SIMD, Result>(_ type: V.Type, _ body: ((V) -> V) -> Result) -> Result
        where V.Scalar == Float {
        switch self {
        case .linear: return body { $0 }
        case .leaky: return body { Activation.positiveOr($0, $0 * 0.1) }
        case .relu: return body { Activation.positiveOr($0, V()) }
        case .logistic: return body { Activation.logisticLanes($0) }
        case .swish: return body { Activation.swishLanes($0) }
        case .mish: return body { Activation.scalarLanes(self, $0) }
        }
    }

    @_transparent
    public static func positiveOr<V: SIMD>(_ x: V, _ negative: V) -> V where V.Scalar == Float {
        let bits = unsafeBitCast(x, to: V.MaskStorage.self)
        let mask = bits &>> 31
        let picked = (bits & ~mask) | (unsafeBitCast(negative, to: V.MaskStorage.self) & mask)
        return unsafeBitCast(picked, to: V.self)
    }

    /// The scalar form on each lane (the transcendental activations: scalar `expf`, `logf`).
    @_transparent
    public static func scalarLanes<V: SIMD>(_ activation: Activation, _ x: V) -> V where V.Scalar == Float {
        var y = x
        for i in 0..<V.scalarCount { y[i] = activation(x[i]) }
        return y
    }

    /// Adds `bias` to each of `count` values at `values` and applies the activation, in one pass.
    @inlinable
    public func applyBiased(_ values: UnsafeMutablePointer<Float>, count: Int, bias: Float) {
        // One loop per case, so each compiles to a vector loop.
        switch self {
        case .linear: for i in 0..<count { values[i] = Activation.linear(values[i] + bias) }
        case .leaky: for i in 0..<count { values[i] = Activation.leaky(values[i] + bias) }
        case .relu: for i in 0..<count { values[i] = Activation.relu(values[i] + bias) }
        case .logistic: for i in 0..<count { values[i] = Activation.logistic(values[i] + bias) }
        case .mish: for i in 0..<count { values[i] = Activation.mish(values[i] + bias) }
        case .swish: for i in 0..<count { values[i] = Activation.swish(values[i] + bias) }
        }
    }

    /// A small integer naming the activation, for kernels whose entry points take C-representable
    /// arguments only (`TileKernel`).
    @inlinable
    public var code: Int {
        switch self {
        case .linear: return 0
        case .leaky: return 1
        case .relu: return 2
        case .logistic: return 3
        case .mish: return 4
        case .swish: return 5
        }
    }

    /// The activation of `code` (see `code`); linear for an unknown code.
    @inlinable @inline(__always)
    public init(code: Int) {
        switch code {
        case 1: self = .leaky
        case 2: self = .relu
        case 3: self = .logistic
        case 4: self = .mish
        case 5: self = .swish
        default: self = .linear
        }
    }
}
