import ArgumentParser
import Courier
import CourierAgentCore
import Foundation

/// `courier agent run|status|tasks|cancel|collect`: runs the background sessions' transfer agent in the
/// foreground, or asks the running one about its state and tasks.
struct AgentCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "agent",
        abstract: "Run or query the transfer agent of background sessions (courier --background).",
        usage: "courier agent run [agent options] | status | tasks | cancel <identifier> <task> | collect <identifier> <directory>",
        discussion: """
            run: the agent itself, in the foreground (as courier-agent). status: its process, \
            running and waiting tasks, undelivered events. tasks: every identifier's tasks, one line \
            each: identifier, task, state, bytes, URL. cancel: cancels one task; its completion \
            waits for the identifier's next session. collect: receives the identifier's downloads \
            as its session, moving each into the directory as <task>-<name>, until none is left. The agent's directories follow \
            COURIER_DATA_HOME, XDG_STATE_HOME and XDG_RUNTIME_DIR (Documentation/Background.md).
            """
    )

    @Argument(help: ArgumentHelp("run, status, tasks or cancel, and their arguments.", valueName: "action"))
    var words: [String] = []

    /// Runs `courier agent` with `arguments` (the words after `agent`) and exits.
    static func main(arguments: [String]) -> Never {
        if arguments.first == "run" {
            Foundation.exit(CourierAgentProgram.run(arguments: Array(arguments.dropFirst())))
        }
        do {
            var command = try parseAsRoot(arguments)
            try command.run()
            Foundation.exit(ToolExit.ok.rawValue)
        } catch let failure as AgentCommandFailure {
            Console.err("courier: \(failure.message)")
            Foundation.exit(failure.exit.rawValue)
        } catch {
            exitReporting(error)
        }
    }

    func run() throws {
        let directories = BackgroundDirectories.resolve()
        switch words.first {
        case "status":
            guard case .status(let status) = try ask(.status, directories) else { return }
            Console.out("agent: pid \(status.processID), \(status.clients) client(s)")
            Console.out("tasks: \(status.runningTasks) running, \(status.waitingTasks) waiting")
            Console.out("events: \(status.pendingEvents) not yet delivered")
            Console.out("database: \(status.databasePath)")
        case "tasks":
            guard case .tasks(let tasks) = try ask(.listAllTasks, directories) else { return }
            for task in tasks {
                let expected = task.counts.expectedToReceive >= 0 ? "/\(task.counts.expectedToReceive)" : ""
                Console.out("\(task.session)\t\(task.taskID)\t\(task.phase.rawValue)\t\(task.counts.received)\(expected)\t\(task.request.url)")
            }
        case "collect":
            guard words.count == 3 else { throw ValidationError("usage: courier agent collect <identifier> <directory>") }
            let status = BackgroundCollect.run(identifier: words[1], directory: words[2])
            if status != .ok { throw AgentCommandFailure(message: "not every download of \(words[1]) was collected", exit: status) }
        case "cancel":
            guard words.count == 3, let taskID = Int(words[2]) else {
                throw ValidationError("usage: courier agent cancel <identifier> <task>")
            }
            _ = try ask(.cancelTask(session: words[1], taskID: taskID), directories)
        default:
            throw ValidationError("courier agent needs run, status, tasks, cancel or collect")
        }
    }

    /// One request to the running agent (it is not started for a question).
    private func ask(_ request: AgentRequest, _ directories: BackgroundDirectories) throws -> AgentReply {
        let socket: AgentSocket
        do {
            socket = try AgentSocket.connect(path: directories.socketPath)
        } catch {
            throw AgentCommandFailure(message: "no transfer agent is running (\(directories.socketPath))", exit: .connection)
        }
        defer { socket.close() }
        do {
            try socket.send(AgentClientMessage(requestID: 1, request: request))
            let answer = try socket.receive(AgentServerMessage.self)
            guard case .reply(_, let reply) = answer.body else { throw AgentWireError.malformed("no reply") }
            if case .failure(_, let message) = reply { throw AgentCommandFailure(message: message, exit: .other) }
            return reply
        } catch let failure as AgentCommandFailure {
            throw failure
        } catch {
            throw AgentCommandFailure(message: "the transfer agent did not answer: \(error)", exit: .connection)
        }
    }
}

/// `courier --background ID URL…`: queues each URL as a download of the background session `ID`
/// and exits once the agent has stored them; the downloads go on after courier exits, and the
/// session's next process with that identifier receives their files.
enum BackgroundQueue {
    /// Queues `urls`; prints `queued <task> <url>` for each.
    ///
    /// The session's delegate queue is held for the whole run: this process is the identifier's
    /// session while it runs, and the agent sends it the identifier's stored events (earlier
    /// downloads', and those of a download that finishes before this process exits). Held, the
    /// queue delivers none of them, so none is acknowledged: they stay in the agent for the
    /// identifier's next session (`courier agent collect`, the app).
    static func run(identifier: String, urls: [String]) -> ToolExit {
        let held = OperationQueue()
        held.maxConcurrentOperationCount = 1
        held.isSuspended = true
        let session = URLSession(configuration: .background(withIdentifier: identifier), delegate: nil, delegateQueue: held)
        var status = ToolExit.ok
        for text in urls {
            guard let url = URL(string: text), url.scheme != nil else {
                Console.err("courier: \(text): not a URL")
                status = .badURL
                continue
            }
            let task = session.downloadTask(with: url)
            task.resume()
            if task.state == .running {
                Console.out("queued \(task.taskIdentifier) \(text)")
                continue
            }
            // The agent refused it or cannot be reached: the task fails in this process.
            let deadline = Date().addingTimeInterval(2)
            while task.error == nil, Date() < deadline { usleep(10_000) }
            Console.err("courier: \(text): \(task.error?.localizedDescription ?? "the transfer agent did not take the download")")
            status = .connection
        }
        return status
    }
}

/// Why `courier agent` failed: a message and the exit status.
struct AgentCommandFailure: Error {
    let message: String
    let exit: ToolExit
}
