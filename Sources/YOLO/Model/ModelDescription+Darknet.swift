// MARK: - Interpreting a darknet cfg

extension ModelDescription {
    /// Reads a darknet cfg file.
    public init(cfgPath: String) throws {
        try self.init(config: DarknetConfig(contentsOf: cfgPath))
    }

    /// Gives the sections of a cfg their meaning, with darknet's defaults.
    ///
    /// Unknown sections, unknown keys, values that do not parse and options this engine does not
    /// implement are errors naming the line. Keys that only matter for training are accepted and ignored.
    public init(config: DarknetConfig) throws {
        let path = config.path
        guard let first = config.sections.first, first.name == "net" || first.name == "network" else {
            throw YOLOError.invalidConfig(path: path, line: config.sections.first?.line ?? 1,
                                          message: "the first section must be [net]")
        }
        let limit = ModelLimits.standard.maximumLayers
        guard config.sections.count - 1 <= limit else {
            throw YOLOError.invalidConfig(path: path, line: config.sections[limit + 1].line,
                                          message: "the cfg has \(config.sections.count - 1) layers, more than the limit of \(limit)")
        }
        var net = SectionReader(first, path: path)
        let input = Shape(channels: try net.int("channels", default: 3),
                          height: try net.int("height", default: 416),
                          width: try net.int("width", default: 416))
        guard input.channels > 0, input.width > 0, input.height > 0 else {
            throw YOLOError.invalidConfig(path: path, line: first.line, message: "[net] width, height and channels must be positive")
        }
        let letterBox = try net.optionalInt("letter_box").map { $0 != 0 }
        try net.finish(ignoring: SectionReader.netTrainingKeys)

        var layers: [LayerSpec] = []
        var suppression = Suppression.greedy
        for section in config.sections.dropFirst() {
            var reader = SectionReader(section, path: path)
            let index = layers.count
            switch section.name {
            case "convolutional", "conv":
                layers.append(.convolution(try reader.convolution()))
            case "maxpool", "max":
                layers.append(.maxPool(try reader.maxPool()))
            case "upsample":
                layers.append(.upsample(try reader.upsample()))
            case "route":
                layers.append(.route(try reader.route(index: index)))
            case "shortcut":
                layers.append(.shortcut(try reader.shortcut(index: index)))
            case "yolo":
                // darknet's detector takes nms_kind from the network's last layer: here the last [yolo].
                let (spec, kind) = try reader.yolo()
                layers.append(.yolo(spec))
                suppression = kind
            case "net", "network":
                throw YOLOError.invalidConfig(path: path, line: section.line, message: "[\(section.name)] may only be the first section")
            default:
                throw YOLOError.invalidConfig(path: path, line: section.line,
                    message: "unsupported section [\(section.name)] (supported: net, convolutional, maxpool, upsample, route, shortcut, yolo)")
            }
        }
        guard !layers.isEmpty else {
            throw YOLOError.invalidConfig(path: path, line: first.line, message: "the cfg has no layers after [net]")
        }
        // nms_kind is AlexeyAB's key even when it names the plain greedy suppression.
        let nmsKind = config.sections.contains { $0.name == "yolo" && $0.entries.contains { $0.key == "nms_kind" } }
        self.init(inputShape: input, layers: layers, path: path,
                  preferredScaling: ModelDescription.inferredScaling(layers: layers, letterBox: letterBox, alexeyABKeys: nmsKind))
        self.suppression = suppression
        try validate()
    }
}

/// Typed access to one section's keys, remembering which were used.
struct SectionReader {
    let section: DarknetConfig.Section
    let path: String
    private var used: Set<String> = []

    init(_ section: DarknetConfig.Section, path: String) {
        self.section = section
        self.path = path
    }

    private func error(_ line: Int, _ message: String) -> YOLOError {
        .invalidConfig(path: path, line: line, message: message)
    }

    private mutating func entry(_ key: String) -> DarknetConfig.Entry? {
        used.insert(key)
        return section.entries.last { $0.key == key }
    }

    mutating func int(_ key: String, default fallback: Int? = nil) throws -> Int {
        guard let entry = entry(key) else {
            guard let fallback else { throw error(section.line, "[\(section.name)] needs '\(key)'") }
            return fallback
        }
        guard let value = Int(entry.value) else {
            throw error(entry.line, "'\(key)' must be an integer, found '\(entry.value)'")
        }
        // Bounded here so defaults derived from it (a max-pool's padding = size − 1) cannot overflow;
        // the validator applies the real limits.
        guard value >= -(1 << 30), value <= 1 << 30 else {
            throw error(entry.line, "'\(key)' = \(value) is out of range")
        }
        return value
    }

    /// The integer value of `key`, nil when the section does not set it.
    mutating func optionalInt(_ key: String) throws -> Int? {
        guard section.entries.contains(where: { $0.key == key }) else {
            used.insert(key)
            return nil
        }
        return try int(key)
    }

