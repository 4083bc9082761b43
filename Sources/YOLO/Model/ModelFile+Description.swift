// MARK: - Network description in the model file

/// Codes of the enums stored in a model file. Fixed here, never derived from declaration order.
enum ModelFileCodes {
    static let convolution: UInt8 = 0, maxPool: UInt8 = 1, upsample: UInt8 = 2, route: UInt8 = 3,
               shortcut: UInt8 = 4, yolo: UInt8 = 5

    static func code(_ activation: Activation) -> UInt8 {
        switch activation {
        case .linear: return 0
        case .leaky: return 1
        case .relu: return 2
        case .logistic: return 3
        }
    }

    static func activation(_ code: UInt8) -> Activation? {
        switch code {
        case 0: return .linear
        case 1: return .leaky
        case 2: return .relu
        case 3: return .logistic
        default: return nil
        }
    }
}

/// Limits on decoded values, so a hostile file cannot overflow shape arithmetic.
enum ModelFileLimits {
    static let dimension = 1...65_536
    static let kernel = 1...1_024
    static let stride = 1...1_024
    static let padding = 0...1_024
    static let classes = 1...1_000_000
    static let layerReference = 0...1_000_000
}

extension ByteWriter {
    /// Writes `description`: input shape, then each layer as a kind code, its cfg line and its fields.
    mutating func description(_ description: ModelDescription) {
        let input = description.inputShape
        i32(input.channels); i32(input.height); i32(input.width)
        count(description.layers.count)
        for layer in description.layers {
            switch layer {
            case .convolution(let s):
                u8(ModelFileCodes.convolution); i32(s.line)
                i32(s.filters); i32(s.size); i32(s.stride); i32(s.padding)
                u8(s.batchNormalize ? 1 : 0); u8(ModelFileCodes.code(s.activation))
            case .maxPool(let s):
                u8(ModelFileCodes.maxPool); i32(s.line)
                i32(s.size); i32(s.stride); i32(s.padding)
            case .upsample(let s):
                u8(ModelFileCodes.upsample); i32(s.line)
                i32(s.stride); f32(s.scale)
            case .route(let s):
                u8(ModelFileCodes.route); i32(s.line)
                count(s.layers.count); s.layers.forEach { i32($0) }
                i32(s.groups); i32(s.groupIndex)
            case .shortcut(let s):
                u8(ModelFileCodes.shortcut); i32(s.line)
                i32(s.from); u8(ModelFileCodes.code(s.activation))
            case .yolo(let s):
                u8(ModelFileCodes.yolo); i32(s.line)
                count(s.mask.count); s.mask.forEach { i32($0) }
                count(s.anchors.count); s.anchors.forEach { f32($0) }
                i32(s.classes); f32(s.scaleXY)
            }
        }
    }
}

extension ByteReader {
    /// Reads a description written by `ByteWriter.description`, checking every value's range and
    /// every layer reference; `path` becomes the description's path.
    mutating func description() throws -> ModelDescription {
        let range = ModelFileLimits.dimension
        let input = Shape(channels: try int("input channels", in: range), height: try int("input height", in: range),
                          width: try int("input width", in: range))
        let layerCount = try count("layer count", elementSize: 5)
        var layers: [LayerSpec] = []
        for index in 0..<layerCount {
            context = "network description, layer \(index)"
            layers.append(try layer(index: index))
        }
        context = "network description"
        guard !layers.isEmpty else { throw failure("has no layers") }
        return ModelDescription(inputShape: input, layers: layers, path: path)
    }

    private mutating func activation() throws -> Activation {
        let code = try u8("activation")
        guard let activation = ModelFileCodes.activation(code) else { throw failure("unknown activation code \(code)") }
        return activation
    }

    private mutating func reference(_ what: String, before index: Int) throws -> Int {
        let value = try i32(what)
        guard value >= 0 && value < index else { throw failure("\(what) \(value) is not an earlier layer") }
        return value
    }

