import ArgumentParser
import Foundation

/// The options that decide what `courier` writes, and where: bodies, headers, diagnostics, the
/// progress meter and `-w` reports.
struct OutputFlags: ParsableArguments {
    @Flag(name: .shortAndLong, help: "Write the response headers before the body.")
    var include = false

    @Flag(name: [.customShort("I"), .customLong("head")], help: "Fetch the headers only (HTTP HEAD) and write them.")
    var head = false

    @Flag(name: .shortAndLong, help: "Show what goes over the wire on standard error: request (> ), response (< ) and connection notes (* ), credentials redacted.")
    var verbose = false

    @Flag(name: .customLong("trace-secrets"), help: "With -v, show credentials (Authorization, Cookie, passwords) instead of redacting them.")
    var traceSecrets = false

    @Flag(name: .shortAndLong, help: "Silent: no progress meter and no error messages.")
    var silent = false

    @Flag(name: [.customShort("S"), .customLong("show-error")], help: "With -s, still print error messages.")
    var showError = false

    @Flag(name: [.customShort("f"), .customLong("fail")],
          help: "Fail with exit status 9, writing no body, when the HTTP status is 400 or more.")
    var fail = false

    @Option(name: [.customShort("o"), .long], help: ArgumentHelp("Write bodies to PATH instead of standard output (see above).", valueName: "path"))
    var output: String?

    @Flag(name: [.customShort("O"), .customLong("remote-name")],
          help: "Save each body in the current directory under its URL's file name.")
    var remoteName = false

    @Option(name: [.customShort("w"), .customLong("write-out")],
            help: ArgumentHelp("After each transfer, write FORMAT to standard output: %{http_code}, %{size_download}, %{time_total}, %{url_effective}, ... (@FILE reads it from a file).", valueName: "format"))
    var writeOut: String?

    @Option(name: [.customShort("C"), .customLong("continue-at")],
            help: ArgumentHelp("Resume into the output file: '-' continues at its size, a number at that offset.", valueName: "offset"))
    var continueAt: String?

    /// The options that need a URL, for the message when none is given.
    var givenNames: [String] {
        var given: [String] = []
        if include { given.append("-i") }
        if head { given.append("-I") }
        if fail { given.append("--fail") }
        if output != nil { given.append("-o") }
        if remoteName { given.append("-O") }
        if writeOut != nil { given.append("-w") }
        if continueAt != nil { given.append("-C") }
        if traceSecrets { given.append("--trace-secrets") }
        return given
    }

    mutating func validate() throws {
        if output != nil, remoteName {
            throw ValidationError("-o and -O cannot be used together")
        }
        if let continueAt, ResumePlan.Start(argument: continueAt) == nil {
            throw ValidationError("-C '\(continueAt)': expected '-' or a byte offset")
        }
        if continueAt != nil, output == nil, !remoteName {
            throw ValidationError("-C needs an output file (-o or -O)")
        }
        if traceSecrets, !verbose {
            throw ValidationError("--trace-secrets needs -v")
        }
    }
}