    mutating func float(_ key: String, default fallback: Float) throws -> Float {
        guard let entry = entry(key) else { return fallback }
        guard let value = Float(entry.value), value.isFinite else {
            throw error(entry.line, "'\(key)' must be a number, found '\(entry.value)'")
        }
        return value
    }

    mutating func list<T: LosslessStringConvertible>(_ key: String, as _: T.Type) throws -> (values: [T], line: Int)? {
        guard let entry = entry(key) else { return nil }
        var values: [T] = []
        for part in entry.value.split(separator: ",", omittingEmptySubsequences: false) {
            guard let value = T(String(part)) else {
                throw error(entry.line, "'\(key)' must be a comma-separated list of numbers, found '\(entry.value)'")
            }
            values.append(value)
        }
        return (values, entry.line)
    }

    mutating func activation(_ key: String = "activation", default fallback: Activation) throws -> Activation {
        guard let entry = entry(key) else { return fallback }
        guard let value = Activation(rawValue: entry.value.lowercased()) else {
            throw error(entry.line, "unsupported activation '\(entry.value)' (supported: \(Activation.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        return value
    }

    /// Requires `key`, when present, to equal `expected` (an option this engine does not implement otherwise).
    mutating func require(_ key: String, equals expected: String, meaning: String) throws {
        guard let entry = entry(key) else { return }
        guard entry.value.lowercased() == expected else {
            throw error(entry.line, "unsupported option \(key)=\(entry.value) (\(meaning); only \(expected) is supported)")
        }
    }

    /// Fails on the first key that was neither read nor listed in `ignoring`.
    func finish(ignoring: Set<String> = []) throws {
        for entry in section.entries where !used.contains(entry.key) && !ignoring.contains(entry.key) {
            throw error(entry.line, "unknown key '\(entry.key)' in [\(section.name)]")
        }
    }

    static let netTrainingKeys: Set<String> = [
        "batch", "subdivisions", "momentum", "decay", "angle", "saturation", "exposure", "hue",
        "learning_rate", "burn_in", "max_batches", "policy", "steps", "scales", "step", "gamma", "power",
        "max_crop", "min_crop", "aspect", "jitter", "flip", "mosaic", "cutmix", "mixup",
        "blur", "gaussian_noise", "random", "adam", "b1", "b2", "eps", "max_chart_loss", "track",
        "time_steps", "inputs", "try_fix_nan", "loss_scale", "dynamic_minibatch", "optimized_memory",
        "workspace_size_limit_mb", "use_cuda_graph", "label_smooth_eps", "resize_step", "sequential_subdivisions",
        "burn_in", "contrastive", "unsupervised", "seed", "equidistant_point",
    ]

    static let yoloTrainingKeys: Set<String> = [
        "jitter", "ignore_thresh", "truth_thresh", "random", "iou_normalizer", "cls_normalizer",
        "obj_normalizer", "iou_loss", "iou_thresh", "max_delta", "counters_per_class", "label_smooth_eps",
        "resize", "max", "focal_loss", "uc_normalizer", "objectness_smooth",
        "map", "track_history_size", "sim_thresh", "dets_for_track", "dets_for_show", "track_ciou_norm",
        "embedding_layer", "show_details", "rescore",
    ]

    // MARK: Sections

    mutating func convolution() throws -> ConvolutionSpec {
        let filters = try int("filters", default: 1)
        let size = try int("size", default: 1)
        let stride = try int("stride", default: 1)
        let pad = try int("pad", default: 0)
        let padding = pad != 0 ? size / 2 : try int("padding", default: 0)
        guard filters > 0, size > 0, stride > 0, padding >= 0 else {
            throw error(section.line, "[convolutional] filters, size and stride must be positive and padding not negative")
        }
        let spec = ConvolutionSpec(filters: filters, size: size, stride: stride, padding: padding,
                                   batchNormalize: try int("batch_normalize", default: 0) != 0,
                                   activation: try activation(default: .logistic), line: section.line)
        try require("groups", equals: "1", meaning: "grouped convolution")
        try require("dilation", equals: "1", meaning: "dilated convolution")
        try require("binary", equals: "0", meaning: "binary weights")
        try require("xnor", equals: "0", meaning: "XNOR convolution")
        try require("flipped", equals: "0", meaning: "flipped weights")
        try require("antialiasing", equals: "0", meaning: "anti-aliased stride")
        for key in ["stride_x", "stride_y"] { try require(key, equals: "\(stride)", meaning: "separate x/y strides") }
        try finish()
        return spec
    }

    mutating func maxPool() throws -> MaxPoolSpec {
        let stride = try int("stride", default: 1)
        let size = try int("size", default: stride)
        let padding = try int("padding", default: size - 1)
        guard size > 0, stride > 0, padding >= 0 else {
            throw error(section.line, "[maxpool] size and stride must be positive and padding not negative")
        }
        for key in ["stride_x", "stride_y"] { try require(key, equals: "\(stride)", meaning: "separate x/y strides") }
        try require("maxpool_depth", equals: "0", meaning: "pooling over channels")
        try require("antialiasing", equals: "0", meaning: "anti-aliased pooling")
        try finish()
        return MaxPoolSpec(size: size, stride: stride, padding: padding, line: section.line)
    }

    mutating func upsample() throws -> UpsampleSpec {
        let stride = try int("stride", default: 2)
        guard stride > 0 else {
            throw error(section.line, "[upsample] stride must be positive (negative strides, darknet's downsampling, are not supported)")
        }
        let spec = UpsampleSpec(stride: stride, scale: try float("scale", default: 1), line: section.line)
        try finish()
        return spec
    }

    /// `index` is this layer's own index; negative references count back from it.
    mutating func route(index: Int) throws -> RouteSpec {
        guard let (references, line) = try list("layers", as: Int.self) else {
            throw error(section.line, "[route] needs 'layers'")
        }
        let layers = try references.map { try resolve($0, index: index, line: line, key: "layers") }
        let groups = try int("groups", default: 1)
        let groupIndex = try int("group_id", default: 0)
        guard groups >= 1, groupIndex >= 0, groupIndex < groups else {
            throw error(section.line, "[route] needs groups >= 1 and 0 <= group_id < groups")
        }
        try finish()
        return RouteSpec(layers: layers, groups: groups, groupIndex: groupIndex, line: section.line)
    }

    mutating func shortcut(index: Int) throws -> ShortcutSpec {
        guard let entry = section.entries.last(where: { $0.key == "from" }) else {
            throw error(section.line, "[shortcut] needs 'from'")
        }
        let reference = try int("from")
        guard index > 0 else { throw error(section.line, "[shortcut] cannot be the first layer") }
        let from = try resolve(reference, index: index, line: entry.line, key: "from")
        let activation = try activation(default: .linear)
        try require("weights_type", equals: "none", meaning: "weighted shortcut")
        try finish()
        return ShortcutSpec(from: from, activation: activation, line: section.line)
    }

    mutating func yolo() throws -> (YOLOSpec, Suppression) {
        let classes = try int("classes", default: 20)
        guard classes > 0 else { throw error(section.line, "[yolo] classes must be positive") }
        let anchors = try list("anchors", as: Float.self)
        guard let anchors, !anchors.values.isEmpty, anchors.values.count % 2 == 0,
              anchors.values.allSatisfy({ $0 > 0 && $0.isFinite }) else {
            throw error(anchors?.line ?? section.line, "[yolo] needs 'anchors': an even number of positive values (w,h pairs)")
        }
        let count = anchors.values.count / 2
        let num = try int("num", default: count)
        guard num == count else {
            throw error(section.line, "[yolo] num=\(num) but 'anchors' holds \(count) pairs")
        }
        let mask = try list("mask", as: Int.self)
        let maskValues = mask?.values ?? Array(0..<num)
        if let bad = maskValues.first(where: { $0 < 0 || $0 >= num }) {
            throw error(mask?.line ?? section.line, "[yolo] mask index \(bad) is outside the \(num) anchors")
        }
        let scaleXY = try float("scale_x_y", default: 1)
        let newCoords = try int("new_coords", default: 0)
        guard newCoords == 0 || newCoords == 1 else {
            throw error(entry("new_coords")?.line ?? section.line, "[yolo] new_coords must be 0 or 1, found \(newCoords)")
        }
        let suppression: Suppression
        let kind = entry("nms_kind")
        let beta = try float("beta_nms", default: 0.6)
        switch kind?.value.lowercased() ?? "greedynms" {
        case "greedynms", "default": suppression = .greedy
        case "diounms":
            guard beta > 0 else { throw error(entry("beta_nms")?.line ?? section.line, "[yolo] beta_nms must be positive, found \(beta)") }
            suppression = .distanceIoU(beta: beta)
        default:
            throw error(kind?.line ?? section.line, "unsupported option nms_kind=\(kind?.value ?? "") (supported: greedynms, diounms)")
        }
        try finish(ignoring: SectionReader.yoloTrainingKeys)
        var spec = YOLOSpec(mask: maskValues, anchors: anchors.values, classes: classes, scaleXY: scaleXY, line: section.line)
        spec.newCoords = newCoords == 1
        return (spec, suppression)
    }

    /// Turns a relative (negative) or absolute layer reference into an absolute index before `index`.
    private func resolve(_ reference: Int, index: Int, line: Int, key: String) throws -> Int {
        let absolute = reference < 0 ? index + reference : reference
        guard absolute >= 0, absolute < index else {
            throw error(line, "'\(key)' refers to layer \(reference), which does not exist before layer \(index)")
        }
        return absolute
    }
}
