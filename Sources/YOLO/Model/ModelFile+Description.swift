// MARK: - Network description in the model file

/// Codes of the enums stored in a model file. Fixed here, never derived from declaration order.
enum ModelFileCodes {
    static let convolution: UInt8 = 0, maxPool: UInt8 = 1, upsample: UInt8 = 2, route: UInt8 = 3,
               shortcut: UInt8 = 4, yolo: UInt8 = 5,
               /// A yolo head with `new_coords=1` (1.2): the same fields as `yolo`.
               yoloNewCoords: UInt8 = 6,
               /// An anchor-free distribution head (1.5): classes, then bins per side.
               anchorFree: UInt8 = 7,
               /// A convolution with channel groups (1.6): the fields of `convolution`, then groups.
               groupedConvolution: UInt8 = 8,
               /// C2PSA's attention (1.6): heads, key channels, value channels (per head), scale.
               attention: UInt8 = 9

    static func code(_ activation: Activation) -> UInt8 {
        switch activation {
        case .linear: return 0
        case .leaky: return 1
        case .relu: return 2
        case .logistic: return 3
        case .mish: return 4
        case .swish: return 5
        }
    }

    /// The preferred scaling and resampling in one byte (0...3 as written since format 1.1; 4 and 5 for the
    /// two pairs that had no code then).
    static let fittings: [(code: UInt8, scaling: DetectionOptions.Scaling, resampling: DetectionOptions.Resampling)] = [
        (0, .scaleFit, .darknet), (1, .scaleFill, .openCV), (2, .centerCrop, .openCV), (3, .scaleFill, .darknet),
        (4, .scaleFit, .openCV), (5, .centerCrop, .darknet),
    ]

    static func code(_ scaling: DetectionOptions.Scaling, _ resampling: DetectionOptions.Resampling) -> UInt8 {
        fittings.first { $0.scaling == scaling && $0.resampling == resampling }!.code
    }

    static func fitting(_ code: UInt8) -> (scaling: DetectionOptions.Scaling, resampling: DetectionOptions.Resampling)? {
        fittings.first { $0.code == code }.map { ($0.scaling, $0.resampling) }
    }

    static func activation(_ code: UInt8) -> Activation? {
        switch code {
        case 0: return .linear
        case 1: return .leaky
        case 2: return .relu
        case 3: return .logistic
        case 4: return .mish
        case 5: return .swish
        default: return nil
        }
    }
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
                u8(s.isGrouped ? ModelFileCodes.groupedConvolution : ModelFileCodes.convolution); i32(s.line)
                i32(s.filters); i32(s.size); i32(s.stride); i32(s.padding)
                u8(s.batchNormalize ? 1 : 0); u8(ModelFileCodes.code(s.activation))
                if s.isGrouped { i32(s.groups) }
            case .attention(let s):
                u8(ModelFileCodes.attention); i32(s.line)
                i32(s.heads); i32(s.keyChannels); i32(s.valueChannels); f32(s.scale)
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
            case .yolo(let s) where s.isAnchorFree:
                u8(ModelFileCodes.anchorFree); i32(s.line)
                i32(s.classes); i32(s.distributionBins)
            case .yolo(let s):
                u8(s.newCoords ? ModelFileCodes.yoloNewCoords : ModelFileCodes.yolo); i32(s.line)
                count(s.mask.count); s.mask.forEach { i32($0) }
                count(s.anchors.count); s.anchors.forEach { f32($0) }
                i32(s.classes); f32(s.scaleXY)
            }
        }
    }
}

