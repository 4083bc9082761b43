import Testing
@_spi(Engine) @testable import YOLO
@_spi(Engine) @testable import YOLOEvaluation

@Suite struct COCOBoxTests {
    let truth = COCOBox(x: 0, y: 0, width: 10, height: 10)

    @Test func overlapIsIntersectionOverUnion() {
        // 5x10 shared of 100 + 100 - 50.
        #expect(COCOBox.overlap(detection: COCOBox(x: 5, y: 0, width: 10, height: 10), groundTruth: truth, crowd: false) == 50.0 / 150.0)
    }

    @Test func crowdOverlapDividesByTheDetectionArea() {
        // A detection inside a crowd region covers itself fully.
        #expect(COCOBox.overlap(detection: COCOBox(x: 2, y: 2, width: 3, height: 3), groundTruth: truth, crowd: true) == 1)
        #expect(COCOBox.overlap(detection: COCOBox(x: 5, y: 0, width: 10, height: 10), groundTruth: truth, crowd: true) == 0.5)
    }

    @Test func touchingOrEmptyBoxesDoNotOverlap() {
        #expect(COCOBox.overlap(detection: COCOBox(x: 10, y: 0, width: 5, height: 5), groundTruth: truth, crowd: false) == 0)
        #expect(COCOBox.overlap(detection: COCOBox(x: 1, y: 1, width: 0, height: 0), groundTruth: truth, crowd: true) == 0)
    }

    @Test func roundingKeepsFourDecimals() {
        let box = COCOBox(x: 267.85289764404297, y: 249.28009033203122, width: 32.96260595321655, height: 0.00004)
        #expect(box.rounded(decimals: 4) == COCOBox(x: 267.8529, y: 249.2801, width: 32.9626, height: 0))
    }
}
