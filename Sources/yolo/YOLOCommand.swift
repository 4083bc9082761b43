import ArgumentParser
import Foundation
@_spi(Engine) import YOLO

@main
struct YOLOCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "yolo",
        abstract: "Tiny YOLOv3 object detection on the CPU, in Swift.",
        subcommands: [Detect.self, Track.self, TrackObject.self, Serve.self, Eval.self, EvalMOT.self, EvalSOT.self, Convert.self, Compare.self, Bench.self, BenchVideo.self, BenchServe.self, Info.self, Forward.self])

    /// Parses and runs a subcommand. Every failure — a bad flag or a bad file — is one line on stderr
    /// and exit status 1 (swift-argument-parser's own usage errors would exit with 64).
    static func main() {
        // The engine does its own threading and keeps OpenBLAS at one thread: its idle workers,
        // started at load, would only take a core from ours.
        BLAS.threads = 1
        BLAS.stopWorkerThreads()
        // Ctrl-C during `convert` or `detect --save` must not leave hidden temporary files behind.
        SignalCleanup.install()
        do {
            var command = try parseAsRoot()
            // The kernel family is chosen before anything is built: `--kernel`, else YOLO_KERNEL, else
            // the best this CPU supports; one the CPU lacks is a one-line error.
            if let kernel = (command as? KernelSelecting)?.kernelOptions.kernel {
                try KernelFamily.select(kernel, source: "--kernel")
            } else if let kernel = ProcessInfo.processInfo.environment["YOLO_KERNEL"] {
                try KernelFamily.select(kernel, source: "YOLO_KERNEL")
            }
            _ = try Parallel.piecesRequest(ProcessInfo.processInfo.environment["YOLO_PIECES"])
            try command.run()
        } catch let error as YOLOError {
            fail("\(error)")
        } catch let error as ExitCode {
            Foundation.exit(error.rawValue)
        } catch {
            if exitCode(for: error) == .success {
                print(fullMessage(for: error))
                Foundation.exit(0)
            }
            let text = message(for: error).split(whereSeparator: \.isNewline).first.map(String.init) ?? "\(error)"
            fail((negativeNumberMessage(text) ?? text) + " (see 'yolo help')")
        }
    }

    /// argument-parser reads `--conf -5` as an option missing its value followed by an unknown flag `-5`;
    /// say what is really wrong: no option of this tool takes a negative number.
    static func negativeNumberMessage(_ text: String, arguments: [String] = CommandLine.arguments) -> String? {
        let prefix = "Missing value for '"
        guard text.hasPrefix(prefix + "--") else { return nil }
        let option = String(text.dropFirst(prefix.count).prefix { $0 != " " && $0 != "'" })
        guard let position = arguments.firstIndex(where: { $0 == option }), position + 1 < arguments.count else { return nil }
        let value = arguments[position + 1]
        guard value.hasPrefix("-"), value.count > 1, value.dropFirst().first.map({ $0.isNumber || $0 == "." }) == true else { return nil }
        return "\(option) does not take negative values, got \(value)"
    }

    private static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("yolo: error: \(message)\n".utf8))
        Foundation.exit(1)
    }
}

/// `--kernel`, for the commands that run the network (bench, detect, eval, forward).
struct KernelOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Kernel family: auto (the best this CPU supports), avx512, avx2 or portable (OpenBLAS). Overrides the YOLO_KERNEL environment variable.", valueName: "family"))
    var kernel: String?
}

/// A command whose network runs on a kernel family the user may choose.
protocol KernelSelecting {
    var kernelOptions: KernelOptions { get }
}

/// Options naming a darknet model; every command that loads a model takes them.
struct ModelOptions: ParsableArguments {
    @Option(help: "Darknet .cfg file (default: the fetched yolov4-tiny.cfg).")
    var cfg: String?
    @Option(help: "Darknet .weights file (default: the fetched yolov4-tiny.weights).")
    var weights: String?
    @Option(help: "Class names, one per line (default: coco.names with the default model, else none).")
    var names: String?

    @Option(name: .customLong("model"), help: "A model name, yolov4-tiny or yolov3-tiny (their converted lut8 files: Weights/, $SWIFTYOLO_MODEL_DIR; `make model` makes them) or yolov4-tiny-int8 / yolov3-tiny-int8 (their linear int8 files, also made by `make model`), or a SwiftYOLO model file (.yolo), instead of --cfg/--weights/--names. Default: yolov4-tiny when `make model` has made it, else the darknet files.")
    var modelFile: String?
    @Option(help: "With --model: expanded (LUT codes become float32 at load, fastest per image) or codes (kept as codes, least memory, quickest to start). Default: expanded (yolo detect: codes for fewer than 5 images).")
    var residency: String?
    @Option(name: .customLong("memory-budget"), help: ArgumentHelp("The most working memory the network for one input size may need, e.g. 512M, 8G (a number alone is MiB). A larger input size fails before anything is allocated. Default: 4G.", valueName: "size"))
    var memoryBudget: String?

    func validate() throws {
        if let residency, !["expanded", "codes"].contains(residency) {
            throw ValidationError("--residency must be expanded or codes; got '\(residency)'")
        }
        if modelFile != nil, names != nil {
            throw ValidationError("--names applies to --cfg/--weights models; a .yolo model carries its own class names")
        }
        if let memoryBudget, MemoryBudget.parse(memoryBudget) == nil {
            throw ValidationError("--memory-budget must be a positive size such as 512M or 8G; got '\(memoryBudget)'")
        }
    }

