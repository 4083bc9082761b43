import ArgumentParser
import Foundation
import YOLO

struct Forward: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the network on a .npy input blob and write raw layer outputs as .npy files.",
        discussion: """
            The input is float32 1xCxHxW (RGB planes in [0,1], as darknet feeds its network). \
            The network is built for the blob's width and height. Writes DIR/<layer>.npy for each \
            YOLO head, or for the layer named with --layer (index as in `yolo info`).
            """)

    @OptionGroup var model: DarknetModelOptions

    @Option(help: "Input blob (.npy, float32, 1xCxHxW).")
    var input: String

    @Option(help: "Folder for the output .npy files (created if missing).")
    var out: String

    @Option(help: "Write this layer's output instead of the YOLO heads (may be repeated).")
    var layer: [Int] = []

    func run() throws {
        let blob = try Tensor.readNumPy(input)
        let before = MemoryStatus.summary()
        let loaded = try model.load(withNames: false)
        let network = try Network(model: loaded, width: blob.shape.width, height: blob.shape.height)
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
        for index in layer.isEmpty ? network.headIndices : layer {
            let path = (out as NSString).appendingPathComponent("layer\(index).npy")
            let tensor = workspace.tensor(of: index)
            try tensor.writeNumPy(path)
            print("\(path): layer \(index) \(tensor.shape)")
        }
        print("forward pass: \(elapsed.formattedMilliseconds), \(BLAS.threads) BLAS thread(s), core \(BLAS.coreName)")
        withExtendedLifetime((network, workspace)) {
            printError("memory before loading the model: " + before)
            printError(String(format: "memory after the forward pass (workspace arena %.1f MB): ", Double(workspace.arenaCount * 4) / 1e6)
                       + MemoryStatus.summary())
        }
    }
}

extension Duration {
    /// `12.34 ms`.
    var formattedMilliseconds: String {
        String(format: "%.2f ms", Double(components.seconds) * 1000 + Double(components.attoseconds) / 1e15)
    }
}
