import Foundation
import Testing
@_spi(Engine) @testable import YOLO
import YOLOTestSupport

/// Eight different images from the shipped samples: the four originals and a mirrored crop of each.
func eightSampleImages() throws -> [Image] {
    let originals = try ["astronaut", "camera", "chelsea", "coffee"].map {
        try Image(contentsOf: TestPaths.root + "/Samples/\($0).png")
    }
    let variants = originals.map { image -> Image in
        let (w, h) = (image.width * 3 / 4, image.height * 3 / 4)
        var pixels = [UInt8](repeating: 0, count: w * h * 3)
        for y in 0..<h {
            for x in 0..<w {
                let s = ((y + image.height / 8) * image.width + (image.width - 1 - x)) * 3
                for c in 0..<3 { pixels[(y * w + x) * 3 + c] = image.pixels[s + c] }
            }
        }
        return Image(width: w, height: h, pixels: pixels)
    }
    return originals + variants
}

@Suite(.enabled(if: TestPaths.hasWeights, "\(Skip.noWeights)"))
struct DetectorTests {
    /// One detector serves eight threads at once and gives exactly the single-threaded results.
    @Test func concurrentCallsMatchSerialResults() throws {
        let detector = try Detector(model: try #require(TinyYOLO.model))
        let images = try eightSampleImages()
        let options = { var o = DetectionOptions(); o.confidenceThreshold = 0.1; return o }()
        let serial = try images.map { try detector.detect($0, options: options) }
        #expect(serial.contains { !$0.isEmpty })
        let results = ResultSlots(count: images.count)
        for _ in 0..<2 {
            DispatchQueue.concurrentPerform(iterations: images.count) { i in
                results.set(i, Result { try detector.detect(images[i], options: options) })
            }
            for i in images.indices {
                #expect(try results.get(i)?.get() == serial[i], "image \(i)")
            }
        }
    }

    @Test func optionsFilterAndLimit() throws {
        let detector = try Detector(model: try #require(TinyYOLO.model))
        let image = try Image(contentsOf: TestPaths.root + "/Samples/camera.png")
        var options = DetectionOptions()
        options.confidenceThreshold = 0.05
        let all = try detector.detect(image, options: options)
        #expect(all.count >= 3)
        #expect(zip(all, all.dropFirst()).allSatisfy { $0.confidence >= $1.confidence })
        #expect(all.allSatisfy { d in zip(d.labels, d.labels.dropFirst()).allSatisfy { $0.confidence >= $1.confidence } })
        options.maximumDetections = 2
        #expect(try detector.detect(image, options: options) == Array(all.prefix(2)))
        options.maximumDetections = nil
        options.classes = [.label("person")]
        let people = try detector.detect(image, options: options)
        #expect(!people.isEmpty && people.allSatisfy { $0.labels.allSatisfy { $0.label == "person" } })
        options.classes = [.label("no-such-class")]
        #expect(throws: YOLOError.self) { _ = try detector.detect(image, options: options) }
        options.classes = nil
        options.classAgnostic = true
        let agnostic = try detector.detect(image, options: options)
        #expect(agnostic.count <= all.count)
        for (i, a) in agnostic.enumerated() {
            for b in agnostic[(i + 1)...] { #expect(a.box.iou(b.box) <= Double(detector.model.preferredIoUThreshold) + 1e-6) }
        }
    }

    /// A region of interest sees only its pixels, and boxes come back in full-image coordinates:
    /// detecting in the right half of a side-by-side image finds the right image's objects where they are.
    @Test func regionOfInterestBoxesAreInFullImageCoordinates() throws {
        let detector = try Detector(model: try #require(TinyYOLO.model))
        let coffee = try Image(contentsOf: TestPaths.root + "/Samples/coffee.png")
        let (w, h) = (coffee.width * 2, coffee.height)
        var pixels = [UInt8](repeating: 40, count: w * h * 3)
        for y in 0..<h {
            for x in 0..<coffee.width { for c in 0..<3 { pixels[(y * w + coffee.width + x) * 3 + c] = coffee.pixels[(y * coffee.width + x) * 3 + c] } }
        }
        let wide = Image(width: w, height: h, pixels: pixels)
        let alone = try detector.detect(coffee)
        let cup = try #require(alone.first { $0.label == "cup" })
        var options = DetectionOptions()
        options.regionOfInterest = Rect(x: 0.5, y: 0, width: 0.5, height: 1)
        let found = try detector.detect(wide, options: options)
        let mapped = try #require(found.first { $0.label == "cup" })
        // Same pixels, same network input: the box is the original's, shifted into the right half.
        let expected = Rect(x: 0.5 + cup.box.x / 2, y: cup.box.y, width: cup.box.width / 2, height: cup.box.height)
        #expect(abs(mapped.box.minX - expected.minX) < 1e-9 && abs(mapped.box.maxX - expected.maxX) < 1e-9)
        #expect(abs(mapped.box.minY - expected.minY) < 1e-9 && abs(mapped.box.maxY - expected.maxY) < 1e-9)
        #expect(mapped.confidence == cup.confidence)
    }

    @Test func inputSizesAndConventions() throws {
        let detector = try Detector(model: try #require(TinyYOLO.model))
        let image = try Image(contentsOf: TestPaths.root + "/Samples/coffee.png")
        for size in [DetectionOptions.InputSize.fixed(width: 416, height: 256), .automatic(pixelBudget: 416 * 416), .fixed(width: 320, height: 320)] {
            var options = DetectionOptions()
            options.inputSize = size
            let cup = try detector.detect(image, options: options).first { $0.label == "cup" }
            #expect(cup != nil, "\(size)")
        }
        var bad = DetectionOptions()
        bad.inputSize = .fixed(width: 400, height: 416)
        #expect(throws: YOLOError.self) { _ = try detector.detect(image, options: bad) }
        let d = try #require(try detector.detect(image).first)
        let vision = d.visionBoundingBox
        #expect(abs(vision.minY - (1 - d.box.maxY)) < 1e-12 && vision.height == d.box.height)
        let pixels = d.pixelRect(width: 600, height: 400)
        #expect(abs(pixels.minX - d.box.minX * 600) < 1e-9)
    }
}

/// A fixed-size array of results written from many threads.
final class ResultSlots: @unchecked Sendable {
    private var values: [Result<[Detection], any Error>?]
    private let lock = NSLock()
    init(count: Int) { values = Array(repeating: nil, count: count) }
    func set(_ i: Int, _ value: Result<[Detection], any Error>) { lock.withLock { values[i] = value } }
    func get(_ i: Int) -> Result<[Detection], any Error>? { lock.withLock { values[i] } }
}
