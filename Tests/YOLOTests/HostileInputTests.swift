import Foundation
import Testing
@_spi(Engine) @testable import YOLO
import YOLOTestSupport

/// The reproducers mutation fuzzing found (Fixtures/hostile, copied from the workplace's crashers
/// folder; see its README), and the limits the one validator applies to every description.
/// Each must give one `YOLOError` line naming the file and the field, or, where the input is
/// legitimate (a one-channel model, a long but sane network), work.
@Suite struct HostileInputTests {
    static let folder = TestPaths.fixtures + "/hostile"

    /// Description error for `path`, or nil when it parsed.
    func configError(_ path: String) -> YOLOError? {
        do {
            _ = try ModelDescription(cfgPath: path)
            return nil
        } catch let error as YOLOError {
            return error
        } catch {
            Issue.record("not a YOLOError: \(error)")
            return nil
        }
    }

    // MARK: - Reproducers

    /// Huge numbers in cfg fields trapped in shape arithmetic (`yolo info`): now each names the line and key
    /// (through `yolo info`: YOLOIntegrationTests' HostileInputTests.swift).
    @Test(arguments: [("cfg_106_info_crash", 154, "'stride'"), ("cfg_112_info_crash", 168, "'size'"),
                      ("cfg_116_info_crash", 146, "'padding'"), ("cfg_146_info_crash", 133, "'classes'"),
                      ("cfg_18_info_crash", 50, "'filters'"), ("cfg_20_info_crash", 124, "'padding'"),
                      ("cfg_2_info_crash", 2, "'height'"), ("cfg_50_info_crash", 2, "'height'"),
                      ("cfg_6_info_crash", 116, "'filters'"), ("cfg_80_info_crash", 133, "'classes'")])
    func overflowingConfigs(name: String, line: Int, key: String) throws {
        let path = Self.folder + "/\(name).cfg"
        let error = try #require(configError(path))
        guard case .invalidConfig(let errorPath, let errorLine, let message) = error else {
            Issue.record("wrong case: \(error)")
            return
        }
        #expect(errorPath == path && errorLine == line && message.contains(key), "\(error)")
    }

