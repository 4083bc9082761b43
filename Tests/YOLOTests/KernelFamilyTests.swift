import Foundation
import Testing
@_spi(Engine) @testable import YOLO
import YOLOKernels
import YOLOTestSupport

/// Kernel families: the CPU check and the choice of family from `/proc/cpuinfo` text (fake CPUs), and
/// every family's micro-kernel that this CPU can run, called directly through its `TileKernel`
/// pointers (whatever family is active), against a plain loop in Double over every row count,
/// accumulation, bias and activation. Tolerance 1e-6 × Σ|a·b| (float sums of k products, as in
/// GEMMTests). The whole suite runs once per family in CI (`YOLO_KERNEL=...`).
@Suite struct KernelFamilyTests {
    static let zen1 = CPUFeatures(cpuinfo: """
        processor\t: 0
        flags\t\t: fpu sse sse2 ssse3 fma cx16 sse4_1 sse4_2 movbe popcnt aes xsave avx f16c abm bmi1 avx2 bmi2 sha_ni
        """)
    static let zen4 = CPUFeatures(cpuinfo: "flags\t: " + (zen1.flags.sorted() + ["avx512f", "avx512dq", "avx512cd", "avx512bw", "avx512vl"]).joined(separator: " "))
    static let sse2Only = CPUFeatures(cpuinfo: "flags\t: fpu sse sse2")

    @Test func theBestSupportedFamilyIsChosen() {
        #if arch(x86_64)
        #expect(KernelFamily.best(for: Self.zen4).name == .avx512)
        #expect(KernelFamily.best(for: Self.zen1).name == .avx2)
        #endif
        #expect(KernelFamily.best(for: Self.sse2Only).name == .portable)
        #expect(KernelFamily.best(for: CPUFeatures(cpuinfo: "")).name == .portable)
        #expect(KernelFamily.active.isSupported)
    }

    /// AMD family 25 (Zen 4) splits 512-bit operations in two: the avx2 family ranks first there, the
    /// avx512 family second; Intel CPUs and AMD family 26 (Zen 5) keep avx512 first.
    @Test func zen4PrefersTheAVX2Family() throws {
        #if arch(x86_64)
        func cpu(vendor: String, family: Int) -> CPUFeatures {
            CPUFeatures(cpuinfo: "processor\t: 0\nvendor_id\t: \(vendor)\ncpu family\t: \(family)\nmodel\t\t: 17\nmodel name\t: X\n"
                        + "flags\t\t: " + Self.zen4.flags.sorted().joined(separator: " ") + "\n")
        }
        let zen4 = cpu(vendor: "AuthenticAMD", family: 25)
        #expect(zen4.vendor == "AuthenticAMD" && zen4.family == 25 && zen4.splitsAVX512)
        #expect(KernelFamily.ranked(for: zen4).map(\.name) == [.avx2, .avx512, .portable])
        #expect(KernelFamily.bestReason(for: zen4).contains("avx512 runs slower here"))
        #expect(try KernelFamily.resolve("avx512", cpu: zen4).name == .avx512)
        for other in [cpu(vendor: "AuthenticAMD", family: 26), cpu(vendor: "GenuineIntel", family: 6)] {
            #expect(KernelFamily.ranked(for: other).map(\.name) == [.avx512, .avx2, .portable])
            #expect(KernelFamily.bestReason(for: other) == "best this CPU supports")
        }
        #endif
    }

    @Test func requestsAreCheckedAgainstTheCPU() throws {
        #expect(try KernelFamily.resolve(nil, cpu: Self.zen1) == KernelFamily.best(for: Self.zen1))
        #expect(try KernelFamily.resolve("auto", cpu: Self.zen1) == KernelFamily.best(for: Self.zen1))
        #expect(try KernelFamily.resolve("portable", cpu: Self.sse2Only).name == .portable)
        #if arch(x86_64)
        #expect(try KernelFamily.resolve("AVX2", cpu: Self.zen4).name == .avx2)
        do {
            _ = try KernelFamily.resolve("avx512", cpu: Self.zen1)
            Issue.record("avx512 accepted on a CPU without AVX-512")
        } catch {
            #expect("\(error)".contains("cannot run the avx512 kernel family (missing: avx512f avx512bw avx512cd avx512dq avx512vl; best here: avx2)"))
        }
        #endif
        #expect(throws: YOLOError.self) { try KernelFamily.resolve("neon", cpu: Self.zen4) }
    }

