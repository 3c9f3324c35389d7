import CourierAgentCore
import Foundation

// `courier-agent`: the per-user transfer agent of Courier's background sessions
// (Documentation/Background.md).
exit(CourierAgentProgram.run(arguments: Array(CommandLine.arguments.dropFirst())))
