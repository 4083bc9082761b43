import Foundation
import CMallocInfo
import XCTest
@_spi(Engine) @testable import YOLO
import YOLOTestSupport

/// The second forward pass allocates nothing: heap bytes in use (glibc `mallinfo2`) do not grow.
///
/// Written with XCTest on purpose: `swift test` runs XCTest cases one at a time before the
/// (parallel) Swift Testing cases, so no other test allocates while this one measures.
///
/// `mallinfo2` sums every arena, so it also counts the test process's own dispatch threads (three run
/// beside these tests: `user-initiated-qos` and an overcommit thread, not ours), which now and then
/// allocate while a window is open: 1 run in 40 with both cores busy, and one CI run (+48 bytes). Each
/// test therefore measures up to five windows and needs one with no change. A pass that allocates
/// and keeps the memory grows the heap in every window and still fails (checked by leaking 16 bytes per
/// threaded pass: +512 to +768 bytes in each of the five windows).
final class WorkspaceAllocationTests: XCTestCase {
    /// Heap bytes in use (and mmapped bytes) before and after `passes`, in up to `windows` windows;
    /// stops at the first window with no change.
    private func heapChanges(windows: Int = 5, _ passes: () -> Void) -> [(used: Int, mapped: Int)] {
        var changes: [(used: Int, mapped: Int)] = []
        changes.reserveCapacity(windows)
        for _ in 0..<windows {
            let before = mallinfo2()
            passes()
            let after = mallinfo2()
            changes.append((Int(after.uordblks) - Int(before.uordblks), Int(after.hblkhd) - Int(before.hblkhd)))
            if changes.last! == (0, 0) { break }
        }
        return changes
    }

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
            let changes = heapChanges { for _ in 0..<20 { network.forward(buffer.baseAddress!, workspace: workspace) } }
            print("threaded passes: heap bytes in use changed by \(changes.map(\.used)) in \(changes.count) windows")
            XCTAssertEqual(changes.last!.used, 0, "heap changed during threaded forward passes in every window: \(changes)")
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
            let changes = heapChanges { for _ in 0..<3 { network.forward(buffer.baseAddress!, workspace: workspace) } }
            print("one-thread passes: heap bytes in use changed by \(changes.map(\.used)) in \(changes.count) windows")
            XCTAssertTrue(changes.last! == (0, 0), "heap (bytes in use, mmapped) changed during forward passes in every window: \(changes)")
        }
    }
}
