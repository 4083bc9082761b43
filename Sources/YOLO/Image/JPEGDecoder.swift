import Foundation
import CTurboJPEG

/// Decodes JPEG bytes with libjpeg-turbo's TurboJPEG API.
///
/// - IDCT: TurboJPEG's decompression default, the accurate integer IDCT (libjpeg `JDCT_ISLOW`),
///   with libjpeg's default "fancy" (triangle-filter) chroma upsampling: the same as OpenCV's
///   `imread`, which calls libjpeg-turbo with default settings.
/// - Gray and YCbCr/RGB come out as RGB; CMYK and YCCK come out as CMYK and are converted here
///   (see `cmykToRGB`).
/// - A warning from libjpeg (for example a truncated file) is not fatal: the image is returned
///   with the warning in `Image.decodeWarnings`, the undecodable part filled by libjpeg.
enum JPEGDecoder {
    static func decode(_ bytes: UnsafeRawBufferPointer, name: String,
                       options: ImageDecodingOptions) throws -> Image {
        let markers = JPEGMarkers(scanning: bytes)
        guard let handle = tjInitDecompress() else {
            throw YOLOError.invalidImage(path: name, message: "cannot start the JPEG decoder")
        }
        defer { tjDestroy(handle) }
        let base = bytes.baseAddress!.assumingMemoryBound(to: UInt8.self)
        let size = UInt(bytes.count)

        // MARK: Header and limits, before any pixel allocation
        var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colorspace: Int32 = 0
        var warnings: [String] = []
        if tjDecompressHeader3(handle, base, size, &width, &height, &subsampling, &colorspace) != 0 {
            // A warning here (e.g. junk bytes before a marker) still yields a usable header.
            guard tjGetErrorCode(handle) == Int32(TJERR_WARNING.rawValue), width > 0, height > 0 else {
                throw YOLOError.invalidImage(path: name, message: "invalid JPEG: \(message(handle))")
            }
            warnings.append(message(handle))
        }
        guard width > 0, height > 0 else {
            throw YOLOError.invalidImage(path: name, message: "invalid JPEG: no frame header giving the image size")
        }
        let fullW = Int(width), fullH = Int(height)
        try ImageLimits.check(width: fullW, height: fullH, options: options, name: name)
        let orientation = markers.orientation
        let swaps = options.applyOrientation && ImageOrientation.swapsAxes(orientation)
        let (uprightW, uprightH) = swaps ? (fullH, fullW) : (fullW, fullH)

        // MARK: Scale
        var denominator = 1
        if let minimum = options.minimumSize {
            for d in [2, 4, 8] {
                let w = (uprightW + d - 1) / d, h = (uprightH + d - 1) / d
                if w >= minimum.width && h >= minimum.height { denominator = d } else { break }
            }
        }
        let scaledW = (fullW + denominator - 1) / denominator
        let scaledH = (fullH + denominator - 1) / denominator

        // MARK: Decode
        let isCMYK = colorspace == Int32(TJCS_CMYK.rawValue) || colorspace == Int32(TJCS_YCCK.rawValue)
        let channels = isCMYK ? 4 : 3
        // Held at once: TurboJPEG's output (3 bytes a pixel, 4 for CMYK) and the RGB converted from CMYK or
        // the upright copy (3); while decoding a progressive JPEG, also its coefficients.
        try ImageLimits.check(pixels: scaledW * scaledH, rows: swaps ? scaledW : scaledH, perPixel: isCMYK ? 7 : options.applyOrientation && orientation != 1 ? 6 : 3,
                              fixed: markers.isProgressive ? fullW * fullH * coefficientBytes(subsampling: subsampling, isCMYK: isCMYK) : 0,
                              width: fullW, height: fullH, options: options, name: name)
        let pixelFormat = Int32(isCMYK ? TJPF_CMYK.rawValue : TJPF_RGB.rawValue)
        var decoded = [UInt8](repeating: 0, count: scaledW * scaledH * channels)
        let status = decoded.withUnsafeMutableBufferPointer { out in
            tjDecompress2(handle, base, size, out.baseAddress, Int32(scaledW), 0, Int32(scaledH), pixelFormat, 0)
        }
        if status != 0 {
            let text = message(handle)
            guard tjGetErrorCode(handle) == Int32(TJERR_WARNING.rawValue) else {
                throw YOLOError.invalidImage(path: name, message: "invalid JPEG: \(text)")
            }
            if !warnings.contains(text) { warnings.append(text) }
        }
        if isCMYK {
            decoded = cmykToRGB(decoded, inverted: markers.hasAdobeMarker)
        }

        // MARK: Orientation
        var result = (pixels: decoded, width: scaledW, height: scaledH)
        if options.applyOrientation {
            result = ImageOrientation.upright(decoded, width: scaledW, height: scaledH, channels: 3,
                                              orientation: orientation)
        }
        var image = Image(width: result.width, height: result.height, pixels: result.pixels,
                          sourceWidth: options.applyOrientation ? uprightW : fullW,
                          sourceHeight: options.applyOrientation ? uprightH : fullH)
        image.orientation = orientation
        image.decodeWarnings = warnings
        return image
    }

    // MARK: Memory

    /// Bytes of DCT coefficients per pixel of the full image (2 bytes per sample of each component): what
    /// libjpeg holds for a progressive JPEG, whatever the output scale. Unknown subsampling counts as none.
    static func coefficientBytes(subsampling: Int32, isCMYK: Bool) -> Int {
        if isCMYK { return 8 }
        switch subsampling {
        case Int32(TJSAMP_GRAY.rawValue): return 2
        case Int32(TJSAMP_420.rawValue), Int32(TJSAMP_411.rawValue): return 3
        case Int32(TJSAMP_422.rawValue), Int32(TJSAMP_440.rawValue): return 4
        default: return 6
        }
    }

    // MARK: CMYK

    /// Converts interleaved CMYK samples to RGB.
    ///
    /// With `inverted` (an Adobe APP14 marker is present: the file stores 255 − ink, as Adobe and
    /// libjpeg write CMYK and YCCK) the samples are used as they are; otherwise they are ink
    /// amounts and are complemented first. Then, with c′ and k′ the complemented samples,
    /// R = k′ − ((255 − c′)·k′ >> 8) (likewise G, B): OpenCV's integer form of R = c′·k′/255, which
    /// is at most 2 levels below the rounded product; kept so that decodes match OpenCV's
    /// `imread` byte for byte.
    static func cmykToRGB(_ cmyk: [UInt8], inverted: Bool) -> [UInt8] {
        let count = cmyk.count / 4
        var rgb = [UInt8](repeating: 0, count: count * 3)
        let flip = inverted ? 0 : 255
        for i in 0..<count {
            let k = Int(cmyk[i * 4 + 3]) ^ flip
            for c in 0..<3 {
                let v = Int(cmyk[i * 4 + c]) ^ flip
                rgb[i * 3 + c] = UInt8(k - (((255 - v) * k) >> 8))
            }
        }
        return rgb
    }

    /// TurboJPEG's description of the last error on `handle`, one line.
    private static func message(_ handle: tjhandle) -> String {
        guard let text = tjGetErrorStr2(handle) else { return "unknown error" }
        return String(cString: text).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
