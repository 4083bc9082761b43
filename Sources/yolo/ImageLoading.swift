import YOLO

/// Decodes an image file for the comparison report. (Temporary until the image decoders land on main.)
func loadImage(_ path: String) throws -> Image {
    throw YOLOError.invalidArgument("\(path): image decoding is not in this build yet; pass .npy input blobs")
}
