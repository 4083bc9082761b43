import Foundation
@_spi(Engine) import YOLO
@_spi(Engine) import YOLOConversion

/// Network inputs for the commands that run a model on files: `.npy` blobs as they are, images
/// letterboxed to the model's input size as `yolo detect` does by default.
enum NetworkInput {
    static func load(_ path: String, for model: Model) throws -> Tensor {
        if path.hasSuffix(".npy") { return try Tensor.readNumPy(path) }
        return try ModelConverter.calibrationInput(Image(contentsOf: path), for: model)
    }

    /// Calibration inputs from one file: a `.npy` blob as it is; an image letterboxed, then once per
    /// extra view (`CalibrationView`).
    static func calibrationInputs(_ path: String, for model: Model, views: [CalibrationView]) throws -> [Tensor] {
        if path.hasSuffix(".npy") || views.isEmpty { return [try load(path, for: model)] }
        return try ModelConverter.calibrationInputs(Image(contentsOf: path), for: model, views: views)
    }
}