extension ByteReader {
    /// Reads a description written by `ByteWriter.description`; `path` becomes the description's path.
    /// Only the encoding is checked here (counts against the bytes left, enum codes); the values go
    /// through the same validator as a cfg's (`ModelDescription.checkFields`, then `shapes`).
    mutating func description() throws -> ModelDescription {
        let input = Shape(channels: try i32("input channels"), height: try i32("input height"), width: try i32("input width"))
        let layerCount = try count("layer count", elementSize: 5)
        // Checked before the layers are read, so a huge count cannot make the reader build millions of specs.
        guard layerCount <= ModelLimits.standard.maximumLayers else {
            throw failure("\(layerCount) layers, more than the limit of \(ModelLimits.standard.maximumLayers)")
        }
        var layers: [LayerSpec] = []
        for index in 0..<layerCount {
            context = "network description, layer \(index)"
            layers.append(try layer(index: index))
        }
        context = "network description"
        let description = ModelDescription(inputShape: input, layers: layers, path: path)
        do {
            try description.checkFields(.standard)
        } catch {
            throw failure(error.message)
        }
        return description
    }

    private mutating func activation() throws -> Activation {
        let code = try u8("activation")
        guard let activation = ModelFileCodes.activation(code) else { throw failure("unknown activation code \(code)") }
        return activation
    }

    private mutating func layer(index: Int) throws -> LayerSpec {
        let kind = try u8("layer kind")
        let line = try i32("cfg line")
        switch kind {
        case ModelFileCodes.convolution, ModelFileCodes.groupedConvolution:
            let filters = try i32("filters"), size = try i32("size"), stride = try i32("stride"), padding = try i32("padding")
            let batchNormalize = try u8("batch_normalize")
            guard batchNormalize <= 1 else { throw failure("batch_normalize flag is \(batchNormalize), not 0 or 1") }
            let activation = try activation()
            // Kind 8 always has more than one group (kind 0 is the one-group convolution).
            let groups = kind == ModelFileCodes.groupedConvolution ? try i32("groups") : 1
            guard kind == ModelFileCodes.convolution || groups > 1 else { throw failure("a grouped convolution of \(groups) groups") }
            return .convolution(ConvolutionSpec(filters: filters, size: size, stride: stride, padding: padding,
                                                batchNormalize: batchNormalize == 1, activation: activation, line: line, groups: groups))
        case ModelFileCodes.attention:
            return .attention(AttentionSpec(heads: try i32("heads"), keyChannels: try i32("key channels"),
                                            valueChannels: try i32("value channels"), scale: try f32("scale"), line: line))
        case ModelFileCodes.maxPool:
            return .maxPool(MaxPoolSpec(size: try i32("size"), stride: try i32("stride"), padding: try i32("padding"), line: line))
        case ModelFileCodes.upsample:
            return .upsample(UpsampleSpec(stride: try i32("stride"), scale: try f32("scale"), line: line))
        case ModelFileCodes.route:
            let count = try self.count("route source count", elementSize: 4)
            var sources: [Int] = []
            for _ in 0..<count { sources.append(try i32("route source")) }
            return .route(RouteSpec(layers: sources, groups: try i32("groups"), groupIndex: try i32("group_id"), line: line))
        case ModelFileCodes.shortcut:
            return .shortcut(ShortcutSpec(from: try i32("shortcut source"), activation: try activation(), line: line))
        case ModelFileCodes.yolo, ModelFileCodes.yoloNewCoords:
            let maskCount = try count("mask count", elementSize: 4)
            var mask: [Int] = []
            for _ in 0..<maskCount { mask.append(try i32("mask")) }
            let anchorCount = try count("anchor count", elementSize: 4)
            var anchors: [Float] = []
            for _ in 0..<anchorCount { anchors.append(try f32("anchor")) }
            var spec = YOLOSpec(mask: mask, anchors: anchors, classes: try i32("classes"), scaleXY: try f32("scale_x_y"), line: line)
            spec.newCoords = kind == ModelFileCodes.yoloNewCoords
            return .yolo(spec)
        case ModelFileCodes.anchorFree:
            var spec = YOLOSpec(mask: [], anchors: [], classes: try i32("classes"), scaleXY: 1, line: line)
            spec.distributionBins = try i32("distribution bins")
            return .yolo(spec)
        default:
            throw failure("unknown layer kind \(kind)")
        }
    }
}
