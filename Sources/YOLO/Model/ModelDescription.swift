/// A network as described by a darknet cfg: the input size and the layers with their options,
/// before any weights. Sendable value; built once per model and shared.
@_spi(Engine) public struct ModelDescription: Sendable {
    /// The network input the cfg asks for (`[net] width, height, channels`).
    public var inputShape: Shape
    public var layers: [LayerSpec]
    /// Where the description came from (for error messages).
    public var path: String
    /// How images are fitted into the input when a request does not say (`DetectionOptions.scaling` nil):
    /// what the darknet the model comes from does at test time.
    public var preferredScaling: DetectionOptions.Scaling
    /// How pixels are resampled when a request does not say (`DetectionOptions.resampling` nil): darknet's
    /// own resize for darknet models.
    public var preferredResampling: DetectionOptions.Resampling = .darknet
    /// How overlapping boxes are suppressed: darknet's `nms_kind` of the last `[yolo]` section.
    public var suppression: Suppression = .greedy
    /// The value (in [0, 1]) of the input outside a letterboxed image (`scaleFit`): darknet's 0.5 gray, or
    /// 114/255 for models converted from Ultralytics' ONNX exports.
    public var letterboxFill: Float = 0.5

    /// `preferredScaling` nil infers it from the layers (`inferredScaling(layers:letterBox:)`).
    public init(inputShape: Shape, layers: [LayerSpec], path: String, preferredScaling: DetectionOptions.Scaling? = nil) {
        self.inputShape = inputShape
        self.layers = layers
        self.path = path
        self.preferredScaling = preferredScaling ?? ModelDescription.inferredScaling(layers: layers, letterBox: nil)
    }

    /// The scaling and resampling for `options`: its own, or the model's preferences.
    public func fitting(_ options: DetectionOptions) -> (scaling: DetectionOptions.Scaling, resampling: DetectionOptions.Resampling) {
        (options.scaling ?? preferredScaling, options.resampling ?? preferredResampling)
    }

    /// Whether the model's heads are anchor-free (Ultralytics' distribution-focal heads, from ONNX exports).
    public var isAnchorFree: Bool { heads.contains { $0.spec.distributionBins > 0 } }

    /// The suppression IoU threshold a request that does not set one gets: Ultralytics' 0.7 for its anchor-free
    /// models, darknet's 0.45 otherwise.
    public var preferredIoUThreshold: Float { isAnchorFree ? 0.7 : 0.45 }

    /// The detection limit a request that does not set one gets: Ultralytics' 300 for its anchor-free models, none
    /// (nil) otherwise.
    public var preferredMaximumDetections: Int? { isAnchorFree ? 300 : nil }

    /// The IoU threshold and detection limit (nil: none) for `options`: its own, or the model's preferences.
    public func suppressionSettings(_ options: DetectionOptions) -> (iou: Float, limit: Int?) {
        let limit = options.maximumDetections ?? preferredMaximumDetections
        return (options.iouThreshold ?? preferredIoUThreshold, limit == Int.max ? nil : limit)
    }

    /// The scaling a darknet model expects. `[net] letter_box` decides when the cfg sets it (1: letterbox,
    /// 0: stretch). Otherwise the model's darknet does: AlexeyAB's `detector test` stretches the image
    /// (`resize_image` to the input size), pjreddie's `detect` letterboxes it. A cfg is taken to be
    /// AlexeyAB's when it uses something only that fork reads (`scale_x_y` ≠ 1, route groups, mish,
    /// swish, `new_coords`, `nms_kind`); yolov4-tiny does, yolov3-tiny does not.
    public static func inferredScaling(layers: [LayerSpec], letterBox: Bool?, alexeyABKeys: Bool = false) -> DetectionOptions.Scaling {
        if let letterBox { return letterBox ? .scaleFit : .scaleFill }
        let alexeyAB = alexeyABKeys || layers.contains { layer in
            switch layer {
            case .route(let s): return s.groups > 1
            case .yolo(let s): return s.scaleXY != 1 || s.newCoords
            case .convolution(let s): return s.activation == .mish || s.activation == .swish
            default: return false
            }
        }
        return alexeyAB ? .scaleFill : .scaleFit
    }

