/// A class and its confidence for one detected box.
public struct ClassScore: Sendable, Equatable {
    /// The class's index in the model (0-based; the line of the names file).
    public var classIndex: Int
    /// The class's name (`class N` when the model has no names).
    public var label: String
    /// Objectness × class probability, in (threshold, 1].
    public var confidence: Float

    public init(classIndex: Int, label: String, confidence: Float) {
        self.classIndex = classIndex
        self.label = label
        self.confidence = confidence
    }
}

/// One recognized object.
///
/// `box` is normalized to the full, upright original image with a top-left origin, whatever crop,
/// scale, region of interest or decoding scale produced it, and clipped to the image unless
/// `DetectionOptions.clipsBoxes` is false (then it may extend slightly past the edge, as the network placed it).
public struct Detection: Sendable, Equatable {
    /// The box, normalized to the full upright image (top-left origin; clipped to it unless
    /// `DetectionOptions.clipsBoxes` was false).
    public var box: Rect
    /// The best class.
    public var classIndex: Int
    /// The best class's name (`class N` when the model has no names).
    public var label: String
    /// The best class's confidence (objectness × class probability; the class score for an anchor-free model).
    public var confidence: Float
    /// Every class whose confidence passed the threshold and survived suppression, most confident first.
    public var labels: [ClassScore]
    /// The box's objectness (probability that it holds any object); an anchor-free model (converted from ONNX) has
    /// none and reports its confidence.
    public var objectness: Float

    /// A detection from any source (a file of detections, another detector): `labels` defaults to the one
    /// class, `objectness` to the confidence.
    public init(box: Rect, classIndex: Int, label: String, confidence: Float, labels: [ClassScore]? = nil,
                objectness: Float? = nil) {
        self.box = box
        self.classIndex = classIndex
        self.label = label
        self.confidence = confidence
        self.labels = labels ?? [ClassScore(classIndex: classIndex, label: label, confidence: confidence)]
        self.objectness = objectness ?? confidence
    }

    /// `box` clipped to the image (`box` itself unless `DetectionOptions.clipsBoxes` was false).
    public var clippedBox: Rect { box.clippedToUnit }

    /// `box` in pixels of an image of `width × height` (normally the original's), top-left origin.
    public func pixelRect(width: Int, height: Int) -> Rect {
        box.scaled(width: Double(width), height: Double(height))
    }

    /// The box with a lower-left origin, as Apple's Vision reports `boundingBox`.
    public var visionBoundingBox: Rect { box.flippedVertically }
}
