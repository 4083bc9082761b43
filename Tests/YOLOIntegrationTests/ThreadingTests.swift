import Foundation
import Testing
@_spi(Engine) @testable import YOLO
import YOLOTestSupport

/// The default thread count of the `yolo` binary under a CPU mask (the settings: the unit tests' ThreadingTests.swift).
@Suite struct ThreadingTests {
    /// Under `taskset -c 0` the default is one thread (checked in a child process, whose mask taskset sets).
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/taskset"), "needs taskset"),
          .enabled(if: TestPaths.hasWeights, "\(Skip.noWeights)"))
    func oneAllowedCPUGivesOneThread() throws {
        let arguments = ["bench", "--cfg", TestPaths.cfg, "--weights", TestPaths.weights, "--runs", "1", "--warmup", "0",
                         "--format", "csv"]
        let result = try runYOLO(arguments, prefix: ["/usr/bin/taskset", "-c", "0"])
        #expect(result.status == 0, "\(result.stderr)")
        let counts = result.stdout.split(separator: "\n").dropFirst().map { $0.split(separator: ",").first.map(String.init) }
        #expect(counts == ["1"], "\(result.stdout)")
    }
}
