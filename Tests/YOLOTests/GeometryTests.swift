import Foundation
import Testing
@_spi(Engine) @testable import YOLO

// The inverse transform brings boxes back to the full upright image for every crop/scale mode,
// region of interest, network size and EXIF orientation.

let scalings = DetectionOptions.Scaling.allCases
let regions: [Rect] = [.unit, Rect(x: 0.25, y: 0.1, width: 0.5, height: 0.7), Rect(x: 0, y: 0, width: 1, height: 0.5),
                       Rect(x: 0.6, y: 0.3, width: 0.4, height: 0.7)]
let imageSizes = [(640, 480), (300, 500), (417, 233)]
let networkSizes = [(416, 416), (416, 256), (160, 320)]

/// The part of the network input (normalized) that shows the source pixels.
func contentRect(_ plan: InputPlan) -> Rect {
    switch plan.kernel {
    case .darknet:
        // darknet's correct_yolo_boxes works with the float offset (net − new) / 2 / net.
        return Rect(x: Double(plan.networkWidth - plan.resizedWidth) / 2 / Double(plan.networkWidth),
                    y: Double(plan.networkHeight - plan.resizedHeight) / 2 / Double(plan.networkHeight),
                    width: Double(plan.resizedWidth) / Double(plan.networkWidth),
                    height: Double(plan.resizedHeight) / Double(plan.networkHeight))
    case .openCVLinear:
        return .unit
    }
}

func normalized(_ region: PixelRegion, width: Int, height: Int) -> Rect {
    Rect(x: Double(region.x) / Double(width), y: Double(region.y) / Double(height),
         width: Double(region.width) / Double(width), height: Double(region.height) / Double(height))
}

func expectClose(_ a: Rect, _ b: Rect, _ tolerance: Double, _ comment: String, sourceLocation: SourceLocation = #_sourceLocation) {
    let error = max(abs(a.minX - b.minX), abs(a.minY - b.minY), abs(a.maxX - b.maxX), abs(a.maxY - b.maxY))
    #expect(error <= tolerance, "\(comment): \(a) vs \(b), error \(error)", sourceLocation: sourceLocation)
}

@Suite struct GeometryTests {
    @Test(arguments: scalings, regions)
    func contentMapsBackToTheSourceRectangle(scaling: DetectionOptions.Scaling, roi: Rect) throws {
        for (w, h) in imageSizes {
            for (nw, nh) in networkSizes {
                let crop = try Geometry.region(of: roi, width: w, height: h)
                let plan = Geometry.plan(imageWidth: w, imageHeight: h, crop: crop, scaling: scaling, networkWidth: nw, networkHeight: nh)
                let label = "\(scaling) roi \(roi) image \(w)x\(h) net \(nw)x\(nh)"
                // The whole content maps back exactly onto the pixels that were fed (the crop, or its centre).
                let content = contentRect(plan)
                expectClose(plan.inverse.apply(content), normalized(plan.source, width: w, height: h), 1e-12, label)
                // Quarter boxes land in the matching quarter of that rectangle.
                let source = normalized(plan.source, width: w, height: h)
                for (qx, qy) in [(0.0, 0.0), (0.0, 0.5), (0.5, 0.0), (0.5, 0.5)] {
                    let box = Rect(x: content.x + qx * content.width, y: content.y + qy * content.height,
                                   width: 0.5 * content.width, height: 0.5 * content.height)
                    let expected = Rect(x: source.x + qx * source.width, y: source.y + qy * source.height,
                                        width: 0.5 * source.width, height: 0.5 * source.height)
                    expectClose(plan.inverse.apply(box), expected, 1e-12, label + " quarter \(qx),\(qy)")
                }
                // The fed pixels lie inside the region of interest; fill and fit use all of it.
                #expect(plan.source.x >= crop.x && plan.source.y >= crop.y
                        && plan.source.x + plan.source.width <= crop.x + crop.width
                        && plan.source.y + plan.source.height <= crop.y + crop.height, "\(label)")
                if scaling != .centerCrop { #expect(plan.source == crop, "\(label)") }
            }
        }
    }

    @Test func letterboxFollowsDarknet() {
        // 768x576 (dog.jpg) into 416x416: new size 416x312 (integer division), pasted at (0, 52).
        let crop = PixelRegion(x: 0, y: 0, width: 768, height: 576)
        let plan = Geometry.plan(imageWidth: 768, imageHeight: 576, crop: crop, scaling: .scaleFit, networkWidth: 416, networkHeight: 416)
        #expect((plan.resizedWidth, plan.resizedHeight, plan.placeX, plan.placeY) == (416, 312, 0, 52))
        // Odd margin: 500x333 → 416x277, pasted at integer y 69, corrected with the float offset 69.5.
        let odd = Geometry.plan(imageWidth: 500, imageHeight: 333, crop: PixelRegion(x: 0, y: 0, width: 500, height: 333),
                                scaling: .scaleFit, networkWidth: 416, networkHeight: 416)
        #expect((odd.resizedHeight, odd.placeY) == (277, 69))
        #expect(abs(odd.inverse.apply(Rect(x: 0, y: 69.5 / 416, width: 1, height: 277.0 / 416)).minY) < 1e-12)
    }

    @Test func centerCropKeepsTheNetworkAspect() throws {
        let crop = PixelRegion(x: 0, y: 0, width: 640, height: 480)
        let plan = Geometry.plan(imageWidth: 640, imageHeight: 480, crop: crop, scaling: .centerCrop, networkWidth: 416, networkHeight: 416)
        #expect(plan.source == PixelRegion(x: 80, y: 0, width: 480, height: 480))
        let tall = Geometry.plan(imageWidth: 640, imageHeight: 480, crop: crop, scaling: .centerCrop, networkWidth: 160, networkHeight: 320)
        #expect(tall.source == PixelRegion(x: 200, y: 0, width: 240, height: 480))
    }

