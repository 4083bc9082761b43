import Foundation
import Testing
@_spi(Engine) @testable import YOLO
@_spi(Engine) @testable import YOLOConversion
import YOLOTestSupport

/// ONNX import (docs/ONNX.md) on the fixtures of scripts/make-onnx-fixtures.py: a narrow YOLOv8-structured graph
/// with seeded random weights, compared with onnxruntime's outputs for the same input blob (made by that script).
@Suite struct ONNXImportTests {
    static let folder = TestPaths.fixtures + "/onnx"
    static let tiny = folder + "/yolov8-tiny-random.onnx"

    struct Reference: Decodable {
        let classIndex: Int
        let confidence: Float
        let box: [Double]
    }

    /// The raw heads of the converted graph match onnxruntime's head Concat tensors.
    @Test func headsMatchOnnxruntime() throws {
        let model = try Model(onnx: Self.tiny)
        let network = try Network(model: model)
        let input = try Tensor.readNumPy(Self.folder + "/input.npy")
        let heads = try network.forward(Tensor(shape: network.inputShape, values: input.values))
        #expect(heads.count == 2)
        for (k, head) in heads.enumerated() {
            let reference = try Tensor.readNumPy(Self.folder + "/head\(k).npy")
            #expect(head.values.count == reference.values.count)
            let worst = zip(head.values, reference.values).map { abs($0 - $1) }.max() ?? .infinity
            #expect(worst < 1e-4, "head \(k): max difference \(worst)")
        }
    }

    /// Decoding (DFL expectation, anchor points, strides, sigmoid scores) and class-aware suppression at
    /// Ultralytics' defaults give onnxruntime's output0 as Ultralytics' NMS reduces it: same classes and order,
    /// boxes within 0.01 px, confidences within 1e-5.
    @Test func detectionsMatchOnnxruntime() throws {
        try Self.checkDetections(Self.tiny, prefix: "", boxTolerance: 0.01, confidenceTolerance: 1e-5)
    }

    /// The converted model's detections on the fixture's input against `{prefix}detections.json`.
    static func checkDetections(_ path: String, prefix: String, boxTolerance: Double, confidenceTolerance: Float) throws {
        let model = try Model(onnx: path)
        let network = try Network(model: model)
        let input = try Tensor.readNumPy(Self.folder + "/\(prefix)input.npy")
        let heads = try network.forward(Tensor(shape: network.inputShape, values: input.values))
        let side = network.inputShape.width
        var candidates = Candidates(classes: model.classCount)
        for (head, raw) in zip(network.heads, heads) {
            raw.values.withUnsafeBufferPointer {
                AnchorDecoding.decode($0, head: head, networkWidth: side, networkHeight: side, threshold: 0.25, into: &candidates)
            }
        }
        NonMaximumSuppression.perClass(&candidates, threshold: 0.7)
        var found: [(k: Int, p: Float, box: Rect)] = []
        for i in 0..<candidates.count {
            for k in 0..<candidates.classes where candidates.probabilities[i * candidates.classes + k] > 0 {
                found.append((k, candidates.probabilities[i * candidates.classes + k], candidates.boxes[i]))
            }
        }
        found.sort { $0.p > $1.p }
        let data = try #require(FileManager.default.contents(atPath: Self.folder + "/\(prefix)detections.json"))
        let reference = try JSONDecoder().decode([Reference].self, from: data)
        #expect(reference.count > 3, "the fixture should hold several detections")
        try #require(found.count == reference.count, "\(found.count) detections, onnxruntime \(reference.count)")
        var (worstBox, worstConfidence) = (0.0, Float(0))
        for (mine, theirs) in zip(found, reference) {
            #expect(mine.k == theirs.classIndex)
            #expect(abs(mine.p - theirs.confidence) < confidenceTolerance)
            let corners = [mine.box.minX, mine.box.minY, mine.box.maxX, mine.box.maxY].map { $0 * Double(side) }
            let worst = zip(corners, theirs.box).map { abs($0 - $1) }.max()!
            #expect(worst < boxTolerance, "box \(corners) vs \(theirs.box)")
            (worstBox, worstConfidence) = (max(worstBox, worst), max(worstConfidence, abs(mine.p - theirs.confidence)))
        }
        print("\(path): \(found.count) detections, largest box difference \(worstBox) px, confidence \(worstConfidence)")
    }

