// MARK: - One validator for both readers

/// What is wrong with a description: the layer (nil for `[net]` or the whole network), its cfg line
/// and a message. Each reader turns it into its own `YOLOError` (a cfg line, or a place in a model file).
struct DescriptionProblem: Error {
    var layer: Int?
    var line: Int
    var message: String
}

extension ModelDescription {
    /// Checks every field against `limits`, then the shapes at the description's own input size.
    ///
    /// The cfg parser and the model-file reader both call this, so a description is held to the same
    /// rules whichever file it came from.
    /// - Throws: `YOLOError.invalidConfig` naming the layer and its cfg line.
    public func validate(limits: ModelLimits = .standard) throws {
        do {
            try checkFields(limits)
            _ = try shapes(width: inputShape.width, height: inputShape.height, limits: limits)
        } catch {
            throw YOLOError.invalidConfig(path: path, line: error.line, message: error.message)
        }
    }

    /// The layer and field checks, with no arithmetic on the values before they are bounded.
    func checkFields(_ limits: ModelLimits) throws(DescriptionProblem) {
        func net(_ message: String) -> DescriptionProblem { DescriptionProblem(layer: nil, line: 1, message: "[net] " + message) }
        let sides = 1...limits.maximumSide
        guard sides.contains(inputShape.width), sides.contains(inputShape.height) else {
            throw net("input size \(inputShape.width)x\(inputShape.height) is outside 1...\(limits.maximumSide) per side")
        }
        guard (1...limits.maximumChannels).contains(inputShape.channels) else {
            throw net("channels=\(inputShape.channels) is outside 1...\(limits.maximumChannels)")
        }
        guard !layers.isEmpty else { throw net("the network has no layers") }
        guard layers.count <= limits.maximumLayers else {
            throw DescriptionProblem(layer: nil, line: layers[limits.maximumLayers].line,
                                     message: "the network has \(layers.count) layers, more than the limit of \(limits.maximumLayers)")
        }
        for (index, layer) in layers.enumerated() {
            func check(_ value: Int, _ name: String, _ range: ClosedRange<Int>, _ why: String = "") throws(DescriptionProblem) {
                guard range.contains(value) else {
                    throw DescriptionProblem(layer: index, line: layer.line,
                        message: "layer \(index) [\(layer.sectionName)]: \(name) \(value) is outside \(range.lowerBound)...\(range.upperBound)" + why)
                }
            }
            func earlier(_ value: Int, _ name: String) throws(DescriptionProblem) {
                guard value >= 0, value < index else {
                    throw DescriptionProblem(layer: index, line: layer.line,
                                             message: "layer \(index) [\(layer.sectionName)]: \(name) \(value) is not an earlier layer")
                }
            }
            func finite(_ value: Float, _ name: String) throws(DescriptionProblem) {
                guard value.isFinite else {
                    throw DescriptionProblem(layer: index, line: layer.line, message: "layer \(index) [\(layer.sectionName)]: \(name) is not a finite number")
                }
            }
            switch layer {
            case .convolution(let s):
                try check(s.filters, "filters", 1...limits.maximumChannels)
                try check(s.size, "size", 1...limits.maximumKernel)
                try check(s.stride, "stride", 1...limits.maximumStride)
                try check(s.padding, "padding", 0...s.size - 1, " (every window must overlap the input)")
                try check(s.groups, "groups", 1...s.filters)
                guard s.filters % s.groups == 0 else {
                    throw DescriptionProblem(layer: index, line: s.line,
                                             message: "layer \(index) [\(layer.sectionName)]: \(s.filters) filters cannot be split into \(s.groups) groups")
                }
            case .attention(let s):
                try check(s.heads, "heads", 1...limits.maximumChannels)
                try check(s.keyChannels, "key channels", 1...limits.maximumChannels)
                try check(s.valueChannels, "value channels", 1...limits.maximumChannels)
                try check(s.inputChannels, "input channels", 1...limits.maximumChannels)
                guard s.scale.isFinite, s.scale > 0 else {
                    throw DescriptionProblem(layer: index, line: s.line, message: "layer \(index) [attention]: scale \(s.scale) is not a positive finite number")
                }
            case .maxPool(let s):
                try check(s.size, "size", 1...limits.maximumKernel)
                try check(s.stride, "stride", 1...limits.maximumStride)
                // The window starts padding/2 cells before the input and may end padding − padding/2 cells after it.
                try check(s.padding, "padding", 0...2 * (s.size - 1), " (every window must overlap the input)")
            case .upsample(let s):
                try check(s.stride, "stride", 1...limits.maximumStride)
                try finite(s.scale, "scale")
            case .route(let s):
                try check(s.layers.count, "number of source layers", 1...limits.maximumRouteSources)
                for source in s.layers { try earlier(source, "source") }
                try check(s.groups, "groups", 1...limits.maximumChannels)
                try check(s.groupIndex, "group_id", 0...s.groups - 1)
            case .shortcut(let s):
                try earlier(s.from, "from")
            case .yolo(let s) where s.isAnchorFree:
                try check(s.classes, "classes", 1...limits.maximumChannels)
                try check(s.distributionBins, "distribution bins", 1...limits.maximumChannels / 4)
                guard s.mask.isEmpty, s.anchors.isEmpty, s.scaleXY == 1, !s.newCoords else {
                    throw DescriptionProblem(layer: index, line: s.line,
                                             message: "layer \(index) [detect]: an anchor-free head takes no anchors, mask, scale_x_y or new_coords")
                }
                if let first = heads.first, first.index < index, first.spec.classes != s.classes || !first.spec.isAnchorFree {
                    throw DescriptionProblem(layer: index, line: s.line,
                        message: "layer \(index) [detect]: every head must be anchor-free with the same classes as layer \(first.index)")
                }
            case .yolo(let s):
                if let first = heads.first, first.index < index, first.spec.isAnchorFree {
                    throw DescriptionProblem(layer: index, line: s.line,
                        message: "layer \(index) [yolo]: an anchor head cannot follow the anchor-free head of layer \(first.index)")
                }
                try check(s.classes, "classes", 1...limits.maximumChannels)
                try check(s.anchors.count / 2, "number of anchor pairs", 1...limits.maximumAnchors)
                guard s.anchors.count % 2 == 0, s.anchors.allSatisfy({ $0.isFinite && $0 > 0 }) else {
                    throw DescriptionProblem(layer: index, line: s.line,
                                             message: "layer \(index) [yolo]: anchors must be an even number of positive values (w,h pairs)")
                }
                try check(s.mask.count, "mask length", 1...limits.maximumAnchors)
                for entry in s.mask { try check(entry, "mask index", 0...s.anchors.count / 2 - 1) }
                try finite(s.scaleXY, "scale_x_y")
                // Decoding gathers every head's candidates into one table of class probabilities.
                if let first = heads.first, first.index < index, first.spec.classes != s.classes {
                    throw DescriptionProblem(layer: index, line: s.line,
                        message: "layer \(index) [yolo]: classes=\(s.classes), but layer \(first.index) [yolo] has \(first.spec.classes); every head must have the same classes")
                }
            }
        }
    }

