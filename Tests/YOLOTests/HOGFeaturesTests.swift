import Foundation
import Testing
@testable import YOLO
import YOLOTestSupport

@Suite struct HOGFeaturesTests {
    /// The polynomial atan2 bins every direction as Felzenszwalb's rule does: the largest dot product with the
    /// 18 unit vectors at k × 20°.
    @Test func directionIsTheNearestOfEighteen() {
        var random = SeededRandom(seed: 7)
        for _ in 0..<20000 {
            let (dx, dy) = (random.float(), random.float())
            guard dx != 0 || dy != 0 else { continue }
            var best = -Float.infinity, expected = 0
            for k in 0..<18 {
                let a = Double(k) * Double.pi / 9
                let dot = Float(cos(a)) * dx + Float(sin(a)) * dy
                if dot > best { best = dot; expected = k }
            }
            let got = Int(HOGFeatures.direction(dx, dy))
            // Exactly between two directions either is right.
            let a = Double(got) * Double.pi / 9
            let gotDot = Float(cos(a)) * dx + Float(sin(a)) * dy
            #expect(got == expected || abs(gotDot - best) < 2e-4 * max(abs(dx), abs(dy)), "\(dx), \(dy): \(got) vs \(expected)")
        }
    }

    @Test func flatPatchHasNoFeatures() {
        let map = HOGFeatures.compute(gray: [Float](repeating: 0.4, count: 32 * 24), width: 32, height: 24, cellSize: 4)
        #expect(map.channels == 31 && map.width == 8 && map.height == 6)
        #expect(map.values.allSatisfy { $0 == 0 })
    }

    /// A vertical edge (dark left, bright right): gradients point along +x, so orientation 0 (contrast-sensitive)
    /// and 0 (insensitive) carry the energy next to the edge, and the opposite direction (bin 9) none.
    @Test func verticalEdgeVotesForTheHorizontalDirection() {
        let (w, h) = (32, 32)
        let gray = (0..<(w * h)).map { Float($0 % w < 16 ? 0.1 : 0.9) }
        let map = HOGFeatures.compute(gray: gray, width: w, height: h, cellSize: 4)
        let cells = map.planeCount
        let cell = 3 * map.width + 3  // row 3, column 3: holds the edge's left side
        let sensitive = (0..<18).map { map.values[$0 * cells + cell] }
        #expect(sensitive[0] > 0.1)
        #expect(sensitive.indices.filter { $0 != 0 }.allSatisfy { sensitive[$0] == 0 })
        #expect(map.values[18 * cells + cell] == sensitive[0])  // insensitive 0 = sensitive 0 + 9
        let far = 3 * map.width  // column 0: flat
        #expect((0..<31).allSatisfy { map.values[$0 * cells + far] == 0 })
    }
}

@Suite struct ColorNameTableTests {
    @Test func probabilitiesSumToOneAndNameObviousColours() {
        let table = ColorNameTable.probabilities
        #expect(table.count == 32768 * 11)
        for bin in stride(from: 0, to: 32768, by: 97) {
            let sum = table[(bin * 11)..<(bin * 11 + 11)].reduce(0, +)
            #expect(abs(sum - 1) < 1e-4)
        }
        func name(_ r: Int, _ g: Int, _ b: Int) -> String {
            let i = ColorNameTable.index(r: r, g: g, b: b) * 11
            let p = Array(table[i..<(i + 11)])
            return ColorNameTable.terms[p.firstIndex(of: p.max()!)!]
        }
        #expect(name(250, 10, 10) == "red")
        #expect(name(10, 200, 10) == "green")
        #expect(name(20, 30, 240) == "blue")
        #expect(name(250, 250, 20) == "yellow")
        #expect(name(5, 5, 5) == "black")
        #expect(name(250, 250, 250) == "white")
        #expect(name(128, 128, 128) == "grey")
        #expect(name(250, 140, 0) == "orange")
        #expect(name(130, 30, 180) == "purple")
        #expect(name(255, 150, 200) == "pink")
        #expect(name(120, 70, 20) == "brown")
    }
}