    /// The model file `load` reads, nil when it reads darknet's cfg and weights: `--model` resolved, else, with no
    /// model named at all, the converted default when `make model` has made it (unless `convertedDefault` is false).
    func resolvedModelFile(convertedDefault: Bool = true) throws -> String? {
        // --names alone means darknet's default files with those names (a .yolo model has its own).
        let fallback = cfg == nil && weights == nil && names == nil && convertedDefault ? Defaults.modelFile : nil
        return try modelFile.map(Defaults.resolve) ?? fallback
    }

    /// The file `load()` reads (the model file, else the cfg), for reports; a name that does not resolve is
    /// shown as given (loading it fails with its own error).
    var sourceDescription: String {
        (try? resolvedModelFile()) ?? modelFile ?? cfg ?? Defaults.cfg
    }

    /// `--memory-budget` in bytes (default `MemoryBudget.defaultBytes`).
    var memoryBudgetBytes: Int { memoryBudget.flatMap(MemoryBudget.parse) ?? MemoryBudget.defaultBytes }

    /// Loads the model; `withNames: false` skips the names file (for commands that print no labels).
    /// With no model named at all, the default is the converted lut8 model when `make model` has made it,
    /// else darknet's yolov4-tiny files; `convertedDefault: false` always falls back to darknet's files
    /// (`yolo convert` must start from the original weights, not from an already quantized model).
    /// `residency` is the weight residency when `--residency` is not given.
    func load(withNames: Bool = true, convertedDefault: Bool = true, residency defaultResidency: WeightResidency = .expanded)
        throws -> Model {
        if let modelFile = try resolvedModelFile(convertedDefault: convertedDefault) {
            guard let mode = residency.map({ ["expanded": WeightResidency.expanded, "codes": .codes][$0] })
                    ?? defaultResidency else {
                throw YOLOError.invalidArgument("--residency must be expanded or codes; got '\(residency ?? "")'")
            }
            return try Model(contentsOf: modelFile, residency: mode)
        }
        let names = names ?? (cfg == nil ? Defaults.names : nil)
        return try Model(cfg: cfg ?? Defaults.cfg, weights: weights ?? Defaults.weights, names: withNames ? names : nil)
    }
}

/// Where `make` puts the fetched model, relative to the package, found from the executable's path.
enum Defaults {
    static let weightsFolder: String = {
        // .build/<config>/yolo → package root; fall back to ./Weights.
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var folder = executable.deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = folder.appendingPathComponent("Weights")
            if FileManager.default.fileExists(atPath: candidate.appendingPathComponent("fetch.sh").path) {
                return candidate.path
            }
            folder = folder.deletingLastPathComponent()
        }
        return "Weights"
    }()
    static let cfg = weightsFolder + "/\(ModelName.default.rawValue).cfg"
    static let weights = weightsFolder + "/\(ModelName.default.rawValue).weights"
    static let names = weightsFolder + "/coco.names"
    /// The converted default model, when present (`$SWIFTYOLO_MODEL` or Weights/yolov4-tiny-lut8.yolo).
    static var modelFile: String? {
        Model.defaultModelPath(searching: [packageFolder])
    }
    static var packageFolder: String { (weightsFolder as NSString).deletingLastPathComponent }

    /// The linear int8 conversions `make model` also makes (not bundled: `ModelName` lists the bundled lut8 ones).
    static let int8Names: Set<String> = ["yolov4-tiny-int8", "yolov3-tiny-int8"]

    /// `--model`'s value as a file: yolov4-tiny-int8 / yolov3-tiny-int8 are `Weights/<name>.yolo` (or in
    /// `$SWIFTYOLO_MODEL_DIR`); a model name (yolov4-tiny, yolov3-tiny) is its converted file, found as
    /// `ModelName.path(searching:)` says (the package's Weights/ too); an existing file always wins.
    static func resolve(_ model: String) throws -> String {
        if int8Names.contains(model.lowercased()), !FileManager.default.fileExists(atPath: model) {
            let file = model.lowercased() + "." + ModelFile.fileExtension
            var folders = [FileManager.default.currentDirectoryPath, packageFolder].map { $0 + "/Weights" }
            if let folder = ProcessInfo.processInfo.environment["SWIFTYOLO_MODEL_DIR"], !folder.isEmpty { folders.insert(folder, at: 0) }
            guard let path = folders.map({ $0 + "/" + file }).first(where: FileManager.default.fileExists) else {
                throw YOLOError.fileNotFound(path: "Weights/\(file) (the int8 \(model.lowercased()): run `make model`, or set SWIFTYOLO_MODEL_DIR)")
            }
            return path
        }
        guard let name = ModelName(rawValue: model.lowercased()), !FileManager.default.fileExists(atPath: model) else { return model }
        guard let path = name.path(searching: [FileManager.default.currentDirectoryPath, packageFolder]) else {
            throw YOLOError.fileNotFound(path: "Weights/\(name.fileName) (the converted \(name.rawValue): run `make model`, or set SWIFTYOLO_MODEL_DIR)")
        }
        return path
    }
}

/// Writes a line to stderr.
func printError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}