    private mutating func layer(index: Int) throws -> LayerSpec {
        let kind = try u8("layer kind")
        let line = try i32("cfg line")
        let limits = ModelFileLimits.self
        switch kind {
        case ModelFileCodes.convolution:
            let filters = try int("filters", in: limits.dimension), size = try int("size", in: limits.kernel)
            let stride = try int("stride", in: limits.stride), padding = try int("padding", in: limits.padding)
            let batchNormalize = try u8("batch_normalize")
            guard batchNormalize <= 1 else { throw failure("batch_normalize flag is \(batchNormalize), not 0 or 1") }
            return .convolution(ConvolutionSpec(filters: filters, size: size, stride: stride, padding: padding,
                                                batchNormalize: batchNormalize == 1, activation: try activation(), line: line))
        case ModelFileCodes.maxPool:
            return .maxPool(MaxPoolSpec(size: try int("size", in: limits.kernel), stride: try int("stride", in: limits.stride),
                                        padding: try int("padding", in: limits.padding), line: line))
        case ModelFileCodes.upsample:
            return .upsample(UpsampleSpec(stride: try int("stride", in: limits.stride), scale: try finite("scale"), line: line))
        case ModelFileCodes.route:
            let count = try self.count("route source count", elementSize: 4)
            guard count > 0 else { throw failure("route has no source layers") }
            var sources: [Int] = []
            for _ in 0..<count { sources.append(try reference("route source", before: index)) }
            let groups = try int("groups", in: 1...limits.dimension.upperBound)
            let groupIndex = try int("group_id", in: 0...groups - 1)
            return .route(RouteSpec(layers: sources, groups: groups, groupIndex: groupIndex, line: line))
        case ModelFileCodes.shortcut:
            return .shortcut(ShortcutSpec(from: try reference("shortcut source", before: index), activation: try activation(), line: line))
        case ModelFileCodes.yolo:
            let maskCount = try count("mask count", elementSize: 4)
            var mask: [Int] = []
            for _ in 0..<maskCount { mask.append(try i32("mask")) }
            let anchorCount = try count("anchor count", elementSize: 4)
            guard anchorCount > 0, anchorCount % 2 == 0 else { throw failure("needs an even, positive number of anchor values, has \(anchorCount)") }
            var anchors: [Float] = []
            for _ in 0..<anchorCount {
                let value = try finite("anchor")
                guard value > 0 else { throw failure("anchor \(value) is not positive") }
                anchors.append(value)
            }
            if let bad = mask.first(where: { $0 < 0 || $0 >= anchorCount / 2 }) {
                throw failure("mask index \(bad) is outside the \(anchorCount / 2) anchors")
            }
            return .yolo(YOLOSpec(mask: mask, anchors: anchors, classes: try int("classes", in: limits.classes),
                                  scaleXY: try finite("scale_x_y"), line: line))
        default:
            throw failure("unknown layer kind \(kind)")
        }
    }
}

// MARK: - Overflow-safe shape check

extension ModelDescription {
    /// Propagates channel counts and sizes with overflow checks, so that later shape arithmetic
    /// (`geometry`, element counts) cannot trap on a hostile description. Returns a message naming
    /// the first layer whose output exceeds 2²⁴ per axis or 2⁴⁰ elements, or nil.
    func implausibleShapeMessage() -> String? {
        let limit = 1 << 24
        var shapes: [(c: Int, h: Int, w: Int)] = []
        var current = (c: inputShape.channels, h: inputShape.height, w: inputShape.width)
        for (index, layer) in layers.enumerated() {
            switch layer {
            case .convolution(let s):
                current = (s.filters, (current.h + 2 * s.padding - s.size) / s.stride + 1, (current.w + 2 * s.padding - s.size) / s.stride + 1)
            case .maxPool(let s):
                current = (current.c, (current.h + s.padding - s.size) / s.stride + 1, (current.w + s.padding - s.size) / s.stride + 1)
            case .upsample(let s):
                current = (current.c, current.h * s.stride, current.w * s.stride)
            case .route(let s):
                var channels = 0
                for source in s.layers { channels += shapes[source].c }
                current = (channels, shapes[s.layers[0]].h, shapes[s.layers[0]].w)
            case .shortcut, .yolo:
                break
            }
            let (plane, o1) = current.h.multipliedReportingOverflow(by: current.w)
            let (count, o2) = plane.multipliedReportingOverflow(by: current.c)
            guard max(current.c, current.h, current.w) <= limit, !o1, !o2, count <= 1 << 40 else {
                return "layer \(index) [\(layer.sectionName)] has an implausible output size \(current.w)x\(current.h)x\(current.c)"
            }
            shapes.append(current)
        }
        return nil
    }
}
