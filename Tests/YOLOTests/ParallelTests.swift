import Testing
@_spi(Engine) @testable import YOLO

@Suite struct ParallelTests {
    @Test(arguments: [0, 1, 2, 7, 16, 1000], [1, 2, 3, 8])
    func everyIndexRunsExactlyOnce(count: Int, threads: Int) {
        let hits = UnsafeMutablePointer<Int>.allocate(capacity: max(count, 1))
        defer { hits.deallocate() }
        hits.initialize(repeating: 0, count: max(count, 1))
        Parallel.forEach(count, threads: threads) { hits[$0] += 1 }
        #expect((0..<count).allSatisfy { hits[$0] == 1 })
    }

    /// The worker pool's count of runnable threads (for its solo spells) reads /proc/loadavg on Linux: the
    /// test's own thread is running, so it is at least 1.
    @Test func runnableThreadsCountsTheCaller() throws {
        #if os(Linux)
        let runnable = try #require(WorkerPool.runnableThreads())
        #expect(runnable >= 1)
        #endif
    }

    @Test func partsAreContiguousAndBalanced() {
        for count in [0, 1, 5, 17, 100] {
            for workers in 1...6 {
                let parts = (0..<workers).map { Parallel.part($0, of: workers, count: count) }
                #expect(parts.first?.lowerBound == 0 && parts.last?.upperBound == count)
                #expect(zip(parts, parts.dropFirst()).allSatisfy { $0.upperBound == $1.lowerBound })
                let sizes = parts.map(\.count)
                #expect(sizes.max()! - sizes.min()! <= 1)
            }
        }
    }

    @Test func alignedPartsKeepGroupsWhole() {
        for count in [1, 15, 16, 17, 100, 173] {
            for workers in 1...4 {
                let parts = (0..<workers).map { Parallel.alignedPart($0, of: workers, count: count, alignment: 16) }
                #expect(parts.first?.lowerBound == 0 && parts.last?.upperBound == count)
                #expect(zip(parts, parts.dropFirst()).allSatisfy { $0.upperBound == $1.lowerBound })
                #expect(parts.dropLast().allSatisfy { $0.upperBound % 16 == 0 || $0.upperBound == count })
            }
        }
    }
}
