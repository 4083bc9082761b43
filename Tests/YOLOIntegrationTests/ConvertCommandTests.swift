import Foundation
import Testing
@_spi(Engine) @testable import YOLO
import YOLOTestSupport

/// `yolo convert`, `yolo info FILE.yolo`, `yolo compare` and `--model` through the built binary.
@Suite struct ConvertCommandTests {
    /// The storage byte of each tensor record in the model file at `path`, which encodes `model`: the records
    /// follow the description and the labels (ModelFile+Writer.swift's `metadata`), the storage byte after the
    /// record's layer index.
    static func storageBytes(ofFile path: String, model: Model) throws -> [UInt8] {
        var writer = ByteWriter()
        writer.description(model.description)
        writer.count(model.labels.count)
        model.labels.forEach { writer.string($0) }
        let records = ModelFile.headerSize + writer.bytes.count + 4, bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let count = model.description.layers.filter { if case .convolution = $0 { return true }; return false }.count
        return (0..<count).map { bytes[records + $0 * ModelFile.tensorRecordSize + 4] }
    }

    @Test func convertsDeterministicallyAndOtherCommandsReadTheFile() throws {
        let files = try CLIErrorTests.TinyFiles()
        let a = files.folder + "/a.yolo", b = files.folder + "/b.yolo", float = files.folder + "/float.yolo"
        for (path, quantize) in [(a, "lut6"), (b, "lut6"), (float, "none")] {
            let result = try runYOLO(["convert", "--cfg", files.cfg, "--weights", files.weights, "-o", path, "--quantize", quantize, "--lut8-layers", "none"])
            #expect(result.status == 0, "\(result.stderr)")
        }
        #expect(FileManager.default.contents(atPath: a) == FileManager.default.contents(atPath: b))
        let info = try runYOLO(["info", a])
        #expect(info.status == 0 && info.stdout.contains("lut6 per-channel") && info.stdout.contains("f32"), "\(info.stdout)")
        let forward = try runYOLO(["forward", "--model", a, "--residency", "codes", "--input", files.input, "--out", files.folder + "/out"])
        #expect(forward.status == 0, "\(forward.stderr)")
        let compare = try runYOLO(["compare", float, a, files.input])
        #expect(compare.status == 0 && compare.stdout.contains("raw heads over 1 inputs"), "\(compare.stdout)\(compare.stderr)")
    }

    /// `--codes plain` writes storage 1 (plain codes), the default storage 2 (deflated codes): the same
    /// codes either way; another value is a one-line error.
    @Test func codesFlagChoosesTheCodeStorage() throws {
        let files = try CLIErrorTests.TinyFiles()
        let deflated = files.folder + "/deflated.yolo", plain = files.folder + "/plain.yolo"
        for (path, codes) in [(deflated, ["--codes", "deflate"]), (plain, ["--codes", "plain"])] {
            let result = try runYOLO(["convert", "--cfg", files.cfg, "--weights", files.weights, "-o", path, "--quantize", "lut8"] + codes)
            #expect(result.status == 0, "\(result.stderr)")
        }
        let a = try Model(contentsOf: deflated, residency: .codes), b = try Model(contentsOf: plain, residency: .codes)
        #expect(try Self.storageBytes(ofFile: deflated, model: a) == [0, 2, 2, 2])
        #expect(try Self.storageBytes(ofFile: plain, model: b) == [0, 1, 1, 1])
        #expect(ModelFile.encode(a) == ModelFile.encode(b))
        try CLIErrorTests().expectFailure(["convert", "--cfg", files.cfg, "--weights", files.weights, "-o", files.folder + "/x.yolo",
                                           "--codes", "zip"], mentioning: ["--codes", "zip"])
    }

    @Test func badFlagsAndFilesAreOneLineErrors() throws {
        let files = try CLIErrorTests.TinyFiles()
        let out = files.folder + "/x.yolo"
        try CLIErrorTests().expectFailure(["convert", "--cfg", files.cfg, "--weights", files.weights, "-o", out, "--quantize", "lut5"],
                                          mentioning: ["--quantize", "lut5"])
        try CLIErrorTests().expectFailure(["convert", "--cfg", files.cfg, "--weights", files.weights, "-o", out, "--keep-float", "middle"],
                                          mentioning: ["middle"])
        try CLIErrorTests().expectFailure(["convert", "--cfg", files.cfg, "--weights", files.weights, "-o", out, "--lut6-layers", "middle"],
                                          mentioning: ["middle"])
        try CLIErrorTests().expectFailure(["convert", "--cfg", files.cfg, "--weights", files.weights, "-o", out,
                                           "--calibration-views", "mirror,600"], mentioning: ["--calibration-views", "600"])
        try CLIErrorTests().expectFailure(["convert", "--cfg", files.cfg, "--weights", files.weights, "-o", out, "--quantize", "int8",
                                           "--activation-range", "wide"], mentioning: ["--activation-range", "wide"])
        #expect(!FileManager.default.fileExists(atPath: out))
        try Data([0x89, 0x59, 0x4F, 0x4C, 0x4F, 0x0D, 0x0A, 0x1A, 1, 0]).write(to: URL(fileURLWithPath: out))
        try CLIErrorTests().expectFailure(["info", out], mentioning: [out, "truncated"])
        try CLIErrorTests().expectFailure(["compare", out, files.folder + "/missing.yolo"], mentioning: [out])
    }
}
