import Foundation
import Testing

/// Runs the source-compatibility checks against FoundationNetworking:
/// `scripts/api-diff.py` (declaration by declaration) and `scripts/check-source-compatibility`
/// (type-checks `Tests/CompatibilityFixtures/` against both modules).
///
/// Both build Courier into a scratch folder of their own (`.build-compat`, or
/// `$COURIER_COMPAT_SCRATCH`) and depend on the toolchain's FoundationNetworking, so they run only
/// when `COURIER_COMPAT_CHECK=1` is set.
@Suite("Source compatibility with FoundationNetworking",
       .serialized,
       .enabled(if: ProcessInfo.processInfo.environment["COURIER_COMPAT_CHECK"] == "1",
                "set COURIER_COMPAT_CHECK=1 to run"))
struct SourceCompatibilityTests {

    /// The repository root: this file is `Tests/CourierTests/Compatibility/<name>.swift`.
    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // Compatibility
        .deletingLastPathComponent()  // CourierTests
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()

    /// How long one script may run before it is stopped and the test fails.
    static let timeLimit: TimeInterval = 900

    /// What a finished (or stopped) script left behind.
    struct Outcome {
        var status: Int32
        var output: String
        var timedOut: Bool
    }

    /// Runs `arguments` from the repository root, its output going to a temporary file, waiting at
    /// most `timeLimit`.
    static func run(_ arguments: [String]) async throws -> Outcome {
        let log = FileManager.default.temporaryDirectory
            .appendingPathComponent("courier-compat-\(UUID().uuidString).log")
        guard FileManager.default.createFile(atPath: log.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: log.path])
        }
        defer { try? FileManager.default.removeItem(at: log) }
        let handle = try FileHandle(forWritingTo: log)
        defer { try? handle.close() }

        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.currentDirectoryURL = repositoryRoot
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()

        let deadline = Date().addingTimeInterval(timeLimit)
        var timedOut = false
        while process.isRunning {
            if Date() >= deadline {
                process.terminate()
                timedOut = true
                break
            }
            try await Task.sleep(nanoseconds: 200_000_000)
        }
        process.waitUntilExit()
        let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        return Outcome(status: process.terminationStatus, output: output, timedOut: timedOut)
    }

    @Test("Courier declares FoundationNetworking's public API the same way (scripts/api-diff.py)")
    func declarationsMatch() async throws {
        let outcome = try await Self.run(["python3", "scripts/api-diff.py"])
        #expect(!outcome.timedOut, "api-diff.py ran longer than \(Self.timeLimit) s")
        #expect(outcome.status == 0, "\(outcome.output)")
    }

    @Test("A FoundationNetworking program type-checks against Courier (scripts/check-source-compatibility)")
    func fixturesTypeCheck() async throws {
        let outcome = try await Self.run(["bash", "scripts/check-source-compatibility"])
        #expect(!outcome.timedOut, "check-source-compatibility ran longer than \(Self.timeLimit) s")
        #expect(outcome.status == 0, "\(outcome.output)")
    }
}
