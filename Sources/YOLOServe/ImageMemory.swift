import Foundation
@_spi(Engine) import YOLO

/// The memory one request's image takes in its slot, bounded by `ServeConfiguration.maxImageBytes`
/// (`--max-image-memory`): decoding it, checked by the decoder from the header before any pixel buffer
/// is allocated (`ImageDecodingOptions.maxDecodedBytes`), then building the network input from it
/// (`Geometry.makeInput`), checked here before that starts.
///
/// Building the input holds, beside the image (3 bytes a pixel): for a gray network, a gray copy (3 a
/// pixel); for fit and stretch (darknet's resampler), the source region as planar floats (12 a pixel);
/// and for either resampler its horizontal pass, 3 channels of 4 bytes per resized column and source row.
/// All of it is checked from the header, with decoding, except the horizontal pass of a request with
/// `size=auto`, whose network width depends on the image; that is checked once the image is decoded.
/// (The horizontal pass is what a tall, narrow image costs: 1 × 1,000,000 pixels stretched to 416
/// columns take 5 GB.)
struct ImageMemory: Sendable {
    let detector: Detector
    let options: DetectionOptions
    /// The most bytes, `--max-image-memory`.
    let limit: Int

    /// The detector's decoding options for `options`, refusing from the header an image whose decoding,
    /// or whose preparation with it, would take more than `limit`.
    var decodingOptions: ImageDecodingOptions {
        var decoding = detector.decodingOptions(for: options)
        decoding.maxDecodedBytes = min(decoding.maxDecodedBytes, limit)
        decoding.extraBytesPerPixel = extraBytesPerPixel
        // The resized width is at most the network's, known here unless it follows the image (auto).
        switch options.inputSize {
        case .model: decoding.extraBytesPerRow = 12 * detector.model.description.inputShape.width
        case .fixed(let width, _): decoding.extraBytesPerRow = 12 * width
        case .automatic: break
        }
        return decoding
    }

    private var fitting: (scaling: DetectionOptions.Scaling, resampling: DetectionOptions.Resampling) {
        detector.model.description.fitting(options)
    }

    /// Bytes per image pixel that building the input holds beside the image, at most: darknet's resampler
    /// works on the source as planar floats.
    private var extraBytesPerPixel: Int {
        (fitting.resampling == .darknet ? 12 : 0) + (detector.model.description.inputShape.channels == 1 ? 3 : 0)
    }

    /// Throws when building the network input for the decoded `image` would take more than `limit` with it.
    func checkPreparation(of image: Image, name: String) throws {
        let crop = try Geometry.region(of: options.regionOfInterest, width: image.width, height: image.height)
        let size = try detector.networkSize(for: options, regionWidth: crop.width, regionHeight: crop.height)
        let (scaling, resampling) = fitting
        let plan = Geometry.plan(imageWidth: image.width, imageHeight: image.height, crop: crop, scaling: scaling,
                                 resampling: resampling, networkWidth: size.width, networkHeight: size.height)
        let pixels = image.width * image.height
        let planar = resampling == .darknet ? 12 * plan.source.width * plan.source.height : 0
        let gray = detector.model.description.inputShape.channels == 1 ? 3 * pixels : 0
        let bytes = 3 * pixels + gray + planar + 12 * plan.resizedWidth * plan.source.height
        guard bytes > limit else { return }
        throw YOLOError.invalidImage(path: name, message: "preparing the network input from the \(image.width)x\(image.height) image "
            + "takes \(bytes) bytes with the image, more than the limit of \(limit) (--max-image-memory)")
    }
}
