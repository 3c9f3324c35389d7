import ArgumentParser
import Foundation

/// How every `courier` command and subcommand is parsed, run and ended: one place for the exit
/// statuses, so that `courier`, `courier plugins`, `courier agent` and `courier ws` agree on them.
extension ParsableCommand {
    /// Parses `arguments` (`nil`: the process's own) as this command, runs it (its async `run()`
    /// when it has one) and exits: ``ToolExit/ok`` when it returns, otherwise as
    /// ``exitReporting(_:)`` says.
    static func parseRunAndExit(_ arguments: [String]? = nil) async -> Never {
        do {
            var command = try parseAsRoot(arguments)
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            Foundation.exit(ToolExit.ok.rawValue)
        } catch {
            exitReporting(error)
        }
    }

    /// Exits for `error` thrown while parsing or running: a command-line mistake prints the message
    /// with the usage and exits with ``ToolExit/usage``; anything else exits as ArgumentParser
    /// decides (an `ExitCode` thrown by `run()` is the status itself).
    static func exitReporting(_ error: any Error) -> Never {
        if exitCode(for: error) == .validationFailure {
            Console.err(fullMessage(for: error))
            Foundation.exit(ToolExit.usage.rawValue)
        }
        exit(withError: error)
    }
}
