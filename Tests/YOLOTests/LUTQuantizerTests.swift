import Testing
@_spi(Engine) @testable import YOLO
@_spi(Engine) @testable import YOLOConversion
import YOLOTestSupport

/// Random convolution-like weights: `rows` filters whose scales span two orders of magnitude
/// (as folded batch norm gives), values peaked around zero.
func randomWeights(rows: Int, rowLength: Int, seed: UInt64) -> [Float] {
    var random = SeededRandom(seed: seed)
    var weights: [Float] = []
    for r in 0..<rows {
        let scale = Float(0.02) * Float(1 + (r * 37) % 100)
        for _ in 0..<rowLength {
            let u = random.float()
            weights.append(scale * u * u * u + scale * 0.05 * random.float())
        }
    }
    return weights
}

func rmse(_ a: [Float], _ b: [Float]) -> Double {
    a.withUnsafeBufferPointer { x in b.withUnsafeBufferPointer { y in WeightError(x, y).rmse } }
}

@Suite struct LUTQuantizerTests {
    let rows = 12, rowLength = 75
    var weights: [Float] { randomWeights(rows: rows, rowLength: rowLength, seed: 9) }

    /// Linear tables: every weight is within half a table step of its value. The step of a group is
    /// `2m / (2^bits − 1)` (m = the group's largest |w|); the slack of 4 ulps of m covers float32
    /// rounding of the table values and of `scale · table[code]`.
    @Test(arguments: LUTType.allCases, LUTGranularity.allCases)
    func linearErrorIsAtMostHalfAStep(type: LUTType, granularity: LUTGranularity) {
        let w = weights
        let q = LUTQuantizer(type: type, granularity: granularity, method: .linear).quantize(w, rows: rows)
        let restored = q.expanded().array
        for i in w.indices {
            let m = q.scale(ofRow: i / rowLength)
            let step = 2 * m / Float(type.tableSize - 1)
            #expect(abs(restored[i] - w[i]) <= step / 2 + 4 * m.ulp, "\(type) \(granularity) weight \(i)")
        }
    }

    /// k-means tables have an RMSE no larger than linear ones on the same data, and per-channel
    /// tables beat one table for the layer when filter scales differ.
    @Test(arguments: LUTType.allCases)
    func kmeansBeatsLinearAndPerChannelBeatsPerLayer(type: LUTType) {
        let w = weights
        func error(_ granularity: LUTGranularity, _ method: LUTMethod) -> Double {
            rmse(w, LUTQuantizer(type: type, granularity: granularity, method: method).quantize(w, rows: rows).expanded().array)
        }
        for granularity in LUTGranularity.allCases {
            #expect(error(granularity, .kmeans) <= error(granularity, .linear), "\(type) \(granularity)")
        }
        #expect(error(.perChannel, .kmeans) < error(.perLayer, .kmeans))
    }

    @Test func deterministic() {
        let w = weights
        let quantizer = LUTQuantizer(type: .lut6, granularity: .perChannel, method: .kmeans)
        let a = quantizer.quantize(w, rows: rows), b = quantizer.quantize(w, rows: rows)
        #expect(a.codes.array == b.codes.array)
        #expect(a.table.array == b.table.array)
        #expect(a.scales.array == b.scales.array)
    }

    @Test func zeroRowsStayZero() {
        var w = weights
        for i in 0..<rowLength { w[3 * rowLength + i] = 0 }
        let restored = LUTQuantizer(type: .lut4).quantize(w, rows: rows).expanded().array
        #expect(restored[3 * rowLength ..< 4 * rowLength].allSatisfy { $0 == 0 })
    }
}