    static let yolo11 = folder + "/yolo11-tiny-random.onnx"

    /// YOLO11: the raw heads (C3k2, SPPF, C2PSA's attention, the depthwise class branch) match onnxruntime's.
    @Test func yolo11HeadsMatchOnnxruntime() throws {
        let network = try Network(model: try Model(onnx: Self.yolo11))
        let input = try Tensor.readNumPy(Self.folder + "/yolo11-input.npy")
        let heads = try network.forward(Tensor(shape: network.inputShape, values: input.values))
        #expect(heads.count == 3)
        for (k, head) in heads.enumerated() {
            let reference = try Tensor.readNumPy(Self.folder + "/yolo11-head\(k).npy")
            try #require(head.values.count == reference.values.count)
            let worst = zip(head.values, reference.values).map { abs($0 - $1) }.max() ?? .infinity
            print("yolo11 head \(k): max difference \(worst)")
            #expect(worst < 1e-4, "head \(k): max difference \(worst)")
        }
    }

    /// YOLO11's detections equal onnxruntime's as Ultralytics' NMS reduces them.
    @Test func yolo11DetectionsMatchOnnxruntime() throws {
        try Self.checkDetections(Self.yolo11, prefix: "yolo11-", boxTolerance: 0.01, confidenceTolerance: 1e-5)
    }

    /// The mapping: SiLU fused into the convolutions, the head anchor-free with the DFL's 16 bins, class names
    /// from the metadata, Ultralytics' letterbox as the preferred scaling; and a model file round trip.
    @Test func mappingAndModelFileRoundTrip() throws {
        let model = try Model(onnx: Self.tiny)
        #expect(model.labels == ["cat", "dog", "it's"])
        #expect(model.preferredScaling == .scaleFit && model.preferredResampling == .openCV)
        #expect(model.description.letterboxFill == Float(114) / 255)
        let heads = model.description.heads
        #expect(heads.count == 2 && heads.allSatisfy { $0.spec.isAnchorFree && $0.spec.distributionBins == 16 && $0.spec.classes == 3 })
        let activations = model.description.layers.compactMap { layer -> Activation? in
            if case .convolution(let s) = layer { return s.activation }
            return nil
        }
        #expect(activations.filter { $0 == .swish }.count == activations.count - 4, "all but the four head outputs are SiLU")
        #expect(model.inputSizeDivisor == 16, "the deepest map is 1/16 of the input; the PAN's second downsampling counts once")
        let bytes = [UInt8](ModelFile.encode(model))
        #expect(bytes[10] == 6, "the writer writes the current version; a file without 1.6's layer kinds reads in 1.5 readers")
        let loaded = try Model(modelFileData: Data(bytes), path: "t.yolo")
        #expect(loaded.description.heads.map(\.spec) == heads.map(\.spec))
        #expect(loaded.description.letterboxFill == model.description.letterboxFill)
        #expect(loaded.labels == model.labels)
        #expect([UInt8](ModelFile.encode(loaded)) == bytes)
    }

    /// A converted Ultralytics model suppresses at Ultralytics' defaults unless a request says otherwise (IoU 0.7, at
    /// most 300 detections); darknet models keep darknet's (0.45, no limit). `detect` with default options gives the
    /// same detections as with those values set, on an image whose candidates overlap (a low threshold on random
    /// pixels makes hundreds).
    @Test func suppressionDefaultsFollowTheModel() throws {
        let model = try Model(onnx: Self.tiny)
        #expect(model.preferredIoUThreshold == 0.7 && model.preferredMaximumDetections == 300)
        #expect(model.description.suppressionSettings(DetectionOptions()) == (0.7, 300))
        var options = DetectionOptions()
        options.iouThreshold = 0.5
        options.maximumDetections = Int.max
        #expect(model.description.suppressionSettings(options) == (0.5, nil))
        let darknet = try ModelDescription(config: DarknetConfig(text: "[net]\nwidth=32\nheight=32\nchannels=3\n[convolutional]\nfilters=18\nsize=1\nstride=1\nactivation=linear\n[yolo]\nmask=0,1,2\nanchors=1,1, 2,2, 3,3\nclasses=1\nnum=3\n", path: "mini.cfg"))
        #expect(darknet.suppressionSettings(DetectionOptions()) == (0.45, nil))

        let detector = try Detector(model: model)
        var random = SeededRandom(seed: 7)
        let image = Image(width: 64, height: 64, pixels: (0..<64 * 64 * 3).map { _ in UInt8(truncatingIfNeeded: random.next()) })
        var low = DetectionOptions()
        low.confidenceThreshold = 0.01
        var explicit = low
        explicit.iouThreshold = 0.7
        explicit.maximumDetections = 300
        var darknetLike = low
        darknetLike.iouThreshold = 0.45
        darknetLike.maximumDetections = Int.max
        let defaults = try detector.detect(image, options: low)
        #expect(defaults == (try detector.detect(image, options: explicit)))
        #expect(defaults != (try detector.detect(image, options: darknetLike)), "the settings must matter on this image")
    }

