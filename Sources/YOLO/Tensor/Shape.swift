/// The shape of one feature map: channels × height × width (batch size is always 1).
///
/// Storage order everywhere in SwiftYOLO is CHW, row-major: element (c, y, x) lives at
/// `(c * height + y) * width + x`.
@_spi(Engine) public struct Shape: Hashable, Sendable, CustomStringConvertible {
    public var channels: Int
    public var height: Int
    public var width: Int

    public init(channels: Int, height: Int, width: Int) {
        self.channels = channels
        self.height = height
        self.width = width
    }

    /// Number of elements: `channels * height * width`.
    public var count: Int { channels * height * width }
    /// Elements in one channel plane: `height * width`.
    public var planeCount: Int { height * width }

    /// `WxHxC`, darknet's order in its layer table.
    public var description: String { "\(width)x\(height)x\(channels)" }
}
