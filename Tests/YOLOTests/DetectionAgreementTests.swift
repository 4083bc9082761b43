import Testing
@_spi(Engine) @testable import YOLO
@_spi(Engine) @testable import YOLOConversion

@Suite struct DetectionAgreementTests {
    func detection(_ classIndex: Int, _ x: Double, _ confidence: Float) -> Detection {
        Detection(box: Rect(x: x, y: 0.1, width: 0.2, height: 0.4), classIndex: classIndex, label: "c\(classIndex)",
                  confidence: confidence, labels: [], objectness: confidence)
    }

    @Test func matchesSameClassAboveTheIoUThreshold() {
        var agreement = DetectionAgreement(iouThreshold: 0.8)
        let reference = [detection(0, 0.10, 0.9), detection(1, 0.50, 0.6), detection(2, 0.70, 0.3)]
        // Class 0 moved by 0.01 (IoU 0.19 / 0.21), class 1 moved by 0.1 (IoU 0.333), class 2 found as class 3.
        let candidate = [detection(0, 0.11, 0.85), detection(1, 0.60, 0.6), detection(3, 0.70, 0.3), detection(0, 0.9, 0.5)]
        agreement.add(reference: reference, candidate: candidate, image: "a.jpg")
        #expect(agreement.referenceCount == 3 && agreement.candidateCount == 4)
        #expect(agreement.matched == 1)
        #expect(abs(agreement.meanIoU - 0.19 / 0.21) < 1e-9)
        #expect(abs(agreement.maxConfidenceChange - 0.05) < 1e-6)
        #expect(agreement.unmatchedCandidates == 3)
        #expect(agreement.misses.map(\.reference.classIndex) == [1, 2])
        #expect(agreement.misses[0].nearest.map { abs($0.iou - 1.0 / 3) < 1e-9 } == true)
        #expect(agreement.misses[1].nearest == nil)
    }

    @Test func eachCandidateMatchesOnceMostConfidentReferenceFirst() {
        var agreement = DetectionAgreement(iouThreshold: 0.5)
        agreement.add(reference: [detection(0, 0.10, 0.4), detection(0, 0.11, 0.9)], candidate: [detection(0, 0.11, 0.9)])
        #expect(agreement.matched == 1)
        #expect(agreement.maxConfidenceChange == 0)
        #expect(agreement.misses.first?.reference.confidence == 0.4)
        #expect(DetectionAgreement(iouThreshold: 0.9).matchRate == 1)
    }
}

extension DetectionAgreementTests {
    /// A box carrying two classes counts once per class; a candidate whose best class changed
    /// still matches the reference's class when it carries it.
    @Test func boxesWithSeveralClassesCountPerClass() {
        var truck = detection(7, 0.3, 0.55)
        truck.labels = [ClassScore(classIndex: 7, label: "truck", confidence: 0.55), ClassScore(classIndex: 2, label: "car", confidence: 0.4)]
        var car = detection(2, 0.3, 0.6)
        car.labels = [ClassScore(classIndex: 2, label: "car", confidence: 0.6), ClassScore(classIndex: 7, label: "truck", confidence: 0.5)]
        var agreement = DetectionAgreement(iouThreshold: 0.9)
        agreement.add(reference: [truck], candidate: [car])
        #expect(agreement.referenceCount == 2 && agreement.matched == 2)
        #expect(abs(agreement.maxConfidenceChange - 0.2) < 1e-6)
    }
}
