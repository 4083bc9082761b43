import Foundation
import Synchronization
import YOLOKernels
#if arch(x86_64)
import YOLOKernelsAVX2
import YOLOKernelsAVX512
#endif

/// A family of compute kernels for one instruction set, described as data: its vector width, its
/// GEMM micro-kernel's tile, and the fast paths it provides. Every CPU-dependent choice in the
/// engine (weight packing, Winograd variant, convolution + max-pool fusion, cache blocking) reads the
/// active family; nothing is decided by compile-time flags.
///
/// Each ISA family's micro-kernel lives in its own target compiled for that ISA
/// (`YOLOKernelsAVX2`, `YOLOKernelsAVX512`), reached only through the `tile` function pointers below,
/// after `KernelFamily.active` has checked the CPU. The portable family has no kernel of its own:
/// its products go to OpenBLAS's `sgemm`. Adding a family (e.g. ARM NEON, SIMD4 with an 8 × 12
/// tile) is one new target providing `TileKernel`'s four entry points (and `WinogradKernels`' five, or
/// none: the family then runs the 8-lane Winograd path), and one entry in `all` (docs/performance.md,
/// "Kernel families").
public struct KernelFamily: Sendable, Equatable, CustomStringConvertible {
    /// The families this build knows.
    public enum Name: String, Sendable, CaseIterable {
        /// AVX-512 (F, CD, BW, DQ, VL): a 6 × 64 micro-kernel on 16-float vectors.
        case avx512
        /// AVX2 + FMA (x86-64-v3): a 6 × 16 micro-kernel on 8-float vectors.
        case avx2
        /// Any CPU: matrix products through OpenBLAS's `sgemm`.
        case portable
    }

    /// Fast paths a family with its own micro-kernel provides beyond the im2col + GEMM convolution.
    struct FastPaths: OptionSet, Sendable {
        let rawValue: Int
        init(rawValue: Int) { self.rawValue = rawValue }
        /// 3×3 convolution computed band by band and pooled at once (`ConvolutionMaxPool`).
        static let directConvolutionMaxPool = FastPaths(rawValue: 2)
        /// Winograd transforms on whole rows of tiles (`Convolution+WinogradRows.swift`).
        static let winogradRows = FastPaths(rawValue: 4)
        /// Winograd on small maps with transposed products (`Convolution+WinogradTransposed.swift`).
        static let winogradTransposed = FastPaths(rawValue: 8)
    }

    /// Which family this is (`avx512`, `avx2`, `portable`; what `YOLO_KERNEL` and `select` take).
    public let name: Name
    /// Floats per SIMD register.
    let lanes: Int
    /// Rows × columns of C one micro-kernel call computes (1 × 1 for the portable family: BLAS).
    let tileRows: Int
    let tileColumns: Int
    let fastPaths: FastPaths
    /// The Winograd output tile `.auto` uses on maps up to 16×16 (2 or 4), chosen by measurement per
    /// family: F(4×4) needs 2.25× the memory for the transformed filters (yolov3-tiny: +62 MB).
    let smallMapWinogradTile: Int
    /// The micro-kernel's entry points (nil: OpenBLAS). With one, weights are packed in panels of
    /// `tileRows` and bias and activation are applied in registers.
    let tile: TileKernel?
    /// The family's Winograd tile transforms (compiled for its ISA), for the `winogradRows` and
    /// `winogradTransposed` paths; nil for families without them.
    let winograd: WinogradKernels?

    /// True when the family multiplies with its own micro-kernel.
    var hasOwnKernel: Bool { tile != nil }

    /// `/proc/cpuinfo` flags the family's code needs (its target's `-target-cpu`: haswell for AVX2,
    /// skylake-avx512 for AVX-512, whose AVX-512 subsets are F, CD, BW, DQ, VL).
    public var requiredFeatures: [String] {
        switch name {
        case .avx512: return Self.x86v3 + ["avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"]
        case .avx2: return Self.x86v3
        case .portable: return []
        }
    }

    public static func == (a: KernelFamily, b: KernelFamily) -> Bool { a.name == b.name }

