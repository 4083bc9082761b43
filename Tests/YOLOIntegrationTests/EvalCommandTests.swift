import Foundation
import Testing
@_spi(Engine) @testable import YOLO
@_spi(Engine) @testable import YOLOEvaluation
import YOLOTestSupport

/// `yolo eval` end to end, through the built executable.
@Suite struct EvalCommandTests {
    static let crowd = (annotations: EvalFixtures.folder + "/crowd.annotations.json", results: EvalFixtures.folder + "/crowd.results.json")

    @Test func printsThePycocotoolsLayout() throws {
        let run = try runYOLO(["eval", "--annotations", Self.crowd.annotations, "--results", Self.crowd.results])
        #expect(run.status == 0, "\(run.stderr)")
        let expected = try #require(try EvalFixtures.expected("crowd.expected.json").summary)
        #expect(run.stdout.contains(expected))
    }

    @Test func jsonGivesEveryFigureAtFullPrecision() throws {
        let run = try runYOLO(["eval", "--annotations", Self.crowd.annotations, "--results", Self.crowd.results,
                               "--format", "json", "--per-class"])
        #expect(run.status == 0, "\(run.stderr)")
        // JSONDecoder, not JSONSerialization: the latter does not read every double back exactly on Linux.
        struct Output: Decodable {
            struct Row: Decodable { var id: Int; var AP: Double; var AP50: Double }
            var stats: [Double]
            var AP: Double
            var perClass: [Row]
        }
        let output = try JSONDecoder().decode(Output.self, from: Data(run.stdout.utf8))
        let expected = try EvalFixtures.expected("crowd.expected.json")
        #expect(output.stats == expected.stats)
        #expect(output.AP == expected.stats[0])
        #expect(output.perClass.map(\.id) == [1])
        #expect(output.perClass.first?.AP == expected.perClass?["1"]?.ap)
    }

    @Test func unknownImagesAreSkippedWithAWarning() throws {
        let folder = EvalFixtures.temporaryFolder()
        var results = try COCOResults.load(Self.crowd.results)
        results.append(COCOResult(imageID: 12345, categoryID: 1, bbox: COCOBox(x: 0, y: 0, width: 5, height: 5), score: 0.3))
        try COCOResults.write(results, to: folder + "/r.json")
        let run = try runYOLO(["eval", "--annotations", Self.crowd.annotations, "--results", folder + "/r.json"])
        #expect(run.status == 0)
        #expect(run.stderr.contains("1 results for image ids not in the annotations were skipped"))
        #expect(run.stdout.contains("8 of 9 results scored"))
    }

    @Test func badInputIsOneLineAndStatusOne() throws {
        let folder = EvalFixtures.temporaryFolder()
        try Data(#"[{"image_id": 1, "category_id": 1, "bbox": [0, 0, 1], "score": 0.5}]"#.utf8).write(to: URL(fileURLWithPath: folder + "/r.json"))
        for arguments in [["--annotations", Self.crowd.annotations, "--results", folder + "/r.json"],
                          ["--annotations", folder + "/missing.json", "--results", Self.crowd.results],
                          ["--annotations", Self.crowd.annotations]] {
            let run = try runYOLO(["eval"] + arguments)
            #expect(run.status == 1, "\(arguments)")
            #expect(run.stderr.hasPrefix("yolo: error: "), "\(run.stderr)")
            #expect(run.stderr.split(separator: "\n").count == 1, "\(run.stderr)")
        }
    }

    /// A model run takes minutes, so paths that cannot work stop it before the model is loaded, with the
    /// path named (not one "skipped" warning per image, nor a failure to write after the whole run).
    @Test func unusableImageFolderOrResultsPathFailsBeforeTheRun() throws {
        let folder = EvalFixtures.temporaryFolder()
        try Data("x".utf8).write(to: URL(fileURLWithPath: folder + "/file"))
        let cases: [(arguments: [String], names: String)] = [
            (["--images", folder + "/no-such-folder"], folder + "/no-such-folder"),
            (["--images", folder + "/file"], folder + "/file"),
            (["--images", folder, "--results", folder + "/missing/out.json"], folder + "/missing"),
            // A folder as the results file (fuzz-mutate's cli-0217: "." trapped in Foundation's
            // deletingLastPathComponent, as do "./" and "x").
            (["--images", folder, "--results", folder], folder),
            (["--images", folder, "--results", "."], "--results ."),
        ]
        for (arguments, names) in cases {
            let run = try runYOLO(["eval", "--annotations", Self.crowd.annotations] + arguments)
            #expect(run.status == 1, "\(arguments)")
            #expect(run.stderr.hasPrefix("yolo: error: ") && run.stderr.contains(names), "\(run.stderr)")
            #expect(run.stderr.split(separator: "\n").count == 1, "\(run.stderr)")
        }
    }
}
