import Foundation
import Testing
@_spi(Engine) import YOLO
import YOLOTestSupport

/// `yolo detect --files-from` and `--resume`: batch runs that can be split and continued.
@Suite(.serialized)
struct BatchCommandTests {
    /// 24 images: the four samples, six copies each under other names.
    static func imageList() throws -> (folder: String, paths: [String]) {
        let folder = TestPaths.temporaryFolder()
        var paths: [String] = []
        for copy in 1...6 {
            for name in ["astronaut", "camera", "chelsea", "coffee"] {
                let path = folder + "/\(name)-\(copy).png"
                try FileManager.default.copyItem(atPath: TestPaths.root + "/Samples/\(name).png", toPath: path)
                paths.append(path)
            }
        }
        return (folder, paths)
    }

    /// JSONL records without their timing (the one field that differs between runs).
    func records(_ text: String) throws -> [NSDictionary] {
        try text.split(separator: "\n").map { line in
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? NSDictionary)
            let copy = object.mutableCopy() as! NSMutableDictionary
            copy.removeObject(forKey: "time_ms")
            return copy
        }
    }

    func contents(_ path: String) -> String {
        guard let handle = FileHandle(forReadingAtPath: path) else { return "" }
        defer { try? handle.close() }
        return String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
    }

    @Test func filesFromListsEqualPositionalPaths() throws {
        let (folder, paths) = try Self.imageList()
        let subset = Array(paths.prefix(6))
        let direct = try runYOLO(["detect", "--format", "jsonl"] + subset)
        try (subset.joined(separator: "\n") + "\n").write(toFile: folder + "/list.txt", atomically: true, encoding: .utf8)
        try Data(subset.joined(separator: "\0").utf8).write(to: URL(fileURLWithPath: folder + "/list0"))
        let lines = try runYOLO(["detect", "--format", "jsonl", "--files-from", folder + "/list.txt"])
        let nul = try runYOLO(["detect", "--format", "jsonl", "--files-from", folder + "/list0", "-0"])
        #expect(direct.status == 0 && lines.status == 0 && nul.status == 0, "\(lines.stderr) \(nul.stderr)")
        #expect(try records(direct.stdout).count == 6)
        #expect(try records(lines.stdout) == records(direct.stdout))
        #expect(try records(nul.stdout) == records(direct.stdout))
        let missing = try runYOLO(["detect", "--files-from", folder + "/nope.txt"])
        #expect(missing.status == 1 && missing.stderr.contains("nope.txt: no such file"))
    }

    @Test func anInterruptedRunResumedEqualsOneUninterruptedRun() throws {
        let (folder, paths) = try Self.imageList()
        try (paths.joined(separator: "\n") + "\n").write(toFile: folder + "/list.txt", atomically: true, encoding: .utf8)
        let whole = try runYOLO(["detect", "--files-from", folder + "/list.txt", "--format", "jsonl"])
        #expect(whole.status == 0)

        let out = folder + "/out.jsonl"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: TestPaths.yoloBinary)
        process.arguments = ["detect", "--files-from", folder + "/list.txt", "--resume", out]
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(120)
        while Date() < deadline, process.isRunning, contents(out).split(separator: "\n").count < 3 {
            Thread.sleep(forTimeInterval: 0.02)
        }
        process.interrupt()
        process.waitUntilExit()
        let partial = contents(out).split(separator: "\n").count
        #expect(process.terminationStatus == 130)
        #expect(partial >= 3 && partial < 24, "\(partial) images done before Ctrl-C")

        let resumed = try runYOLO(["detect", "--files-from", folder + "/list.txt", "--resume", out])
        #expect(resumed.status == 0 && resumed.stderr.contains("\(partial) image(s) already done"), "\(resumed.stderr)")
        #expect(try records(contents(out)) == records(whole.stdout))
    }

    @Test func aCutOffLastRecordIsRedoneAndAForeignFileIsLeftAlone() throws {
        let (folder, paths) = try Self.imageList()
        let three = Array(paths.prefix(3))
        let whole = try runYOLO(["detect", "--format", "jsonl"] + three)
        let lines = whole.stdout.split(separator: "\n")
        // Two records, then half of the third (a process killed while writing).
        let out = folder + "/out.jsonl"
        try (lines[0] + "\n" + lines[1] + "\n" + lines[2].prefix(40)).write(toFile: out, atomically: true, encoding: .utf8)
        let resumed = try runYOLO(["detect", "--resume", out] + three)
        #expect(resumed.status == 0)
        #expect(try records(contents(out)) == records(whole.stdout))

        let foreign = folder + "/notes.txt"
        try "my notes\nnot json\n".write(toFile: foreign, atomically: true, encoding: .utf8)
        let refused = try runYOLO(["detect", "--resume", foreign] + three)
        #expect(refused.status == 1 && refused.stderr.contains("notes.txt: line 1 is not a detection record"), "\(refused.stderr)")
        #expect(contents(foreign) == "my notes\nnot json\n")
    }
}
