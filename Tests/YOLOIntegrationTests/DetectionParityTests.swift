import Foundation
import Testing
@_spi(Engine) @testable import YOLO
import YOLOTestSupport

// Parity with darknet: our detections against OpenCV DNN's reference detections (made on darknet's exact
// letterbox input, and on OpenCV's own stretch resize), committed in Fixtures/reference-detections.json by
// scripts/make-detection-fixtures.py. The images come from ../shared, except the four scikit-image PNGs we
// ship in Samples/, which always run; the ../shared images are separate tests, skipped (with the reason)
// when ../shared is absent.

/// One reference entry: an image's detections in one mode.
struct ReferenceEntry: Decodable, Sendable {
    struct Item: Decodable, Sendable {
        var class_id: Int
        var confidence: Float
        var box: [Double]
    }
    var width: Int
    var height: Int
    var conf_thresh: Float
    var nms_iou: Float
    var detections: [Item]
}

/// A reference file: `set/mode/file` -> the reference's detections of that image.
struct ReferenceDetections: Sendable {
    let all: [String: ReferenceEntry]

    init(fixture name: String) {
        let data = try! Data(contentsOf: URL(fileURLWithPath: TestPaths.fixtures + "/" + name))
        all = try! JSONDecoder().decode([String: ReferenceEntry].self, from: data)
    }

    /// yolov3-tiny (pjreddie's), OpenCV DNN in letterbox_dn and stretch (scripts/make-detection-fixtures.py).
    static let yolov3Tiny = ReferenceDetections(fixture: "reference-detections.json")
    /// yolov4-tiny (AlexeyAB's), OpenCV DNN in stretch_dn and letterbox_dn (scripts/make-yolov4-tiny-fixtures.sh).
    static let yolov4Tiny = ReferenceDetections(fixture: "reference-detections-yolov4-tiny.json")

    /// Where a reference image comes from: the shipped Samples/ or the workplace's ../shared.
    enum Source { case samples, shared }

    func keys(mode: String) -> [String] {
        all.keys.filter { $0.contains("/\(mode)/") }.sorted()
    }

    /// The keys of `mode` whose image comes from `source`.
    func keys(mode: String, from source: Source) -> [String] {
        keys(mode: mode).filter { Self.imagePath($0).hasPrefix(TestPaths.root + "/Samples/") == (source == .samples) }
    }

    /// Where the image of `key` (`set/mode/file`) is: Samples/ for the shipped PNGs, else ../shared.
    static func imagePath(_ key: String) -> String {
        let parts = key.split(separator: "/")
        let (set, file) = (String(parts[0]), String(parts[2]))
        if file.hasPrefix("skimage_"), file.hasSuffix(".png") {
            let sample = TestPaths.root + "/Samples/" + file.dropFirst("skimage_".count)
            if FileManager.default.fileExists(atPath: sample) { return sample }
        }
        return TestPaths.shared + "/data/" + (set == "photos" ? "photos/" : "coco-val2017-dev/images/") + file
    }
}

/// Tolerances for one comparison and why.
struct ParityTolerance {
    var confidence: Float
    var pixels: Double
}

/// (class, box) pairs: one per class a detection carries, like the reference lists them.
func classBoxPairs(_ detections: [Detection], width: Int, height: Int) -> [ReferenceEntry.Item] {
    detections.flatMap { d in
        d.labels.map { label in
            let r = d.pixelRect(width: width, height: height)
            return ReferenceEntry.Item(class_id: label.classIndex, confidence: label.confidence, box: [r.minX, r.minY, r.maxX, r.maxY])
        }
    }
}

/// Problems between our pairs and the reference's. Pairs match one-to-one by class and nearest box; a pair
/// without a partner is a problem unless its confidence is within tolerance of the threshold.
func parityProblems(ours: [ReferenceEntry.Item], reference: [ReferenceEntry.Item], threshold: Float,
                    tolerance: ParityTolerance) -> [String] {
    parityComparison(ours: ours, reference: reference, threshold: threshold, tolerance: tolerance).problems
}

/// The problems, and the largest confidence and corner differences over the matched pairs.
func parityComparison(ours: [ReferenceEntry.Item], reference: [ReferenceEntry.Item], threshold: Float,
                      tolerance: ParityTolerance) -> (problems: [String], confidence: Float, pixels: Double) {
    var problems: [String] = []
    var worst: (Float, Double) = (0, 0)
    var unused = ours
    for ref in reference.sorted(by: { $0.confidence > $1.confidence }) {
        let candidates = unused.enumerated().filter { $0.element.class_id == ref.class_id }
        let nearest = candidates.min { a, b in
            zip(a.element.box, ref.box).map { abs($0 - $1) }.max()! < zip(b.element.box, ref.box).map { abs($0 - $1) }.max()!
        }
        if let nearest {
            let boxError = zip(nearest.element.box, ref.box).map { abs($0 - $1) }.max()!
            let confidenceError = abs(nearest.element.confidence - ref.confidence)
            if boxError <= tolerance.pixels && confidenceError <= tolerance.confidence {
                worst = (max(worst.0, confidenceError), max(worst.1, boxError))
                unused.remove(at: nearest.offset)
                continue
            }
        }
        // Unmatched: allowed only near the threshold, where a tiny difference decides which side it falls.
        if ref.confidence > threshold + tolerance.confidence {
            let near = nearest.map { " (nearest ours: conf \($0.element.confidence) box \($0.element.box.map { ($0 * 1000).rounded() / 1000 }))" } ?? ""
            problems.append("missing class \(ref.class_id) conf \(ref.confidence) box \(ref.box)" + near)
        }
    }
    for extra in unused where extra.confidence > threshold + tolerance.confidence {
        problems.append("extra class \(extra.class_id) conf \(extra.confidence) box \(extra.box.map { ($0 * 1000).rounded() / 1000 })")
    }
    return (problems, worst.0, worst.1)
}