    public var description: String {
        guard tile != nil else { return "\(name.rawValue) (OpenBLAS sgemm, no own kernel)" }
        return "\(name.rawValue) (own \(tileRows)x\(tileColumns) micro-kernel, \(lanes)-float vectors)"
    }

    /// True when the family has all of `paths`.
    func has(_ paths: FastPaths) -> Bool { fastPaths.contains(paths) }

    // MARK: - The families

    /// What `-target-cpu haswell` (x86-64-v3) lets the compiler use: AVX, AVX2, FMA, BMI1/2, F16C,
    /// LZCNT (`abm`), MOVBE, POPCNT, SSE4.2.
    static let x86v3 = ["sse4_2", "popcnt", "avx", "avx2", "fma", "bmi1", "bmi2", "f16c", "abm", "movbe"]

    /// Every family this build carries, best first.
    public static let all: [KernelFamily] = {
        var families: [KernelFamily] = []
        #if arch(x86_64)
        families.append(KernelFamily(
            name: .avx512, lanes: 16, tileRows: 6, tileColumns: 64,
            fastPaths: [.directConvolutionMaxPool, .winogradRows, .winogradTransposed],
            smallMapWinogradTile: 2,
            tile: TileKernel(strided: avx512TileStrided, offsets: avx512TileOffsets, streamed: avx512TileStreamed,
                             sweep: avx512TileSweep),
            winograd: WinogradKernels(rowsInput: avx512WinogradRowsInput, padByPhase: avx512WinogradPadByPhase,
                                      rowsOutput: avx512WinogradRowsOutput,
                                      tilesInput: avx512WinogradTilesInput, filtersOutput: avx512WinogradFiltersOutput)))
        families.append(KernelFamily(
            name: .avx2, lanes: 8, tileRows: 6, tileColumns: 16,
            fastPaths: [.directConvolutionMaxPool, .winogradRows, .winogradTransposed],
            smallMapWinogradTile: 4,
            tile: TileKernel(strided: avx2TileStrided, offsets: avx2TileOffsets, streamed: avx2TileStreamed,
                             sweep: avx2TileSweep),
            winograd: WinogradKernels(rowsInput: avx2WinogradRowsInput, padByPhase: avx2WinogradPadByPhase,
                                      rowsOutput: avx2WinogradRowsOutput,
                                      tilesInput: avx2WinogradTilesInput, filtersOutput: avx2WinogradFiltersOutput)))
        #endif
        families.append(KernelFamily(name: .portable, lanes: 4, tileRows: 1, tileColumns: 1, fastPaths: [],
                                     smallMapWinogradTile: 2, tile: nil, winograd: nil))
        return families
    }()

    /// The family named `name`, if this build carries it.
    public static func named(_ name: Name) -> KernelFamily? { all.first { $0.name == name } }

    /// True when this CPU has everything the family needs.
    func isSupported(by cpu: CPUFeatures = .current) -> Bool { cpu.missing(requiredFeatures).isEmpty }

    /// True when this machine's CPU has everything the family needs (what `select(_:source:)` checks).
    public var isSupported: Bool { isSupported(by: .current) }

    /// Why this family runs slower on `cpu` than the next family down, or nil when it is not known to,
    /// so `ranked(for:)` puts it after that one. The AVX-512 family on AMD family 25 (Zen 4), which splits
    /// each 512-bit operation into two 256-bit halves: there the wider tile adds no multiply throughput and
    /// the avx2 family's pass is the faster (docs/performance.md, "Kernel families").
    func slowdown(on cpu: CPUFeatures) -> String? {
        name == .avx512 && cpu.splitsAVX512 ? "AMD family 25 executes 512-bit vectors as two 256-bit halves" : nil
    }

    /// The families `cpu` supports, fastest first: the order of `all`, except that a family that
    /// has a `slowdown(on:)` this CPU comes after the next one.
    static func ranked(for cpu: CPUFeatures = .current) -> [KernelFamily] {
        var ranked = all.filter { $0.isSupported(by: cpu) }
        for index in stride(from: ranked.count - 2, through: 0, by: -1) where ranked[index].slowdown(on: cpu) != nil {
            ranked.swapAt(index, index + 1)
        }
        return ranked
    }

    /// The best family for `cpu`: the first of `ranked(for:)`.
    static func best(for cpu: CPUFeatures = .current) -> KernelFamily {
        ranked(for: cpu).first ?? all[all.count - 1]
    }

