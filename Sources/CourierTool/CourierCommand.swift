import ArgumentParser
import Foundation

/// `courier`: fetches URLs with Courier's `URLSession`, or, given none, runs the embedded default check.
@main
struct CourierCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "courier",
        abstract: "Fetch URLs with Courier's URLSession, streaming each body as it arrives.",
        discussion: """
            With URLs, each one is fetched in turn and its body written to standard output (or -o) chunk \
            by chunk. Errors print one line on standard error: courier: <url>: <message> (<URLError code>).

            With no URL, courier runs its embedded default: a built-in list of data:, file:, plugin \
            (zip:, gopher:) and loopback http: URLs fetched concurrently, one line per URL and a summary. \
            It writes its files to a fresh temporary directory, starts small HTTP and gopher servers on \
            127.0.0.1 inside the process, and loads the plugins built beside the courier binary (their \
            URLs are skipped when those are not there). The exit status is 0 only if no URL ended \
            unexpectedly.

            -o with several URLs: -o names a directory (created if missing) and each body is saved \
            there under its URL's last path component (data-N for data: URLs, index-N when there is \
            none, -N appended to a repeated name; N is the URL's position). With one URL, -o names the \
            file, or an existing directory to save into. Files are written beside the target under a \
            temporary name and renamed into place only when the load succeeds.

            --plugins DIR loads the handler plugins in DIR first (repeatable), so their URL schemes \
            can be fetched; `courier plugins [DIR]` lists what is loaded. Directories in \
            COURIER_PLUGIN_PATH (colon-separated) are always loaded.

            \(ToolExit.helpText)
            """,
        subcommands: [PluginsCommand.self]
    )

    @Argument(help: "The URLs to fetch. With none, run the embedded default check.")
    var urls: [String] = []

    @Flag(name: .shortAndLong, help: "Write the response headers before the body.")
    var include = false

    @Flag(name: .shortAndLong, help: "Print the request (> ) and the response (< ) on standard error.")
    var verbose = false

    @Option(name: [.customShort("X"), .customLong("request")], help: ArgumentHelp("The request method (default GET, or POST with -d).", valueName: "method"))
    var method: String?

    @Option(name: [.customShort("H"), .long], help: ArgumentHelp("Add a request header; repeatable.", valueName: "Name: value"))
    var header: [String] = []

    @Option(name: [.customShort("d"), .long], help: ArgumentHelp("Send DATA as the request body (@FILE reads a file, @- standard input).", valueName: "data"))
    var data: String?

    @Flag(help: "Fail with exit status 9, writing no body, when the HTTP status is 400 or more.")
    var fail = false

    @Option(name: [.customShort("m"), .customLong("max-time")], help: ArgumentHelp("Give up on a URL after SECONDS.", valueName: "seconds"))
    var maxTime: Double?

    @Option(name: [.customShort("o"), .long], help: ArgumentHelp("Write bodies to PATH instead of standard output (see above).", valueName: "path"))
    var output: String?

    @Option(name: .customLong("plugins"), help: ArgumentHelp("Load the handler plugins in DIR first; repeatable.", valueName: "dir"))
    var plugins: [String] = []

    mutating func validate() throws {
        if let maxTime, !(maxTime > 0 && maxTime.isFinite) {
            throw ValidationError("-m/--max-time must be a positive number of seconds")
        }
        for text in header where RequestOptions.parseHeader(text) == nil {
            throw ValidationError("-H '\(text)': expected 'Name: value'")
        }
        if let method, method.isEmpty || method.contains(where: { $0.isWhitespace }) {
            throw ValidationError("-X '\(method)': not a method name")
        }
        if urls.isEmpty {
            var given: [String] = []
            if include { given.append("-i") }
            if method != nil { given.append("-X") }
            if !header.isEmpty { given.append("-H") }
            if data != nil { given.append("-d") }
            if fail { given.append("--fail") }
            if output != nil { given.append("-o") }
            if !given.isEmpty {
                throw ValidationError("\(given.joined(separator: ", ")) need a URL (the default run takes only -v and -m)")
            }
        }
    }

    func run() async throws {
        Interrupts.install()
        PluginDirectories.load(plugins)
        let status: ToolExit
        if urls.isEmpty {
            status = await DefaultRunner.run(maxTime: maxTime, verbose: verbose)
        } else {
            var options = RequestOptions(method: method, maxTime: maxTime)
            options.headers = header.compactMap(RequestOptions.parseHeader)
            if let data {
                do {
                    options.body = try RequestOptions.readBody(data)
                } catch {
                    Console.err("courier: -d \(data): \(error.message) (\(error.codeName))")
                    throw ExitCode(error.exit.rawValue)
                }
            }
            status = await ExplicitRun(
                urls: urls, options: options, include: include, verbose: verbose,
                failOnHTTPError: fail, output: output
            ).run()
        }
        if status != .ok { throw ExitCode(status.rawValue) }
    }

    /// Runs the command like ArgumentParser's own `main()`, except that command-line mistakes exit with
    /// ``ToolExit/usage`` (1) instead of ArgumentParser's 64.
    static func main() async {
        // ArgumentParser gives the URLs argument every word before it looks for a subcommand, so
        // `courier plugins …` is routed here.
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.first == PluginsCommand.configuration.commandName {
            PluginsCommand.main(arguments: Array(arguments.dropFirst()))
        }
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            if exitCode(for: error) == .validationFailure {
                Console.err(fullMessage(for: error))
                Foundation.exit(ToolExit.usage.rawValue)
            }
            exit(withError: error)
        }
    }
}
