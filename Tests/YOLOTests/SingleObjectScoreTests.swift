import Foundation
import Testing
import YOLO
import YOLOEvaluation
import YOLOTestSupport

@Suite struct SingleObjectScoreTests {
    /// Three frames worked by hand: the first is the truth's own, the second half overlaps, the third misses.
    @Test func handWorkedExample() {
        let truth = [Rect(x: 0, y: 0, width: 10, height: 10), Rect(x: 0, y: 0, width: 10, height: 10), Rect(x: 0, y: 0, width: 10, height: 10)]
        let boxes = [Rect(x: 50, y: 50, width: 1, height: 1), Rect(x: 5, y: 0, width: 10, height: 10), Rect(x: 40, y: 0, width: 10, height: 10)]
        let score = SingleObjectScore(boxes: boxes, truth: truth)
        // IoUs 1, 1/3, 0: thresholds 0 and 0.05…0.3 pass 2 frames (7 thresholds), 0.35…0.95 pass 1 (13), 1 none.
        #expect(abs(score.successAUC - (7 * 2.0 / 3 + 13 * 1.0 / 3) / 21) < 1e-12)
        #expect(abs(score.meanIoU - (1 + 1.0 / 3) / 3) < 1e-12)
        #expect(abs(score.precision20 - 2.0 / 3) < 1e-12)  // centre errors 0, 5, 40
        #expect(SingleObjectScore(boxes: [], truth: truth).frames == 0)
    }

    @Test func readsSeparatorsAndRejectsBadLines() throws {
        let folder = TestPaths.temporaryFolder()
        try "1,2,3,4\n5\t6\t7\t8\n\n9 10 11 12 13\n".write(toFile: folder + "/ok.txt", atomically: true, encoding: .utf8)
        #expect(try SingleObjectScore.readBoxes(folder + "/ok.txt") == [Rect(x: 1, y: 2, width: 3, height: 4), Rect(x: 5, y: 6, width: 7, height: 8),
                                                                       Rect(x: 9, y: 10, width: 11, height: 12)])
        try "1,2,3,4\n1,2,x,4\n".write(toFile: folder + "/bad.txt", atomically: true, encoding: .utf8)
        #expect(throws: YOLOError.invalidFile(path: folder + "/bad.txt", message: "line 2: expected x,y,w,h (four numbers), got '1,2,x,4'")) {
            try SingleObjectScore.readBoxes(folder + "/bad.txt")
        }
        #expect(throws: YOLOError.fileNotFound(path: folder + "/none.txt")) { try SingleObjectScore.readBoxes(folder + "/none.txt") }
    }
}
