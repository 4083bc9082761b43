extension Activation {
    /// The activation on every lane of `x`; leaky and relu are exact lane selections (integer
    /// sign masks, which compile to vector instructions, unlike the generic `pointwiseMax`).
    @inline(__always)
    func apply(_ x: SIMD8<Float>) -> SIMD8<Float> {
        switch self {
        case .linear: return x
        case .leaky: return Activation.select(x, negative: x * 0.1)
        case .relu: return Activation.select(x, negative: SIMD8<Float>())
        case .logistic:
            var y = x
            for i in y.indices { y[i] = callAsFunction(x[i]) }
            return y
        }
    }

    /// Lane-wise `x > 0 ? x : negative` (a lane holding −0 or a negative value takes `negative`,
    /// which is 0·x or 0.1·x, so −0 and +0 agree with the scalar path up to the sign of zero).
    @inline(__always)
    static func select(_ x: SIMD8<Float>, negative: SIMD8<Float>) -> SIMD8<Float> {
        let bits = unsafeBitCast(x, to: SIMD8<Int32>.self)
        let mask = bits &>> 31
        let picked = (bits & ~mask) | (unsafeBitCast(negative, to: SIMD8<Int32>.self) & mask)
        return unsafeBitCast(picked, to: SIMD8<Float>.self)
    }
}
