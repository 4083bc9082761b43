import Testing
@_spi(Engine) @testable import YOLO

@Suite struct TimingSummaryTests {
    @Test func orderStatistics() {
        let s = TimingSummary([5, 1, 4, 2, 3, 10, 6, 7, 9, 8])
        #expect(s.runs == 10 && s.min == 1 && s.max == 10)
        #expect(s.median == 5.5)
        #expect(s.p90 == 9)   // nearest rank: the 9th of 10
        let odd = TimingSummary([3, 1, 2])
        #expect(odd.median == 2 && odd.p90 == 3)
    }
}
