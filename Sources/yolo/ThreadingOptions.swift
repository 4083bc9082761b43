import ArgumentParser
@_spi(Engine) import YOLO

/// How the engine's worker threads wait and where they run: the `Threading` settings besides the thread
/// count, which each command takes in its own `--threads`.
struct ThreadingOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Microseconds an idle thread polls for more work before it sleeps (default 100; 0: sleep at once, the least CPU time on a shared machine).", valueName: "µs"))
    var spin: Int?

    @Option(name: .customLong("pin-workers"), help: ArgumentHelp("Pin the worker threads to these CPUs, as taskset -c lists them (e.g. 0-3,8). Default: no thread's CPU affinity is changed.", valueName: "cpus"))
    var pinWorkers: String?

    func validate() throws {
        if let spin, spin < 0 { throw ValidationError("--spin must be 0 or more microseconds, got \(spin)") }
        if let pinWorkers, Threading.parseCPUList(pinWorkers) == nil {
            throw ValidationError("--pin-workers takes a CPU list such as 0-3,8, got '\(pinWorkers)'")
        }
    }

    /// The settings for `threads` threads per pass (nil or 0: the default count).
    func threading(threads: Int?) throws -> Threading {
        var threading = Threading(threads: threads ?? 0)
        if let spin { threading.spin = .microseconds(spin) }
        if let pinWorkers { threading.workerCPUs = Threading.parseCPUList(pinWorkers) ?? [] }
        do {
            try threading.validate()
        } catch let error as YOLOError {
            throw ValidationError("\(error)")
        }
        return threading
    }
}
