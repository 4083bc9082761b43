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

    /// The factor by which the input size must be divisible: the largest total downsampling of any layer's output
    /// (the product of the strides on its path from the input, divided by the upsampling factors on it), so every
    /// layer's output has whole cells and routed maps have equal sizes. For darknet's tiny models it is the product
    /// of all strides (32); a YOLOv8 path that downsamples again after upsampling (the PAN) counts once (32, not
    /// 128). Saturates just above `ModelLimits.standard.maximumSide`: no input size is a multiple of it then.
    public var sizeDivisor: Int {
        let ceiling = ModelLimits.standard.maximumSide + 1
        var strides: [Int] = []
        strides.reserveCapacity(layers.count)
        func stride(of index: Int) -> Int { index >= 0 && index < strides.count ? strides[index] : 1 }
        for (index, layer) in layers.enumerated() {
            let previous = stride(of: index - 1)
            func scaled(_ factor: Int) -> Int {
                let (product, overflow) = previous.multipliedReportingOverflow(by: max(factor, 1))
                return overflow ? ceiling : min(product, ceiling)
            }
            switch layer {
            case .convolution(let s): strides.append(scaled(s.stride))
            case .maxPool(let s): strides.append(scaled(s.stride))
            case .upsample(let s): strides.append(max(1, previous / max(s.stride, 1)))
            case .route(let s): strides.append(s.layers.map(stride(of:)).max() ?? previous)
            case .shortcut(let s): strides.append(max(previous, stride(of: s.from)))
            case .yolo, .attention: strides.append(previous)
            }
        }
        return strides.max() ?? 1
    }
}
