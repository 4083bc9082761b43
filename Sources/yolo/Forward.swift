import ArgumentParser
import Foundation
import YOLOReport
@_spi(Engine) import YOLO

struct Forward: ParsableCommand, KernelSelecting {
    static let configuration = CommandConfiguration(
        abstract: "Run the network on a .npy input blob or an image and write raw layer outputs as .npy files.",
        discussion: """
            A .npy input is float32 1xCxHxW (RGB planes in [0,1], as darknet feeds its network); the network \
            is built for its width and height. Any other input is read as an image (JPEG or PNG, EXIF \
            orientation ignored like darknet) and fitted to the cfg's input size (or --size) exactly as the \
            model's darknet does (letterbox for pjreddie's models, stretch for AlexeyAB's; `yolo info` shows it); the blob fed is written as DIR/input.npy. Writes DIR/layer<N>.npy for \
            each YOLO head, or for each layer named with --layer (index as in `yolo info`).
            """)

    @OptionGroup var model: ModelOptions
    @OptionGroup var kernelOptions: KernelOptions

    @Option(help: "Input: a .npy blob (float32, 1xCxHxW) or an image file.")
    var input: String

    @Option(help: "Network input size WxH for an image input (default: the cfg's).")
    var size: String?

    @Option(help: "Folder for the output .npy files (created if missing).")
    var out: String

    @Option(help: "Write this layer's output instead of the YOLO heads (may be repeated).")
    var layer: [Int] = []

    @Flag(help: "Print the process's memory (before loading the model, after the pass) on stderr.")
    var memory = false

    func run() throws {
        let before = memory ? MemoryStatus.summary() : ""
        let loaded = try model.load(withNames: false)
        let blob = try input.lowercased().hasSuffix(".npy") ? Tensor.readNumPy(input) : networkInput(loaded)
        let network = try Network(model: loaded, width: blob.shape.width, height: blob.shape.height, memoryBudget: model.memoryBudgetBytes)
        try network.requireInput(blob.shape)
        if let bad = layer.first(where: { $0 < 0 || $0 >= network.layers.count }) {
            throw YOLOError.invalidArgument("--layer \(bad) does not exist: the network has layers 0...\(network.layers.count - 1)")
        }
        let workspace = Workspace(for: network)
        let start = ContinuousClock.now
        blob.values.withUnsafeBufferPointer { network.forward($0.baseAddress!, workspace: workspace) }
        let elapsed = ContinuousClock.now - start
        do {
            try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        } catch {
            throw YOLOError.unreadableFile(path: out, reason: "cannot create folder")
        }
        if !input.lowercased().hasSuffix(".npy") {
            try blob.writeNumPy((out as NSString).appendingPathComponent("input.npy"))
        }
        for index in layer.isEmpty ? network.headIndices : layer {
            let path = (out as NSString).appendingPathComponent("layer\(index).npy")
            let tensor = workspace.tensor(of: index)
            try tensor.writeNumPy(path)
            print("\(path): layer \(index) \(tensor.shape)")
        }
        print("forward pass: \(elapsed.formattedMilliseconds) (first pass, cold), \(workspace.threads) thread(s), BLAS core \(BLAS.coreName)")
        if memory {
            withExtendedLifetime((network, workspace)) {
                printError("memory before loading the model: " + before)
                printError(String(format: "memory after the forward pass (workspace arena %.1f MB): ", Double(workspace.arenaCount * 4) / 1e6)
                           + MemoryStatus.summary())
            }
        }
    }
}

extension Forward {
    /// The image at `input` fitted the way the model expects (`Model.preferredScaling`: letterboxed like
    /// pjreddie's `darknet detect`, stretched like AlexeyAB's `detector test`), stored pixel order, no EXIF rotation.
    func networkInput(_ model: Model) throws -> Tensor {
        let image = try Image(contentsOf: input, options: ImageDecodingOptions(applyOrientation: false))
        let (w, h) = try parseSize(size) ?? (model.description.inputShape.width, model.description.inputShape.height)
        let crop = PixelRegion(x: 0, y: 0, width: image.width, height: image.height)
        let plan = Geometry.plan(imageWidth: image.width, imageHeight: image.height, crop: crop, scaling: model.preferredScaling,
                                 resampling: model.preferredResampling, networkWidth: w, networkHeight: h)
        try Network.checkMemory(model.description, width: w, height: h, budget: self.model.memoryBudgetBytes)
        let channels = model.description.inputShape.channels
        guard channels == 1 || channels == 3 else {
            throw YOLOError.invalidArgument("\(model.description.path): the model takes \(channels)-channel input; an image gives 1 or 3 (pass an .npy input instead)")
        }
        var values = [Float](repeating: 0, count: channels * w * h)
        values.withUnsafeMutableBufferPointer { Geometry.makeInput(image, plan: plan, channels: channels, fill: model.description.letterboxFill,
                                                                        into: $0.baseAddress!) }
        return Tensor(shape: Shape(channels: channels, height: h, width: w), values: values)
    }
}
