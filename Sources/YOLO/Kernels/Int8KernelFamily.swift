import Foundation
import YOLOKernels
#if arch(x86_64)
import YOLOKernelsAVX2
import YOLOKernelsVNNI
import YOLOKernelsAVXVNNI
#endif

/// An int8 GEMM micro-kernel (`u8 × s8 → s32`, `Int8Kernel`) with the CPU features it needs, described as data:
/// the int8 counterpart of `KernelFamily`'s float tile, chosen at run time on its own CPU flags, because the
/// best int8 instructions are not tied to the float family's (on Zen 4 the avx2 family runs the float
/// layers, and VNNI's `vpdpbusd` still does four times the products per instruction of AVX2's `vpmaddwd`).
///
/// Which int8 kernels a family may use is `KernelFamily.int8Kernels` (best first, none for `portable`, whose
/// int8 model layers run in float); the first one the CPU supports runs (`KernelFamily.int8Kernel`), unless
/// `YOLO_INT8_KERNEL` names another. Every int8 kernel gives the same results bit for bit (exact integer sums,
/// the same float epilogue: `Int8Epilogue`), so the choice changes speed only.
@_spi(Engine) public struct Int8KernelFamily: Sendable, Equatable, CustomStringConvertible {
    public enum Name: String, Sendable, CaseIterable {
        /// AVX512-VNNI: `vpdpbusd` on zmm registers, 6 × 64 tiles of u8 quads; a direct path for 3×3 layers.
        case avx512vnni
        /// AVX-VNNI without AVX-512: `vpdpbusd` on ymm registers (VEX), 6 × 16 tiles of u8 quads; the same direct path.
        case avxvnni
        /// The `avxvnni` kernel's code compiled for AVX512-VNNI + VL (the EVEX form of the same ymm instruction): never
        /// chosen by itself (`avx512vnni` is the faster on those CPUs); `YOLO_INT8_KERNEL=avxvnni-evex` runs it, so
        /// the tests check that kernel's logic on machines without AVX-VNNI.
        case avxvnniEVEX = "avxvnni-evex"
        /// AVX2 without VNNI: `vpmaddwd` on operands widened to s16, 6 × 16 tiles of pairs; exact Winograd F(2×2, 3×3)
        /// and F(4×4, 3×3) for 3×3 stride-1 layers.
        case avx2
    }

    public let name: Name
    /// The entry points and layouts.
    public let kernel: Int8Kernel
    /// `/proc/cpuinfo` flags its target's `-target-cpu` needs (cascadelake: skylake-avx512 + avx512_vnni;
    /// alderlake: x86-64-v3 + avx_vnni, and the instructions of its other extensions LLVM may choose by itself;
    /// haswell: x86-64-v3).
    public let requiredFeatures: [String]
    /// False for a kernel that runs only when `YOLO_INT8_KERNEL` names it (`avxvnniEVEX`).
    public let automatic: Bool

    init(name: Name, kernel: Int8Kernel, requiredFeatures: [String], automatic: Bool = true) {
        (self.name, self.kernel, self.requiredFeatures, self.automatic) = (name, kernel, requiredFeatures, automatic)
    }

    /// The flags cascadelake's code needs (skylake-avx512 + avx512_vnni).
    static let avx512VNNIFeatures = KernelFamily.x86v3 + ["avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl", "avx512_vnni"]

    public static func == (a: Int8KernelFamily, b: Int8KernelFamily) -> Bool { a.name == b.name }

    public var description: String {
        "\(name.rawValue) (\(kernel.tileRows)x\(kernel.tileColumns) int8 tiles, \(kernel.group) values of k per 32-bit lane"
            + (kernel.directSweep != nil ? "; direct 3x3 path)" : kernel.storesSums
                ? "; Winograd F(2x2, 3x3)" + (kernel.winograd4Output != nil ? " and F(4x4, 3x3) paths)" : " path)") : ")")
    }