    /// Propagates shapes for a `width × height` input, failing at the first layer whose output is
    /// empty, does not fit its sources, or exceeds `limits`. Fields must have passed `checkFields`.
    func shapes(width: Int, height: Int, limits: ModelLimits) throws(DescriptionProblem) -> [LayerGeometry] {
        guard (1...limits.maximumSide).contains(width), (1...limits.maximumSide).contains(height) else {
            throw DescriptionProblem(layer: nil, line: 1,
                                     message: "network input \(width)x\(height) is outside 1...\(limits.maximumSide) per side")
        }
        var result: [LayerGeometry] = []
        result.reserveCapacity(layers.count)
        func shape(of index: Int) -> Shape {
            index < 0 ? Shape(channels: inputShape.channels, height: height, width: width) : result[index].outputShape
        }
        for (index, layer) in layers.enumerated() {
            func fail(_ message: String) -> DescriptionProblem {
                DescriptionProblem(layer: index, line: layer.line, message: "layer \(index) [\(layer.sectionName)]: \(message)")
            }
            let previous = index - 1
            let input = shape(of: previous)
            let output: Shape
            var sources = [previous]
            // Every operand below is at most max(maximumSide, maximumChannels) · maximumStride or a sum of
            // at most maximumRouteSources channel counts, so no expression here can overflow.
            switch layer {
            case .convolution(let s):
                guard input.height + 2 * s.padding >= s.size, input.width + 2 * s.padding >= s.size else {
                    throw fail("the \(s.size)x\(s.size) kernel is larger than the padded input \(input)")
                }
                guard input.channels % s.groups == 0 else {
                    throw fail("\(input.channels) input channels cannot be split into \(s.groups) groups")
                }
                output = Convolution.outputShape(input: input, filters: s.filters, size: s.size, stride: s.stride, padding: s.padding)
            case .attention(let s):
                guard input.channels == s.inputChannels else {
                    throw fail("expects \(s.inputChannels) input channels (\(s.heads) heads × (2 × \(s.keyChannels) + \(s.valueChannels))), but layer \(previous) gives \(input.channels)")
                }
                output = Shape(channels: s.outputChannels, height: input.height, width: input.width)
            case .maxPool(let s):
                guard input.height + s.padding >= s.size, input.width + s.padding >= s.size else {
                    throw fail("the \(s.size)x\(s.size) window is larger than the padded input \(input)")
                }
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
            case .yolo(let s) where s.isAnchorFree:
                guard input.channels == s.inputChannels else {
                    throw fail("expects \(s.inputChannels) input channels (4 × \(s.distributionBins) box bins + \(s.classes) classes), but layer \(previous) gives \(input.channels)")
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
            guard output.width <= limits.maximumSide, output.height <= limits.maximumSide, output.channels <= limits.maximumChannels else {
                throw fail("output \(output) exceeds the limits (\(limits.maximumSide) per side, \(limits.maximumChannels) channels)")
            }
            result.append(LayerGeometry(inputs: sources, inputShapes: sources.map(shape(of:)), outputShape: output))
        }
        return result
    }
}
