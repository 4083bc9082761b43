import Foundation
import CMallocInfo
import XCTest
@_spi(Engine) @testable import YOLO

/// The second forward pass allocates nothing: heap bytes in use (glibc `mallinfo2`) do not grow.
///
/// Written with XCTest on purpose: `swift test` runs XCTest cases one at a time before the
/// (parallel) Swift Testing cases, so no other test allocates while this one measures.
final class WorkspaceAllocationTests: XCTestCase {
    /// With two worker threads (the persistent `WorkerPool`), heap bytes in use do not change either.
    func testThreadedPassesDoNotGrowTheHeap() throws {
        let description = try parse(tinyCfg())
        let (path, _) = try writeWeights(for: description, in: TestPaths.temporaryFolder())
        let model = Model(description: description, convolutions: try DarknetWeights.load(path, for: description), labels: [])
        let network = try Network(model: model)
        let workspace = Workspace(for: network, threads: 2)
        var input = [Float](repeating: 0.5, count: network.inputShape.count)
        input.withUnsafeMutableBufferPointer { buffer in
            for _ in 0..<20 { network.forward(buffer.baseAddress!, workspace: workspace) }
            let before = mallinfo2()
            for _ in 0..<20 { network.forward(buffer.baseAddress!, workspace: workspace) }
            let after = mallinfo2()
            print("threaded passes: heap bytes in use \(before.uordblks) -> \(after.uordblks)")
            XCTAssertEqual(after.uordblks, before.uordblks, "heap changed during threaded forward passes")
        }
    }


    func testSecondForwardPassAllocatesNothing() throws {
        let description = try parse(tinyCfg())
        let (path, _) = try writeWeights(for: description, in: TestPaths.temporaryFolder())
        let model = Model(description: description, convolutions: try DarknetWeights.load(path, for: description), labels: [])
        let network = try Network(model: model)
        let workspace = Workspace(for: network, threads: 1)
        var input = [Float](repeating: 0.5, count: network.inputShape.count)
        input.withUnsafeMutableBufferPointer { buffer in
            network.forward(buffer.baseAddress!, workspace: workspace)  // first pass: BLAS may set up buffers
            network.forward(buffer.baseAddress!, workspace: workspace)
            let before = mallinfo2()
            for _ in 0..<3 { network.forward(buffer.baseAddress!, workspace: workspace) }
            let after = mallinfo2()
            XCTAssertEqual(after.uordblks, before.uordblks, "bytes in use changed during forward passes")
            XCTAssertEqual(after.hblkhd, before.hblkhd, "mmapped bytes changed during forward passes")
        }
    }
}