    /// yolov3-tiny at 8192×8192 is a legitimate description, but its working memory (about 14 GiB) is over
    /// the default budget: the network fails before it allocates, and fits when the budget is raised.
    @Test func largeInputIsOverTheMemoryBudget() throws {
        let description = try ModelDescription(cfgPath: Self.folder + "/cfg_28_detect_crash.cfg")
        #expect(description.inputShape == Shape(channels: 3, height: 8192, width: 8192))
        let geometry = try description.geometry(width: 8192, height: 8192)
        let needed = Network.estimatedWorkspaceBytes(description: description, geometry: geometry)
        #expect(needed > MemoryBudget.defaultBytes)
        #expect(throws: YOLOError.self) {
            try Network.checkMemory(description, width: 8192, height: 8192, budget: MemoryBudget.defaultBytes)
        }
        #expect(try Network.checkMemory(description, width: 8192, height: 8192, budget: needed).count == description.layers.count)
    }

    /// The workspace estimate agrees with what a workspace really allocates: it may only overestimate
    /// (by the scratch bound), never hide a larger allocation.
    @Test func memoryEstimateBoundsTheWorkspace() throws {
        let model = try makeTestModel()
        for (width, height, algorithm) in [(32, 32, ConvolutionAlgorithm.im2col), (64, 96, .im2col), (64, 96, .auto), (256, 160, .auto)] {
            let network = try Network(model: model, width: width, height: height, algorithm: algorithm)
            let workspace = Workspace(for: network, threads: 1, keeping: Set(network.headIndices))
            let geometry = try model.description.geometry(width: width, height: height)
            let estimate = Network.estimatedWorkspaceBytes(description: model.description, geometry: geometry)
            #expect(workspace.arenaCount * 4 <= estimate, "\(width)x\(height) \(algorithm): arena \(workspace.arenaCount * 4) > \(estimate)")
        }
    }

    /// 50,025 sections took minutes (and the memory plan is quadratic in layers): the layer limit stops it at once.
    @Test func tooManySections() throws {
        let body = try String(contentsOfFile: Self.folder + "/cfg_28_detect_crash.cfg", encoding: .utf8)
            .components(separatedBy: "[convolutional]").dropFirst().joined(separator: "[convolutional]")
        let text = "[net]\nwidth=416\nheight=416\n" + String(repeating: "[convolutional]" + body + "\n", count: 2_100)
        do {
            _ = try ModelDescription(config: DarknetConfig(text: text, path: "many.cfg"))
            Issue.record("parsed")
        } catch let error as YOLOError {
            #expect("\(error)".contains("more than the limit of 4096"), "\(error)")
        }
    }

    /// A long but sane network (4,000 one-cell max-pools before a head) is within the limits and runs.
    @Test func longSaneNetworkRuns() throws {
        let pools = String(repeating: "[maxpool]\nsize=1\nstride=1\n\n", count: 4_000)
        let text = "[net]\nwidth=32\nheight=32\nchannels=3\n\n" + pools + """
            [convolutional]
            filters=18
            size=1
            stride=1
            activation=linear

            [yolo]
            mask=0,1,2
            anchors=10,14,23,27,37,58
            classes=1
            """
        let description = try ModelDescription(config: DarknetConfig(text: text, path: "long.cfg"))
        #expect(description.layers.count == 4_002)
        let weights = FloatBuffer([Float](repeating: 0.01, count: 18 * 3))
        let model = Model(description: description, convolutions: [4_000: ConvolutionParameters(weights: weights, biases: FloatBuffer([Float](repeating: 0, count: 18)))],
                          labels: [])
        let detections = try Detector(model: model, threading: Threading(threads: 1)).detect(Image(width: 40, height: 30, pixels: [UInt8](repeating: 128, count: 40 * 30 * 3)))
        #expect(detections.allSatisfy { $0.box.width.isFinite })
    }

    /// A `.yolo` file with one field out of range (and a valid checksum) passed the reader's checks and then
    /// trapped in `MaxPool` or asked for 13 GB: the shared validator rejects both, naming the layer.
    @Test func outOfRangeModelFileFields() throws {
        let model = try makeTestModel()
        func encoded(editing index: Int, _ edit: (LayerSpec) -> LayerSpec) -> [UInt8] {
            var changed = model
            changed.description.layers[index] = edit(changed.description.layers[index])
            return [UInt8](ModelFile.encode(changed))
        }
        let pool = encoded(editing: 1) { layer in
            guard case .maxPool(var s) = layer else { return layer }
            s.padding = 33
            return .maxPool(s)
        }
        #expect(loadError(pool)?.contains("layer 1 [maxpool]: padding 33 is outside 0...2") == true, "\(loadError(pool) ?? "loaded")")
        let convolution = encoded(editing: 2) { layer in
            guard case .convolution(var s) = layer else { return layer }
            s.padding = 1023
            return .convolution(s)
        }
        #expect(loadError(convolution)?.contains("layer 2 [convolutional]: padding 1023 is outside 0...2") == true,
                "\(loadError(convolution) ?? "loaded")")
    }

    /// The shape product of an `.npy` header overflowed.
    @Test func npyShapeOverflow() throws {
        let path = Self.folder + "/npy_shape_overflow.npy"
        #expect(throws: YOLOError.invalidFile(path: path, message: "shape [3037000500, 3037000500] needs more data bytes than the file's 128")) {
            try Tensor.readNumPy(path)
        }
    }

    /// A weights header whose major version is 0x7fffffff overflowed `major · 10 + minor` in Int32.
    @Test func weightsHeaderOverflow() throws {
        let path = Self.folder + "/weights_header_overflow.weights"
        let description = try parse(tinyCfg())
        #expect(throws: YOLOError.self) { try DarknetWeights.load(path, for: description) }
    }

    // MARK: - One-channel models

    /// A legitimate `channels=1` model wrote three planes into a one-plane input (a heap overflow). It now
    /// runs on colour and gray images, from the cfg and from the converted file (through `yolo detect` too:
    /// YOLOIntegrationTests' HostileInputTests.swift).
    @Test func oneChannelModelRuns() throws {
        let cfg = Self.folder + "/min_ch1.cfg", weights = Self.folder + "/min_ch1.weights"
        let colour = try Image(contentsOf: TestPaths.root + "/Samples/coffee.png")
        let gray = try Image(contentsOf: TestPaths.root + "/Samples/camera.png")
        for model in [try Model(cfg: cfg, weights: weights), try Model(contentsOf: Self.folder + "/min_ch1.yolo")] {
            let detector = try Detector(model: model, threading: Threading(threads: 1))
            for image in [colour, gray] { _ = try detector.detect(image) }
        }
    }

    /// The gray input is stb_image's integer luma (what darknet loads for a one-channel network),
    /// computed here independently in floating point, then resampled like colour.
    @Test func oneChannelInputIsLuma() throws {
        let image = try Image(contentsOf: TestPaths.root + "/Samples/coffee.png")
        var lumaPixels = image.pixels
        for i in stride(from: 0, to: lumaPixels.count, by: 3) {
            let (r, g, b) = (Double(image.pixels[i]), Double(image.pixels[i + 1]), Double(image.pixels[i + 2]))
            let y = UInt8((r * 77 / 256 + g * 150 / 256 + b * 29 / 256 + 1e-9).rounded(.down))
            lumaPixels[i] = y; lumaPixels[i + 1] = y; lumaPixels[i + 2] = y
        }
        let luma = Image(width: image.width, height: image.height, pixels: lumaPixels)
        for scaling in DetectionOptions.Scaling.allCases {
            let crop = PixelRegion(x: 0, y: 0, width: image.width, height: image.height)
            let plan = Geometry.plan(imageWidth: image.width, imageHeight: image.height, crop: crop, scaling: scaling,
                                     networkWidth: 96, networkHeight: 64)
            var one = [Float](repeating: -1, count: 96 * 64), three = [Float](repeating: -1, count: 3 * 96 * 64)
            one.withUnsafeMutableBufferPointer { Geometry.makeInput(image, plan: plan, channels: 1, into: $0.baseAddress!) }
            three.withUnsafeMutableBufferPointer { Geometry.makeInput(luma, plan: plan, channels: 3, into: $0.baseAddress!) }
            #expect(one == Array(three[0..<96 * 64]), "\(scaling)")
            #expect(Array(three[0..<96 * 64]) == Array(three[96 * 64..<2 * 96 * 64]))
        }
    }

    /// The full-size yolov3-tiny with `channels=1` and random weights of the right size crashed the same way;
    /// its forward pass overflows to infinities (weights in [0.5, 1.5) compound over 13 layers), which must
    /// give no boxes rather than boxes of infinities.
    @Test func fullSizeOneChannelModel() throws {
        let folder = TestPaths.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let cfg = Self.folder + "/cfg_40_detect_synthw_crash.cfg"
        let description = try ModelDescription(cfgPath: cfg)
        #expect(description.inputShape.channels == 1)
        let weights = try writeWeights(for: description, in: folder).path
        let detector = try Detector(model: Model(cfg: cfg, weights: weights), threading: Threading(threads: 2))
        let detections = try detector.detect(try Image(contentsOf: TestPaths.root + "/Samples/coffee.png"))
        #expect(detections.allSatisfy { $0.box.x.isFinite && $0.box.width.isFinite && $0.confidence.isFinite })
    }

    /// Models of other channel counts cannot be fed images: a clear error, not a precondition.
    @Test func otherChannelCountsAreRefused() throws {
        let text = tinyCfg().replacingOccurrences(of: "channels=3", with: "channels=4")
        let folder = TestPaths.temporaryFolder()
        let cfg = folder + "/four.cfg"
        try text.write(toFile: cfg, atomically: true, encoding: .utf8)
        let weights = try writeWeights(for: parse(text), in: folder).path
        let model = try Model(cfg: cfg, weights: weights)
        #expect(throws: YOLOError.self) { try Detector(model: model) }
    }

    // MARK: - Weights out of range

    /// NaN, infinity and absurd magnitudes in darknet weights are refused at load, naming the layer.
    @Test(arguments: [Float.nan, .infinity, 1e30])
    func nonFiniteDarknetWeights(value: Float) throws {
        let folder = TestPaths.temporaryFolder()
        let description = try parse(tinyCfg())
        let path = try writeWeights(for: description, in: folder).path
        var data = try Data(contentsOf: URL(fileURLWithPath: path))
        let offset = data.count - 4 * 5  // inside the last convolution's weights (no batch norm)
        withUnsafeBytes(of: value.bitPattern.littleEndian) { data.replaceSubrange(offset..<offset + 4, with: $0) }
        try data.write(to: URL(fileURLWithPath: path))
        do {
            _ = try DarknetWeights.load(path, for: description)
            Issue.record("loaded")
        } catch let error as YOLOError {
            #expect("\(error)".hasPrefix("\(path): layer 10 [convolutional] (cfg line"), "\(error)")
        }
    }

    /// The same values in a `.yolo` file's float tensor (checksum re-signed) are refused too.
    @Test func nonFiniteModelFileWeights() throws {
        var model = try makeTestModel()
        let index = try #require(model.convolutions.keys.min())
        var weights = Array(model.convolutions[index]!.weights.buffer)
        weights[3] = .nan
        model.convolutions[index] = ConvolutionParameters(weights: FloatBuffer(weights), biases: model.convolutions[index]!.biases)
        let message = loadError([UInt8](ModelFile.encode(model)))
        #expect(message?.contains("a weight is nan") == true, "\(message ?? "loaded")")
    }

    // MARK: - The validator's limits

    /// Every limit, with a value just past it, through the cfg parser: the error names the line and the field.
    @Test(arguments: [
        ("width=64", "width=8200", "input size 8200x64 is outside 1...8192"),
        ("channels=3", "channels=70000", "channels=70000 is outside 1...65536"),
        ("filters=4\n", "filters=70000\n", "filters 70000 is outside 1...65536"),
        ("size=3\nstride=1\npad=1\nactivation=leaky\n\n[maxpool]\nsize=2\nstride=2\n\n[convolutional]",
         "size=33\nstride=1\npad=1\nactivation=leaky\n\n[maxpool]\nsize=2\nstride=2\n\n[convolutional]", "size 33 is outside 1...31"),
        ("[maxpool]\nsize=2\nstride=2\n\n[convolutional]\nbatch_normalize=1\nfilters=8",
         "[maxpool]\nsize=2\nstride=100\n\n[convolutional]\nbatch_normalize=1\nfilters=8", "stride 100 is outside 1...64"),
        ("[maxpool]\nsize=2\nstride=2\n\n[convolutional]\nbatch_normalize=1\nfilters=8",
         "[maxpool]\nsize=2\nstride=2\npadding=3\n\n[convolutional]\nbatch_normalize=1\nfilters=8", "padding 3 is outside 0...2"),
        ("pad=1\nactivation=leaky\n\n[maxpool]\nsize=2\nstride=2\n\n[convolutional]\nbatch_normalize=1\nfilters=8",
         "padding=3\nactivation=leaky\n\n[maxpool]\nsize=2\nstride=2\n\n[convolutional]\nbatch_normalize=1\nfilters=8", "padding 3 is outside 0...2"),
        ("[upsample]\nstride=2", "[upsample]\nstride=65", "stride 65 is outside 1...64"),
    ])
    func limits(original: String, replacement: String, fragment: String) throws {
        let text = tinyCfg()
        #expect(text.contains(original), "fixture changed: \(original)")
        do {
            _ = try parse(text.replacingOccurrences(of: original, with: replacement))
            Issue.record("parsed")
        } catch let error as YOLOError {
            guard case .invalidConfig(_, let line, let message) = error else { Issue.record("wrong case \(error)"); return }
            #expect(message.contains(fragment) && line > 0, "\(error)")
        }
    }

    /// A hand-built description is held to the same limits when it is used (geometry validates it).
    @Test func builtDescriptionsAreValidated() throws {
        var description = try parse(tinyCfg())
        guard case .convolution(var s) = description.layers[0] else { Issue.record("layer 0"); return }
        s.stride = Int.max
        description.layers[0] = .convolution(s)
        #expect(throws: YOLOError.self) { try description.geometry(width: 64, height: 64) }
        #expect(description.sizeDivisor == ModelLimits.standard.maximumSide + 1)
    }

    // MARK: - Files and flags

    /// Temporary files a killed process (SIGKILL) left next to a target are removed by the next write to it;
    /// those of live processes and of other targets are not touched.
    @Test func staleTemporariesAreRemoved() throws {
        let folder = TestPaths.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let finished = Process()
        finished.executableURL = URL(fileURLWithPath: "/bin/true")
        try finished.run()
        finished.waitUntilExit()
        let stale = folder + "/.out.png.\(finished.processIdentifier).1234.tmp"
        let live = folder + "/.out.png.\(getpid()).99.tmp"
        let other = folder + "/.other.png.\(finished.processIdentifier).1234.tmp"
        for path in [stale, live, other] { FileManager.default.createFile(atPath: path, contents: Data([1])) }
        try FileIO.writeAtomically(Data([2]), to: folder + "/out.png")
        let names = Set(try FileManager.default.contentsOfDirectory(atPath: folder))
        #expect(names == ["out.png", ".out.png.\(getpid()).99.tmp", ".other.png.\(finished.processIdentifier).1234.tmp"])
    }

    /// Files that report size 0 go through FileHandle (Foundation's `Data(contentsOf:)` leaks on them): an
    /// empty file reads as empty, a generated one (procfs) with its content, a folder is an error.
    @Test func sizeZeroFilesReadWholly() throws {
        let folder = TestPaths.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(FileManager.default.createFile(atPath: folder + "/empty", contents: nil))
        #expect(try FileIO.read(folder + "/empty").isEmpty)
        #expect(try FileIO.readText("/proc/self/status").contains("VmRSS"))
        #expect(throws: YOLOError.self) { try FileIO.read(folder) }
    }

    /// A path that reports no size and never ends (`/dev/zero`; fuzz-mutate's cli-0127 trapped in
    /// Foundation's readDataToEndOfFile) is read up to `FileIO.unsizedLimit`, then refused in one line.
    @Test func endlessUnsizedFilesAreRefused() throws {
        #expect(throws: YOLOError.unreadableFile(path: "/dev/zero", reason: "reports no size and holds more than 256 MB (a device or an endless stream?)")) {
            try FileIO.read("/dev/zero")
        }
    }

    /// An empty class list and a confidence threshold above 1 are errors of the call, not silent no-ops.
    @Test func emptyClassesAndConfidenceAboveOneAreRefused() throws {
        let empty = DetectionOptions.ClassSelector.index(0)
        var options = DetectionOptions()
        options.classes = []
        let detector = try Detector(model: makeTestModel(), threading: Threading(threads: 1))
        #expect(throws: YOLOError.self) { try detector.detect(Image(width: 8, height: 8, pixels: [UInt8](repeating: 0, count: 192)), options: options) }
        options.classes = [empty]
        options.confidenceThreshold = 1.5
        #expect(throws: YOLOError.self) { try detector.detect(Image(width: 8, height: 8, pixels: [UInt8](repeating: 0, count: 192)), options: options) }
    }

    @Test func memoryBudgetSizes() {
        #expect(MemoryBudget.parse("512M") == 512 << 20)
        #expect(MemoryBudget.parse("4g") == 4 << 30)
        #expect(MemoryBudget.parse("1.5GiB") == 3 << 29)
        #expect(MemoryBudget.parse("2048") == 2 << 30)
        for bad in ["", "0", "-1G", "G", "lots", "1e300G", "nan"] { #expect(MemoryBudget.parse(bad) == nil, "\(bad)") }
    }

    // MARK: - Found by scripts/fuzz-mutate.py

    /// Heads with different class counts passed validation and then failed a precondition in decoding.
    @Test func headsMustAgreeOnClasses() throws {
        var text = tinyCfg(classes: 2)
        let last = try #require(text.range(of: "classes=2", options: .backwards))
        text.replaceSubrange(last, with: "classes=3")
        let filters = try #require(text.range(of: "filters=21", options: .backwards))
        text.replaceSubrange(filters, with: "filters=24")
        do {
            _ = try parse(text)
            Issue.record("parsed")
        } catch let error as YOLOError {
            #expect("\(error)".contains("every head must have the same classes"), "\(error)")
        }
    }

    /// A cfg saved with Windows line endings parses like the original (its error was the whole file on one "line").
    @Test func windowsLineEndings() throws {
        let unix = try parse(tinyCfg())
        let windows = try parse(tinyCfg().replacingOccurrences(of: "\n", with: "\r\n"))
        #expect(windows.layers.map(\.line) == unix.layers.map(\.line))
        #expect(windows.layers.count == unix.layers.count && windows.inputShape == unix.inputShape)
    }

    /// Whatever a file holds, an error is one line of bounded length.
    @Test func errorsStayOneLine() {
        let hostile = "bad dimension '\n416'\r\u{1b}[31m" + String(repeating: "x", count: 100_000)
        let text = "\(YOLOError.invalidConfig(path: "a.cfg", line: 3, message: hostile))"
        #expect(!text.contains("\n") && !text.contains("\r") && !text.contains("\u{1b}"))
        #expect(text.count < 500 && text.hasPrefix("a.cfg:3: bad dimension '\\n416'\\r\\u{1B}[31m"), "\(text.prefix(80))")
    }
}
