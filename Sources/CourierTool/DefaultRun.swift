import Foundation
import Courier

/// What one URL of the embedded default run must produce.
enum Expectation: Sendable {
    /// The load succeeds; each non-nil field must match (MIME type, body size in bytes, the response's
    /// `textEncodingName`, the HTTP status code).
    case success(mime: String? = nil, bytes: Int64? = nil, charset: String? = nil, status: Int? = nil)
    /// The load fails with this `URLError` code.
    case failure(URLError.Code)
}

/// One URL of the embedded default run and what it must produce.
///
/// `url` may hold placeholders that ``DefaultFixtures`` fills in when the run starts:
/// `{files}` is the file: URL of the run's fresh temporary directory (no trailing slash).
struct DefaultCheck: Sendable {
    let url: String
    let expect: Expectation

    init(_ url: String, _ expect: Expectation) {
        self.url = url
        self.expect = expect
    }
}

/// The embedded default run: `courier` with no URL fetches all of these at once and exits 0 only if
/// every one ends as expected. Adding a check is adding one line here (and, for a new placeholder, one
/// entry in ``DefaultFixtures``).
enum DefaultRun {
    /// Bytes in the large file the run streams (64 MiB).
    static let largeFileSize: Int64 = 64 << 20

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
        DefaultCheck("{files}/folder/", .failure(.fileIsDirectory)),
        // schemes no handler serves
        DefaultCheck("nosuchscheme://example.invalid/resource", .failure(.unsupportedURL)),
    ]
}
