import Foundation
import Testing
@_spi(Engine) @testable import YOLO
@_spi(Engine) @testable import YOLOConversion
import YOLOTestSupport

/// The test cfg (conv, maxpool, yolo, route, upsample, shortcut) at 32×32 with seeded random
/// weights of varied per-filter scale, and two labels (none for another class count).
func makeTestModel(seed: UInt64 = 1, classes: Int = 2) throws -> Model {
    let description = try parse(tinyCfg(classes: classes, width: 32, height: 32))
    let geometry = try description.geometry(width: 32, height: 32)
    var random = SeededRandom(seed: seed)
    var convolutions: [Int: ConvolutionParameters] = [:]
    for (index, layer) in description.layers.enumerated() {
        guard case .convolution(let s) = layer else { continue }
        let patch = geometry[index].inputShapes[0].channels * s.size * s.size
        convolutions[index] = ConvolutionParameters(
            weights: FloatBuffer(randomWeights(rows: s.filters, rowLength: patch, seed: seed &+ UInt64(index))),
            biases: FloatBuffer(random.floats(s.filters)))
    }
    return Model(description: description, convolutions: convolutions, labels: classes == 2 ? ["cat", "dog"] : [])
}

/// `makeTestModel` with every convolution but the first as lut6 per-channel codes.
func makeQuantizedTestModel() throws -> Model {
    try ModelConverter.convert(try makeTestModel(), settings: ConversionSettings(type: .lut6))
}

/// Stores a fresh checksum in `bytes` (after a deliberate edit, to reach the checks behind it).
func resign(_ bytes: inout [UInt8]) {
    let sum = bytes.withUnsafeBytes { ModelFile.checksum($0) }
    withUnsafeBytes(of: sum.littleEndian) { for k in 0..<8 { bytes[ModelFile.checksumOffset + k] = $0[k] } }
}

func put<T: FixedWidthInteger>(_ value: T, at offset: Int, in bytes: inout [UInt8]) {
    withUnsafeBytes(of: value.littleEndian) { for k in 0..<MemoryLayout<T>.size { bytes[offset + k] = $0[k] } }
}

/// Byte offsets of the tensor records in a file encoding `model` (after its description and labels).
func tensorRecordOffsets(_ model: Model) -> [Int] {
    var writer = ByteWriter()
    writer.description(model.description)
    let labelsEnd = ModelFile.headerSize + writer.bytes.count + 4 + model.labels.reduce(0) { $0 + 4 + $1.utf8.count }
    let count = model.description.layers.filter { if case .convolution = $0 { return true }; return false }.count
    return (0..<count).map { labelsEnd + 4 + $0 * ModelFile.tensorRecordSize }
}

/// The storage byte of every tensor record of `bytes`, a file encoding `model`.
func storageCodes(_ bytes: [UInt8], model: Model) -> [UInt8] {
    tensorRecordOffsets(model).map { bytes[$0 + 4] }
}

/// Decodes `bytes` and returns the error message, or nil when it loaded.
func loadError(_ bytes: [UInt8], residency: WeightResidency = .codes) -> String? {
    do {
        _ = try Model(modelFileData: Data(bytes), path: "m.yolo", residency: residency)
        return nil
    } catch let error as YOLOError {
        guard case .invalidFile(let path, let message) = error else { return "wrong case: \(error)" }
        #expect(path == "m.yolo")
        #expect(!message.isEmpty && !message.contains("\n"))
        return message
    } catch {
        return "not a YOLOError: \(error)"
    }
}

@Suite struct ModelFileTests {
    @Test func floatModelRoundTripsExactly() throws {
        let model = try makeTestModel()
        let bytes = ModelFile.encode(model, note: "test")
        #expect(bytes.count % ModelFile.alignment == 0)
        let loaded = try Model(modelFileData: bytes, path: "m.yolo")
        #expect(loaded.labels == model.labels)
        #expect(loaded.description.inputShape == model.description.inputShape)
        for (index, p) in model.convolutions {
            #expect(loaded.convolutions[index]?.weights.array == p.weights.array)
            #expect(loaded.convolutions[index]?.biases.array == p.biases.array)
        }
        // Description, labels and parameters all survive: encoding the loaded model gives the same bytes.
        #expect(ModelFile.encode(loaded, note: "test") == bytes)
        let input = Tensor(shape: Shape(channels: 3, height: 32, width: 32), values: SeededRandom(seed: 2).floatsArray(3 * 32 * 32))
        #expect(try Network(model: loaded).forward(input) == Network(model: model).forward(input))
    }

