import Foundation
import Testing

@testable import CourierTool

// These tests run the built `courier` binary as a subprocess, the way a person or a script uses it.
// `swift build` (and `swift test`, which builds every product first) puts it next to the test bundle;
// COURIER_BINARY overrides the location.

/// What one run of `courier` produced.
struct ToolRun: Sendable {
    let status: Int32
    let stdout: Data
    let stderr: String
    var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
}

enum CourierBinary {
    /// The `courier` executable this test run uses, or nil when it has not been built.
    static let url: URL? = {
        let manager = FileManager.default
        if let override = ProcessInfo.processInfo.environment["COURIER_BINARY"] {
            return manager.isExecutableFile(atPath: override) ? URL(fileURLWithPath: override) : nil
        }
        var directories: [URL] = []
        if let executable = try? manager.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            directories.append(URL(fileURLWithPath: executable).deletingLastPathComponent())
        }
        directories.append(Bundle.main.bundleURL)
        directories.append(Bundle.main.bundleURL.deletingLastPathComponent())
        if let argument = CommandLine.arguments.first {
            directories.append(URL(fileURLWithPath: argument).deletingLastPathComponent())
        }
        // Inside an .xctest bundle directory the products directory is a few levels up.
        var candidates: [URL] = []
        for directory in directories {
            var current = directory.standardizedFileURL
            for _ in 0..<4 {
                candidates.append(current.appendingPathComponent("courier"))
                current = current.deletingLastPathComponent()
            }
        }
        return candidates.first { url in
            var isDirectory: ObjCBool = false
            return manager.fileExists(atPath: url.path, isDirectory: &isDirectory) && !isDirectory.boolValue
                && manager.isExecutableFile(atPath: url.path)
        }
    }()

    /// Runs `courier` (or the executable `binary`) with `arguments` (in `directory`, when given, with
    /// `stdin` as its standard input, else /dev/null); kills it and fails the test if it takes longer
    /// than `limit`.
    static func run(_ arguments: [String], environment: [String: String] = [:], binary: URL? = nil,
                    directory: URL? = nil, stdin: Data? = nil, limit: Duration = .seconds(60)) async throws -> ToolRun
    {
        let binary = try #require(binary ?? url, "courier binary not found next to the test bundle: run `swift build` first")
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        let outURL = scratch.url.appendingPathComponent("stdout")
        let errURL = scratch.url.appendingPathComponent("stderr")
        try Data().write(to: outURL)
        try Data().write(to: errURL)
        let outHandle = try FileHandle(forWritingTo: outURL)
        let errHandle = try FileHandle(forWritingTo: errURL)

        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        if let stdin {
            let inURL = scratch.url.appendingPathComponent("stdin")
            try stdin.write(to: inURL)
            process.standardInput = try FileHandle(forReadingFrom: inURL)
        } else {
            process.standardInput = FileHandle.nullDevice
        }
        process.standardOutput = outHandle
        process.standardError = errHandle
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        try process.run()
        try? outHandle.close()
        try? errHandle.close()

        let deadline = ContinuousClock.now + limit
        while process.isRunning, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        if process.isRunning {
            process.terminate()
            let killDeadline = ContinuousClock.now + .seconds(5)
            while process.isRunning, ContinuousClock.now < killDeadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            Issue.record("courier \(arguments.joined(separator: " ")) did not finish within \(limit)")
        }
        process.waitUntilExit()
        return ToolRun(
            status: process.terminationStatus,
            stdout: try Data(contentsOf: outURL),
            stderr: String(decoding: try Data(contentsOf: errURL), as: UTF8.self))
    }
}

/// A fresh temporary directory, removed by `remove()`.
struct TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("courier-tool-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> URL { url.appendingPathComponent(name) }

    /// The names in the directory, sorted.
    func contents() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: url.path).sorted()
    }

    func remove() { try? FileManager.default.removeItem(at: url) }
}

/// Compares two bodies without handing large values to `#expect` (whose failure diff is slow on
/// megabytes).
func sameBytes(_ lhs: Data, _ rhs: Data) -> Bool { lhs == rhs }

/// Bytes that are not text, so a lossy conversion would show.
func patternBytes(_ count: Int) -> Data {
    Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 / 251) })
}
