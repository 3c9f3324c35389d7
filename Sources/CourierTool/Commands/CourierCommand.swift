import ArgumentParser
import Foundation

/// `courier`: fetches URLs with Courier's `URLSession`, or, given none, runs the embedded default check.
@main
struct CourierCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "courier",
        abstract: "Fetch URLs with Courier's URLSession, streaming each body as it arrives.",
        discussion: """
            With URLs, each one is fetched in turn (concurrently with -Z) on one URLSession, so \
            connections, cookies and logins carry from one URL to the next, and its body is written to \
            standard output (or -o/-O) chunk by chunk. As in curl, redirects are followed only with -L. \
            Errors print one line on standard error: courier: <url>: <message> (<URLError code>); -s \
            silences them, -sS keeps them.

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

            `courier ws URL` opens a WebSocket (ws:, wss:): each line of standard input is sent as \
            a text message and each message received is printed on a line (binary as base64).

            \(ToolExit.helpText)
            """,
        subcommands: [PluginsCommand.self, AgentCommand.self, WebSocketCommand.self]
    )

    @Argument(help: "The URLs to fetch. With none, run the embedded default check.")
    var urls: [String] = []

    @OptionGroup(title: "Output")
    var output: OutputFlags

    @OptionGroup(title: "Requests")
    var request: RequestFlags

    @OptionGroup(title: "Transfers")
    var transfer: TransferFlags

    @Option(name: .customLong("background"), help: ArgumentHelp(
        "Queue the URLs as downloads of the background session ID and exit; the transfer agent carries them out (courier agent tasks).",
        valueName: "id"))
    var background: String?

    @Option(name: .customLong("plugins"), help: ArgumentHelp("Load the handler plugins in DIR first; repeatable.", valueName: "dir"))
    var plugins: [String] = []

    @Flag(name: [.customShort("V"), .customLong("version")], help: "Print the versions of courier, Courier, libcurl, OpenSSL and libssh2, and the plugins loaded.")
    var version = false

    mutating func validate() throws {
        if urls.isEmpty, !version {
            let given = output.givenNames + request.givenNames + transfer.givenNames
            if !given.isEmpty {
                throw ValidationError("\(given.joined(separator: ", ")) need a URL (the default run takes only -v and -m)")
            }
        }
    }

    func run() async throws {
        Interrupts.install()
        PluginDirectories.load(plugins)
        if version {
            for line in VersionReport.lines() { Console.out(line) }
            return
        }
        let status: ToolExit
        if let background, !urls.isEmpty {
            status = BackgroundQueue.run(identifier: background, urls: urls)
        } else if urls.isEmpty {
            status = await DefaultRunner.run(maxTime: request.maxTime, verbose: output.verbose)
        } else {
            do {
                status = await ExplicitRun(urls: urls, settings: try makeSettings()).run()
            } catch {
                if !output.silent || output.showError { Console.err("courier: \(error.message) (\(error.codeName))") }
                throw ExitCode(error.exit.rawValue)
            }
        }
        if status != .ok { throw ExitCode(status.rawValue) }
    }

    /// The run's settings from the parsed options, reading what they name: `-d @-`, `-w @FILE`, the
    /// netrc file, the `-b` cookie file; `--cacert` is handed to the library through `SSL_CERT_FILE`.
    func makeSettings() throws(ToolFailure) -> RunSettings {
        var settings = RunSettings()
        var options = RequestOptions(method: request.method, maxTime: request.maxTime)
        options.headers = request.header.compactMap(RequestOptions.parseHeader)
        options.headOnly = output.head
        if let data = request.data {
            options.body = try RequestOptions.readBody(data)
        }
        if let upload = request.uploadFile {
            options.body = .file(try RequestOptions.readableFile(upload, option: "-T"))
            options.isUpload = true
        }
        for cookie in request.cookie {
            if cookie.contains("=") {
                options.cookieHeader = [options.cookieHeader, cookie].compactMap { $0 }.joined(separator: "; ")
            } else {
                settings.cookies += try NetscapeCookieJar.read(path: cookie)
            }
        }
        settings.options = options
        settings.include = output.include || output.head
        settings.verbose = output.verbose
        settings.traceSecrets = output.traceSecrets
        settings.failOnHTTPError = output.fail
        settings.silent = output.silent
        settings.showError = output.showError
        settings.output = output.output
        settings.remoteName = output.remoteName
        settings.writeOut = try output.writeOut.map { argument throws(ToolFailure) in try WriteOut.load(argument) }
        if let unknown = settings.writeOut?.unknownVariables, !unknown.isEmpty, settings.showsErrors {
            Console.err("courier: -w: unknown variable \(unknown.map { "%{\($0)}" }.joined(separator: ", ")), written as nothing")
        }
        settings.resume = output.continueAt.flatMap(ResumePlan.Start.init(argument:))
        settings.login = request.user.flatMap(Login.init(argument:))
        if let file = request.netrcFile {
            settings.netrc = try Netrc.load(path: file, required: true)
        } else if request.netrc {
            settings.netrc = try Netrc.load(path: Netrc.defaultPath, required: false)
        }
        settings.insecure = request.insecure
        if let cacert = request.cacert {
            guard FileManager.default.isReadableFile(atPath: cacert) else {
                throw ToolFailure(.fileDoesNotExist, "--cacert: cannot read \(cacert)", url: URL(fileURLWithPath: cacert), exit: .usage)
            }
            // The library reads the CA file from the environment when the session is made.
            unsetenv("URLSessionCertificateAuthorityInfoFile")
            setenv("SSL_CERT_FILE", cacert, 1)
        }
        settings.followRedirects = request.location
        settings.maxRedirects = request.maxRedirects.flatMap { $0 < 0 ? nil : $0 }
        settings.retry = transfer.retryPolicy
        settings.parallel = transfer.parallel
        settings.parallelMax = transfer.parallelMax
        settings.cookieJar = request.cookieJar
        return settings
    }

    /// Runs the command like ArgumentParser's own `main()`, except that command-line mistakes exit with
    /// ``ToolExit/usage`` (1) instead of ArgumentParser's 64.
    static func main() async {
        // ArgumentParser gives the URLs argument every word before it looks for a subcommand, so
        // `courier plugins …` is routed here.
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.first == PluginsCommand.configuration.commandName {
            await PluginsCommand.main(arguments: Array(arguments.dropFirst()))
        }
        if arguments.first == AgentCommand.configuration.commandName {
            AgentCommand.main(arguments: Array(arguments.dropFirst()))
        }
        if arguments.first == WebSocketCommand.configuration.commandName {
            await WebSocketCommand.main(arguments: Array(arguments.dropFirst()))
        }
        // `courier help [plugins]` would reach the URLs argument the same way.
        if arguments.first == "help" {
            switch arguments.dropFirst().first {
            case PluginsCommand.configuration.commandName: Console.out(PluginsCommand.helpMessage())
            case WebSocketCommand.configuration.commandName: Console.out(WebSocketCommand.helpMessage())
            case AgentCommand.configuration.commandName: Console.out(AgentCommand.helpMessage())
            default: Console.out(helpMessage())
            }
            Foundation.exit(ToolExit.ok.rawValue)
        }
        await parseRunAndExit()
    }
}
