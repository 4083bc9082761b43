import Foundation

/// Maps a box from network-input coordinates (normalized to the network input) to coordinates
/// normalized to the full upright image: `full = offset + scale · network`, per axis.
///
/// Computed once, next to the forward transform (`InputPlan`), and applied to every decoded box,
/// so no later stage redoes crop or letterbox math.
@_spi(Engine) public struct BoxTransform: Sendable, Equatable {
    public var scaleX: Double
    public var offsetX: Double
    public var scaleY: Double
    public var offsetY: Double

    /// Maps a rectangle given in network-input normalized coordinates.
    public func apply(_ r: Rect) -> Rect {
        Rect(x: offsetX + scaleX * r.x, y: offsetY + scaleY * r.y, width: scaleX * r.width, height: scaleY * r.height)
    }
}

/// The forward transform for one image: which pixels go where in the network input.
@_spi(Engine) public struct InputPlan: Sendable, Equatable {
    /// Network input size.
    public var networkWidth: Int
    public var networkHeight: Int
    /// The pixels of the decoded image that are resampled (the region of interest, and for
    /// `.centerCrop` its centred part): x, y, width, height in pixels.
    public var source: PixelRegion
    /// Size the source is resampled to, and where it is placed in the network input.
    public var resizedWidth: Int
    public var resizedHeight: Int
    public var placeX: Int
    public var placeY: Int
    var kernel: ResampleKernel
    /// The way back: network-normalized → full-image-normalized.
    public var inverse: BoxTransform
}

/// A rectangle of whole pixels.
@_spi(Engine) public struct PixelRegion: Sendable, Equatable {
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int

    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }
}