    @Test func automaticSizeKeepsAspectWithinBudget() {
        let budget = 416 * 416
        for aspect in [1.0, 16.0 / 9, 4.0 / 3, 0.5, 3.0] {
            let size = Geometry.automaticSize(aspect: aspect, budget: budget, divisor: 32)
            #expect(size.width % 32 == 0 && size.height % 32 == 0 && size.width * size.height <= budget)
            let error = abs(log(Double(size.width) / Double(size.height) / aspect))
            #expect(error < 0.15, "aspect \(aspect) → \(size)")
        }
        #expect(Geometry.automaticSize(aspect: 1, budget: budget, divisor: 32) == (416, 416))
    }

    @Test func regionOfInterestValidation() throws {
        #expect(try Geometry.region(of: .unit, width: 640, height: 480) == PixelRegion(x: 0, y: 0, width: 640, height: 480))
        #expect(throws: YOLOError.self) { try Geometry.region(of: Rect(x: 0.5, y: 0, width: 0.6, height: 1), width: 10, height: 10) }
        #expect(throws: YOLOError.self) { try Geometry.region(of: Rect(x: 0, y: 0, width: 0, height: 1), width: 10, height: 10) }
        #expect(throws: YOLOError.self) { try Geometry.region(of: Rect(x: 0.5, y: 0.5, width: 0.01, height: 0.01), width: 10, height: 10) }
    }

    /// End to end through the pixels: a white square in a stored image, turned upright by each EXIF
    /// orientation, fed through every mode and region; where it appears in the network input, mapped back,
    /// is where it is in the upright image (within 1.5 network pixels: resampling softens its edges).
    @Test(arguments: 1...8)
    func markerRoundTripsThroughOrientationAndGeometry(orientation: Int) throws {
        let (sw, sh) = (200, 120)
        var stored = [UInt8](repeating: 0, count: sw * sh * 3)
        for y in 30..<70 { for x in 120..<160 { for c in 0..<3 { stored[(y * sw + x) * 3 + c] = 255 } } }
        let upright = ImageOrientation.upright(stored, width: sw, height: sh, channels: 3, orientation: orientation)
        let image = Image(width: upright.width, height: upright.height, pixels: upright.pixels)
        let marker = try #require(brightBox(image.pixels, width: image.width, height: image.height))
        let truth = Rect(x1: Double(marker.0) / Double(image.width), y1: Double(marker.1) / Double(image.height),
                         x2: Double(marker.2 + 1) / Double(image.width), y2: Double(marker.3 + 1) / Double(image.height))
        for scaling in scalings {
          for resampling in DetectionOptions.Resampling.allCases {
            for roi in [Rect.unit, Rect(x: 0.1, y: 0.05, width: 0.85, height: 0.9)] {
                for (nw, nh) in [(416, 416), (256, 160)] {
                    let crop = try Geometry.region(of: roi, width: image.width, height: image.height)
                    let plan = Geometry.plan(imageWidth: image.width, imageHeight: image.height, crop: crop, scaling: scaling,
                                             resampling: resampling, networkWidth: nw, networkHeight: nh)
                    var input = [Float](repeating: 0, count: 3 * nw * nh)
                    input.withUnsafeMutableBufferPointer { Geometry.makeInput(image, plan: plan, into: $0.baseAddress!) }
                    let bytes = input[0..<(nw * nh)].map { $0 > 0.75 ? UInt8(255) : 0 }
                    let rgb = bytes.flatMap { [$0, $0, $0] }
                    guard let seen = brightBox(rgb, width: nw, height: nh) else {
                        // Centre crop may cut the marker off; then there is nothing to map.
                        #expect(scaling == .centerCrop, "marker lost in \(scaling)")
                        continue
                    }
                    let inNetwork = Rect(x1: Double(seen.0) / Double(nw), y1: Double(seen.1) / Double(nh),
                                         x2: Double(seen.2 + 1) / Double(nw), y2: Double(seen.3 + 1) / Double(nh))
                    let mapped = plan.inverse.apply(inNetwork)
                    let tolerance = 1.5 * max(plan.inverse.scaleX / Double(nw), plan.inverse.scaleY / Double(nh))
                    if scaling == .centerCrop {
                        // Only the part of the marker inside the fed pixels can be seen.
                        let source = normalized(plan.source, width: image.width, height: image.height)
                        let visible = Rect(x1: max(truth.minX, source.minX), y1: max(truth.minY, source.minY),
                                           x2: min(truth.maxX, source.maxX), y2: min(truth.maxY, source.maxY))
                        expectClose(mapped, visible, tolerance, "orientation \(orientation) \(scaling) \(roi) \(nw)x\(nh)")
                    } else {
                        expectClose(mapped, truth, tolerance, "orientation \(orientation) \(scaling) \(resampling) \(roi) \(nw)x\(nh)")
                    }
                }
            }
          }
        }
    }
}

/// Bounding box (x0, y0, x1, y1 inclusive) of pixels brighter than mid-gray in RGB bytes.
func brightBox(_ pixels: [UInt8], width: Int, height: Int) -> (Int, Int, Int, Int)? {
    var box: (Int, Int, Int, Int)?
    for y in 0..<height {
        for x in 0..<width where pixels[(y * width + x) * 3] > 127 {
            box = box.map { (min($0.0, x), min($0.1, y), max($0.2, x), max($0.3, y)) } ?? (x, y, x, y)
        }
    }
    return box
}
