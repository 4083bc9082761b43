import Foundation
import Testing
@_spi(Engine) @testable import YOLO
import YOLOKernels
import YOLOTestSupport

/// The int8 micro-kernels (`Int8KernelFamily`: AVX512-VNNI, AVX-VNNI or its EVEX build, AVX2) this CPU runs, through `Int8GEMM`, against a plain
/// integer loop and the scalar epilogue (`Int8Epilogue.code` / `real`): equal bytes, equal float bits, on odd
/// shapes (partial panels, partial blocks, k not a multiple of 4), weights over all of s8 (−128 included: the
/// kernels are exact for it, though model files never hold it), every activation code, u8 and float outputs,
/// and row and column parts multiplied separately.
@Suite struct Int8KernelTests {
    static var runnable: [Int8KernelFamily] { Int8KernelFamily.all.filter(\.isSupported) }

    struct Shape: CustomTestStringConvertible, Sendable {
        let kernel: Int8KernelFamily
        let m: Int, k: Int, n: Int
        var testDescription: String { "\(kernel.name.rawValue) \(m)x\(k)x\(n)" }
    }
    static var shapes: [Shape] {
        runnable.flatMap { kernel in
            [(1, 1, 1), (5, 3, 17), (6, 4, 64), (7, 27, 65), (13, 31, 130), (32, 300, 100), (3, 1001, 20), (12, 8, 16)]
                .map { Shape(kernel: kernel, m: $0.0, k: $0.1, n: $0.2) }
        }
    }

    /// Random operands and epilogue parameters for one shape.
    struct Operands {
        var a: [Int8], b: [UInt8], compensation: [Int32], multipliers: [Float], biases: [Float]
        init(m: Int, k: Int, n: Int, seed: UInt64) {
            var random = SeededRandom(seed: seed)
            a = (0..<m * k).map { _ in Int8(truncatingIfNeeded: random.next() >> 20) }
            b = (0..<k * n).map { _ in UInt8(truncatingIfNeeded: random.next() >> 20) }
            compensation = (0..<m).map { _ in Int32(random.float(-20_000, 20_000)) }
            multipliers = (0..<m).map { _ in random.float(1e-4, 3e-3) }
            biases = (0..<m).map { _ in random.float(-40, 40) }
        }

        /// The exact sums, plain loop.
        func sums(m: Int, k: Int, n: Int) -> [Int32] {
            var c = [Int32](repeating: 0, count: m * n)
            for r in 0..<m {
                for j in 0..<n {
                    var sum: Int32 = 0
                    for p in 0..<k { sum += Int32(a[r * k + p]) * Int32(b[p * n + j]) }
                    c[r * n + j] = sum
                }
            }
            return c
        }
    }

    /// `Int8GEMM.multiply` over `rows` and the column range `columns`, writing into `c` (`m × n`, `elementBytes` each).
    static func run(_ kernel: Int8KernelFamily, _ o: Operands, m: Int, k: Int, n: Int, rows: Range<Int>, columns: Range<Int>,
                    epilogue: (UnsafePointer<Int32>, UnsafePointer<Float>, UnsafePointer<Float>) -> Int8Epilogue,
                    into c: UnsafeMutableRawPointer) {
        let packed = o.a.withUnsafeBufferPointer { Int8PackedMatrix($0, rows: m, columns: k, kernel: kernel) }
        let scratch = UnsafeMutableRawPointer.allocate(byteCount: Int8GEMM.scratchBytes(k: k, kernel: kernel.kernel), alignment: 64)
        defer { scratch.deallocate() }
        o.compensation.withUnsafeBufferPointer { comp in
            o.multipliers.withUnsafeBufferPointer { mult in
                o.biases.withUnsafeBufferPointer { bias in
                    let e = epilogue(comp.baseAddress!, mult.baseAddress!, bias.baseAddress!)
                    o.b.withUnsafeBufferPointer { b in
                        Int8GEMM.multiply(packed, rows: rows, b: b.baseAddress! + columns.lowerBound, ldb: n, n: columns.count,
                                          c: c + columns.lowerBound * e.outputBytes, ldc: n, epilogue: e, scratch: scratch)
                    }
                }
            }
        }
    }

    @Test(arguments: shapes)
    func kernelsMatchAPlainIntegerLoop(_ s: Shape) {
        let (m, k, n) = (s.m, s.k, s.n)
        let o = Operands(m: m, k: k, n: n, seed: UInt64(m * 7919 + k * 31 + n))
        let sums = o.sums(m: m, k: k, n: n)
        for activation in [Activation.linear, .leaky, .relu, .logistic, .swish, .mish] {
            for bytes in [true, false] {
                let zeroPoint: Float = bytes ? Float((m * 37 + k) % 256) : 0
                // Used by the transcendental activations' u8 stores only (`Int8Epilogue.scalesAfterActivation`).
                let reciprocal: Float = 37.5
                let make = { (c: UnsafePointer<Int32>, mu: UnsafePointer<Float>, bi: UnsafePointer<Float>) in
                    Int8Epilogue(compensation: c, multipliers: mu, biases: bi, activation: activation.code, zeroPoint: zeroPoint,
                                 bytes: bytes, outputReciprocal: reciprocal)
                }
                // Whole product, then rows split at a panel and columns split at a block, as threads do.
                let tile = s.kernel.kernel
                let rowSplit = min(m, tile.tileRows), columnSplit = min(n, tile.tileColumns)
                let parts: [[(Range<Int>, Range<Int>)]] = [
                    [(0..<m, 0..<n)],
                    [(0..<rowSplit, 0..<n), (rowSplit..<m, 0..<n)],
                    [(0..<m, 0..<columnSplit), (0..<m, columnSplit..<n)],
                ]
                for split in parts {
                    let c = UnsafeMutableRawPointer.allocate(byteCount: m * n * 4, alignment: 64)
                    defer { c.deallocate() }
                    c.initializeMemory(as: UInt8.self, repeating: 0xA5, count: m * n * 4)
                    for (rows, columns) in split where !rows.isEmpty && !columns.isEmpty {
                        Self.run(s.kernel, o, m: m, k: k, n: n, rows: rows, columns: columns, epilogue: make, into: c)
                    }
                    var mismatches = 0
                    o.compensation.withUnsafeBufferPointer { comp in
                        o.multipliers.withUnsafeBufferPointer { mult in
                            o.biases.withUnsafeBufferPointer { bias in
                                let e = make(comp.baseAddress!, mult.baseAddress!, bias.baseAddress!)
                                for r in 0..<m {
                                    for j in 0..<n {
                                        let sum = sums[r * n + j]
                                        if bytes {
                                            if c.load(fromByteOffset: r * n + j, as: UInt8.self) != e.code(sum, row: r) { mismatches += 1 }
                                        } else if c.load(fromByteOffset: 4 * (r * n + j), as: Float.self).bitPattern != e.real(sum, row: r).bitPattern {
                                            mismatches += 1
                                        }
                                    }
                                }
                            }
                        }
                    }
                    #expect(mismatches == 0, "\(s.testDescription) \(activation) bytes \(bytes) parts \(split.count): \(mismatches) of \(m * n) differ")
                }
            }
        }
    }

