import Foundation
import Testing

/// Runs one program of an example, as a person would in a terminal: standard output and standard
/// error go to one file in the order they are written, standard input is empty, and the run is
/// bounded (killed, and the test failed, past `limit`).
struct ExampleProcess {
    /// What a run printed and how it ended.
    struct Result: Sendable, Equatable {
        let status: Int32
        let output: String
    }

    let executable: URL
    let arguments: [String]
    let directory: URL
    let environment: [String: String]

    func run(limit: Duration = .seconds(60)) async throws -> Result {
        // Outside `directory`, which an example may list.
        let outputFile = FileManager.default.temporaryDirectory.appendingPathComponent("courier-example-output-\(UUID().uuidString)")
        try Data().write(to: outputFile)
        defer { try? FileManager.default.removeItem(at: outputFile) }
        let handle = try FileHandle(forWritingTo: outputFile)

        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.currentDirectoryURL = directory
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        try? handle.close()

        let deadline = ContinuousClock.now + limit
        while process.isRunning, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            Issue.record("\(executable.lastPathComponent) \(arguments.joined(separator: " ")) did not end within \(limit)")
        }
        process.waitUntilExit()
        let output = String(decoding: try Data(contentsOf: outputFile), as: UTF8.self)
        return Result(status: process.terminationStatus, output: output)
    }
}
