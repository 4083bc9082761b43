import Foundation

extension Image {
    /// A copy with each detection drawn: its box in its class colour and a tag "label 87%".
    ///
    /// The least confident are drawn first, so the most confident tags end up on top.
    /// - Parameters:
    ///   - detections: what `Detector.detect` returned for this image.
    ///   - classCount: the model's class count (for the colour palette).
    /// - Returns: the annotated copy, same size as this image.
    public func annotated(with detections: [Detection], classCount: Int) -> Image {
        var copy = self
        for d in detections.reversed() {
            let r = d.pixelRect(width: width, height: height)
            let color = Image.classColor(index: d.classIndex % max(classCount, 1), count: max(classCount, 1))
            copy.labelBox(x: r.x, y: r.y, width: r.width, height: r.height,
                          label: "\(d.label) \(Int((d.confidence * 100).rounded()))%", color: color)
        }
        return copy
    }
}
