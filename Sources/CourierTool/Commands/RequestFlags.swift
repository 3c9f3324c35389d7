import ArgumentParser
import Foundation

/// The options that shape each request: method, headers, body, credentials, trust, cookies and
/// redirects.
struct RequestFlags: ParsableArguments {
    @Option(name: [.customShort("X"), .customLong("request")], help: ArgumentHelp("The request method (default GET, or POST with -d, PUT with -T).", valueName: "method"))
    var method: String?

    @Option(name: [.customShort("H"), .long], help: ArgumentHelp("Add a request header; repeatable.", valueName: "Name: value"))
    var header: [String] = []

    @Option(name: [.customShort("d"), .long], help: ArgumentHelp("Send DATA as the request body (@FILE streams a file, @- reads standard input).", valueName: "data"))
    var data: String?

    @Option(name: [.customShort("T"), .customLong("upload-file")],
            help: ArgumentHelp("Upload FILE, streamed from disk (HTTP PUT, FTP STOR, SFTP write); a URL ending in / gets the file's name.", valueName: "file"))
    var uploadFile: String?

    @Option(name: [.customShort("u"), .customLong("user")],
            help: ArgumentHelp("Log in as USER with PASSWORD: answers HTTP challenges, sets the FTP/SFTP login.", valueName: "user:password"))
    var user: String?

    @Flag(name: [.customShort("n"), .customLong("netrc")], help: "Take logins from ~/.netrc (as curl does).")
    var netrc = false

    @Option(name: .customLong("netrc-file"), help: ArgumentHelp("Take logins from FILE instead of ~/.netrc.", valueName: "file"))
    var netrcFile: String?

    @Flag(name: [.customShort("k"), .customLong("insecure")],
          help: "Accept any TLS server certificate and any SSH host key (answers the trust challenge).")
    var insecure = false

    @Option(name: .customLong("cacert"), help: ArgumentHelp("Verify TLS servers against the CA certificates in FILE (PEM) instead of the system's.", valueName: "file"))
    var cacert: String?

    @Option(name: [.customShort("b"), .customLong("cookie")],
            help: ArgumentHelp("Send cookies: NAME=VALUE[; ...] as given, or read a Netscape cookie file (curl's format).", valueName: "data|file"))
    var cookie: [String] = []

    @Option(name: [.customShort("c"), .customLong("cookie-jar")],
            help: ArgumentHelp("Write every cookie to FILE at the end, in curl's Netscape format.", valueName: "file"))
    var cookieJar: String?

    @Flag(name: [.customShort("L"), .customLong("location")], help: "Follow redirects (not followed by default, as in curl).")
    var location = false

    @Option(name: .customLong("max-redirs"), help: ArgumentHelp("With -L, follow at most N redirects (default 16; -1 for the library's cap of 16).", valueName: "n"))
    var maxRedirects: Int?

    @Option(name: [.customShort("m"), .customLong("max-time")], help: ArgumentHelp("Give up on a URL after SECONDS.", valueName: "seconds"))
    var maxTime: Double?

    /// The options that need a URL, for the message when none is given.
    var givenNames: [String] {
        var given: [String] = []
        if method != nil { given.append("-X") }
        if !header.isEmpty { given.append("-H") }
        if data != nil { given.append("-d") }
        if uploadFile != nil { given.append("-T") }
        if user != nil { given.append("-u") }
        if !cookie.isEmpty { given.append("-b") }
        if cookieJar != nil { given.append("-c") }
        return given
    }

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
        if data != nil, uploadFile != nil {
            throw ValidationError("-d and -T cannot be used together")
        }
        if let user, !user.contains(":") {
            throw ValidationError("-u '\(user)': expected user:password (courier does not prompt)")
        }
        if let maxRedirects, maxRedirects < -1 {
            throw ValidationError("--max-redirs must be -1 or more")
        }
    }
}