    /// The YOLO heads, in layer order.
    public var heads: [(index: Int, spec: YOLOSpec)] {
        layers.enumerated().compactMap { index, layer in
            if case .yolo(let spec) = layer { return (index, spec) }
            return nil
        }
    }

    /// The convolutions with channel groups: they stay float32 (the quantizers skip them, the model file
    /// rejects other storage for them).
    public var groupedConvolutions: Set<Int> {
        Set(layers.indices.filter { if case .convolution(let s) = layers[$0] { return s.isGrouped } else { return false } })
    }

    /// Number of classes of the model (of its first head), or 0 when it has none.
    public var classCount: Int { heads.first?.spec.classes ?? 0 }
}

/// One layer as the cfg describes it. `line` is the cfg line of its section header.
@_spi(Engine) public enum LayerSpec: Sendable {
    case convolution(ConvolutionSpec)
    case maxPool(MaxPoolSpec)
    case upsample(UpsampleSpec)
    case route(RouteSpec)
    case shortcut(ShortcutSpec)
    case yolo(YOLOSpec)
    /// C2PSA's multi-head attention (models converted from ONNX; model format 1.6).
    case attention(AttentionSpec)

    public var line: Int {
        switch self {
        case .convolution(let s): return s.line
        case .maxPool(let s): return s.line
        case .upsample(let s): return s.line
        case .route(let s): return s.line
        case .shortcut(let s): return s.line
        case .yolo(let s): return s.line
        case .attention(let s): return s.line
        }
    }

    /// Section name as darknet writes it.
    public var sectionName: String {
        switch self {
        case .convolution: return "convolutional"
        case .maxPool: return "maxpool"
        case .upsample: return "upsample"
        case .route: return "route"
        case .shortcut: return "shortcut"
        case .yolo(let s): return s.isAnchorFree ? "detect" : "yolo"
        case .attention: return "attention"
        }
    }
}

@_spi(Engine) public struct ConvolutionSpec: Sendable, Equatable {
    public var filters: Int
    public var size: Int
    public var stride: Int
    /// Padding in cells on each side (darknet: `pad=1` means `size / 2`, else `padding`).
    public var padding: Int
    public var batchNormalize: Bool
    public var activation: Activation
    public var line: Int
    /// Channel groups (ONNX `Conv` `group`): filter `f` reads only the input channels of its group
    /// `f / (filters / groups)`, so its weights are `[filters][inChannels / groups][size][size]`. 1: a plain
    /// convolution; the input's channel count (with as many filters, or a multiple): depthwise.
    public var groups: Int = 1

    public init(filters: Int, size: Int, stride: Int, padding: Int, batchNormalize: Bool, activation: Activation, line: Int,
                groups: Int = 1) {
        (self.filters, self.size, self.stride, self.padding) = (filters, size, stride, padding)
        (self.batchNormalize, self.activation, self.line, self.groups) = (batchNormalize, activation, line, groups)
    }

    /// Whether the filters are split into channel groups (`groups` > 1).
    public var isGrouped: Bool { groups > 1 }
}

/// The attention of Ultralytics' C2PSA block (`Attention` in its PSABlock) after its qkv convolution, on one
/// `C × H × W` map (N = H·W positions). Its input holds, channel by channel, every head's queries (`heads ×
/// keyChannels`), then every head's keys (the same), then every head's values (`heads × valueChannels`), head
/// by head; per head `h` it computes `A = softmax_j(scale · Σ_c q[c, i] k[c, j])` (an N × N map, softmax over
/// `j`) and writes `out[d, i] = Σ_j v[d, j] · A[i, j]`: `heads × valueChannels` output channels, head-major.
@_spi(Engine) public struct AttentionSpec: Sendable, Equatable {
    public var heads: Int
    /// Query and key channels per head (`key_dim`).
    public var keyChannels: Int
    /// Value (and output) channels per head (`head_dim`).
    public var valueChannels: Int
    /// The factor of the query-key products before the softmax (`key_dim^-0.5`).
    public var scale: Float
    public var line: Int

    public init(heads: Int, keyChannels: Int, valueChannels: Int, scale: Float, line: Int) {
        (self.heads, self.keyChannels, self.valueChannels, self.scale, self.line) = (heads, keyChannels, valueChannels, scale, line)
    }

