import Foundation
import Testing
@_spi(Engine) @testable import YOLO
import YOLOTestSupport

/// What the `yolo` binary says about kernel families (the families themselves: the unit tests' KernelFamilyTests.swift).
@Suite struct KernelFamilyTests {
    /// `yolo info --kernels` (what `make test` loops over) lists exactly the families this CPU runs, best first.
    @Test func infoListsTheRunnableFamilies() throws {
        let result = try runYOLO(["info", "--kernels"], environment: ["YOLO_KERNEL": "portable"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let listed = result.stdout.split(whereSeparator: \.isNewline).map(String.init)
        #expect(listed == KernelFamily.runnable.map(\.name.rawValue))
        #expect(Set(listed) == Set(KernelFamily.all.filter { $0.isSupported }.map(\.name.rawValue)))
        #expect(listed.first == KernelFamily.best().name.rawValue && listed.last == "portable")
    }
}
