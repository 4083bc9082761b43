#if canImport(Glibc)
import Glibc
#endif

/// Memory for the engine's large, long-lived buffers: weights, transformed Winograd filters and the
/// workspace arena. Blocks of at least `threshold` bytes start on a 2 MB boundary and are marked for
/// transparent huge pages (`madvise(MADV_HUGEPAGE)`; Debian's default THP mode is `madvise`, so
/// without the mark every buffer is mapped in 4 KB pages). A forward pass reads about 150 MB of
/// weights, more than the 4 KB-page TLB covers (8 MB), and stalled on page walks: yolov4-tiny at one thread on
/// Zen 3, interleaved, 55.2 → 52.5 ms with huge pages (docs/performance.md). Where huge pages are
/// unavailable the mark does nothing. Freed with `deallocate()` like any other allocation.
enum LargeAllocation {
    /// Blocks from this size on are aligned and marked (smaller ones would waste the alignment).
    static let threshold = 2 << 20
    static let hugePage = 2 << 20

    static func allocate(byteCount: Int, alignment: Int) -> UnsafeMutableRawPointer {
        guard byteCount >= threshold else { return .allocate(byteCount: max(byteCount, 1), alignment: alignment) }
        let memory = UnsafeMutableRawPointer.allocate(byteCount: byteCount, alignment: max(alignment, hugePage))
        #if os(Linux)
        _ = madvise(memory, byteCount / hugePage * hugePage, MADV_HUGEPAGE)
        #endif
        return memory
    }

    /// `allocate` for `count` values of `T`, bound to `T` (not initialized).
    static func allocate<T>(_: T.Type, count: Int) -> UnsafeMutablePointer<T> {
        allocate(byteCount: max(count, 1) * MemoryLayout<T>.stride, alignment: max(MemoryLayout<T>.alignment, 64))
            .bindMemory(to: T.self, capacity: max(count, 1))
    }
}
