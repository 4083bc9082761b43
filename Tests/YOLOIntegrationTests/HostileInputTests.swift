import Foundation
import Testing
@_spi(Engine) @testable import YOLO
import YOLOTestSupport

/// The hostile inputs through the `yolo` binary: one `yolo: error:` line and status 1, or a normal run where the
/// input is legitimate (the library's side: the unit tests' HostileInputTests.swift).
@Suite struct HostileInputTests {
    static let folder = TestPaths.fixtures + "/hostile"

    /// The cfg reproducers through `yolo info`: one line, the library's error.
    @Test(arguments: ["cfg_106_info_crash", "cfg_112_info_crash", "cfg_116_info_crash", "cfg_146_info_crash", "cfg_18_info_crash",
                      "cfg_20_info_crash", "cfg_2_info_crash", "cfg_50_info_crash", "cfg_6_info_crash", "cfg_80_info_crash"])
    func overflowingConfigsThroughInfo(name: String) throws {
        let path = Self.folder + "/\(name).cfg"
        let error = try #require(#expect(throws: YOLOError.self) { try ModelDescription(cfgPath: path) })
        let result = try runYOLO(["info", path])
        #expect(result.status == 1)
        #expect(result.stderr == "yolo: error: \(error)\n")
    }

    /// `yolo detect --size 8192x8192` with yolov3-tiny stops with one line naming the budget.
    @Test(.enabled(if: TestPaths.hasWeights, "\(Skip.noWeights)")) func largeInputIsRefusedByDetect() throws {
        let result = try runYOLOFloat(["detect", "--size", "8192x8192", TestPaths.root + "/Samples/coffee.png"])
        #expect(result.status == 1)
        #expect(result.stderr.split(separator: "\n").count == 1 && result.stderr.contains("more than the budget of 4.0 GiB"), "\(result.stderr)")
    }

    /// The same weights file with yolov3-tiny's cfg through `yolo detect`: one line naming the file.
    @Test(.enabled(if: TestPaths.hasWeights, "\(Skip.noWeights)")) func weightsHeaderOverflowThroughDetect() throws {
        let path = Self.folder + "/weights_header_overflow.weights"
        let result = try runYOLO(["detect", "--cfg", TestPaths.cfg, "--weights", path, TestPaths.root + "/Samples/coffee.png"])
        #expect(result.status == 1 && result.stderr.hasPrefix("yolo: error: \(path): "), "\(result.stderr)")
    }

    /// The one-channel model through `yolo detect`, from the cfg and from the converted file.
    @Test func oneChannelModelRunsThroughDetect() throws {
        let cfg = Self.folder + "/min_ch1.cfg", weights = Self.folder + "/min_ch1.weights"
        for arguments in [["--cfg", cfg, "--weights", weights], ["--model", Self.folder + "/min_ch1.yolo"]] {
            let result = try runYOLO(["detect"] + arguments + [TestPaths.root + "/Samples/coffee.png"])
            #expect(result.status == 0, "\(result.stderr)")
        }
    }

    /// `yolo info /dev/zero` reads up to the limit and stops with one line.
    @Test func endlessUnsizedFilesAreRefusedByInfo() throws {
        let result = try runYOLO(["info", "/dev/zero"])
        #expect(result.status == 1)
        #expect(result.stderr.split(separator: "\n").count == 1 && result.stderr.contains("/dev/zero") && result.stderr.contains("reports no size"),
                "stderr: \(result.stderr)")
    }

    /// Ctrl-C while `detect --save` writes a large PNG removes the temporary file and exits 130.
    @Test(.enabled(if: TestPaths.hasWeights, "\(Skip.noWeights)")) func interruptedSaveLeavesNothing() throws {
        let folder = TestPaths.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var random = SeededRandom(seed: 7)
        let (width, height) = (6000, 4000)
        let pixels = (0..<width * height * 3).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        try Image(width: width, height: height, pixels: pixels).write(to: folder + "/noise.png")
        let out = folder + "/out"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: TestPaths.yoloBinary)
        process.arguments = ["detect", "--cfg", TestPaths.cfg, "--weights", TestPaths.weights, "--save", out, folder + "/noise.png"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        var sawTemporary = false
        while process.isRunning {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: out)) ?? []
            if names.contains(where: { $0.hasSuffix(".tmp") }) {
                sawTemporary = true
                process.interrupt()
                break
            }
            usleep(2_000)
        }
        process.waitUntilExit()
        try #require(sawTemporary, "the write finished before it could be interrupted")
        #expect(process.terminationStatus == 130)
        #expect(try FileManager.default.contentsOfDirectory(atPath: out).isEmpty)
    }

    /// Flags that were silently accepted or gave misleading messages.
    @Test(.enabled(if: TestPaths.hasWeights, "\(Skip.noWeights)")) func misleadingFlags() throws {
        let image = TestPaths.root + "/Samples/coffee.png"
        let model = Self.folder + "/min_ch1.yolo"
        let darknet = ["--cfg", TestPaths.cfg, "--weights", TestPaths.weights]
        let cases: [([String], String)] = [
            (["detect", "--classes", "", image] + darknet, "--classes needs at least one class"),
            (["detect", "--classes", " , ", image] + darknet, "--classes needs at least one class"),
            (["detect", "--model", model, "--names", TestPaths.names, image], "--names applies to --cfg/--weights models"),
            (["detect", "--conf", "-5", image] + darknet, "--conf does not take negative values, got -5"),
            (["detect", "--threads", "-2", image] + darknet, "--threads does not take negative values, got -2"),
            (["detect", "--memory-budget", "lots", image] + darknet, "--memory-budget must be a positive size"),
            (["detect", "--memory-budget", "1M", image] + darknet, "more than the budget of 1.0 MiB"),
        ]
        for (arguments, fragment) in cases {
            let result = try runYOLO(arguments)
            #expect(result.status == 1, "\(arguments)")
            #expect(result.stderr.hasPrefix("yolo: error: ") && result.stderr.contains(fragment)
                    && result.stderr.split(separator: "\n").count == 1, "\(arguments): \(result.stderr)")
        }
    }

    /// `forward` on an image with a huge --size allocated the letterboxed input (120 GB) before any check;
    /// `convert --report` with a missing image wrote the model and then failed.
    @Test func forwardSizeAndConvertReport() throws {
        let folder = TestPaths.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let cfg = folder + "/tiny.cfg"
        try tinyCfg().write(toFile: cfg, atomically: true, encoding: .utf8)
        let weights = try writeWeights(for: parse(tinyCfg()), in: folder).path
        let image = TestPaths.root + "/Samples/coffee.png"
        let forward = try runYOLO(["forward", "--cfg", cfg, "--weights", weights, "--input", image, "--size", "100000x100000",
                                   "--out", folder + "/out"])
        #expect(forward.status == 1 && forward.stderr.contains("outside 1...8192"), "\(forward.stderr)")
        let model = folder + "/m.yolo"
        let convert = try runYOLO(["convert", "--cfg", cfg, "--weights", weights, "-o", model, "--report", folder + "/missing.png"])
        #expect(convert.status == 1 && convert.stderr.contains("missing.png: no such file"), "\(convert.stderr)")
        #expect(!FileManager.default.fileExists(atPath: model))
    }
}
