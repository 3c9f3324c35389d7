#if COURIER_FUZZ
import Foundation

/// One fuzz target: a name (its corpus is `Tests/Fuzz/Corpus/<name>/`) and the function that
/// feeds one input to a parser and checks what comes back.
struct FuzzHarness: Sendable {
    let name: String
    let run: @Sendable (Data) -> Void

    /// Every harness, in the order `scripts/fuzz` runs them.
    static let all: [FuzzHarness] = [
        FuzzHarness(name: "data-url", run: DataURLHarness.run),
        FuzzHarness(name: "set-cookie", run: SetCookieHarness.run),
        FuzzHarness(name: "response-head", run: ResponseHeadHarness.run),
        FuzzHarness(name: "ftp-list", run: FTPListingHarness.runLIST),
        FuzzHarness(name: "ftp-mlsd", run: FTPListingHarness.runMLSD),
        FuzzHarness(name: "resume-data", run: ResumeDataHarness.run),
        FuzzHarness(name: "plugin-manifest", run: PluginManifestHarness.run),
        FuzzHarness(name: "known-hosts", run: KnownHostsHarness.run),
        FuzzHarness(name: "websocket-frames", run: WebSocketFramesHarness.run),
        FuzzHarness(name: "ntlm-challenge", run: NTLMChallengeHarness.run),
    ]

    static func named(_ name: String) -> FuzzHarness? {
        all.first { $0.name == name }
    }
}

/// Stops the run when an invariant does not hold: libFuzzer reports the abort as a crash and
/// saves the input.
func fuzzCheck(_ condition: Bool, _ message: @autoclosure () -> String) {
    guard !condition else { return }
    FileHandle.standardError.write(Data("CourierFuzz: invariant failed: \(message())\n".utf8))
    abort()
}
#endif