/// Crop, scale and region-of-interest geometry.
@_spi(Engine) public enum Geometry {
    /// The pixel rectangle of a normalized region of interest in a `width × height` image
    /// (edges rounded to the nearest pixel). The unit rect gives the whole image exactly.
    public static func region(of roi: Rect, width: Int, height: Int) throws -> PixelRegion {
        let tolerance = 1e-9
        guard roi.width > 0, roi.height > 0, roi.minX >= -tolerance, roi.minY >= -tolerance,
              roi.maxX <= 1 + tolerance, roi.maxY <= 1 + tolerance else {
            throw YOLOError.invalidArgument("region of interest \(roi) must be a non-empty rectangle inside the unit square")
        }
        let x0 = min(max(Int((roi.minX * Double(width)).rounded()), 0), width)
        let x1 = min(max(Int((roi.maxX * Double(width)).rounded()), 0), width)
        let y0 = min(max(Int((roi.minY * Double(height)).rounded()), 0), height)
        let y1 = min(max(Int((roi.maxY * Double(height)).rounded()), 0), height)
        guard x1 > x0, y1 > y0 else {
            throw YOLOError.invalidArgument("region of interest \(roi) covers no whole pixel of the \(width)x\(height) image")
        }
        return PixelRegion(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
    }

    /// The network input size, in multiples of `divisor`, closest to `aspect` (width / height) with
    /// at most `budget` pixels. Ties go to the larger area.
    public static func automaticSize(aspect: Double, budget: Int, divisor: Int) -> (width: Int, height: Int) {
        var best = (width: divisor, height: divisor)
        var bestError = Double.infinity
        var height = divisor
        while height * divisor <= budget {
            let width = max(divisor, budget / height / divisor * divisor)
            if width * height <= budget {
                let error = abs(log(Double(width) / Double(height) / aspect))
                if error < bestError - 1e-12 || (abs(error - bestError) <= 1e-12 && width * height > best.width * best.height) {
                    best = (width, height)
                    bestError = error
                }
            }
            height += divisor
        }
        return best
    }

    /// Plans how `crop` (pixels of a `imageWidth × imageHeight` image) becomes a
    /// `networkWidth × networkHeight` input under `scaling`, and the inverse transform.
    public static func plan(imageWidth: Int, imageHeight: Int, crop: PixelRegion, scaling: DetectionOptions.Scaling,
                            resampling: DetectionOptions.Resampling = .darknet, networkWidth nw: Int, networkHeight nh: Int) -> InputPlan {
        let kernel: ResampleKernel = resampling == .darknet ? .darknet : .openCVLinear
        let (W, H) = (Double(imageWidth), Double(imageHeight))
        let (cw, ch) = (crop.width, crop.height)
        switch scaling {
        case .scaleFit:
            // darknet letterbox_image: integer new size (longer side fills), integer paste offset;
            // correct_yolo_boxes undoes it with the float offset (net − new) / 2 / net.
            let (newW, newH): (Int, Int)
            if Float(nw) / Float(cw) < Float(nh) / Float(ch) {
                (newW, newH) = (nw, max(1, ch * nw / cw))
            } else {
                (newW, newH) = (max(1, cw * nh / ch), nh)
            }
            let sx = Double(nw) / Double(newW) * Double(cw) / W
            let sy = Double(nh) / Double(newH) * Double(ch) / H
            let inverse = BoxTransform(
                scaleX: sx, offsetX: Double(crop.x) / W - Double(nw - newW) / 2 / Double(nw) * sx,
                scaleY: sy, offsetY: Double(crop.y) / H - Double(nh - newH) / 2 / Double(nh) * sy)
            return InputPlan(networkWidth: nw, networkHeight: nh, source: crop, resizedWidth: newW, resizedHeight: newH,
                             placeX: (nw - newW) / 2, placeY: (nh - newH) / 2, kernel: kernel, inverse: inverse)
        case .scaleFill:
            // The whole crop to the network size, no offsets to undo.
            let inverse = BoxTransform(scaleX: Double(cw) / W, offsetX: Double(crop.x) / W,
                                       scaleY: Double(ch) / H, offsetY: Double(crop.y) / H)
            return InputPlan(networkWidth: nw, networkHeight: nh, source: crop, resizedWidth: nw, resizedHeight: nh,
                             placeX: 0, placeY: 0, kernel: kernel, inverse: inverse)
        case .centerCrop:
            var source = crop
            if cw * nh > ch * nw {  // wider than the network: keep the full height
                source.width = min(cw, max(1, Int((Double(ch) * Double(nw) / Double(nh)).rounded())))
                source.x += (cw - source.width) / 2
            } else {
                source.height = min(ch, max(1, Int((Double(cw) * Double(nh) / Double(nw)).rounded())))
                source.y += (ch - source.height) / 2
            }
            let inverse = BoxTransform(scaleX: Double(source.width) / W, offsetX: Double(source.x) / W,
                                       scaleY: Double(source.height) / H, offsetY: Double(source.y) / H)
            return InputPlan(networkWidth: nw, networkHeight: nh, source: source, resizedWidth: nw, resizedHeight: nh,
                             placeX: 0, placeY: 0, kernel: kernel, inverse: inverse)
        }
    }

    /// Builds the network input for `plan`: `channels` × networkHeight × networkWidth floats in [0, 1],
    /// the resampled source placed on `fill` gray (darknet's 0.5; `ModelDescription.letterboxFill`). `channels` 3 gives RGB planes; 1 gives one luma plane,
    /// each pixel converted to gray first as darknet loads images for a `channels=1` network
    /// (stb_image's integer luma, `(77 R + 150 G + 29 B) >> 8`), then resampled like colour.
    ///
    /// The kernels read only the source pixels their taps touch (`Resample`), so an image made from a
    /// camera frame is converted here, pixel by pixel, on the way into the float input.
    public static func makeInput(_ image: Image, plan: InputPlan, channels: Int = 3, fill: Float = 0.5,
                                 into destination: UnsafeMutablePointer<Float>) {
        precondition(channels == 1 || channels == 3, "Geometry.makeInput: images give 1 or 3 channels, not \(channels)")
        let (nw, nh) = (plan.networkWidth, plan.networkHeight)
        let covers = plan.resizedWidth == nw && plan.resizedHeight == nh
        if !covers { destination.update(repeating: fill, count: channels * nw * nh) }
        let target = PlanarTarget(base: destination, planeWidth: nw, planeHeight: nh, x: plan.placeX, y: plan.placeY,
                                  channels: channels)
        let (outW, outH, gray) = (plan.resizedWidth, plan.resizedHeight, channels == 1)
        image.withRows { rows in
            switch plan.kernel {
            case .darknet:
                Resample.darknet(rows, region: plan.source, width: outW, height: outH, gray: gray, into: target)
            case .openCVLinear:
                Resample.unitFloats.withUnsafeBufferPointer { unit in
                    Resample.openCVLinear(rows, region: plan.source, width: outW, height: outH, gray: gray) { y, rgb in
                        for k in 0..<channels {
                            let out = target.row(k, y)
                            for x in 0..<outW { out[x] = unit[Int(rgb[3 * x + k])] }
                        }
                    }
                }
            }
        }
    }
}