    /// The families this CPU can run that have their own micro-kernel.
    static var runnable: [KernelFamily] { KernelFamily.all.filter { $0.tile != nil && $0.isSupported } }

    struct Tile: CustomTestStringConvertible {
        let family: KernelFamily
        let k: Int
        var testDescription: String { "\(family.name.rawValue) k=\(k)" }
    }
    static var tiles: [Tile] { runnable.flatMap { family in [1, 3, 27, 200].map { Tile(family: family, k: $0) } } }

    @Test(arguments: tiles)
    func microKernelsMatchAPlainLoop(_ t: Tile) {
        let (rowsPerTile, columns, k) = (t.family.tileRows, t.family.tileColumns, t.k)
        var random = SeededRandom(seed: UInt64(k * 31 + columns))
        let a = random.floats(k * rowsPerTile)           // one panel: column by column
        let ldb = columns + 5                            // rows of B not contiguous
        let b = random.floats(k * ldb)
        let bias = random.floats(rowsPerTile)
        let start = random.floats(rowsPerTile * (columns + 3))
        let offsets = (0..<k).map { $0 * ldb }           // the same rows, found through the offset table
        for rows in 1...rowsPerTile {
            for accumulate in [false, true] {
                for code in [-1] + Activation.allCases.map(\.code) {
                    let activation = Activation(code: max(code, 0))
                    let ldc = columns + 3
                    var c = start, viaOffsets = start, streamed = start
                    a.withUnsafeBufferPointer { a in
                        b.withUnsafeBufferPointer { b in
                            bias.withUnsafeBufferPointer { bias in
                                let biasPointer = code < 0 ? nil : bias.baseAddress
                                t.family.tile!.strided(k, a.baseAddress!, b.baseAddress!, ldb, &c, ldc, rows, accumulate,
                                                       biasPointer, max(code, 0))
                                // The streamed entry point prefetches past B's end (harmless: a prefetch never faults).
                                t.family.tile!.streamed(k, a.baseAddress!, b.baseAddress!, ldb, &streamed, ldc, rows,
                                                        accumulate, biasPointer, max(code, 0), 32_768)
                                if !accumulate {
                                    offsets.withUnsafeBufferPointer { table in
                                        t.family.tile!.offsets(k, a.baseAddress!, b.baseAddress!, table.baseAddress!,
                                                               &viaOffsets, ldc, rows, biasPointer, max(code, 0))
                                    }
                                }
                            }
                        }
                    }
                    var worst = 0.0
                    for r in 0..<rowsPerTile {
                        for j in 0..<ldc {
                            let index = r * ldc + j
                            guard r < rows && j < columns else {
                                #expect(c[index] == start[index], "row \(r) column \(j) outside the tile was written")
                                #expect(streamed[index] == start[index])
                                continue
                            }
                            var sum = accumulate ? Double(start[index]) : 0, magnitude = abs(sum)
                            for p in 0..<k {
                                let product = Double(a[p * rowsPerTile + r]) * Double(b[p * ldb + j])
                                sum += product
                                magnitude += abs(product)
                            }
                            if code >= 0 { sum += Double(bias[r]); magnitude += abs(Double(bias[r])) }
                            let exact = code >= 0 ? Double(activation(Float(sum))) : sum
                            let error = abs(Double(c[index]) - exact) / max(magnitude, 1e-30)
                            worst = max(worst, error.isNaN ? .infinity : error)
                            if !accumulate { #expect(viaOffsets[index] == c[index]) }
                            #expect(streamed[index] == c[index])
                        }
                    }
                    #expect(worst <= 1e-6, "rows \(rows), accumulate \(accumulate), activation code \(code): \(worst)")
                }
            }
        }
    }
}
