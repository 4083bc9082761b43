import Foundation
@_spi(Engine) import YOLO
import YOLOVideo

/// Frames from a folder of images (name order) or a video source, read synchronously.
struct ObjectFrames {
    private let sequence: ImageSequence?
    private let video: VideoSource?

    init(_ location: String) throws {
        if ImageSequence.isFolder(location) {
            (sequence, video) = (try ImageSequence(location), nil)
        } else {
            (sequence, video) = (nil, try VideoSource(location))
        }
    }

    /// The video's frame rate; 30 for a folder.
    var frameRate: Double { video.map { $0.frameRate ?? 25 } ?? 30 }

    /// Calls `body` with each frame and its time in seconds (a folder: index / 30).
    func forEach(_ body: (Image, Double) throws -> Void) throws {
        if let sequence {
            for index in sequence.files.indices { try body(try sequence.image(index), Double(index) / 30) }
        } else if let video {
            while let frame = try video.nextFrame() { try body(frame.image, frame.time) }
        }
    }
}
