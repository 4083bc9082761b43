import ArgumentParser
import Foundation
import YOLO

@main
struct YOLOCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "yolo",
        abstract: "Tiny YOLOv3 object detection on the CPU, in Swift.",
        subcommands: [Info.self, Forward.self, Bench.self])
}

/// Options naming a darknet model; every command that loads a model takes them.
struct DarknetModelOptions: ParsableArguments {
    @Option(help: "Darknet .cfg file.")
    var cfg: String = Defaults.cfg
    @Option(help: "Darknet .weights file.")
    var weights: String = Defaults.weights
    @Option(help: "Class names, one per line.")
    var names: String = Defaults.names

    func load() throws -> Model {
        try Model(cfg: cfg, weights: weights, names: names)
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
            if FileManager.default.fileExists(atPath: candidate.appendingPathComponent("yolov3-tiny.cfg").path) {
                return candidate.path
            }
            folder = folder.deletingLastPathComponent()
        }
        return "Weights"
    }()
    static let cfg = weightsFolder + "/yolov3-tiny.cfg"
    static let weights = weightsFolder + "/yolov3-tiny.weights"
    static let names = weightsFolder + "/coco.names"
}

/// Runs `body`, turning a `YOLOError` into one line on stderr and exit status 1.
func reportingErrors<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as YOLOError {
        FileHandle.standardError.write(Data("yolo: error: \(error)\n".utf8))
        throw ExitCode.failure
    }
}

/// Writes a line to stderr.
func printError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}
