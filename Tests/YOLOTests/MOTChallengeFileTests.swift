import Foundation
import Testing
@testable import YOLO
@testable import YOLOMOTMetrics
import YOLOTestSupport

@Suite struct MOTChallengeFileTests {
    /// The error `parse` throws for `text`, or nil.
    func parseError(_ text: String) -> YOLOError? {
        do {
            _ = try MOTChallengeFile.parse(text, path: "res.txt")
            return nil
        } catch {
            return error as? YOLOError
        }
    }

    // MARK: Reading

    @Test func readsTheLayoutsMotmetricsReads() throws {
        // Commas, runs of spaces, tabs; 10, 9 (MOT16 ground truth) or 7 fields; blank lines; CRLF; a BOM.
        let text = "\u{FEFF}1,1,10.5,20,30,40,1,-1,-1,-1\r\n\n2  2 11 21 31 41 0.75 -1 -1 -1\n   \n"
            + "3\t3\t12\t22\t32\t42\t1\t1\t0.5\n4,4,13,23,33,43,-1"
        let records = try MOTChallengeFile.parse(text, path: "gt.txt")
        #expect(records == [
            MOTChallengeRecord(frame: 1, id: 1, x: 10.5, y: 20, width: 30, height: 40, confidence: 1, extra: [-1, -1, -1]),
            MOTChallengeRecord(frame: 2, id: 2, x: 11, y: 21, width: 31, height: 41, confidence: 0.75, extra: [-1, -1, -1]),
            MOTChallengeRecord(frame: 3, id: 3, x: 12, y: 22, width: 32, height: 42, confidence: 1, extra: [1, 0.5]),
            MOTChallengeRecord(frame: 4, id: 4, x: 13, y: 23, width: 33, height: 43, confidence: -1, extra: []),
        ])
    }

    @Test func toleratesSpacesAroundCommas() throws {
        // py-motmetrics' reader takes ", " for two separators (and fails); this one trims the fields.
        let records = try MOTChallengeFile.parse(" 1, 2 , 3.5,4, 5 ,6, 1.0e0 ,-1, -1,-1 \n", path: "gt.txt")
        #expect(records == [MOTChallengeRecord(frame: 1, id: 2, x: 3.5, y: 4, width: 5, height: 6, confidence: 1,
                                               extra: [-1, -1, -1])])
    }

    @Test func acceptsIntegralFramesWrittenAsDecimalsAndNegativeSizes() throws {
        let records = try MOTChallengeFile.parse("7.0,-1,1,1,-5,0,1\n", path: "det.txt")
        #expect(records.first?.frame == 7 && records.first?.id == -1 && records.first?.width == -5)
    }

    @Test func malformedLinesNameTheFileAndLine() {
        let good = "1,1,10,10,20,20,1,-1,-1,-1\n"
        let cases: [(line: String, message: String)] = [
            ("1,1,abc,10,20,20,1,-1,-1,-1", "x 'abc' is not a number"),
            ("1,1,10,nan,20,20,1,-1,-1,-1", "y 'nan' is not a number"),
            ("1,1,10,10,inf,20,1,-1,-1,-1", "width 'inf' is not a number"),
            ("1,1,10,10,20,1e999,1,-1,-1,-1", "height 1e999 is out of range"),
            ("1,1,10,10,20,20,0x1p3,-1,-1,-1", "confidence '0x1p3' is not a number"),
            ("1.5,1,10,10,20,20,1,-1,-1,-1", "frame 1.5 is not an integer"),
            ("1,2.25,10,10,20,20,1,-1,-1,-1", "id 2.25 is not an integer"),
            ("1,1,10,10,20,20", "expected 7 to 10 fields (frame, id, x, y, width, height, confidence, then up to 3 more), found 6"),
            ("1,1,10,10,20,20,1,-1,-1,-1,", "expected 7 to 10 fields (frame, id, x, y, width, height, confidence, then up to 3 more), found 11"),
            ("1,1,,10,20,20,1,-1,-1,-1", "x is empty"),
            ("1,1,2e9,10,20,20,1,-1,-1,-1", "x 2e9 is beyond ±1e9"),
            ("frame,id,x,y,w,h,conf,a,b,c", "frame 'frame' is not a number"),
        ]
        for (line, message) in cases {
            let error = parseError(good + "\n" + line + "\n" + good)
            #expect(error == .invalidConfig(path: "res.txt", line: 3, message: message), "\(line)")
        }
        #expect(parseError(good + "1,1,abc,10,20,20,1\n")?.description == "res.txt:2: x 'abc' is not a number")
    }

    @Test func missingFileAndFolder() throws {
        #expect(throws: YOLOError.fileNotFound(path: "/nonexistent/gt.txt")) {
            try MOTChallengeFile.read(path: "/nonexistent/gt.txt")
        }
        let folder = TestPaths.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(throws: YOLOError.unreadableFile(path: folder, reason: "is a directory")) {
            try MOTChallengeFile.read(path: folder)
        }
    }

    @Test func emptyFileHasNoRecords() throws {
        #expect(try MOTChallengeFile.parse("", path: "res.txt").isEmpty)
        #expect(try MOTChallengeFile.parse("\n \n", path: "res.txt").isEmpty)
    }

    // MARK: Writing

    @Test func writesMOTChallengeLines() {
        let records = [
            MOTChallengeRecord(frame: 1, id: 3, x: 100, y: 50.25, width: 20, height: 40.5, confidence: 0.875),
            MOTChallengeRecord(frame: 2, id: 4, x: 1, y: 2, width: 3, height: 4, confidence: 1, extra: [1, 0.5]),
        ]
        #expect(MOTChallengeFile.line(records[0]) == "1,3,100,50.25,20,40.5,0.875,-1,-1,-1")
        #expect(MOTChallengeFile.lines(records) == "1,3,100,50.25,20,40.5,0.875,-1,-1,-1\n2,4,1,2,3,4,1,1,0.5\n")
        #expect(MOTChallengeFile.lines([]) == "")
    }

    @Test func writtenFilesReadBackUnchanged() throws {
        var random = SeededRandom(seed: 41)
        let records = (0..<200).map { index in
            MOTChallengeRecord(frame: 1 + index / 7, id: Int(random.next() % 50),
                               x: Double(random.float(-10, 1900)), y: Double(random.float(-10, 1000)),
                               width: Double(random.float(0, 300)), height: Double(random.float(0, 600)) * 1e-3,
                               confidence: index % 3 == 0 ? -1 : Double(random.float(0, 1)),
                               extra: index % 5 == 0 ? [1, Double(random.float(0, 1))] : [])
        }
        let path = TestPaths.temporaryFolder() + "/res.txt"
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        try MOTChallengeFile.write(records, to: path)
        let back = try MOTChallengeFile.read(path: path)
        // Records without extra fields are written with -1,-1,-1.
        #expect(back == records.map { record in
            var written = record
            if written.extra.isEmpty { written.extra = [-1, -1, -1] }
            return written
        })
    }
}