    /// Every int8 kernel this build carries, best first.
    public static let all: [Int8KernelFamily] = {
        var kernels: [Int8KernelFamily] = []
        #if arch(x86_64)
        kernels.append(Int8KernelFamily(
            name: .avx512vnni,
            kernel: Int8Kernel(tileRows: 6, tileColumns: 64, group: 4, elementBytes: 1, sweep: vnniInt8Sweep, packB: vnniInt8PackB,
                               quantize: { YOLOKernelsVNNI.vnniInt8Quantize($0, $1, $2, $3, $4) },
                               directSweep: vnniInt8DirectSweep,
                               packQuads: { YOLOKernelsVNNI.vnniInt8PackQuads($0, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10) }),
            requiredFeatures: avx512VNNIFeatures))
        // The ymm kernel's two builds define the same names (one source file), hence the qualified names, which a C
        // function pointer takes only through a closure (a thunk here, in baseline code, that calls the entry point).
        kernels.append(Int8KernelFamily(
            name: .avxvnni,
            kernel: Int8Kernel(tileRows: 6, tileColumns: 16, group: 4, elementBytes: 1,
                               sweep: { YOLOKernelsAVXVNNI.ymmVNNIInt8Sweep($0, $1, $2, $3, $4, $5, $6, $7) },
                               packB: { YOLOKernelsAVXVNNI.ymmVNNIInt8PackB($0, $1, $2, $3, $4) },
                               quantize: { YOLOKernelsAVXVNNI.vnniInt8Quantize($0, $1, $2, $3, $4) },
                               directSweep: { YOLOKernelsAVXVNNI.ymmVNNIInt8DirectSweep($0, $1, $2, $3, $4, $5, $6, $7, $8) },
                               packQuads: { YOLOKernelsAVXVNNI.vnniInt8PackQuads($0, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10) }),
            requiredFeatures: KernelFamily.x86v3 + ["avx_vnni"]))
        kernels.append(Int8KernelFamily(
            name: .avxvnniEVEX,
            kernel: Int8Kernel(tileRows: 6, tileColumns: 16, group: 4, elementBytes: 1,
                               sweep: { YOLOKernelsVNNI.ymmVNNIInt8Sweep($0, $1, $2, $3, $4, $5, $6, $7) },
                               packB: { YOLOKernelsVNNI.ymmVNNIInt8PackB($0, $1, $2, $3, $4) },
                               quantize: { YOLOKernelsVNNI.vnniInt8Quantize($0, $1, $2, $3, $4) },
                               directSweep: { YOLOKernelsVNNI.ymmVNNIInt8DirectSweep($0, $1, $2, $3, $4, $5, $6, $7, $8) },
                               packQuads: { YOLOKernelsVNNI.vnniInt8PackQuads($0, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10) }),
            requiredFeatures: avx512VNNIFeatures, automatic: false))
        kernels.append(Int8KernelFamily(
            name: .avx2,
            kernel: Int8Kernel(tileRows: 6, tileColumns: 16, group: 2, elementBytes: 2, sweep: avx2Int8Sweep, packB: avx2Int8PackB,
                               quantize: avx2Int8Quantize, winogradInput: avx2Int8WinogradInput,
                               winogradOutput: avx2Int8WinogradOutput, winograd4Input: avx2Int8Winograd4Input,
                               winograd4Output: avx2Int8Winograd4Output),
            requiredFeatures: KernelFamily.x86v3))
        #endif
        return kernels
    }()

    /// The int8 kernel named `name`, if this build carries it.
    public static func named(_ name: Name) -> Int8KernelFamily? { all.first { $0.name == name } }

    /// True when `cpu` has everything the kernel needs.
    func isSupported(by cpu: CPUFeatures = .current) -> Bool { cpu.missing(requiredFeatures).isEmpty }

    /// True when this machine's CPU has everything the kernel needs.
    public var isSupported: Bool { isSupported(by: .current) }
}

extension KernelFamily {
    /// The int8 kernels this family may run, best first (`Int8KernelFamily`): VNNI where the CPU has it (AVX512-VNNI's,
    /// else AVX-VNNI's), else AVX2's; none for the portable family (its int8 layers are planned in float).
    @_spi(Engine) public var int8Kernels: [Int8KernelFamily] {
        switch name {
        case .avx512, .avx2: return Int8KernelFamily.all
        case .portable: return []
        }
    }

    /// The int8 kernel this family runs on `cpu`: `request` (`YOLO_INT8_KERNEL`) when it names one the family
    /// has and the CPU supports, else the first automatic one of `int8Kernels` the CPU supports; nil when none.
    func int8Kernel(for cpu: CPUFeatures = .current,
                    request: String? = ProcessInfo.processInfo.environment["YOLO_INT8_KERNEL"]) -> Int8KernelFamily? {
        let usable = int8Kernels.filter { $0.isSupported(by: cpu) }
        if let request, let wanted = usable.first(where: { $0.name.rawValue == request.lowercased() }) { return wanted }
        return usable.first(where: \.automatic)
    }

    /// The int8 kernel this family runs on this machine (`int8Kernel(for:request:)`), nil when it has none.
    @_spi(Engine) public var int8Kernel: Int8KernelFamily? { int8Kernel(for: .current) }
}
