import Foundation
import Testing
@_spi(Engine) @testable import YOLO
import YOLOTestSupport

/// What an app embedding the engine sees: errors, descriptions, and memory it can bound and release.
@Suite struct EmbedderTests {
    @Test func errorsAreLocalized() {
        let error: Error = YOLOError.invalidFile(path: "m.yolo", message: "checksum mismatch")
        #expect(error.localizedDescription == "m.yolo: checksum mismatch")
    }

    @Test func imagesDescribeThemselvesInOneLine() {
        let image = Image(width: 600, height: 400, pixels: [UInt8](repeating: 7, count: 600 * 400 * 3))
        #expect("\(image)" == "Image(600x400 RGB)")
        var dumped = ""
        dump(image, to: &dumped)
        #expect(dumped.split(separator: "\n").count < 12 && dumped.contains("pixelBytes: 720000"), "\(dumped)")
        let reduced = Image(width: 300, height: 200, pixels: [UInt8](repeating: 7, count: 300 * 200 * 3), sourceWidth: 600, sourceHeight: 400)
        #expect("\(reduced)" == "Image(300x200 RGB, decoded from 600x400)")
    }

    /// With automatic input sizes each aspect ratio builds a network; the cache keeps the most recently
    /// used `maximumCachedNetworks`, and `releaseCaches` drops them all. Results do not depend on eviction.
    @Test func networkCacheIsBounded() throws {
        let detector = try Detector(model: makeTestModel(), algorithm: .im2col, threading: Threading(threads: 1), maximumCachedNetworks: 2)
        var options = DetectionOptions()
        options.confidenceThreshold = 0.01
        options.inputSize = .automatic(pixelBudget: 64 * 64)
        var random = SeededRandom(seed: 3)
        let images = [(64, 64), (128, 32), (32, 128), (64, 64)].map { size in
            Image(width: size.0, height: size.1, pixels: (0..<size.0 * size.1 * 3).map { _ in UInt8(truncatingIfNeeded: random.next()) })
        }
        let first = try detector.detect(images[0], options: options)
        for image in images.dropFirst() { _ = try detector.detect(image, options: options) }
        let sizes = detector.cachedInputSizes
        #expect(sizes.count == 2)
        #expect(sizes.last.map { $0.width == 64 && $0.height == 64 } == true, "\(sizes)")
        #expect(try detector.detect(images[0], options: options) == first)
        detector.releaseCaches()
        #expect(detector.cachedInputSizes.isEmpty)
        #expect(try detector.detect(images[0], options: options) == first)
    }

    /// Options are checked by `detect` itself, not only by the command-line tool.
    @Test func optionsAreValidatedWhereUsed() throws {
        let detector = try Detector(model: makeTestModel(), threading: Threading(threads: 1))
        let image = Image(width: 32, height: 32, pixels: [UInt8](repeating: 100, count: 32 * 32 * 3))
        for edit in [{ (o: inout DetectionOptions) in o.confidenceThreshold = 1.5 }, { $0.iouThreshold = 0 },
                     { $0.maximumDetections = 0 }, { $0.maximumCandidates = 0 }, { $0.memoryBudget = 0 }, { $0.inputSize = .fixed(width: 8200, height: 64) }] {
            var options = DetectionOptions()
            edit(&options)
            #expect(throws: YOLOError.self) { try detector.detect(image, options: options) }
        }
    }
}
