import Foundation
@_spi(Engine) import YOLO

// A tiny darknet model in text and bytes, for tests that need model files on disk (the `yolo` runs of both
// test targets) or a description in memory.

/// A small yolov3-tiny-like cfg: conv, pools, route, upsample, two heads; `classes` and size configurable.
package func tinyCfg(classes: Int = 2, width: Int = 64, height: Int = 64) -> String {
    let filters = 3 * (classes + 5)
    return """
    [net]
    # training-only keys are accepted and ignored
    batch=64
    subdivisions=2
    width=\(width)
    height=\(height)
    channels=3
    momentum=0.9
    learning_rate=0.001

    [convolutional]
    batch_normalize=1
    filters=4
    size=3
    stride=1
    pad=1
    activation=leaky

    [maxpool]
    size=2
    stride=2

    [convolutional]
    batch_normalize=1
    filters=8
    size=3
    stride=1
    pad=1
    activation=leaky

    [maxpool]
    size=2
    stride=2

    [convolutional]
    filters=\(filters)
    size=1
    stride=1
    pad=1
    activation=linear

    [yolo]
    mask = 3,4,5
    anchors = 10,14,  23,27,  37,58,  81,82,  135,169,  344,319
    classes=\(classes)
    num=6
    jitter=.3
    ignore_thresh = .7
    random=1

    [route]
    layers = -3

    [upsample]
    stride=2

    [route]
    layers = -1, 2

    [shortcut]
    from=-1
    activation=linear

    [convolutional]
    filters=\(filters)
    size=1
    stride=1
    pad=1
    activation=linear

    [yolo]
    mask = 0,1,2
    anchors = 10,14,  23,27,  37,58,  81,82,  135,169,  344,319
    classes=\(classes)
    num=6
    """
}

package func parse(_ text: String) throws -> ModelDescription {
    try ModelDescription(config: DarknetConfig(text: text, path: "test.cfg"))
}

/// Writes a darknet weights file for `description`: header (version major.minor), then `extraFloats`
/// more or fewer floats than needed. Returns the path and the floats written.
package func writeWeights(for description: ModelDescription, major: Int32 = 0, minor: Int32 = 2, extraFloats: Int = 0,
                  seed: UInt64 = 1, in folder: String) throws -> (path: String, floats: [Float]) {
    let geometry = try description.geometry(width: description.inputShape.width, height: description.inputShape.height)
    let count = DarknetWeights.floatCount(for: description, geometry: geometry) + extraFloats
    var random = SeededRandom(seed: seed)
    // Every float in [0.5, 1.5), so batch-norm variances are positive wherever they fall.
    let floats = random.floats(max(count, 0), 0.5, 1.5)
    var data = Data()
    for value in [major, minor, 0] { withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) } }
    if major * 10 + minor >= 2 {
        withUnsafeBytes(of: Int64(12345)) { data.append(contentsOf: $0) }
    } else {
        withUnsafeBytes(of: Int32(12345)) { data.append(contentsOf: $0) }
    }
    floats.withUnsafeBytes { data.append(contentsOf: $0) }
    let path = folder + "/model-\(major)-\(minor)-\(extraFloats).weights"
    try data.write(to: URL(fileURLWithPath: path))
    return (path, floats)
}