    /// Input channels: queries, keys and values of every head.
    public var inputChannels: Int { heads * (2 * keyChannels + valueChannels) }
    /// Output channels: every head's values.
    public var outputChannels: Int { heads * valueChannels }
}

@_spi(Engine) public struct MaxPoolSpec: Sendable, Equatable {
    public var size: Int
    public var stride: Int
    /// Total padding per axis (darknet default `size − 1`).
    public var padding: Int
    public var line: Int

    public init(size: Int, stride: Int, padding: Int, line: Int) {
        (self.size, self.stride, self.padding, self.line) = (size, stride, padding, line)
    }
}

@_spi(Engine) public struct UpsampleSpec: Sendable, Equatable {
    public var stride: Int
    public var scale: Float
    public var line: Int

    public init(stride: Int, scale: Float, line: Int) {
        (self.stride, self.scale, self.line) = (stride, scale, line)
    }
}

@_spi(Engine) public struct RouteSpec: Sendable, Equatable {
    /// Absolute layer indices, in cfg order.
    public var layers: [Int]
    public var groups: Int
    public var groupIndex: Int
    public var line: Int

    public init(layers: [Int], groups: Int, groupIndex: Int, line: Int) {
        (self.layers, self.groups, self.groupIndex, self.line) = (layers, groups, groupIndex, line)
    }
}

@_spi(Engine) public struct ShortcutSpec: Sendable, Equatable {
    /// Absolute index of the layer added to the previous one.
    public var from: Int
    public var activation: Activation
    public var line: Int

    public init(from: Int, activation: Activation, line: Int) {
        (self.from, self.activation, self.line) = (from, activation, line)
    }
}

/// How overlapping boxes are suppressed (darknet's `[yolo] nms_kind`).
@_spi(Engine) public enum Suppression: Sendable, Equatable {
    /// `greedynms` (and pjreddie's `do_nms_sort`): a box goes when its IoU with a better one exceeds the threshold.
    case greedy
    /// `diounms`: when IoU − (d²/c²)^beta exceeds the threshold, d the distance of the centres and c the diagonal
    /// of the smallest box enclosing both (darknet's `box_diounms`, `beta_nms`).
    case distanceIoU(beta: Float)
}

@_spi(Engine) public struct YOLOSpec: Sendable, Equatable {
    /// Indices into `anchors` used by this head.
    public var mask: [Int]
    /// All anchors of the model as (width, height) pairs in input pixels, flattened: w0, h0, w1, h1, ...
    public var anchors: [Float]
    public var classes: Int
    public var scaleXY: Float
    /// AlexeyAB's `new_coords=1` (scaled-YOLOv4, yolov7): the outputs are already logistic (the convolution
    /// before the head says so), x, y = scale_x_y·v − (scale_x_y − 1)/2 and w, h = (2v)²·anchor, no exponential.
    public var newCoords: Bool = false
    /// An anchor-free head (Ultralytics' YOLOv8 `Detect`) when above 0: the number of distribution bins per
    /// box side (`reg_max`, 16). Its input holds `4 · distributionBins` box logits (left, top, right, bottom
    /// distances, each a softmax over the bins, in strides) and then `classes` class logits; `mask` and
    /// `anchors` are empty. 0: darknet's anchor head.
    public var distributionBins: Int = 0
    public var line: Int

    public init(mask: [Int], anchors: [Float], classes: Int, scaleXY: Float, newCoords: Bool = false, distributionBins: Int = 0,
                line: Int) {
        (self.mask, self.anchors, self.classes, self.scaleXY) = (mask, anchors, classes, scaleXY)
        (self.newCoords, self.distributionBins, self.line) = (newCoords, distributionBins, line)
    }

    /// Whether this is an anchor-free (distribution) head.
    public var isAnchorFree: Bool { distributionBins > 0 }

    /// Input channels the head expects.
    public var inputChannels: Int { isAnchorFree ? 4 * distributionBins + classes : mask.count * (classes + 5) }

    /// The anchor pairs.
    public var anchorPairs: [(width: Float, height: Float)] {
        stride(from: 0, to: anchors.count - 1, by: 2).map { (anchors[$0], anchors[$0 + 1]) }
    }
}