/// Runs the detector on `key`'s image in `scaling` and compares with the reference. A missing image is a
/// failure: tests of ../shared images are skipped by their trait when ../shared is absent.
func checkParity(key: String, scaling: DetectionOptions.Scaling?, resampling: DetectionOptions.Resampling? = nil, model: Model? = TinyYOLO.model,
                 references: ReferenceDetections = .yolov3Tiny, tolerance: (_ png: Bool) -> ParityTolerance) throws {
    try #require(imageAvailable(key), "\(key): no image at \(ReferenceDetections.imagePath(key))")
    let detector = try Detector(model: try #require(model))
    let reference = try #require(references.all[key])
    let path = ReferenceDetections.imagePath(key)
    // The reference ignores EXIF orientation (like darknet), so we do too here.
    var decoding = ImageDecodingOptions()
    decoding.applyOrientation = false
    let image = try Image(contentsOf: path, options: decoding)
    #expect(image.width == reference.width && image.height == reference.height)
    var options = DetectionOptions()
    options.scaling = scaling
    options.resampling = resampling
    options.confidenceThreshold = reference.conf_thresh
    options.iouThreshold = reference.nms_iou
    let ours = classBoxPairs(try detector.detect(image, options: options), width: image.width, height: image.height)
    let result = parityComparison(ours: ours, reference: reference.detections, threshold: reference.conf_thresh,
                                  tolerance: tolerance(path.hasSuffix(".png")))
    print("parity \(key): \(reference.detections.count) reference pairs, max |Δconf| \(result.confidence), max |Δcorner| \(result.pixels) px")
    #expect(result.problems.isEmpty, "\(key): \(result.problems.joined(separator: "; "))")
}

/// Whether the image of `key` is on disk (shipped samples always are).
func imageAvailable(_ key: String) -> Bool {
    FileManager.default.fileExists(atPath: ReferenceDetections.imagePath(key))
}

@Suite(.enabled(if: TestPaths.hasWeights, "\(Skip.noWeights)"))
struct DetectionParityTests {
    /// `.scaleFit` is darknet's letterbox. PNG pixels are identical to the reference's, so confidence within
    /// 1e-3 and corners within 0.5 px; JPEG within 0.02 and 2 px, because JPEG decoders may differ slightly
    /// (we decode with libjpeg-turbo's default accurate integer IDCT, like OpenCV's bundled libjpeg-turbo).
    static func letterboxTolerance(png: Bool) -> ParityTolerance {
        png ? ParityTolerance(confidence: 1e-3, pixels: 0.5) : ParityTolerance(confidence: 0.02, pixels: 2)
    }

    @Test(arguments: ReferenceDetections.yolov3Tiny.keys(mode: "letterbox_dn", from: .samples))
    func letterboxMatchesDarknet(key: String) throws {
        try checkParity(key: key, scaling: .scaleFit, tolerance: DetectionParityTests.letterboxTolerance)
    }

    /// `.scaleFill` with OpenCV's resampling against OpenCV's `blobFromImage` stretch. We resize 8-bit pixels bit for bit as OpenCV's
    /// INTER_LINEAR does (Image.resizedOpenCVLinear), so the network input is the reference's and the same
    /// tolerances as letterbox apply: PNG 1e-3 / 0.5 px; JPEG 0.02 / 2 px for decoder differences.
    @Test(arguments: ReferenceDetections.yolov3Tiny.keys(mode: "stretch", from: .samples))
    func stretchMatchesOpenCV(key: String) throws {
        try checkParity(key: key, scaling: .scaleFill, resampling: .openCV, tolerance: DetectionParityTests.letterboxTolerance)
    }

    /// Both modes on the ../shared images (photos, COCO), as above.
    @Test(.enabled(if: TestPaths.hasShared, "\(Skip.noShared)"),
          arguments: ["letterbox_dn", "stretch"].flatMap { ReferenceDetections.yolov3Tiny.keys(mode: $0, from: .shared) })
    func sharedImagesMatchTheReference(key: String) throws {
        let stretch = key.contains("/stretch/")
        try checkParity(key: key, scaling: stretch ? .scaleFill : .scaleFit, resampling: stretch ? .openCV : .darknet,
                        tolerance: DetectionParityTests.letterboxTolerance)
    }
}