    /// The families this machine's CPU runs, fastest first (what `yolo info --kernels` lists).
    public static var runnable: [KernelFamily] { ranked(for: .current) }

    /// Why `best(for:)` chose its family, for `yolo bench` and `yolo info`.
    static func bestReason(for cpu: CPUFeatures = .current) -> String {
        guard let demoted = all.first(where: { $0.isSupported(by: cpu) }), demoted != best(for: cpu),
              let why = demoted.slowdown(on: cpu) else {
            return "best this CPU supports"
        }
        return "best for this CPU (\(demoted.name.rawValue) runs slower here: \(why))"
    }

    /// The family for a request (`YOLO_KERNEL` or `--kernel`): `auto`/nil gives the best supported;
    /// a family the CPU lacks or an unknown name is an error naming what is missing.
    static func resolve(_ request: String?, cpu: CPUFeatures = .current,
                        source: String = "YOLO_KERNEL") throws -> KernelFamily {
        guard let request, !request.isEmpty, request != "auto" else { return best(for: cpu) }
        let known = Name.allCases.map(\.rawValue).joined(separator: ", ")
        guard let name = Name(rawValue: request.lowercased()), let family = named(name) else {
            throw YOLOError.invalidArgument("\(source): unknown kernel family '\(request)' (known: auto, \(known))")
        }
        let missing = cpu.missing(family.requiredFeatures)
        guard missing.isEmpty else {
            throw YOLOError.invalidArgument("\(source): this CPU cannot run the \(name.rawValue) kernel family "
                                            + "(missing: \(missing.joined(separator: " ")); best here: \(best(for: cpu).name.rawValue))")
        }
        return family
    }

    // MARK: - The active family

    /// The family the engine runs, chosen once per process: the one `select(_:)` chose, else
    /// `YOLO_KERNEL` from the environment (`avx512`, `avx2`, `portable`, `auto`), else the best this
    /// CPU supports. An unusable `YOLO_KERNEL` is not obeyed: the best family runs and `reason` says why
    /// the request was set aside. Programs that want it as an error call `select(_:source:)` first (the
    /// `yolo` command does, and stops with a one-line message).
    public static var active: KernelFamily {
        let index = chosen.load(ordering: .acquiring)
        if index >= 0 { return all[index] }
        let request = ProcessInfo.processInfo.environment["YOLO_KERNEL"]
        do {
            let family = try resolve(request)
            let why = request.map { $0.isEmpty || $0 == "auto" ? bestReason() : "YOLO_KERNEL=\($0)" }
            return adopt(family, reason: why ?? bestReason())
        } catch {
            return adopt(best(for: .current), reason: "\(bestReason()); \(error) (set aside)")
        }
    }

    /// Why the active family was chosen, for `yolo bench` and `yolo info`.
    public static var reason: String {
        _ = active
        return reasonText.withLock { $0 }
    }

    /// Chooses the family before the engine first uses one (`--kernel`): `request` as for `YOLO_KERNEL`,
    /// which it overrides. Throws when the CPU lacks the family, or when another family is already
    /// active (weights already packed for it).
    @discardableResult
    public static func select(_ request: String, source: String = "--kernel") throws -> KernelFamily {
        let family = try resolve(request, source: source)
        let reason = "\(source) \(request)" + (request == "auto" ? " (\(bestReason()))" : "")
        let adopted = adopt(family, reason: reason)
        guard adopted == family else {
            throw YOLOError.invalidArgument("\(source) \(request): the \(adopted.name.rawValue) kernel family is already in use")
        }
        return family
    }

    private static let chosen = Atomic<Int>(-1)
    private static let reasonText = Locked<String>("")

    /// Makes `family` the active one, with `reason`, unless a family is active already; returns the active one.
    private static func adopt(_ family: KernelFamily, reason: String) -> KernelFamily {
        let index = all.firstIndex(of: family)!
        let (exchanged, original) = chosen.compareExchange(expected: -1, desired: index, ordering: .acquiringAndReleasing)
        guard exchanged else { return all[original] }
        reasonText.withLock { $0 = reason }
        return family
    }
}
