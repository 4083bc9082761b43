import Foundation
import Testing
@_spi(Engine) @testable import YOLO
@_spi(Engine) @testable import YOLOConversion
import YOLOTestSupport

/// Converting the real yolov3-tiny (the converter on the test model: the unit tests' ModelConverterTests.swift).
@Suite struct ModelConverterTests {
    /// `--quantize none`: the model file's heads equal the darknet-loaded model's bit for bit.
    @Test(.enabled(if: TestPaths.hasWeights, "\(Skip.noWeights)"))
    func floatFileGivesDarknetHeadsBitForBit() throws {
        let darknet = try #require(TinyYOLO.model)
        let converted = try ModelConverter.convert(darknet, settings: ConversionSettings(type: nil))
        let folder = TestPaths.temporaryFolder()
        try ModelFile.write(converted, to: folder + "/float.yolo")
        let loaded = try Model(contentsOf: folder + "/float.yolo")
        #expect(loaded.labels == darknet.labels)
        let input = try Tensor.readNumPy(TestPaths.fixtures + "/reference-heads/skimage_coffee.input.npy")
        #expect(try Network(model: loaded).forward(input) == Network(model: darknet).forward(input))
    }

    /// Size bars for yolov3-tiny with per-channel tables and the default float layers (the first
    /// convolution): lut8 ≤ 8.9 MB, lut6 ≤ 6.8 MB, lut4 ≤ 4.6 MB (10⁶ bytes, as Apple states 8.9 MB).
    /// The linear method is used because it is faster in debug builds; the file size does not
    /// depend on the method (same codes, tables and scales).
    @Test(.enabled(if: TestPaths.hasWeights, "\(Skip.noWeights)"),
          arguments: [(LUTType.lut8, 8_900_000), (.lut6, 6_800_000), (.lut4, 4_600_000)])
    func sizeBars(type: LUTType, bar: Int) throws {
        let darknet = try #require(TinyYOLO.model)
        let converted = try ModelConverter.convert(darknet, settings: ConversionSettings(type: type, method: .linear))
        let size = ModelFile.encode(converted).count
        #expect(size <= bar, "\(type): \(size) bytes")
    }
}
