import Foundation
import Testing
@_spi(Engine) @testable import YOLO
import YOLOTestSupport

/// The planner's rules (`ConvolutionPlanner`) and the whole plans of yolov3-tiny and yolov4-tiny.
@Suite struct ConvolutionPlannerTests {
    static func family(_ name: KernelFamily.Name) -> KernelFamily { KernelFamily.all.first { $0.name == name }! }
    static let families = KernelFamily.all.map(\.name)

    /// Every layer's plan at 416×416 for 1 and 2 threads and every family the build carries equals the reviewed
    /// table in Fixtures/plans (scripts/make-plan-fixtures.sh writes it; a changed line is a layer that now runs
    /// differently, and the detections tests say whether its results moved).
    @Test(.enabled(if: FileManager.default.fileExists(atPath: TestPaths.v4Cfg), "Weights/*.cfg are absent: run `make weights`"),
          arguments: ["yolov3-tiny", "yolov4-tiny"])
    func plansOfTheNamedModels(model: String) throws {
        let description = try ModelDescription(cfgPath: TestPaths.root + "/Weights/\(model).cfg")
        let geometry = try description.geometry(width: 416, height: 416)
        for name in Self.families {
            for threads in [1, 2] {
                let plan = NetworkPlan(description: description, geometry: geometry, threads: threads, family: Self.family(name))
                let path = TestPaths.fixtures + "/plans/\(model)-\(name.rawValue)-t\(threads).txt"
                let expected = try String(contentsOfFile: path, encoding: .utf8)
                #expect(plan.render(description: description, geometry: geometry) + "\n" == expected, "\(path)")
            }
        }
    }

    static func layer(_ c: Int, _ h: Int, _ w: Int, filters: Int, size: Int = 3, stride: Int = 1) -> ConvolutionPlanner.Layer {
        ConvolutionPlanner.Layer(input: Shape(channels: c, height: h, width: w), filters: filters, size: size, stride: stride,
                                 padding: size / 2)
    }

