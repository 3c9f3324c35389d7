import Foundation

/// A ```` ```console ```` block: `$ ` lines are commands, the lines after each (up to the next command)
/// are what it prints, standard output and standard error together, as a terminal shows them.
struct ConsoleTranscript {
    struct Step: Equatable, CustomStringConvertible {
        let command: String
        let output: String
        var description: String { "$ \(command)\n\(output)" }
    }

    let steps: [Step]

    init(_ text: String) {
        var steps: [(command: String, output: [String])] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("$ ") {
                steps.append((String(line.dropFirst(2)), []))
            } else if !steps.isEmpty {
                steps[steps.count - 1].output.append(line)
            }
        }
        self.steps = steps.map { Step(command: $0.command, output: $0.output.joined(separator: "\n")) }
    }

    /// A record separator line between the commands' outputs.
    private static let separator = "\u{1E}courier-example-step\u{1E}"

    /// One bash script running every command in one shell (so `$?`, `cd` and variables carry over),
    /// printing ``separator`` after each and keeping each command's exit status for the next.
    var script: String {
        steps.map { step in
            "\(step.command)\n__status=$?; printf '\\n%s\\n' '\(Self.separator)'; (exit $__status)\n"
        }.joined()
    }

    /// What each command printed, read back from the script's output: trailing newlines dropped, as
    /// the block's lines have none.
    func steps(fromOutput output: String) -> [Step] {
        let parts = output.components(separatedBy: "\n\(Self.separator)\n")
        return zip(steps, parts).map { step, printed in
            var text = Substring(printed)
            while text.hasSuffix("\n") { text = text.dropLast() }
            return Step(command: step.command, output: String(text))
        }
    }
}
