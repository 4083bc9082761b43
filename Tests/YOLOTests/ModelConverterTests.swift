import Foundation
import Testing
@_spi(Engine) @testable import YOLO
@_spi(Engine) @testable import YOLOConversion
import YOLOTestSupport

@Suite struct ModelConverterTests {
    @Test func floatLayerSelectors() throws {
        let description = try parse(tinyCfg())
        // Convolutions of the test cfg: 0, 2, 4 (feeds head 5), 10 (feeds head 11).
        #expect(try ModelConverter.floatLayers([.first, .last], in: description) == [0, 10])
        #expect(try ModelConverter.floatLayers([.heads, .layer(2)], in: description) == [2, 4, 10])
        #expect(try FloatLayerSelector.parseList("none").isEmpty)
        #expect(try FloatLayerSelector.parseList("first,7") == [.first, .layer(7)])
        #expect(throws: YOLOError.self) { try FloatLayerSelector.parseList("first,middle") }
        #expect(throws: YOLOError.self) { try ModelConverter.floatLayers([.layer(1)], in: description) }
    }

    @Test func keepsChosenLayersFloatAndQuantizesTheRest() throws {
        let model = try makeTestModel()
        let converted = try ModelConverter.convert(model, settings: ConversionSettings(type: .lut4, keepFloat: [.first, .last]))
        #expect(converted.convolutions.keys.sorted() == [0, 10])
        #expect(converted.quantizedConvolutions.keys.sorted() == [2, 4])
        #expect(converted.quantizedConvolutions[2]?.weights.type == .lut4)
        #expect(try ModelConverter.convert(model, settings: ConversionSettings(type: nil)).quantizedConvolutions.isEmpty)
    }

    @Test func nonFiniteWeightsAreAnError() throws {
        var model = try makeTestModel()
        var weights = model.convolutions[2]!.weights.array
        weights[5] = .nan
        model.convolutions[2] = ConvolutionParameters(weights: FloatBuffer(weights), biases: model.convolutions[2]!.biases)
        #expect(throws: YOLOError.self) { try ModelConverter.convert(model, settings: ConversionSettings()) }
    }
}

@Suite struct ConversionSettingsTests {
    @Test func eightBitLayersAndLeadingSelector() throws {
        let description = try parse(tinyCfg())
        #expect(try ModelConverter.floatLayers([.leading(3)], in: description) == [0, 2, 4])
        #expect(FloatLayerSelector(token: "first3") == .leading(3))
        #expect(FloatLayerSelector(token: "first0") == nil)
        #expect(ConversionSettings.defaultEightBit(for: .lut8).isEmpty)
        #expect(ConversionSettings.defaultEightBit(for: .lut4) == [.leading(3), .heads])
        let converted = try ModelConverter.convert(try makeTestModel(), settings: ConversionSettings(type: .lut4, eightBit: [.heads]))
        #expect(converted.quantizedConvolutions[2]?.weights.type == .lut4)
        #expect(converted.quantizedConvolutions[4]?.weights.type == .lut8)
        #expect(converted.quantizedConvolutions[10]?.weights.type == .lut8)
        #expect(converted.convolutions.keys.sorted() == [0])
    }

    /// `--lut6-layers` beats `--lut8-layers` for a layer both name, and shows in the summary.
    @Test func sixBitLayersOverrideEightBitOnes() throws {
        let settings = ConversionSettings(type: .lut4, eightBit: [.heads], sixBit: [.layer(4)])
        let converted = try ModelConverter.convert(try makeTestModel(), settings: settings)
        #expect(converted.quantizedConvolutions[2]?.weights.type == .lut4)
        #expect(converted.quantizedConvolutions[4]?.weights.type == .lut6)
        #expect(converted.quantizedConvolutions[10]?.weights.type == .lut8)
        #expect(settings.summary.hasSuffix("lut8 layers heads, lut6 layers 4"))
    }
}

@Suite struct CalibrationViewTests {
    @Test func parsesViews() throws {
        #expect(try CalibrationView.parseList("none").isEmpty)
        #expect(try CalibrationView.parseList("mirror,608,608-mirror") ==
                [CalibrationView(size: nil, mirrored: true), CalibrationView(size: 608, mirrored: false), CalibrationView(size: 608, mirrored: true)])
        #expect(try CalibrationView.parseList("mirror,608,608-mirror").map(\.description) == ["mirror", "608", "608-mirror"])
        for bad in ["600", "0", "-mirror", "608-flip", "mirror,", "4096"] {
            #expect(throws: YOLOError.self, "\(bad)") { try CalibrationView.parseList(bad) }
        }
    }

    /// The plain input comes first; a mirrored view is the plain input reversed along each row; a sized
    /// view has that input size.
    @Test func viewsOfAnImage() throws {
        let model = try makeTestModel()
        let shape = model.description.inputShape
        let image = Image(width: 7, height: 5, pixels: (0..<105).map { UInt8($0 * 2) })
        let inputs = try ModelConverter.calibrationInputs(image, for: model, views: [CalibrationView(size: nil, mirrored: true),
                                                                                      CalibrationView(size: 96, mirrored: false)])
        #expect(inputs.count == 3)
        #expect(inputs[0].values == (try ModelConverter.calibrationInput(image, for: model)).values)
        #expect(inputs[1].shape == shape && inputs[2].shape == Shape(channels: shape.channels, height: 96, width: 96))
        for row in 0..<(shape.channels * shape.height) {
            let plain = inputs[0].values[(row * shape.width)..<((row + 1) * shape.width)]
            #expect(Array(inputs[1].values[(row * shape.width)..<((row + 1) * shape.width)]) == Array(plain.reversed()))
        }
    }
}
