import Foundation
import Testing
@_spi(Engine) @testable import YOLO
import YOLOTestSupport

/// `yolo detect` end to end: formats, folders, failures that do not stop the others, annotated copies.
@Suite(.enabled(if: TestPaths.hasWeights, "\(Skip.noWeights)"))
struct DetectCommandTests {
    let samples = TestPaths.root + "/Samples"

    @Test func jsonLinesCarryTheBoxesInOriginalPixels() throws {
        let result = try runYOLOFloat(["detect", "--format", "jsonl", samples + "/coffee.png", samples + "/camera.png"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 2)
        let first = try #require(try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
        #expect(first["image"] as? String == samples + "/coffee.png")
        #expect(first["width"] as? Int == 600 && first["height"] as? Int == 400)
        let detections = try #require(first["detections"] as? [[String: Any]])
        let cup = try #require(detections.first)
        #expect(cup["label"] as? String == "cup" && cup["classIndex"] as? Int == 41)
        // The reference (OpenCV DNN on darknet's letterbox) has the cup at 151.125, 23.249, 427.858, 306.963.
        let box = try #require(cup["box"] as? [Double])
        for (ours, reference) in zip(box, [151.125, 23.249, 427.858, 306.963]) { #expect(abs(ours - reference) < 0.01) }
        #expect(abs((cup["confidence"] as? Double ?? 0) - 0.640438) < 1e-3)
        #expect((cup["labels"] as? [[String: Any]])?.first?["label"] as? String == "cup")
    }

    @Test func jsonIsOneArrayAndTextIsDarknetLike() throws {
        let json = try runYOLOFloat(["detect", "--format", "json", samples])
        #expect(json.status == 0)
        let array = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        #expect(array.map { ($0["image"] as? String).map { URL(fileURLWithPath: $0).lastPathComponent } }
                == ["astronaut.png", "camera.png", "chelsea.png", "coffee.png"])
        let text = try runYOLOFloat(["detect", samples + "/coffee.png"])
        #expect(text.stdout.contains("cup: 64%  151,23 427,306"), "\(text.stdout)")
    }

    @Test func badFilesAreReportedAndTheRestProcessed() throws {
        let folder = TestPaths.temporaryFolder()
        try Data("not an image".utf8).write(to: URL(fileURLWithPath: folder + "/broken.jpg"))
        let result = try runYOLOFloat(["detect", "--format", "jsonl", folder + "/broken.jpg", samples + "/coffee.png", folder + "/missing.png"])
        #expect(result.status == 1)
        #expect(result.stdout.split(separator: "\n").count == 1)
        #expect(result.stderr.contains("broken.jpg: not a JPEG or PNG image"))
        #expect(result.stderr.contains("missing.png: no such file"))
    }

    @Test func saveWritesAnnotatedCopiesInTheInputFormat() throws {
        let out = TestPaths.temporaryFolder() + "/annotated"
        let jpeg = TestPaths.temporaryFolder() + "/coffee.jpg", twin = TestPaths.temporaryFolder() + "/coffee.png"
        try Image(contentsOf: samples + "/coffee.png").write(to: jpeg)
        try FileManager.default.copyItem(atPath: samples + "/coffee.png", toPath: twin)
        let result = try runYOLOFloat(["detect", "--save", out, samples + "/coffee.png", jpeg, twin])
        #expect(result.status == 0, "\(result.stderr)")
        let files = try FileManager.default.contentsOfDirectory(atPath: out).sorted()
        #expect(files == ["coffee-2.png", "coffee.jpg", "coffee.png"])
        let original = try Image(contentsOf: samples + "/coffee.png")
        let annotated = try Image(contentsOf: out + "/coffee.png")
        #expect(annotated.width == original.width && annotated.height == original.height)
        #expect(annotated.pixels != original.pixels)
        // The box outline is drawn at the cup's left edge (x ≈ 151), in the class colour.
        let color = Image.classColor(index: 41, count: 80)
        #expect(annotated[151, 150].r == color.r && annotated[151, 150].g == color.g && annotated[151, 150].b == color.b)
        #expect(try Image(contentsOf: out + "/coffee.jpg").width == 600)
        #expect(try Image(contentsOf: out + "/coffee-2.png") == annotated)
    }

    @Test func flagsAreValidated() throws {
        for arguments in [["--conf", "1.5"], ["--scale", "zoom"], ["--roi", "0,0,2"], ["--size", "400x416"],
                          ["--classes", "unicorn"], ["--max-det", "0"], ["--format", "xml"], ["--algorithm", "fast"],
                          ["--residency", "tiny"]] {
            let result = try runYOLOFloat(["detect"] + arguments + [samples + "/coffee.png"])
            #expect(result.status == 1, "\(arguments): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(arguments): \(result.stderr)")
        }
        let none = try runYOLOFloat(["detect"])
        #expect(none.status == 1)
    }

    @Test func optionsChangeWhatIsFed() throws {
        let fill = try runYOLOFloat(["detect", "--scale", "fill", "--size", "auto", "--classes", "cup", "--agnostic", "--max-det", "1",
                                "--threads", "1", samples + "/coffee.png"])
        #expect(fill.status == 0, "\(fill.stderr)")
        #expect(fill.stdout.contains("cup: "))
        let roi = try runYOLOFloat(["detect", "--roi", "0,0,0.2,0.2", samples + "/coffee.png"])
        #expect(roi.status == 0 && roi.stdout.contains("0 objects"), "\(roi.stdout)")
    }
}
