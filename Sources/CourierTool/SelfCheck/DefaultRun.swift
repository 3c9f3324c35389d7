import Foundation
import Courier

/// What one URL of the embedded default run must produce.
enum Expectation: Sendable {
    /// The load succeeds; each non-nil field must match (MIME type, body size in bytes, the response's
    /// `textEncodingName`, the HTTP status code, and the body itself, for short bodies).
    case success(mime: String? = nil, bytes: Int64? = nil, charset: String? = nil, status: Int? = nil, body: String? = nil)
    /// The load fails with this `URLError` code.
    case failure(URLError.Code)
}

/// Something a check needs besides Courier itself.
enum Requirement: Hashable, Sendable {
    /// The loopback HTTP server (``LoopbackServer``).
    case httpServer
    /// The loopback gopher server (``LoopbackGopherServer``).
    case gopherServer
    /// The example plugin serving this scheme (``DefaultPlugins``).
    case plugin(String)
}

/// Whether what a check needs is there.
enum Availability: Sendable, Equatable {
    case ready
    /// Not there, and that is no fault (a plugin not built beside `courier`): the check is skipped,
    /// with this reason.
    case skipped(String)
    /// There but not working (a server that did not start, a plugin the loader refused): the check
    /// is not run and counts as unexpected, with this reason.
    case broken(String)
}

/// One URL of the embedded default run and what it must produce.
///
/// `url` may hold placeholders that ``DefaultFixtures`` fills in when the run starts:
/// - `{files}`: the file: URL of the run's fresh temporary directory (no trailing slash);
/// - `{files-path}`: that directory's path, percent-encoded for a URL (for `zip://{files-path}/…`);
/// - `{port}`: the port of the loopback HTTP server on 127.0.0.1;
/// - `{gopher-port}`: the port of the loopback gopher server on 127.0.0.1.
struct DefaultCheck: Sendable {
    let url: String
    let expect: Expectation

    init(_ url: String, _ expect: Expectation) {
        self.url = url
        self.expect = expect
    }

    /// What the check needs, read from its URL: a server for a port placeholder, a plugin for a
    /// plugin's scheme.
    var requirements: [Requirement] {
        var needs: [Requirement] = []
        let scheme = String(url.prefix { $0 != ":" }).lowercased()
        if DefaultPlugins.plugins.contains(where: { $0.scheme == scheme }) { needs.append(.plugin(scheme)) }
        if url.contains("{port}") { needs.append(.httpServer) }
        if url.contains("{gopher-port}") { needs.append(.gopherServer) }
        return needs
    }
}

/// The embedded default run: `courier` with no URL fetches all of these at once and exits 0 only if
/// every one ends as expected (checks whose plugin was not built are skipped). Adding a check is
/// adding one line here (and, for a new placeholder, one entry in ``DefaultFixtures``).
enum DefaultRun {
    /// Bytes in the large file the run streams (64 MiB).
    static let largeFileSize: Int64 = 64 << 20

    /// The most time one URL may take when `-m` is not given, so the run always ends.
    static let timeLimit: TimeInterval = 30

    private static let http = "http://127.0.0.1:{port}"
    private static let gopher = "gopher://127.0.0.1:{gopher-port}"
    private static let zip = "zip://{files-path}/archive.zip!"

    /// The listing the zip plugin answers for the archive's root (``DefaultFixtures/writeArchive(to:)``):
    /// its top-level entries by name, with the Unix modes and the date (1980-01-01 00:00, read as
    /// UTC) that the archive stores; `docs/` holds `readme.txt`.
    static let zipRootListing: String = {
        let written = DefaultFixtures.archiveDate
        let entries = [
            URLDirectoryEntry(name: "data.json", type: .file, size: Int64(DefaultFixtures.zipJSON.utf8.count),
                              modificationDate: written, permissions: 0o644),
            URLDirectoryEntry(name: "docs", type: .directory, modificationDate: written, permissions: 0o755),
            URLDirectoryEntry(name: "hello.txt", type: .file, size: Int64(DefaultFixtures.helloText.utf8.count),
                              modificationDate: written, permissions: 0o644),
        ]
        return String(decoding: URLDirectoryListing.encode(entries), as: UTF8.self)
    }()

