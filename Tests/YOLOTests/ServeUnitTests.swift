import Foundation
import Testing
@_spi(Engine) import YOLO
import YOLOServe
import YOLOTestSupport

/// The server's parts that need no HTTP: admission (slots + bounded queue), multipart forms, request options.
struct ServeUnitTests {
    @Test func admissionBoundsSlotsPlusQueue() throws {
        let admission = Admission(slots: 1, queue: 2)
        for _ in 0..<3 { try admission.enter() }
        #expect(throws: Admission.Refusal.full) { try admission.enter() }
        #expect(admission.waiting == 3)
        admission.leave()
        try admission.enter()
        admission.drain()
        #expect(throws: Admission.Refusal.draining) { try admission.enter() }
        #expect(admission.isDraining)
    }

    /// At most `slots` bodies run at once.
    @Test func admissionRunsAtMostSlots() async throws {
        let admission = Admission(slots: 2, queue: 8)
        let active = Locked((now: 0, peak: 0))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    try await admission.run {
                        active.withLock { $0.now += 1; $0.peak = max($0.peak, $0.now) }
                        usleep(10_000)
                        active.withLock { $0.now -= 1 }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect((1...2).contains(active.withLock { $0.peak }))
        #expect(admission.running == 0)
    }

    /// Waiters get the slot in the order they asked for it.
    @Test func admissionHandsSlotsOverInArrivalOrder() async throws {
        let admission = Admission(slots: 1, queue: 4)
        let gate = DispatchSemaphore(value: 0)
        let order = Locked<[Int]>([])
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await admission.run { gate.wait() } }
            while admission.running < 1 { try await Task.sleep(for: .milliseconds(1)) }
            for i in 1...4 {
                group.addTask { try await admission.run { order.withLock { $0.append(i) } } }
                while admission.queued < i { try await Task.sleep(for: .milliseconds(1)) }
            }
            gate.signal()
            try await group.waitForAll()
        }
        #expect(order.withLock { $0 } == [1, 2, 3, 4])
    }

    /// The memory budget is split into bodies, one image per slot and the detector's part; a budget that
    /// leaves the detector nothing is refused with each part named.
    @Test func memoryBudgetParts() throws {
        var configuration = ServeConfiguration()
        configuration.slots = 2
        configuration.queue = 8
        configuration.maxBodyBytes = 20 << 20
        configuration.maxImageBytes = 256 << 20
        #expect(configuration.uploadBudgetBytes == 200 << 20)
        #expect(configuration.memoryBudget == (200 << 20) + (512 << 20) + ServeConfiguration.defaultDetectorMemory)
        #expect(configuration.detectorMemoryBytes == ServeConfiguration.defaultDetectorMemory)
        try configuration.checkMemory()
        configuration.memoryBytes = 1 << 30
        #expect(configuration.detectorMemoryBytes == (1 << 30) - (712 << 20))
        configuration.memoryBytes = 700 << 20
        #expect(throws: YOLOError.self) { try configuration.checkMemory() }
    }

    /// `quietFor` is nil while a request is admitted and counts from when the last one left.
    @Test func admissionTellsHowLongItWasQuiet() throws {
        let admission = Admission(slots: 1, queue: 1)
        try admission.enter()
        #expect(admission.quietFor == nil)
        admission.leave()
        let quiet = try #require(admission.quietFor)
        #expect(quiet >= .zero && quiet < .seconds(5))
    }

    @Test func multipartForm() throws {
        #expect(MultipartForm.boundary(inContentType: "multipart/form-data; boundary=abc") == "abc")
        #expect(MultipartForm.boundary(inContentType: "multipart/form-data; charset=utf-8; boundary=\"a b\"") == "a b")
        #expect(MultipartForm.boundary(inContentType: "multipart/form-data") == nil)
        #expect(MultipartForm.boundary(inContentType: "multipart/form-data; boundary=" + String(repeating: "x", count: 71)) == nil)
        let binary = Data([0, 13, 10, 45, 45, 255])  // NUL, CRLF, "--", 0xFF inside the file
        var body = Data("preamble\r\n--XyZ\r\nContent-Disposition: form-data; name=\"conf\"\r\n\r\n0.4\r\n".utf8)
        body += Data("--XyZ\r\nContent-Disposition: form-data; name=\"image\"; filename=\"a.png\"\r\nContent-Type: image/png\r\n\r\n".utf8)
        body += binary + Data("\r\n--XyZ--\r\nepilogue".utf8)
        let form = try MultipartForm(body: body, boundary: "XyZ")
        #expect(form.parts.map(\.name) == ["conf", "image"])
        #expect(String(decoding: form.parts[0].data, as: UTF8.self) == "0.4")
        #expect(form.parts[1].filename == "a.png")
        #expect(form.parts[1].contentType == "image/png")
        #expect(form.parts[1].data == binary)
        // Truncated (no closing delimiter), no delimiter at all, a part without a name.
        #expect(throws: MultipartForm.Failure.self) { try MultipartForm(body: body.prefix(body.count - 20), boundary: "XyZ") }
        #expect(throws: MultipartForm.Failure.self) { try MultipartForm(body: Data("nothing".utf8), boundary: "XyZ") }
        #expect(throws: MultipartForm.Failure.self) {
            try MultipartForm(body: Data("--b\r\nContent-Type: text/plain\r\n\r\nx\r\n--b--\r\n".utf8), boundary: "b")
        }
    }

    /// The parser stops at the first limit a form passes, having looked at no byte beyond it: 100,000 empty
    /// fields (5.4 MB, 26.7 CPU-seconds with the parser that searched from the body's start) are refused at
    /// the 17th; a field or a header block over its size at its limit.
    @Test func multipartFormLimits() throws {
        let field = Data("--b\r\nContent-Disposition: form-data; name=\"conf\"\r\n\r\n\r\n".utf8)
        var bomb = Data()
        for _ in 0..<100_000 { bomb += field }
        bomb += Data("--b--\r\n".utf8)
        #expect(throws: MultipartForm.Failure.overLimit("the form has more than 16 parts (the limit)")) {
            try MultipartForm(body: bomb, boundary: "b")
        }
        var limits = MultipartForm.Limits()
        limits.parts = 100_000
        #expect(try MultipartForm(body: bomb, boundary: "b", limits: limits).parts.count == 100_000)

        func form(_ name: String, value: Data, headers: String = "") -> Data {
            Data("--b\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\(headers)\r\n".utf8) + value + Data("\r\n--b--\r\n".utf8)
        }
        let atLimit = Data(repeating: 0x61, count: 4096)
        #expect(try MultipartForm(body: form("classes", value: atLimit), boundary: "b").parts[0].data == atLimit)
        #expect(throws: MultipartForm.Failure.overLimit("the form field 'classes' is over 4096 bytes (the limit)")) {
            try MultipartForm(body: form("classes", value: atLimit + Data("a".utf8)), boundary: "b")
        }
        // The image has no field limit; a long header block does.
        let image = Data(repeating: 0x0D, count: 100_000)
        #expect(try MultipartForm(body: form("image", value: image), boundary: "b").parts[0].data == image)
        #expect(throws: MultipartForm.Failure.overLimit("a part's headers are over 4096 bytes (the limit)")) {
            try MultipartForm(body: form("conf", value: Data(), headers: "X-Pad: " + String(repeating: "x", count: 5000) + "\r\n"), boundary: "b")
        }
    }

    /// An image part made of near-delimiters (CR LF - - and the boundary's first bytes, where each candidate
    /// is compared) comes back whole. Its time, linear in the body, is measured where timings belong:
    /// scripts/serve-attack.py's multipart attack (`make serve-load`), not in a unit test.
    @Test func multipartFormReadsNearDelimitersAsData() throws {
        let boundary = "yolo-boundary-0123456789"
        var part = Data()
        let near = Data("\r\n--yolo-boundary-01234".utf8)
        while part.count < 1 << 20 { part += near }
        let body = Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"image\"\r\n\r\n".utf8) + part
            + Data("\r\n--\(boundary)--\r\n".utf8)
        let form = try MultipartForm(body: body, boundary: boundary)
        #expect(form.parts.count == 1)
        #expect(form.parts.first?.data == part)
    }

    @Test func uploadBudgetHoldsWhatArrived() {
        let budget = UploadBudget(limit: 100)
        let first = budget.hold(), second = budget.hold()
        #expect(first.take(60))
        #expect(!second.take(41))
        #expect(second.take(40))
        #expect(budget.bytes == 100)
        first.release()
        #expect(budget.bytes == 40)
        #expect(second.take(60))
        second.release()
        second.release()
        #expect(budget.bytes == 0)
    }

    @Test func requestOptions() throws {
        let options = try RequestOptions.parse(["conf": "0.3", "iou": "0.5", "classes": "person, 2", "scale": "fit",
                                                "roi": "0,0,0.5,1", "max_det": "7", "agnostic": "true", "size": "320x256"],
                                               memoryBudget: 1 << 30)
        #expect(options.confidenceThreshold == 0.3)
        #expect(options.iouThreshold == 0.5)
        #expect(options.classes == [.label("person"), .index(2)])
        #expect(options.scaling == .scaleFit)
        #expect(options.regionOfInterest == Rect(x: 0, y: 0, width: 0.5, height: 1))
        #expect(options.maximumDetections == 7)
        #expect(options.classAgnostic)
        #expect(options.inputSize == .fixed(width: 320, height: 256))
        #expect(options.memoryBudget == 1 << 30)
        for bad in [["conf": "1"], ["conf": "nan"], ["iou": "0"], ["classes": ","], ["scale": "zoom"], ["roi": "1,2,3"],
                    ["max_det": "0"], ["max_det": "1.5"], ["agnostic": "maybe"], ["size": "big"], ["threshold": "0.5"]] {
            #expect(throws: YOLOError.self, "\(bad)") { try RequestOptions.parse(bad, memoryBudget: 1 << 30) }
        }
    }
}