    /// YOLO11's mapping: the depthwise convolutions (two per class branch, C2PSA's pe) keep their groups and
    /// are planned as grouped; C2PSA becomes one attention layer (2 heads, key 4, value 8 channels, scale
    /// 4^-0.5); the model file (1.6) round-trips bytes and outputs; lut8 and int8 conversions keep the grouped
    /// layers float32 and still run.
    @Test func yolo11MappingAndModelFile() throws {
        let model = try Model(onnx: Self.yolo11)
        let grouped = model.description.layers.compactMap { layer -> ConvolutionSpec? in
            if case .convolution(let s) = layer, s.isGrouped { return s }
            return nil
        }
        #expect(grouped.count == 7 && grouped.allSatisfy { $0.size == 3 && $0.filters == $0.groups })
        let attentions = model.description.layers.compactMap { layer -> AttentionSpec? in
            if case .attention(let s) = layer { return s }
            return nil
        }
        #expect(attentions.map(\.heads) == [2] && attentions.map(\.keyChannels) == [4] && attentions.map(\.valueChannels) == [8])
        #expect(attentions.first?.scale == Float(0.5))
        let network = try Network(model: model)
        for index in model.description.groupedConvolutions {
            #expect(network.plan.convolutions[index]?.algorithm == .grouped)
            #expect(network.layers[index] is GroupedConvolution)
        }
        let bytes = [UInt8](ModelFile.encode(model))
        #expect(bytes[10] == 6)
        let loaded = try Model(modelFileData: Data(bytes), path: "t.yolo")
        #expect([UInt8](ModelFile.encode(loaded)) == bytes)
        let input = try Tensor.readNumPy(Self.folder + "/yolo11-input.npy")
        let blob = Tensor(shape: network.inputShape, values: input.values)
        let direct = try network.forward(blob)
        #expect(try Network(model: loaded).forward(blob).map(\.values) == direct.map(\.values))
        // Quantized: every plain convolution gets codes, the grouped ones stay float32.
        let lut = try ModelConverter.convert(model, settings: ConversionSettings(type: .lut8))
        #expect(Set(lut.quantizedConvolutions.keys).isDisjoint(with: model.description.groupedConvolutions))
        #expect(model.description.groupedConvolutions.isSubset(of: Set(lut.convolutions.keys)))
        #expect(lut.quantizedConvolutions.count >= model.convolutions.count - grouped.count - 1, "all but the grouped (and the kept first)")
        let lutLoaded = try Model(modelFileData: ModelFile.encode(lut), path: "lut.yolo", residency: .codes)
        let lutHeads = try Network(model: lutLoaded).forward(blob)
        #expect(lutHeads.count == 3 && lutHeads.allSatisfy { $0.values.allSatisfy(\.isFinite) })
        let (int8, _) = try ModelConverter.convertInt8(model, settings: Int8ConversionSettings(), calibration: [blob])
        #expect(Set(int8.int8Convolutions.keys).isDisjoint(with: model.description.groupedConvolutions))
        #expect(!int8.int8Convolutions.isEmpty)
        let int8Loaded = try Model(modelFileData: ModelFile.encode(int8), path: "int8.yolo")
        let int8Heads = try Network(model: int8Loaded).forward(blob)
        #expect(int8Heads.count == 3 && int8Heads.allSatisfy { $0.values.allSatisfy(\.isFinite) })
    }

