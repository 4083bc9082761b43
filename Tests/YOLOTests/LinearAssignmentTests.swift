import Foundation
import Testing
@_spi(Engine) @testable import YOLO
import YOLOTestSupport

@Suite struct LinearAssignmentTests {
    /// Every injective map of the smaller side into the larger, by enumeration: the pairs with the most
    /// allowed (finite) entries and, among those, the least total cost.
    func bruteForce(_ costs: [Double], rows: Int, columns: Int) -> (count: Int, cost: Double) {
        var best = (count: -1, cost: Double.infinity)
        let transposed = rows > columns
        let (n, m) = transposed ? (columns, rows) : (rows, columns)
        var used = [Bool](repeating: false, count: m)
        func visit(_ i: Int, _ count: Int, _ cost: Double) {
            if i == n {
                if count > best.count || (count == best.count && cost < best.cost - 1e-12) { best = (count, cost) }
                return
            }
            for j in 0..<m where !used[j] {
                let c = transposed ? costs[j * columns + i] : costs[i * columns + j]
                used[j] = true
                if c.isFinite { visit(i + 1, count + 1, cost + c) } else { visit(i + 1, count, cost) }
                used[j] = false
            }
        }
        visit(0, 0, 0)
        return best
    }

    @Test func matchesBruteForceOnRandomMatrices() {
        var random = SeededRandom(seed: 5)
        for trial in 0..<600 {
            let rows = 1 + Int(random.next() % 6), columns = 1 + Int(random.next() % 6)
            let forbiddenShare = Double(trial % 4) * 0.2
            // Integer costs half the time, so ties (several optimal matchings) are common.
            let costs: [Double] = (0..<rows * columns).map { _ in
                if Double(random.float(0, 1)) < forbiddenShare { return .infinity }
                let value = Double(random.float(-1, 3))
                return trial % 2 == 0 ? value.rounded() : value
            }
            let pairs = LinearAssignment.solve(costs: costs, rows: rows, columns: columns)
            #expect(Set(pairs.map(\.row)).count == pairs.count && Set(pairs.map(\.column)).count == pairs.count)
            #expect(pairs.allSatisfy { costs[$0.row * columns + $0.column].isFinite })
            let cost = pairs.reduce(0.0) { $0 + costs[$1.row * columns + $1.column] }
            let expected = bruteForce(costs, rows: rows, columns: columns)
            #expect(pairs.count == expected.count, "trial \(trial): \(rows)×\(columns)")
            #expect(abs(cost - expected.cost) < 1e-9, "trial \(trial): cost \(cost), best \(expected.cost)")
        }
    }

    @Test func emptyAndFullyForbiddenMatrices() {
        #expect(LinearAssignment.solve(costs: [], rows: 0, columns: 3).isEmpty)
        #expect(LinearAssignment.solve(costs: [], rows: 4, columns: 0).isEmpty)
        #expect(LinearAssignment.solve(costs: [.infinity, .nan], rows: 1, columns: 2).isEmpty)
    }

    @Test func prefersMorePairsOverCheaperOnes() {
        // Row 0 alone would take column 0 (cost 0), but then row 1 has nothing: two pairs at cost 20 win.
        let costs: [Double] = [0, 10, 10, .infinity]
        let pairs = LinearAssignment.solve(costs: costs, rows: 2, columns: 2)
        #expect(pairs == [.init(row: 0, column: 1), .init(row: 1, column: 0)])
    }
}
