import Testing
@_spi(Engine) @testable import YOLO
@_spi(Engine) @testable import YOLOConversion

@Suite struct LUTRefinementTests {
    let rows = 16, rowLength = 90

    func squaredError(_ w: [Float], _ lut: LUTWeights) -> Double {
        zip(w, lut.expanded().array).reduce(0.0) { $0 + Double($1.0 - $1.1) * Double($1.0 - $1.1) }
    }

    /// The refined fit never has a larger weight error than the first fit (max-magnitude scales,
    /// nearest codes), and a strictly smaller one at 4 bits per channel (the case it is for: coarse
    /// grids whose scale an outlier pins).
    @Test(arguments: LUTType.allCases, LUTGranularity.allCases)
    func refinementNeverIncreasesTheWeightError(type: LUTType, granularity: LUTGranularity) {
        let w = randomWeights(rows: rows, rowLength: rowLength, seed: 31)
        let first = LUTQuantizer(type: type, granularity: granularity, refinement: LUTRefinement(maxRounds: 0)).quantize(w, rows: rows)
        let refined = LUTQuantizer(type: type, granularity: granularity).quantize(w, rows: rows)
        let before = squaredError(w, first), after = squaredError(w, refined)
        #expect(after <= before)
        if type == .lut4 && granularity == .perChannel { #expect(after < before, "refinement gained nothing: \(before) -> \(after)") }
    }

    /// The refined table stays a valid model-file table: ascending, within [−1, 1]; scales positive.
    @Test func refinedFitIsAValidTable() {
        let w = randomWeights(rows: rows, rowLength: rowLength, seed: 32)
        let lut = LUTQuantizer(type: .lut4).quantize(w, rows: rows)
        let table = lut.table.array
        #expect(zip(table, table.dropFirst()).allSatisfy { $0 <= $1 })
        #expect(table.allSatisfy { abs($0) <= 1 })
        #expect(lut.scales.array.allSatisfy { $0 > 0 && $0.isFinite })
    }

    /// Refining is deterministic: the same weights give the same table, scales and codes.
    @Test func refinementIsDeterministic() {
        let w = randomWeights(rows: rows, rowLength: rowLength, seed: 33)
        let a = LUTQuantizer(type: .lut6).quantize(w, rows: rows), b = LUTQuantizer(type: .lut6).quantize(w, rows: rows)
        #expect(a.table.array == b.table.array && a.scales.array == b.scales.array && a.codes.array == b.codes.array)
    }

    /// With importance weights, the weighted error is never larger than the first fit's.
    @Test func weightedRefinementNeverIncreasesTheWeightedError() {
        let w = randomWeights(rows: rows, rowLength: rowLength, seed: 34)
        let importance = (0..<rowLength).map { Float(1 + ($0 * 7) % 11) }
        let first = LUTQuantizer(type: .lut4, refinement: LUTRefinement(maxRounds: 0)).quantize(w, rows: rows)
        let refined = LUTQuantizer(type: .lut4).quantize(w, rows: rows, importance: { importance[$0 % rowLength] })
        func weighted(_ lut: LUTWeights) -> Double {
            let restored = lut.expanded().array
            return w.indices.reduce(0.0) { $0 + Double(importance[$1 % rowLength]) * Double(restored[$1] - w[$1]) * Double(restored[$1] - w[$1]) }
        }
        #expect(weighted(refined) <= weighted(first))
    }
}
