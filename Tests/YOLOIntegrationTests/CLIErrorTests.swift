import Foundation
import Testing
@_spi(Engine) @testable import YOLO
import YOLOTestSupport

/// Bad input through the `yolo` command: one line on stderr naming the file and the problem, exit status 1.
@Suite struct CLIErrorTests {
    /// Runs `yolo` and checks the failure contract.
    func expectFailure(_ arguments: [String], mentioning fragments: [String], environment: [String: String] = [:],
                       sourceLocation: SourceLocation = #_sourceLocation) throws {
        let result = try runYOLO(arguments, environment: environment)
        #expect(result.status == 1, "status \(result.status) for \(arguments)", sourceLocation: sourceLocation)
        let lines = result.stderr.split(whereSeparator: \.isNewline)
        #expect(lines.count == 1, "stderr: \(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stderr.hasPrefix("yolo: error: "), sourceLocation: sourceLocation)
        for fragment in fragments {
            #expect(result.stderr.contains(fragment), "stderr: \(result.stderr)", sourceLocation: sourceLocation)
        }
    }

    /// A tiny model on disk: cfg, matching weights, an input blob.
    struct TinyFiles {
        let folder = TestPaths.temporaryFolder()
        let cfg: String
        let weights: String
        let input: String
        init(cfgText: String = tinyCfg()) throws {
            cfg = folder + "/tiny.cfg"
            try cfgText.write(toFile: cfg, atomically: true, encoding: .utf8)
            let description = try parse(tinyCfg())
            weights = try writeWeights(for: description, in: folder).path
            input = folder + "/input.npy"
            try Tensor(zeros: Shape(channels: 3, height: 64, width: 64)).writeNumPy(input)
        }
    }

    @Test func forwardWritesHeads() throws {
        let files = try TinyFiles()
        let out = files.folder + "/out"
        let result = try runYOLO(["forward", "--cfg", files.cfg, "--weights", files.weights, "--input", files.input, "--out", out])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try Tensor.readNumPy(out + "/layer5.npy").shape == Shape(channels: 21, height: 16, width: 16))
        #expect(try Tensor.readNumPy(out + "/layer11.npy").shape == Shape(channels: 21, height: 32, width: 32))
    }

    @Test func missingFiles() throws {
        let files = try TinyFiles()
        try expectFailure(["info", files.folder + "/none.cfg"], mentioning: ["none.cfg: no such file"])
        try expectFailure(["forward", "--cfg", files.cfg, "--weights", files.folder + "/none.weights", "--input", files.input,
                           "--out", files.folder], mentioning: ["none.weights: no such file"])
        try expectFailure(["forward", "--cfg", files.cfg, "--weights", files.weights, "--input", files.folder + "/none.npy",
                           "--out", files.folder], mentioning: ["none.npy: no such file"])
    }

    @Test func truncatedAndOverlongWeights() throws {
        let files = try TinyFiles()
        let data = try Data(contentsOf: URL(fileURLWithPath: files.weights))
        let short = files.folder + "/short.weights", long = files.folder + "/long.weights"
        try data.dropLast(40).write(to: URL(fileURLWithPath: short))
        try (data + Data(count: 8)).write(to: URL(fileURLWithPath: long))
        try expectFailure(["forward", "--cfg", files.cfg, "--weights", short, "--input", files.input, "--out", files.folder],
                          mentioning: ["short.weights", "too short", "holds"])
        try expectFailure(["info", files.cfg, "--weights", long], mentioning: ["long.weights", "too long"])
    }

    @Test func badCfgs() throws {
        let unknown = try TinyFiles(cfgText: tinyCfg() + "\n[lstm]\noutput=3\n")
        try expectFailure(["info", unknown.cfg], mentioning: ["tiny.cfg:", "unsupported section [lstm]"])
        let route = try TinyFiles(cfgText: tinyCfg().replacingOccurrences(of: "layers = -3", with: "layers = 40"))
        try expectFailure(["info", route.cfg], mentioning: ["tiny.cfg:52:", "refers to layer 40"])
    }

    @Test func inputChannelsMustMatch() throws {
        let files = try TinyFiles()
        let gray = files.folder + "/gray.npy"
        try Tensor(zeros: Shape(channels: 1, height: 64, width: 64)).writeNumPy(gray)
        try expectFailure(["forward", "--cfg", files.cfg, "--weights", files.weights, "--input", gray, "--out", files.folder],
                          mentioning: ["expects 3 input channels", "has 1"])
    }

    /// A kernel family that is unknown is a one-line error naming it, through --kernel and YOLO_KERNEL.
    @Test func unknownKernelFamilies() throws {
        let files = try TinyFiles()
        let model = ["--cfg", files.cfg, "--weights", files.weights]
        try expectFailure(["bench"] + model + ["--kernel", "neon", "--runs", "1"], mentioning: ["--kernel", "unknown kernel family 'neon'"])
        try expectFailure(["info", files.cfg], mentioning: ["YOLO_KERNEL", "unknown kernel family 'fast'"],
                          environment: ["YOLO_KERNEL": "fast"])
    }

    /// A `YOLO_PIECES` that is not a piece count in range (zero, too many, a number past `Int`, text) is a one-line
    /// error naming the variable, before anything runs.
    @Test(arguments: ["0", "65", "9223372036854775807", "99999999999999999999", "four"])
    func badPieceCounts(value: String) throws {
        let files = try TinyFiles()
        try expectFailure(["info", files.cfg], mentioning: ["YOLO_PIECES \(value)", "an integer from 1 to 64"],
                          environment: ["YOLO_PIECES": value])
    }

    /// A kernel family that this CPU cannot run is a one-line error naming what is missing (never a crash:
    /// nothing compiled for that ISA runs), through --kernel and YOLO_KERNEL. Needs a CPU that lacks a family.
    @Test(.enabled(if: KernelFamily.all.contains { !$0.isSupported }, "this CPU runs every kernel family"))
    func unsupportedKernelFamilies() throws {
        let files = try TinyFiles()
        let model = ["--cfg", files.cfg, "--weights", files.weights]
        let name = try #require(KernelFamily.all.first { !$0.isSupported }).name.rawValue
        try expectFailure(["bench"] + model + ["--kernel", name, "--runs", "1"], mentioning: ["cannot run the \(name) kernel family", "missing: "])
        try expectFailure(["forward"] + model + ["--input", files.input, "--out", files.folder], mentioning: ["YOLO_KERNEL: this CPU cannot run the \(name)"],
                          environment: ["YOLO_KERNEL": name])
    }

    @Test func badFlags() throws {
        try expectFailure(["info", "--size", "abc"], mentioning: ["--size"])
        try expectFailure(["info", "--no-such-flag"], mentioning: ["--no-such-flag"])
        try expectFailure(["no-such-command"], mentioning: ["no-such-command"])
    }
}
