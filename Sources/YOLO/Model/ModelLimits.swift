/// The limits every network description must respect, checked before anything is allocated.
///
/// Both readers (the darknet cfg parser and the `.yolo` model-file reader) hand their description
/// to one validator (`ModelDescription.validate`), which checks every field against these limits and
/// then propagates shapes, so no size taken from a file can overflow or ask for an absurd allocation.
/// The limits are far above what tiny YOLO models use (yolov3-tiny: 416×416 input, 1,024 channels,
/// 3×3 kernels, 24 layers) and well below where Int arithmetic could overflow: with every field
/// bounded, the largest product the engine forms (a layer's element count, the weights of one
/// convolution) stays below 2⁶³.
@_spi(Engine) public struct ModelLimits: Sendable, Equatable {
    /// Network input width and height, and every layer's output width and height.
    public var maximumSide = 8192
    /// Layers after `[net]`.
    public var maximumLayers = 4096
    /// Input channels, filters of a convolution, and every layer's output channels.
    public var maximumChannels = 65_536
    /// Kernel size of convolutions and max-pools.
    public var maximumKernel = 31
    /// Strides of convolutions, max-pools and upsample layers.
    public var maximumStride = 64
    /// Anchor pairs of a `[yolo]` layer, and its mask entries.
    public var maximumAnchors = 256
    /// Source layers of one `[route]`.
    public var maximumRouteSources = 64

    /// The standard limits (the values above).
    public init() {}

    /// The limits the engine applies.
    public static let standard = ModelLimits()
}

/// Memory a network needs for one input size, estimated before it is built, and the budget it must fit.
public enum MemoryBudget {
    /// The default budget for one network and one workspace: 4 GiB. yolov3-tiny needs about 50 MB at
    /// 416×416 and about 2.5 GB at 4096×4096.
    public static let defaultBytes = 4 << 30

    /// Parses a size such as `512M`, `4G`, `1.5G` or `2048` (MiB when no unit is given).
    @_spi(Engine) public static func parse(_ text: String) -> Int? {
        let trimmed = text.trimmingCharacters(in: .whitespaces).uppercased()
        let (kib, mib, gib) = (1024.0, 1024.0 * 1024, 1024.0 * 1024 * 1024)
        let units: [(String, Double)] = [("GIB", gib), ("MIB", mib), ("KIB", kib), ("GB", gib), ("MB", mib),
                                         ("KB", kib), ("G", gib), ("M", mib), ("K", kib)]
        var number = Substring(trimmed)
        var scale = mib
        if let (unit, factor) = units.first(where: { trimmed.hasSuffix($0.0) }) {
            number = number.dropLast(unit.count)
            scale = factor
        }
        guard let value = Double(number), value.isFinite, value > 0, value * scale < Double(Int.max / 2) else { return nil }
        return Int(value * scale)
    }

    /// `bytes` as a short human-readable figure (`4.0 GiB`, `52.3 MiB`).
    @_spi(Engine) public static func format(_ bytes: Int) -> String {
        let value = Double(bytes)
        if value >= Double(1 << 30) { return String(format: "%.1f GiB", value / Double(1 << 30)) }
        return String(format: "%.1f MiB", value / Double(1 << 20))
    }
}

import Foundation
