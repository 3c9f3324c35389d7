import Courier
import Foundation

/// The agent's settings: from its arguments (`--state-dir`, `--runtime-dir`, `--idle-exit`) and
/// environment (`COURIER_AGENT_IDLE_EXIT`, `COURIER_AGENT_MAX_TRANSFERS`,
/// `COURIER_AGENT_CHECKPOINT_BYTES`, `COURIER_AGENT_PARTIAL_RETENTION`,
/// `COURIER_AGENT_QUESTION_TIMEOUT`).
struct AgentOptions: Sendable, Equatable {
    /// Explicit directories (else ``BackgroundDirectories/resolve(environment:home:)``).
    var stateDirectory: String?
    var runtimeDirectory: String?
    /// Seconds without clients and without work after which the agent exits.
    var idleExit: Double = 60
    /// Transfers running at once, over all identifiers.
    var maximumTransfers = 16
    /// A running download's checkpoint is stored after this many bytes…
    var checkpointBytes: Int64 = 4 << 20
    /// …or this many seconds, whichever comes first.
    var checkpointInterval: Double = 2
    /// Seconds a failed download's partial file is kept for the resume data the app was given.
    var partialRetention: Double = 86_400
    /// Seconds the agent waits for a connected app's answer to a question (a redirect, a challenge,
    /// an upload's response, a delayed start) before it decides by default.
    var questionTimeout: Double = 60

    /// Parses `arguments` (without the program name) and `environment`.
    static func parse(_ arguments: [String], environment: [String: String]) throws(AgentUsageError) -> AgentOptions {
        var options = AgentOptions()
        if let idle = environment["COURIER_AGENT_IDLE_EXIT"].flatMap(Double.init), idle >= 0 { options.idleExit = idle }
        if let count = environment["COURIER_AGENT_MAX_TRANSFERS"].flatMap(Int.init), count > 0 { options.maximumTransfers = count }
        if let bytes = environment["COURIER_AGENT_CHECKPOINT_BYTES"].flatMap(Int64.init), bytes > 0 { options.checkpointBytes = bytes }
        if let seconds = environment["COURIER_AGENT_PARTIAL_RETENTION"].flatMap(Double.init), seconds >= 0 {
            options.partialRetention = seconds
        }
        if let seconds = environment["COURIER_AGENT_QUESTION_TIMEOUT"].flatMap(Double.init), seconds > 0 {
            options.questionTimeout = seconds
        }
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            switch argument {
            case "--state-dir", "--runtime-dir", "--idle-exit":
                guard let value = remaining.popFirst() else { throw AgentUsageError("\(argument) needs a value") }
                switch argument {
                case "--state-dir":
                    guard value.hasPrefix("/") else { throw AgentUsageError("--state-dir needs an absolute path") }
                    options.stateDirectory = value
                case "--runtime-dir":
                    guard value.hasPrefix("/") else { throw AgentUsageError("--runtime-dir needs an absolute path") }
                    options.runtimeDirectory = value
                default:
                    guard let seconds = Double(value), seconds >= 0 else { throw AgentUsageError("--idle-exit needs seconds") }
                    options.idleExit = seconds
                }
            default:
                throw AgentUsageError("unknown argument \(argument)")
            }
        }
        return options
    }

    /// The directories these options name.
    func directories(environment: [String: String]) -> BackgroundDirectories {
        let resolved = BackgroundDirectories.resolve(environment: environment)
        let state = stateDirectory.map { URL(fileURLWithPath: $0, isDirectory: true) } ?? resolved.state
        let runtime = runtimeDirectory.map { URL(fileURLWithPath: $0, isDirectory: true) }
            ?? (stateDirectory != nil ? state.appendingPathComponent("run", isDirectory: true) : resolved.runtime)
        return BackgroundDirectories(state: state, runtime: runtime)
    }
}

/// A usage mistake in the agent's arguments.
struct AgentUsageError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
