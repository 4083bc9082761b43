/// Where one layer reads from and what shapes flow through it, for one network input size.
@_spi(Engine) public struct LayerGeometry: Sendable {
    /// Source layers; `-1` is the network input.
    public var inputs: [Int]
    public var inputShapes: [Shape]
    public var outputShape: Shape
}

extension ModelDescription {
    /// Propagates shapes through the layers for a `width × height` input, after checking every
    /// field against `ModelLimits.standard` (so a description built in code is held to the same rules
    /// as one read from a file).
    ///
    /// - Throws: `YOLOError.invalidConfig` at the offending layer's line when a field is out of range or
    ///   shapes do not fit (empty outputs, route sources of different sizes, shortcut shape mismatch, a head
    ///   whose channels are not `masks × (classes + 5)`, an output beyond the limits).
    public func geometry(width: Int, height: Int) throws -> [LayerGeometry] {
        do {
            try checkFields(.standard)
            return try shapes(width: width, height: height, limits: .standard)
        } catch {
            throw YOLOError.invalidConfig(path: path, line: error.line, message: error.message)
        }
    }

    /// The factor by which the input size must be divisible: the product of all downsampling strides
    /// (saturating just above `ModelLimits.standard.maximumSide`: no input size is a multiple of it then).
    public var sizeDivisor: Int {
        let ceiling = ModelLimits.standard.maximumSide + 1
        var factor = 1
        for layer in layers {
            let stride: Int
            switch layer {
            case .convolution(let s): stride = s.stride
            case .maxPool(let s): stride = s.stride
            default: continue
            }
            let (product, overflow) = factor.multipliedReportingOverflow(by: max(stride, 1))
            factor = overflow ? ceiling : min(product, ceiling)
        }
        return factor
    }
}
