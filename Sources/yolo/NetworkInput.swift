import Foundation
import YOLO

/// Network inputs for the commands that run a model on files: `.npy` blobs as they are, images
/// letterboxed to the model's input size as `yolo detect` does by default.
enum NetworkInput {
    static func load(_ path: String, for model: Model) throws -> Tensor {
        if path.hasSuffix(".npy") { return try Tensor.readNumPy(path) }
        let image = try Image(contentsOf: path)
        let shape = model.description.inputShape
        let crop = try Geometry.region(of: .unit, width: image.width, height: image.height)
        let plan = Geometry.plan(imageWidth: image.width, imageHeight: image.height, crop: crop, scaling: .scaleFit,
                                 networkWidth: shape.width, networkHeight: shape.height)
        var values = [Float](repeating: 0, count: shape.count)
        values.withUnsafeMutableBufferPointer { Geometry.makeInput(image, plan: plan, into: $0.baseAddress!) }
        return Tensor(shape: shape, values: values)
    }
}