    /// Each kernel's quantization of floats equals the scalar code, over 0…255, ties, clamping and the tail.
    @Test(arguments: runnable.map(\.name.rawValue))
    func quantizationMatchesTheScalarCode(_ name: String) {
        let kernel = Int8KernelFamily.named(Int8KernelFamily.Name(rawValue: name)!)!.kernel
        var random = SeededRandom(seed: 5)
        let values = (0..<1003).map { i in i % 7 == 0 ? Float(i % 300) / 2 - 20 : random.float(-30, 300) } + [.nan, .infinity, -.infinity]
        for (reciprocal, zeroPoint) in [(Float(1), Float(0)), (0.37, 17), (3.1, 250)] {
            var codes = [UInt8](repeating: 0, count: values.count)
            values.withUnsafeBufferPointer { v in codes.withUnsafeMutableBufferPointer { kernel.quantize(v.count, v.baseAddress!, reciprocal, zeroPoint, $0.baseAddress!) } }
            let expected = values.map { Int8Epilogue.code($0 * reciprocal, zeroPoint: zeroPoint) }
            #expect(codes == expected, "\(name) reciprocal \(reciprocal) zero \(zeroPoint)")
        }
    }

    /// The epilogue's rounding: ties to even, clamped to 0…255, NaN to 0.
    @Test func codesRoundTiesToEvenAndClamp() {
        #expect(Int8Epilogue.code(0.5, zeroPoint: 0) == 0)
        #expect(Int8Epilogue.code(1.5, zeroPoint: 0) == 2)
        #expect(Int8Epilogue.code(2.5, zeroPoint: 10) == 12)
        #expect(Int8Epilogue.code(-3, zeroPoint: 2) == 0)
        #expect(Int8Epilogue.code(1e9, zeroPoint: 0) == 255)
        #expect(Int8Epilogue.code(254.5, zeroPoint: 0) == 254)
        #expect(Int8Epilogue.code(.nan, zeroPoint: 5) == 0)
    }

    /// What each family provides: int8 kernels on the x86 families (VNNI first: AVX512-VNNI's, then AVX-VNNI's), none
    /// on the portable one; the AVX-VNNI kernel's EVEX build only when asked for.
    @Test func familiesListTheirInt8Kernels() {
        #expect(KernelFamily.named(.portable)!.int8Kernels.isEmpty)
        #if arch(x86_64)
        #expect(KernelFamily.named(.avx2)!.int8Kernels.map(\.name) == [.avx512vnni, .avxvnni, .avxvnniEVEX, .avx2])
        func cpu(_ flags: [String]) -> CPUFeatures { CPUFeatures(cpuinfo: "flags\t: " + flags.joined(separator: " ")) }
        let family = KernelFamily.named(.avx2)!
        #expect(family.int8Kernel(for: cpu(KernelFamily.x86v3), request: nil)?.name == .avx2)
        #expect(family.int8Kernel(for: cpu(KernelFamily.x86v3), request: "avxvnni")?.name == .avx2)
        let vnni = cpu(KernelFamily.x86v3 + ["avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl", "avx512_vnni"])
        #expect(family.int8Kernel(for: vnni, request: nil)?.name == .avx512vnni)
        #expect(family.int8Kernel(for: vnni, request: "avx2")?.name == .avx2)
        #expect(family.int8Kernel(for: vnni, request: "avxvnni-evex")?.name == .avxvnniEVEX)
        #expect(family.int8Kernel(for: vnni, request: "avxvnni")?.name == .avx512vnni)
        // An Alder Lake: AVX-VNNI without AVX-512. (Zen 5 has both: AVX512-VNNI's kernel, the faster, runs.)
        let alderLake = cpu(KernelFamily.x86v3 + ["avx_vnni"])
        #expect(family.int8Kernel(for: alderLake, request: nil)?.name == .avxvnni)
        #expect(family.int8Kernel(for: alderLake, request: "avxvnni-evex")?.name == .avxvnni)
        #expect(family.int8Kernel(for: cpu(KernelFamily.x86v3 + ["avx_vnni", "avx512f", "avx512bw", "avx512cd", "avx512dq",
                                                                 "avx512vl", "avx512_vnni"]), request: nil)?.name == .avx512vnni)
        #endif
    }
}
