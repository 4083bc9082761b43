import Foundation
import Synchronization
import Testing
@_spi(Engine) @testable import YOLO
import YOLOTestSupport

/// The bounds on what a `Detector` holds beyond its model (`DetectorMemory`): concurrent passes, networks,
/// and bytes of networks and scratch together.
@Suite struct DetectorMemoryTests {
    /// Random images of the given sizes.
    static func images(_ sizes: [(Int, Int)], seed: UInt64 = 5) -> [Image] {
        var random = SeededRandom(seed: seed)
        return sizes.map { size in
            Image(width: size.0, height: size.1, pixels: (0..<size.0 * size.1 * 3).map { _ in UInt8(truncatingIfNeeded: random.next()) })
        }
    }

    static func options(side: Int) -> DetectionOptions {
        var options = DetectionOptions()
        options.confidenceThreshold = 0.01
        options.inputSize = .fixed(width: side, height: side)
        return options
    }

    /// Bytes one size needs alone: its network's own memory and one scratch.
    static func need(_ detector: Detector, side: Int) throws -> Int {
        let network = try detector.network(width: side, height: side)
        return network.ownedBytes + DetectorMemory.scratchBytes(network)
    }

    /// With a limit that holds the largest size alone but not every size at once, each call still gets
    /// through, the detector never holds more than the limit, and results equal an unbounded detector's.
    @Test func heldMemoryStaysWithinTheLimit() throws {
        let model = try makeTestModel()
        let sides = [32, 64, 96, 64, 32]
        let unbounded = try Detector(model: model, algorithm: .auto, threading: Threading(threads: 1))
        let expected = try sides.map { try unbounded.detect(Self.images([(40, 32)])[0], options: Self.options(side: $0)) }
        let largest = try Self.need(unbounded, side: 96)
        let all = try [32, 64, 96].reduce(0) { $0 + (try Self.need(unbounded, side: $1)) }
        #expect(largest < all)
        let bounded = try Detector(model: model, algorithm: .auto, threading: Threading(threads: 1), memoryLimit: largest)
        for (side, want) in zip(sides, expected) {
            #expect(try bounded.detect(Self.images([(40, 32)])[0], options: Self.options(side: side)) == want)
            #expect(bounded.heldMemory <= largest)
        }
        #expect(bounded.heldMemory > 0)
    }

    /// A size whose network and scratch alone exceed the limit fails with a message that says so; the
    /// detector goes on serving sizes that fit.
    @Test func aSizeBeyondTheLimitThrows() throws {
        let model = try makeTestModel()
        let probe = try Detector(model: model, threading: Threading(threads: 1))
        let limit = try Self.need(probe, side: 64)
        let detector = try Detector(model: model, threading: Threading(threads: 1), memoryLimit: limit)
        let image = Self.images([(40, 32)])[0]
        #expect {
            try detector.detect(image, options: Self.options(side: 320))
        } throws: { error in
            "\(error)".contains("320x320") && "\(error)".contains("memory limit")
        }
        #expect(try detector.detect(image, options: Self.options(side: 64)) == (try probe.detect(image, options: Self.options(side: 64))))
        #expect(throws: YOLOError.self) { try Detector(model: model, memoryLimit: 0) }
    }

    /// Concurrent calls beyond what the limit holds wait for running ones rather than failing or passing it;
    /// at most `maximumConcurrentPasses` run at once.
    @Test func concurrentCallsWaitForMemory() throws {
        let model = try makeTestModel()
        let probe = try Detector(model: model, threading: Threading(threads: 1))
        let one = try Self.need(probe, side: 64)
        let network = try probe.network(width: 64, height: 64)
        // Room for the network and two scratches, not three.
        let limit = one + DetectorMemory.scratchBytes(network)
        var threading = Threading(threads: 1)
        threading.maximumConcurrentPasses = 4
        let detector = try Detector(model: model, threading: threading, memoryLimit: limit)
        let image = Self.images([(40, 32)])[0]
        let expected = try probe.detect(image, options: Self.options(side: 64))
        let failures = Atomic<Int>(0), most = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            do {
                let result = try detector.detect(image, options: Self.options(side: 64))
                if result != expected { failures.add(1, ordering: .relaxed) }
            } catch {
                failures.add(1, ordering: .relaxed)
            }
            most.max(detector.heldMemory, ordering: .relaxed)
        }
        #expect(failures.load(ordering: .relaxed) == 0)
        #expect(most.load(ordering: .relaxed) <= limit)
    }

    /// At most `passLimit` passes hold scratch at once; the others wait and all get through.
    @Test func passLimitAdmitsAtMostItsLimit() throws {
        let model = try makeTestModel()
        let probe = try Detector(model: model, threading: Threading(threads: 1))
        let network = try probe.network(width: 64, height: 64)
        let memory = DetectorMemory(passLimit: 2, byteLimit: nil, maximumNetworks: 2)
        let pool = WorkerPool(Threading(threads: 1))
        let cached = memory.insert(network)
        let inside = Atomic<Int>(0), most = Atomic<Int>(0), done = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            guard let (running, scratch) = try? memory.borrow(for: cached, pool: pool) else { return }
            most.max(inside.add(1, ordering: .relaxed).newValue, ordering: .relaxed)
            usleep(2_000)
            inside.subtract(1, ordering: .relaxed)
            memory.giveBack(scratch, for: running)
            done.add(1, ordering: .relaxed)
        }
        #expect(most.load(ordering: .relaxed) <= 2)
        #expect(done.load(ordering: .relaxed) == 8)
    }

    /// `releaseCaches(keepingInputSizes:)` keeps the named sizes' networks and frees everything else.
    @Test func releaseKeepsTheNamedSizes() throws {
        let detector = try Detector(model: try makeTestModel(), threading: Threading(threads: 1))
        let image = Self.images([(40, 32)])[0]
        for side in [32, 64, 96] { _ = try detector.detect(image, options: Self.options(side: side)) }
        #expect(detector.cachedInputSizes.count == 3)
        let before = detector.heldMemory
        detector.releaseCaches(keepingInputSizes: [(width: 64, height: 64)])
        #expect(detector.cachedInputSizes.map(\.width) == [64])
        #expect(detector.heldMemory < before)
        #expect(detector.heldMemory == (try detector.network(width: 64, height: 64)).ownedBytes)
    }
}

/// What making a `Detector` leaves alone outside the engine (docs/THREADS.md).
@Suite struct DetectorSideEffectTests {
    /// OpenBLAS's `blas_server_avail`: 1 while its worker threads run; nil when the loaded library does not
    /// export it.
    static var openBLASWorkersRunning: Bool? {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "blas_server_avail") else { return nil }
        return symbol.load(as: Int32.self) != 0
    }

    /// An embedding app may be inside a multi-threaded OpenBLAS product when it makes a detector; stopping
    /// OpenBLAS's workers then (`blas_thread_shutdown_`) can leave that product waiting forever. So making a
    /// detector must leave them running. (Only the `yolo` tool, which owns its process, stops them.)
    @Test(.enabled(if: Self.openBLASWorkersRunning == true,
                   "OpenBLAS has no worker threads running here (one CPU, OPENBLAS_NUM_THREADS=1, or no such symbol)"))
    func makingADetectorLeavesOpenBLASWorkersRunning() throws {
        let detector = try Detector(model: try makeTestModel())
        #expect(Self.openBLASWorkersRunning == true)
        withExtendedLifetime(detector) {}
    }
}
