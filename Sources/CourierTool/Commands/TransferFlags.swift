import ArgumentParser
import Foundation

/// The options that decide how the URLs of one run are fetched: in turn or in parallel, and how
/// often a transient failure is tried again.
struct TransferFlags: ParsableArguments {
    @Flag(name: [.customShort("Z"), .customLong("parallel")], help: "Fetch the URLs concurrently (on the run's one session).")
    var parallel = false

    @Option(name: .customLong("parallel-max"), help: ArgumentHelp("With -Z, at most N transfers at a time (default 50).", valueName: "n"))
    var parallelMax = 50

    @Option(name: .customLong("retry"), help: ArgumentHelp("Try a transient failure (timeout, refused connection, HTTP 408/429/500/502/503/504) up to N more times.", valueName: "n"))
    var retry = 0

    @Option(name: .customLong("retry-delay"), help: ArgumentHelp("Wait SECONDS between tries instead of backing off (1 s, doubling, at most 10 min).", valueName: "seconds"))
    var retryDelay: Double?

    @Option(name: .customLong("retry-max-time"), help: ArgumentHelp("Start no new try once SECONDS have passed since the first.", valueName: "seconds"))
    var retryMaxTime: Double?

    /// The retry policy these options give.
    var retryPolicy: RetryPolicy {
        RetryPolicy(attempts: retry, fixedDelay: retryDelay, maxTime: retryMaxTime)
    }

    /// The options that need a URL, for the message when none is given.
    var givenNames: [String] {
        var given: [String] = []
        if parallel { given.append("-Z") }
        if retry != 0 { given.append("--retry") }
        return given
    }

    mutating func validate() throws {
        if parallelMax < 1 { throw ValidationError("--parallel-max must be at least 1") }
        if retry < 0 { throw ValidationError("--retry must be 0 or more") }
        if let retryDelay, !(retryDelay >= 0 && retryDelay.isFinite) {
            throw ValidationError("--retry-delay must be 0 or more seconds")
        }
        if let retryMaxTime, !(retryMaxTime > 0 && retryMaxTime.isFinite) {
            throw ValidationError("--retry-max-time must be a positive number of seconds")
        }
    }
}
