/// How one `detect` call prepares the image and filters the results.
///
/// Names follow Apple's Vision where they fit (`VNImageCropAndScaleOption`, `regionOfInterest`).
public struct DetectionOptions: Sendable, Equatable {
    /// How the region of interest is fitted into the network input (Vision's `VNImageCropAndScaleOption`).
    public enum Scaling: String, Sendable, CaseIterable {
        /// Letterbox: keep the aspect ratio, pad with 0.5 gray (integer offsets). With darknet's resampler,
        /// pixel for pixel what pjreddie's `darknet detect` feeds the network, and what its models
        /// (yolov3-tiny) expect.
        case scaleFit
        /// Stretch to the network input, ignoring the aspect ratio. With darknet's resampler, pixel for
        /// pixel what AlexeyAB's `darknet detector test` feeds the network, and what models trained there
        /// (yolov4-tiny) expect; with OpenCV's, what `cv2.dnn.blobFromImage` gives.
        case scaleFill
        /// Scale so the shorter side fits and crop the centre to the network's aspect ratio.
        case centerCrop
    }

    /// How pixels are resampled to the network input's size (both bilinear; they differ in where they sample
    /// and how they round).
    public enum Resampling: String, Sendable, CaseIterable {
        /// darknet's `resize_image` on float pixels, what darknet models saw in training and at test time.
        case darknet
        /// OpenCV's `INTER_LINEAR` on 8-bit pixels (`cv.resize`, `cv2.dnn.blobFromImage`).
        case openCV
    }

    /// The network input size for a call.
    public enum InputSize: Sendable, Equatable {
        /// The size the model's cfg names (416×416 for yolov3-tiny).
        case model
        /// A fixed size; both must be positive multiples of the model's stride (32).
        case fixed(width: Int, height: Int)
        /// The size, in multiples of 32, closest to the region's aspect ratio with at most `pixelBudget`
        /// input pixels (e.g. 416 × 416 = 173 056).
        case automatic(pixelBudget: Int)
    }

    /// Selects classes by index or by label.
    public enum ClassSelector: Sendable, Hashable {
        /// The class with this index in the model (0-based).
        case index(Int)
        /// The class with this name in the model's names file.
        case label(String)
    }

    /// How the region of interest is fitted into the network input; nil (the default) uses the model's own
    /// preference (`Model.preferredScaling`: `.scaleFill` for AlexeyAB's models such as yolov4-tiny,
    /// letterbox `.scaleFit` for pjreddie's such as yolov3-tiny).
    public var scaling: Scaling? = nil
    /// How pixels are resampled; nil (the default) uses the model's own preference
    /// (`Model.preferredResampling`: `.darknet` for darknet models).
    public var resampling: Resampling? = nil
    /// Normalized rectangle of the upright image that is fed to the network (default: all of it).
    /// Boxes still come back normalized to the full image.
    public var regionOfInterest: Rect = .unit
    /// The network input size (default: the model's own, `.model`).
    public var inputSize: InputSize = .model
    /// Objectness × class probability must exceed this (darknet semantics). Default 0.25.
    public var confidenceThreshold: Float = 0.25
    /// Boxes overlapping a higher-scoring box by more than this IoU are suppressed; nil (the default) uses the
    /// model's preference (`Model.preferredIoUThreshold`: darknet's 0.45, or 0.7 for Ultralytics' anchor-free
    /// models converted from ONNX, as Ultralytics' own suppression).
    public var iouThreshold: Float? = nil
    /// Suppress across classes instead of per class (the default is per class, like darknet).
    public var classAgnostic: Bool = false
    /// Keep at most this many detections (the most confident); nil (the default) uses the model's preference
    /// (`Model.preferredMaximumDetections`: all for darknet models, 300 for Ultralytics' anchor-free models).
    /// `Int.max` keeps all.
    public var maximumDetections: Int? = nil
    /// At most this many candidates per class (the most probable) enter non-maximum suppression; the
    /// rest are dropped. Default 10,000: yolov3-tiny has 2,535 boxes in all at 416×416 and 37,800 at
    /// 1600×1600, and a real image puts only a few hundred of them above the threshold; the bound matters
    /// only for a model that fires everywhere, where suppression would otherwise take minutes.
    public var maximumCandidates: Int = 10_000
    /// Report only these classes; nil reports all.
    public var classes: Set<ClassSelector>? = nil
    /// Clip boxes to the image (the default): a box the network places partly outside the image ends at its
    /// edge, as `yolo detect` prints it and as darknet's and Ultralytics' outputs are. `false` keeps the box as
    /// decoded, which may extend past the edge (coordinates below 0 or above 1), as darknet computes it before
    /// printing. Vision: Apple documents `VNDetectedObjectObservation.boundingBox` as normalized to the image
    /// and `VNImageRectForNormalizedRect` as a plain projection to pixels (no clipping is mentioned); whether a
    /// Vision observation's box can extend past the edge is not documented. Suppression always compares the
    /// unclipped boxes, so this changes the boxes reported, never which are.
    public var clipsBoxes: Bool = true
    /// The most working memory (bytes) the network for one input size may need, checked before it is
    /// built; a call whose input size needs more fails with `YOLOError.invalidArgument`. Default 4 GiB.
    public var memoryBudget: Int = MemoryBudget.defaultBytes

    /// The defaults: the whole image, scaled the way the model expects, at the model's input size, confidence 0.25, the
    /// model's IoU threshold and detection limit, per-class suppression, every class, boxes clipped to the image, a 4 GiB
    /// memory budget.
    public init() {}
}