    @Test func algorithmRules() {
        let avx2 = Self.family(.avx2)
        // Winograd needs 3×3 stride 1 padding 1 and (for .auto) 16 input channels; F(4×4) above 16×16.
        #expect(ConvolutionPlanner.winogradTile(Self.layer(16, 52, 52, filters: 32), algorithm: .auto, family: avx2) == 4)
        #expect(ConvolutionPlanner.winogradTile(Self.layer(8, 52, 52, filters: 32), algorithm: .auto, family: avx2) == nil)
        #expect(ConvolutionPlanner.winogradTile(Self.layer(16, 13, 13, filters: 32), algorithm: .auto, family: avx2)
                == avx2.smallMapWinogradTile)
        #expect(ConvolutionPlanner.winogradTile(Self.layer(16, 52, 52, filters: 32, stride: 2), algorithm: .winograd2, family: avx2) == nil)
        #expect(ConvolutionPlanner.winogradTile(Self.layer(16, 52, 52, filters: 32, size: 1), algorithm: .winograd4, family: avx2) == nil)
        #expect(ConvolutionPlanner.winogradTile(Self.layer(3, 52, 52, filters: 32), algorithm: .winograd2, family: avx2) == 2)
        // F(6×6) only when asked for (`.winograd6`), and only where its row transforms apply; F(4×4) elsewhere.
        #expect(ConvolutionPlanner.winogradTile(Self.layer(16, 80, 80, filters: 16), algorithm: .auto, family: avx2) == 4)
        #expect(ConvolutionPlanner.plan(Self.layer(16, 80, 80, filters: 16), algorithm: .winograd6, threads: 1, family: avx2)
                .winograd?.m == 6)
        #expect(ConvolutionPlanner.plan(Self.layer(64, 40, 40, filters: 64), algorithm: .winograd6, threads: 1, family: avx2)
                .winograd?.m == 4)
        // LUT codes: a whole-map product split over filters, blocks of whole panels.
        let lut = ConvolutionPlanner.plan(Self.layer(64, 26, 26, filters: 128), lutCodes: true, threads: 2, family: avx2)
        if case .gemm(let split) = lut.algorithm { #expect(split.columns == 1) } else { Issue.record("not a whole-map product") }
        if case .lutCodes(let rows) = lut.weights { #expect(rows % avx2.tileRows == 0 || rows == 128) } else { Issue.record("not LUT") }
        // Bands for small filters on tall maps; the whole map for a 1×1 layer; two threads split the columns of a
        // large map, the filters of a small map with many filters.
        #expect(ConvolutionPlanner.gemmBandRows(Self.layer(3, 416, 416, filters: 16)) != nil)
        #expect(ConvolutionPlanner.gemmBandRows(Self.layer(64, 52, 52, filters: 128, size: 1)) == nil)
        // Weights of 288 KB: bands when the whole map's columns would take 14.7 MB (fall v8s's layer 10), the whole
        // map when they take 3.7 MB; weights beyond L2 never go by bands.
        #expect(ConvolutionPlanner.gemmBandRows(Self.layer(64, 160, 160, filters: 128, stride: 2)) != nil)
        #expect(ConvolutionPlanner.gemmBandRows(Self.layer(64, 80, 80, filters: 128, stride: 2)) == nil)
        #expect(ConvolutionPlanner.gemmBandRows(Self.layer(128, 320, 320, filters: 256, stride: 2)) == nil)
        func grid(_ plan: ConvolutionPlan) -> (Int, Int)? {
            if case .gemm(let split) = plan.algorithm { return (split.filters, split.columns) }
            return nil
        }
        #expect(grid(ConvolutionPlanner.plan(Self.layer(64, 52, 52, filters: 128, size: 1), threads: 2, family: avx2)) ?? (0, 0) == (1, 2))
        #expect(grid(ConvolutionPlanner.plan(Self.layer(512, 13, 13, filters: 255, size: 1), threads: 2, family: avx2)) ?? (0, 0) == (2, 1))
    }

    /// 2-D grids (`gemmGrid`): at most one part per thread, parts on whole tiles, and on 16 threads the largest
    /// part of each whole-map product of yolov3-tiny and yolov4-tiny within 1.3× an even share on the own kernels
    /// (a 1-D cut leaves up to 3× there: 13×13 maps are 3 column blocks of 64), OpenBLAS's fixed blocks allowing less.
    @Test func gemmGridsShareTheWorkEvenly() {
        // (filters, output pixels) of the whole-map products (1×1 layers and the LUT/int8 ones) at 416×416.
        let products = [(64, 10_816), (128, 2_704), (256, 676), (256, 169), (255, 169), (128, 169), (255, 676), (512, 169),
                        (1_024, 169), (18, 169)]
        for (m, n) in products {
            for (rows, columns) in [(6, 64), (6, 16)] {
                for threads in [1, 2, 3, 4, 8, 16] {
                    let split = ConvolutionPlanner.gemmGrid(m: m, n: n, threads: threads, rowAlignment: rows, columnAlignment: columns)
                    #expect(split.parts <= threads && split.parts >= 1)
                    #expect(split.filters <= (m + rows - 1) / rows && split.columns <= (n + columns - 1) / columns)
                    if threads == 16 && m >= 128 {
                        #expect(split.largestShare <= 1.3, "\(m)×\(n) \(rows)×\(columns) tiles: \(split)")
                    }
                }
            }
        }
        // Two threads on a large map cut the columns; 16 threads on a 26×26 map with 256 filters take both sides.
        let columns = ConvolutionPlanner.gemmGrid(m: 64, n: 10_816, threads: 2, rowAlignment: 6, columnAlignment: 64)
        #expect(columns.filters == 1 && columns.columns == 2, "\(columns)")
        let both = ConvolutionPlanner.gemmGrid(m: 256, n: 676, threads: 16, rowAlignment: 6, columnAlignment: 64)
        #expect(both.filters > 1 && both.columns > 1, "\(both)")
        // One thread: one part.
        #expect(ConvolutionPlanner.gemmGrid(m: 256, n: 676, threads: 1, rowAlignment: 6, columnAlignment: 64) == .whole)
    }

    @Test func int8AlgorithmRules() throws {
        #if arch(x86_64)
        let vnni = try #require(Int8KernelFamily.named(.avx512vnni)), avx2 = try #require(Int8KernelFamily.named(.avx2))
        func algorithm(_ layer: ConvolutionPlanner.Layer, _ kernel: Int8KernelFamily, threads: Int = 2) -> ConvolutionPlan.Algorithm {
            ConvolutionPlanner.plan(layer, int8: kernel, threads: threads).algorithm
        }
        // Direct for 3×3 layers (stride 1 or 2) with channels in whole quads (or 3 at stride 2) on a kernel that has the path; the
        // threads split the blocks of 64 positions or the filters' 6-row panels, whichever shares out more evenly (the blocks
        // on a tie): 52×53 positions are 44 blocks, 26×27 11 (6 + 5) against 256 filters' 43 panels (22 + 21), 13×14 3.
        #expect(algorithm(Self.layer(128, 52, 52, filters: 128), vnni) == .int8Direct(split: .columns))
        #expect(algorithm(Self.layer(256, 26, 26, filters: 256), vnni) == .int8Direct(split: .filters))
        #expect(algorithm(Self.layer(256, 26, 26, filters: 256), vnni, threads: 3) == .int8Direct(split: .filters))
        #expect(algorithm(Self.layer(256, 26, 26, filters: 18), vnni) == .int8Direct(split: .columns))   // 3 panels: 2 + 1
        #expect(algorithm(Self.layer(512, 13, 13, filters: 512), vnni) == .int8Direct(split: .filters))
        #expect(algorithm(Self.layer(32, 104, 104, filters: 32), vnni, threads: 1) == .int8Direct(split: .columns))
        #expect(algorithm(Self.layer(32, 208, 208, filters: 64, stride: 2), vnni) == .int8Direct(split: .columns))
        // Else im2col + GEMM: channels not in whole quads (but 3 at stride 2), a 1×1 layer.
        #expect(algorithm(Self.layer(3, 416, 416, filters: 32, stride: 2), vnni) == .int8Direct(split: .columns))
        #expect(algorithm(Self.layer(3, 416, 416, filters: 16), vnni) != .int8Direct(split: .columns))
        #expect(algorithm(Self.layer(5, 52, 52, filters: 16), vnni) != .int8Direct(split: .columns))
        func isWholeMapGEMM(_ a: ConvolutionPlan.Algorithm) -> Bool { if case .gemm = a { return true } else { return false } }
        #expect(isWholeMapGEMM(algorithm(Self.layer(64, 52, 52, filters: 128, size: 1), vnni)))
        // The AVX-VNNI kernel and its EVEX build: the same rules on blocks of 16 positions (26×27 positions: 44 blocks,
        // 22 + 22, against 256 filters' 43 panels, 22 + 21; 208×209: 2,717 blocks, 1,359 + 1,358, against 32 filters'
        // 6 panels, 3 + 3, the more even).
        for name in [Int8KernelFamily.Name.avxvnni, .avxvnniEVEX] {
            let ymm = try #require(Int8KernelFamily.named(name))
            #expect(ymm.kernel.tileColumns == 16 && ymm.kernel.directSweep != nil)
            #expect(algorithm(Self.layer(256, 26, 26, filters: 256), ymm) == .int8Direct(split: .columns))
            #expect(algorithm(Self.layer(3, 416, 416, filters: 32, stride: 2), ymm) == .int8Direct(split: .filters))
            #expect(isWholeMapGEMM(algorithm(Self.layer(64, 52, 52, filters: 128, size: 1), ymm)))
        }
        // The AVX2 kernel (no direct path, s32 sums): Winograd for every 3×3 stride-1 layer up to 1,827 channels (any
        // channel count: its pairs are of channels) and any activation, im2col + GEMM otherwise. F(4, 3) where its
        // 16-tile blocks need fewer products' columns than F(2, 3)'s (13×13: 1 block of 36 against 4 of 16), whatever the
        // channels; F(2, 3) at 10×10 (1 block of 36 against 2 of 16).
        func isWinograd(_ a: ConvolutionPlan.Algorithm) -> Bool { if case .int8Winograd = a { return true } else { return false } }
        #expect(algorithm(Self.layer(256, 26, 26, filters: 256), avx2) == .int8Winograd(tile: 4))
        #expect(algorithm(Self.layer(5, 52, 52, filters: 16), avx2) == .int8Winograd(tile: 4))
        #expect(algorithm(Self.layer(32, 13, 13, filters: 64), avx2) == .int8Winograd(tile: 4))
        #expect(algorithm(Self.layer(16, 10, 10, filters: 64), avx2) == .int8Winograd(tile: 2))
        #expect(algorithm(Self.layer(64, 52, 52, filters: 16), avx2) == .int8Winograd(tile: 4))
        #expect(algorithm(Self.layer(1_827, 13, 13, filters: 16), avx2) == .int8Winograd(tile: 4))
        #expect(algorithm(Self.layer(64, 10, 10, filters: 64), avx2) == .int8Winograd(tile: 2))
        #expect(ConvolutionPlanner.plan(Self.layer(256, 26, 26, filters: 256), algorithm: .winograd2, int8: avx2, threads: 2).algorithm
                == .int8Winograd(tile: 2))
        #expect(ConvolutionPlanner.plan(Self.layer(64, 10, 10, filters: 64), algorithm: .winograd4, int8: avx2, threads: 2).algorithm
                == .int8Winograd(tile: 4))
        #expect(!isWinograd(algorithm(Self.layer(1_828, 13, 13, filters: 16), avx2)))
        #expect(!isWinograd(algorithm(Self.layer(256, 26, 26, filters: 256), vnni)))
        // SiLU and the other transcendental activations too (their epilogue runs vectorized after the output transform).
        var silu = Self.layer(64, 40, 40, filters: 64)
        silu.activation = .swish
        #expect(algorithm(silu, avx2) == .int8Winograd(tile: 4))
        // `--algorithm im2col` asks for the plain path: im2col + GEMM on either kernel.
        for kernel in [avx2, vnni] {
            let plain = ConvolutionPlanner.plan(Self.layer(256, 26, 26, filters: 256), algorithm: .im2col, int8: kernel, threads: 2).algorithm
            #expect(plain == .gemmBands(rows: try #require(ConvolutionPlanner.int8BandRows(Self.layer(256, 26, 26, filters: 256), kernel: kernel))),
                    "\(kernel.name): \(plain)")
        }
        let strided = Self.layer(64, 104, 104, filters: 128, stride: 2)
        if let rows = ConvolutionPlanner.int8BandRows(strided, kernel: avx2) {
            #expect(algorithm(strided, avx2) == .gemmBands(rows: rows))
        } else {
            #expect(isWholeMapGEMM(algorithm(strided, avx2)))
        }
        #expect(isWholeMapGEMM(algorithm(Self.layer(64, 52, 52, filters: 128, size: 1), avx2)))
        #endif
    }

    @Test func winogradVariantsFollowTheFamily() {
        let wide = Self.layer(64, 104, 104, filters: 64), small = Self.layer(256, 26, 26, filters: 256)
        let avx2 = Self.family(.avx2), portable = Self.family(.portable)
        #expect(ConvolutionPlanner.winogradChoice(wide, m: 4, threads: 2, family: avx2).variant == .rows)
        #expect(ConvolutionPlanner.winogradChoice(small, m: 4, threads: 2, family: avx2).variant == .transposed)
        #expect(ConvolutionPlanner.winogradChoice(wide, m: 4, threads: 2, family: portable).variant == .tiles8)
        #expect(ConvolutionPlanner.winogradChoice(small, m: 4, threads: 2, family: portable).variant == .tiles8)
        let tiles8 = ConvolutionPlanner.winogradChoice(wide, m: 4, threads: 2, family: portable)
        #expect(tiles8.blockTiles % ConvolutionPlanner.tileAlignment(portable) == 0 && tiles8.dealsBlocks)
    }

    @Test func fusionRules() {
        let avx2 = Self.family(.avx2), portable = Self.family(.portable)
        let pool = MaxPoolSpec(size: 2, stride: 2, padding: 1, line: 0)
        let c = Self.layer(16, 208, 208, filters: 32)
        #expect(ConvolutionPlanner.fusesWithMaxPool(c, activation: .leaky, pool: pool, family: avx2))
        #expect(!ConvolutionPlanner.fusesWithMaxPool(c, activation: .leaky, pool: pool, family: portable))
        #expect(!ConvolutionPlanner.fusesWithMaxPool(Self.layer(32, 208, 208, filters: 32), activation: .leaky, pool: pool, family: avx2))
        #expect(!ConvolutionPlanner.fusesWithMaxPool(c, activation: .leaky, pool: MaxPoolSpec(size: 2, stride: 1, padding: 1, line: 0),
                                                     family: avx2))
        #expect(ConvolutionPlanner.directBandRows(c) % 2 == 0)
        // A pair: both banded, the second's band reading at most a quarter of the first's rows.
        let first = Self.layer(3, 416, 416, filters: 32, stride: 2), second = Self.layer(32, 208, 208, filters: 64, stride: 2)
        let p1 = ConvolutionPlanner.plan(first, threads: 2, family: avx2), p2 = ConvolutionPlanner.plan(second, threads: 2, family: avx2)
        #expect(ConvolutionPlanner.fusesIntoNext(p1, p2, secondLayer: second, firstOutputHeight: first.output.height, family: avx2))
        let lut = ConvolutionPlanner.plan(second, lutCodes: true, threads: 2, family: avx2)
        #expect(!ConvolutionPlanner.fusesIntoNext(p1, lut, secondLayer: second, firstOutputHeight: first.output.height, family: avx2))
        // Never on OpenBLAS: the first's rows would be products of split-dependent shapes (GEMM.multiplyWithBLAS).
        let q1 = ConvolutionPlanner.plan(first, threads: 2, family: portable), q2 = ConvolutionPlanner.plan(second, threads: 2, family: portable)
        #expect(!ConvolutionPlanner.fusesIntoNext(q1, q2, secondLayer: second, firstOutputHeight: first.output.height, family: portable))
    }

    @Test func winogradProductsAreCutOnlyWhenThreadsOutnumberThem() {
        #expect(ConvolutionPlanner.productParts(products: 36, filters: 256, alignment: 6, threads: 2) == 1)
        #expect(ConvolutionPlanner.productParts(products: 36, filters: 256, alignment: 6, threads: 8) == 1)
        #expect(ConvolutionPlanner.productParts(products: 36, filters: 256, alignment: 6, threads: 16) == 2)
        #expect(ConvolutionPlanner.productParts(products: 16, filters: 256, alignment: 6, threads: 16) == 4)
        #expect(ConvolutionPlanner.productParts(products: 16, filters: 8, alignment: 6, threads: 16) == 1)  // one panel
    }

    @Test func threadsFollowTheWork() {
        #expect(ConvolutionPlanner.threadCap(flops: 1e9, outputs: 10, threads: 16) == 16)
        #expect(ConvolutionPlanner.threadCap(flops: 3e6, outputs: 10, threads: 16) == 1)
        #expect(ConvolutionPlanner.threadCap(flops: 0, outputs: 200_000, threads: 16) == 6)
        #expect(ConvolutionPlanner.threadCap(flops: 0, outputs: 0, threads: 4) == 1)
    }
}