    @Test func quantizedModelRoundTripsInBothResidencies() throws {
        let model = try makeQuantizedTestModel()
        #expect(model.quantizedConvolutions.count == model.description.layers.filter { if case .convolution = $0 { return true }; return false }.count - 1)
        let bytes = ModelFile.encode(model)
        let codes = try Model(modelFileData: bytes, path: "m.yolo", residency: .codes)
        let expanded = try Model(modelFileData: bytes, path: "m.yolo", residency: .expanded)
        #expect(ModelFile.encode(codes) == bytes)
        #expect(expanded.quantizedConvolutions.isEmpty)
        for (index, q) in model.quantizedConvolutions {
            #expect(codes.quantizedConvolutions[index]?.weights.codes.array == q.weights.codes.array)
            #expect(expanded.convolutions[index]?.weights.array == q.weights.expanded().array)
        }
        // Codes kept in memory (LUTConvolution) and codes expanded at load (Convolution) agree.
        let input = Tensor(shape: Shape(channels: 3, height: 32, width: 32), values: SeededRandom(seed: 3).floatsArray(3 * 32 * 32))
        let a = try Network(model: codes).forward(input), b = try Network(model: expanded).forward(input)
        #expect(try Network(model: codes).layers.contains { $0 is LUTConvolution })
        for (x, y) in zip(a, b) {
            for i in x.values.indices { #expect(abs(x.values[i] - y.values[i]) <= 1e-5 * max(1, abs(y.values[i]))) }
        }
    }

    // MARK: Deflated codes (1.3)

    /// Storage 2 (deflated codes, the default) and storage 1 (plain codes) hold the same codes: the same
    /// weights and the same forward output in both residencies, and each file re-encodes into the other.
    @Test(arguments: [LUTType.lut8, .lut6, .lut4])
    func deflatedAndPlainCodesGiveTheSameWeights(type: LUTType) throws {
        let model = try ModelConverter.convert(try makeTestModel(), settings: ConversionSettings(type: type))
        let deflated = [UInt8](ModelFile.encode(model)), plain = [UInt8](ModelFile.encode(model, compressCodes: false))
        #expect(storageCodes(deflated, model: model) == [0, 2, 2, 2])
        #expect(storageCodes(plain, model: model) == [0, 1, 1, 1])
        #expect(UInt16(deflated[10]) == ModelFile.minorVersion && UInt16(plain[10]) == ModelFile.minorVersion, "the current minor version (1.3 introduced storage 2)")
        let input = Tensor(shape: Shape(channels: 3, height: 32, width: 32), values: SeededRandom(seed: 4).floatsArray(3 * 32 * 32))
        var outputs: [WeightResidency: [[Tensor]]] = [:]
        for bytes in [deflated, plain] {
            for residency in [WeightResidency.codes, .expanded] {
                let loaded = try Model(modelFileData: Data(bytes), path: "m.yolo", residency: residency)
                for (index, q) in model.quantizedConvolutions {
                    if residency == .codes { #expect(loaded.quantizedConvolutions[index]?.weights.codes.array == q.weights.codes.array) }
                    #expect(loaded.parameters(ofLayer: index)?.weights.array == q.weights.expanded().array)
                    #expect(loaded.parameters(ofLayer: index)?.biases.array == q.biases.array)
                }
                outputs[residency, default: []].append(try Network(model: loaded).forward(input))
            }
        }
        #expect(outputs[.codes]?[0] == outputs[.codes]?[1])
        #expect(outputs[.expanded]?[0] == outputs[.expanded]?[1])
        let fromDeflated = try Model(modelFileData: Data(deflated), path: "m.yolo", residency: .codes)
        let fromPlain = try Model(modelFileData: Data(plain), path: "m.yolo", residency: .codes)
        #expect([UInt8](ModelFile.encode(fromDeflated, compressCodes: false)) == plain)
        #expect([UInt8](ModelFile.encode(fromPlain)) == deflated)
    }

    /// Files of 1.0–1.2 (plain codes, written as those versions' writers did) load with the same codes.
    @Test func olderFilesWithPlainCodesStillLoad() throws {
        let model = try makeQuantizedTestModel()
        for minor: UInt16 in [0, 1, 2] {
            let bytes = [UInt8](ModelFile.encode(model, note: "", minor: minor))
            #expect(bytes[10] == UInt8(minor))
            #expect(storageCodes(bytes, model: model) == [0, 1, 1, 1])
            let loaded = try Model(modelFileData: Data(bytes), path: "m.yolo", residency: .codes)
            for (index, q) in model.quantizedConvolutions {
                #expect(loaded.quantizedConvolutions[index]?.weights.codes.array == q.weights.codes.array)
            }
        }
    }

    /// `write(_:to:compressCodes:)`: both storages on disk; the deflated file is the smaller one here.
    @Test func writesBothCodeStoragesToDisk() throws {
        let folder = TestPaths.temporaryFolder()
        let model = try ModelConverter.convert(try makeTestModel(classes: 80), settings: ConversionSettings(type: .lut8))
        try ModelFile.write(model, to: folder + "/deflated.yolo")
        try ModelFile.write(model, to: folder + "/plain.yolo", compressCodes: false)
        let deflated = try #require(FileManager.default.contents(atPath: folder + "/deflated.yolo"))
        let plain = try #require(FileManager.default.contents(atPath: folder + "/plain.yolo"))
        #expect(deflated == ModelFile.encode(model) && plain == ModelFile.encode(model, compressCodes: false))
        #expect(deflated.count < plain.count, "\(deflated.count) vs \(plain.count) bytes")
        let a = try Model(contentsOf: folder + "/deflated.yolo", residency: .codes)
        let b = try Model(contentsOf: folder + "/plain.yolo", residency: .codes)
        #expect(ModelFile.encode(a) == ModelFile.encode(b))
    }

    @Test func encodingIsDeterministic() throws {
        #expect(ModelFile.encode(try makeQuantizedTestModel()) == ModelFile.encode(try makeQuantizedTestModel()))
    }

    @Test func loadsFromDiskByMapping() throws {
        let folder = TestPaths.temporaryFolder()
        let path = folder + "/tiny.yolo"
        let model = try makeQuantizedTestModel()
        try ModelFile.write(model, to: path)
        let loaded = try Model(contentsOf: path, residency: .codes)
        #expect(ModelFile.encode(loaded) == ModelFile.encode(model))
        #expect(throws: YOLOError.fileNotFound(path: folder + "/missing.yolo")) { try Model(contentsOf: folder + "/missing.yolo") }
        #expect(throws: YOLOError.self) { try Model(contentsOf: folder) }
        FileManager.default.createFile(atPath: folder + "/empty.yolo", contents: Data())
        #expect(throws: YOLOError.invalidFile(path: folder + "/empty.yolo", message: "empty file, not a SwiftYOLO model")) {
            try Model(contentsOf: folder + "/empty.yolo")
        }
    }

    // MARK: Robustness

    @Test func everyPrefixIsAClearError() throws {
        let bytes = [UInt8](ModelFile.encode(try makeQuantizedTestModel()))
        for length in 0..<bytes.count {
            #expect(loadError(Array(bytes[..<length])) != nil, "prefix of \(length) bytes loaded")
        }
        #expect(loadError(bytes) == nil)
        #expect(loadError(Array(bytes[..<100]))?.contains("truncated: 100 of \(bytes.count) bytes") == true)
    }

    @Test func everyFlippedByteIsAClearError() throws {
        let bytes = [UInt8](ModelFile.encode(try makeQuantizedTestModel()))
        for position in bytes.indices {
            var damaged = bytes
            damaged[position] ^= position % 2 == 0 ? 0x01 : 0x80
            #expect(loadError(damaged) != nil, "flip at byte \(position) loaded")
        }
    }

    /// 1.1 records the preferred scaling and resampling; a 1.0 file has none and gets the ones its layers imply.
    @Test func preferredScalingRoundTripsAndOlderFilesInferIt() throws {
        var model = try makeTestModel()
        #expect(model.preferredScaling == .scaleFit && model.preferredResampling == .darknet)
        for scaling in DetectionOptions.Scaling.allCases {
          for resampling in DetectionOptions.Resampling.allCases {
            model.preferredScaling = scaling
            model.preferredResampling = resampling
            let path = TestPaths.temporaryFolder() + "/scaling.yolo"
            try ModelFile.write(model, to: path)
            let loaded = try Model(contentsOf: path)
            #expect(loaded.preferredScaling == scaling && loaded.preferredResampling == resampling)
            try ModelFile.encode(model, note: "", minor: 0).write(to: URL(fileURLWithPath: path))
            #expect(try Model(contentsOf: path).preferredScaling == .scaleFit, "a 1.0 file of pjreddie-style layers")
          }
        }
    }

    @Test func foreignFilesAndVersions() throws {
        let bytes = [UInt8](ModelFile.encode(try makeTestModel()))
        #expect(loadError(Array("[net]\nwidth=416\n".utf8))?.contains("bad magic") == true)
        #expect(loadError([0x89, 0x59])?.contains("shorter than the 64-byte header") == true)
        var newer = bytes
        put(UInt16(2), at: 8, in: &newer)
        #expect(loadError(newer)?.contains("version 2.\(ModelFile.minorVersion) is not supported") == true)
        var minor = bytes
        put(UInt16(7), at: 10, in: &minor)
        resign(&minor)
        #expect(loadError(minor) == nil, "a newer minor version stays readable")
        var longer = bytes + [UInt8](repeating: 0, count: 64)
        resign(&longer)
        #expect(loadError(longer)?.contains("unexpected bytes after the declared end") == true)
    }
}

extension SeededRandom {
    /// `floats(count, 0, 1)` from a fresh generator value (convenience for one-line inputs).
    func floatsArray(_ count: Int) -> [Float] {
        var copy = self
        return copy.floats(count, 0, 1)
    }
}