    /// Calibrated to int8 on its input blob, every int8 layer's input quantization covers what the layer reads
    /// there: the C2f blocks concatenate a split convolution with a shortcut, whose values (one tensor plus
    /// another) reach past the convolution's, and the convolution after the concatenation quantizes them all.
    @Test func int8InputRangesCoverConcatenatedShortcuts() throws {
        let model = try Model(onnx: Self.tiny)
        let input = try Tensor.readNumPy(Self.folder + "/input.npy")
        let blob = Tensor(shape: try Network(model: model).inputShape, values: input.values)
        #expect(model.description.layers.contains { if case .shortcut = $0 { return true }; return false })
        let (int8, _) = try ModelConverter.convertInt8(model, settings: Int8ConversionSettings(sensitivityShare: nil),
                                                       calibration: [blob])
        #expect(try Int8NetworkTests.uncoveredInputs(float: model, int8: int8, input: blob) == [])
    }

    /// An unsupported operator fails with one line naming the node and the operator.
    @Test func unsupportedOperatorNamesTheNode() throws {
        #expect {
            try Model(onnx: Self.folder + "/unsupported-leaky.onnx")
        } throws: { error in
            let text = "\(error)"
            return text.contains("node 'stem_leaky' (LeakyRelu)") && text.contains("not supported") && !text.contains("\n")
        }
    }

    /// An attention outside the supported pattern (attn_ratio 0.25) fails with one line naming the Split and why.
    @Test func unsupportedAttentionNamesTheNode() throws {
        #expect {
            try Model(onnx: Self.folder + "/unsupported-attention.onnx")
        } throws: { error in
            let text = "\(error)"
            return text.contains("(Split): C2PSA attention: key_dim 1 with head_dim 4") && !text.contains("\n")
        }
    }

    /// A weight beyond what every model-file loader accepts (fuzz-onnx found one converted into a file that did not
    /// load back): the conversion fails with one line naming the node and the value.
    @Test func hugeWeightsNameTheNode() throws {
        #expect {
            try Model(onnx: Self.folder + "/huge-weight.onnx")
        } throws: { error in
            let text = "\(error)"
            return text.contains("node '") && text.contains("is beyond ±") && !text.contains("\n")
        }
    }

    /// Damaged files (every prefix length class, flipped bytes) give an error or a model, never a crash.
    @Test func damagedFilesFailCleanly() throws {
        let bytes = [UInt8](try #require(FileManager.default.contents(atPath: Self.tiny)))
        var random = SeededRandom(seed: 38)
        for length in [0, 1, 2, 5, 17, 100, 1000, bytes.count / 3, bytes.count / 2, bytes.count - 1] {
            let prefix = Array(bytes.prefix(length))
            _ = try? ONNXConverter.model(try ONNXModel(bytes: prefix, path: "cut.onnx"), path: "cut.onnx")
        }
        for _ in 0..<200 {
            var damaged = bytes
            for _ in 0..<4 {
                let at = Int(random.next() % UInt64(damaged.count))
                damaged[at] = UInt8(truncatingIfNeeded: random.next())
            }
            if let onnx = try? ONNXModel(bytes: damaged, path: "bad.onnx") {
                _ = try? ONNXConverter.model(onnx, path: "bad.onnx")
            }
        }
        #expect(throws: YOLOError.self) { try ONNXModel(bytes: [0x0A, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F], path: "huge.onnx") }
    }

    /// Ultralytics' names metadata: quotes of both kinds, escapes; bad dicts are errors.
    @Test func parsesNamesMetadata() throws {
        #expect(try ONNXConverter.parseNames("{0: 'person', 1: \"it's\", 2: 'a\\'b'}", path: "m") == ["person", "it's", "a'b"])
        #expect(throws: YOLOError.self) { try ONNXConverter.parseNames("{1: 'x'}", path: "m") }
        #expect(throws: YOLOError.self) { try ONNXConverter.parseNames("['x']", path: "m") }
        #expect(throws: YOLOError.self) { try ONNXConverter.parseNames("{0: 'x", path: "m") }
    }

    /// IEEE half to float: normal, subnormal, infinity, negative zero.
    @Test func convertsHalfFloats() {
        #expect(ONNXTensor.half(0x3C00) == 1)
        #expect(ONNXTensor.half(0xC000) == -2)
        #expect(ONNXTensor.half(0x0001) == Float(sign: .plus, exponent: -24, significand: 1))
        #expect(ONNXTensor.half(0x7C00) == .infinity)
        #expect(ONNXTensor.half(0x8000).sign == .minus)
    }
}
