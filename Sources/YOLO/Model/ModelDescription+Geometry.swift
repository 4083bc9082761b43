/// Where one layer reads from and what shapes flow through it, for one network input size.
public struct LayerGeometry: Sendable {
    /// Source layers; `-1` is the network input.
    public var inputs: [Int]
    public var inputShapes: [Shape]
    public var outputShape: Shape
}

extension ModelDescription {
    /// Propagates shapes through the layers for a `width × height` input.
    ///
    /// - Throws: `YOLOError.invalidConfig` at the offending layer's line when shapes do not fit
    ///   (empty outputs, route sources of different sizes, shortcut shape mismatch, a head whose
    ///   channels are not `masks × (classes + 5)`).
    public func geometry(width: Int, height: Int) throws -> [LayerGeometry] {
        var result: [LayerGeometry] = []
        result.reserveCapacity(layers.count)
        func shape(of index: Int) -> Shape {
            index < 0 ? Shape(channels: inputShape.channels, height: height, width: width) : result[index].outputShape
        }
        for (index, layer) in layers.enumerated() {
            let fail = { (message: String) in
                YOLOError.invalidConfig(path: path, line: layer.line, message: "layer \(index) [\(layer.sectionName)]: \(message)")
            }
            let previous = index - 1
            let input = shape(of: previous)
            let output: Shape
            var sources = [previous]
            switch layer {
            case .convolution(let s):
                output = Convolution.outputShape(input: input, filters: s.filters, size: s.size, stride: s.stride, padding: s.padding)
            case .maxPool(let s):
                output = MaxPool.outputShape(input: input, size: s.size, stride: s.stride, padding: s.padding)
            case .upsample(let s):
                output = Shape(channels: input.channels, height: input.height * s.stride, width: input.width * s.stride)
            case .route(let s):
                sources = s.layers
                let shapes = s.layers.map(shape(of:))
                if let odd = shapes.first(where: { $0.width != shapes[0].width || $0.height != shapes[0].height }) {
                    throw fail("cannot concatenate \(shapes[0]) with \(odd): sizes differ")
                }
                if let odd = shapes.first(where: { $0.channels % s.groups != 0 }) {
                    throw fail("\(odd.channels) channels cannot be split into \(s.groups) groups")
                }
                output = Shape(channels: shapes.reduce(0) { $0 + $1.channels / s.groups },
                               height: shapes[0].height, width: shapes[0].width)
            case .shortcut(let s):
                sources = [previous, s.from]
                guard shape(of: s.from) == input else {
                    throw fail("cannot add layer \(s.from)'s \(shape(of: s.from)) to \(input)")
                }
                output = input
            case .yolo(let s):
                let expected = s.mask.count * (s.classes + 5)
                guard input.channels == expected else {
                    throw fail("expects \(expected) input channels (\(s.mask.count) anchors × (\(s.classes) classes + 5)), but layer \(previous) gives \(input.channels)")
                }
                output = input
            }
            guard output.width > 0, output.height > 0, output.channels > 0 else {
                throw fail("input \(input) gives an empty output \(output)")
            }
            result.append(LayerGeometry(inputs: sources, inputShapes: sources.map(shape(of:)), outputShape: output))
        }
        return result
    }

    /// The factor by which the input size must be divisible: the product of all downsampling strides.
    public var sizeDivisor: Int {
        var factor = 1
        for layer in layers {
            switch layer {
            case .convolution(let s): factor *= s.stride
            case .maxPool(let s): factor *= s.stride
            default: break
            }
        }
        return factor
    }
}