    static let checks: [DefaultCheck] = [
        // data: URLs (RFC 2397)
        DefaultCheck("data:,Hello%2C%20World%21", .success(mime: "text/plain", bytes: 13)),
        DefaultCheck("data:text/plain,courier", .success(mime: "text/plain", bytes: 7)),
        DefaultCheck(
            "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
            .success(mime: "image/png", bytes: 70)),
        DefaultCheck("data:text/plain,%F0%9F%93%A6%20parcel%20%25%20100", .success(mime: "text/plain", bytes: 17)),
        DefaultCheck("data:text/plain;charset=utf-8,caf%C3%A9", .success(mime: "text/plain", bytes: 5, charset: "utf-8")),
        DefaultCheck("data:text/plain;base64", .failure(.badURL)),
        // file: URLs, on files the run writes into its temporary directory
        DefaultCheck("{files}/hello.txt", .success(mime: "text/plain", bytes: Int64(DefaultFixtures.helloText.utf8.count))),
        DefaultCheck("{files}/large.bin", .success(mime: "application/octet-stream", bytes: largeFileSize)),
        DefaultCheck("{files}/missing.txt", .failure(.fileDoesNotExist)),
        // a directory is listed (one JSON entry per line: folder/ holds inside.txt)
        DefaultCheck("{files}/folder/", .success(mime: URLDirectoryListing.mimeType)),
        // http: against the loopback server the run starts (LoopbackServer)
        DefaultCheck("\(http)/hello.txt", .success(mime: "text/plain", bytes: Int64(LoopbackServer.text.utf8.count),
                                                   charset: "utf-8", status: 200, body: LoopbackServer.text)),
        DefaultCheck("\(http)/large.bin", .success(mime: "application/octet-stream",
                                                   bytes: Int64(LoopbackServer.largeSize), status: 200)),
        DefaultCheck("\(http)/data.json", .success(mime: "application/json", bytes: Int64(LoopbackServer.json.utf8.count),
                                                   status: 200, body: LoopbackServer.json)),
        DefaultCheck("\(http)/redirect", .success(mime: "text/plain", status: 200, body: LoopbackServer.text)),
        DefaultCheck("\(http)/no/such/page", .success(mime: "text/plain", status: 404)),
        // the cookie set by the redirect's response comes back with the redirected request
        DefaultCheck("\(http)/cookies/set", .success(status: 200, body: LoopbackServer.cookieEcho(
            "\(LoopbackServer.cookieName)=\(LoopbackServer.cookieValue)"))),
        DefaultCheck("\(http)/cookies/echo", .success(status: 200, body: LoopbackServer.cookieEcho(nil))),
        // Basic authentication with the URL's user info; without it, or with a wrong password, the 401
        DefaultCheck("http://\(LoopbackServer.user):\(LoopbackServer.password)@127.0.0.1:{port}/auth",
                     .success(status: 200, body: LoopbackServer.authorized)),
        DefaultCheck("\(http)/auth", .success(status: 401, body: LoopbackServer.unauthorized)),
        DefaultCheck("http://\(LoopbackServer.user):wrong@127.0.0.1:{port}/auth", .success(status: 401)),
        // plugins built beside courier: zip: into an archive the run writes, gopher: against the
        // loopback gopher server (LoopbackGopherServer)
        DefaultCheck("\(zip)/hello.txt", .success(mime: "text/plain", bytes: Int64(DefaultFixtures.helloText.utf8.count),
                                                  body: DefaultFixtures.helloText)),
        DefaultCheck("\(zip)/data.json", .success(mime: "application/json",
                                                  bytes: Int64(DefaultFixtures.zipJSON.utf8.count))),
        // the archive's root is listed in Courier's listing format, as a file: directory is
        DefaultCheck("\(zip)/", .success(mime: URLDirectoryListing.mimeType, charset: "utf-8", body: zipRootListing)),
        DefaultCheck("\(zip)/missing.txt", .failure(.fileDoesNotExist)),
        DefaultCheck("\(gopher)/", .success(mime: "application/gopher-menu")),
        DefaultCheck("\(gopher)/0/hello.txt", .success(mime: "text/plain", bytes: Int64(LoopbackGopherServer.text.utf8.count),
                                                       body: LoopbackGopherServer.text)),
        DefaultCheck("\(gopher)/0/no-such-file", .failure(.fileDoesNotExist)),
        // schemes no handler serves
        DefaultCheck("nosuchscheme://example.invalid/resource", .failure(.unsupportedURL)),
    ]
}
