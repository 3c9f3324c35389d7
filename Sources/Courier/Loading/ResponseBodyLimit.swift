import Foundation

/// How many response-body bytes, counted after content decoding, a task may receive before it fails
/// with `dataLengthExceedsMaximum` (`URLSessionConfiguration.maximumResponseBodySize`).
///
/// A body that is collected in memory (a completion-handler data or upload task, `data(for:)`,
/// `upload(for:)`) is capped at ``defaultInMemory`` unless the configuration sets a cap: a small
/// compressed response can decode to gigabytes (a "decompression bomb"), and nothing else bounds
/// what such a task holds. A body the app consumes as it arrives (a delegate's `didReceive data`,
/// `bytes(for:)`) or that goes to a file (download tasks) is capped only by a configured cap.
struct ResponseBodyLimit: Sendable {
    /// The cap for bodies collected in memory when the configuration sets none: 1 GiB. Far above
    /// what an app loads into one `Data` on purpose, low enough that one response cannot take a
    /// machine's memory. A fixed number, not a share of physical memory: a container's memory
    /// limit is not what the machine reports, and the same app should behave the same everywhere.
    static let defaultInMemory: Int64 = 1 << 30

    /// The configuration's cap, for every task; `nil`: none set.
    var configured: Int64?
    /// The cap for bodies collected in memory when none is configured (tests lower it).
    var inMemory: Int64 = defaultInMemory

    /// The cap for a task, or `nil` for none. `collectsInMemory`: the task hands the whole body to
    /// a completion handler.
    func limit(collectsInMemory: Bool) -> Int64? {
        if let configured { return max(0, configured) }
        return collectsInMemory ? inMemory : nil
    }

    /// The error a response fails with at once, before any of its body is read, because it announces
    /// more than `limit` bytes; `nil` when it does not, or when its announced length is not the
    /// decoded length (an HTTP response with a `Content-Encoding` announces the encoded length,
    /// and the cap counts decoded bytes: such a body is counted as it arrives).
    static func refusal(of response: URLResponse, limit: Int64?) -> URLError? {
        guard let limit, response.expectedContentLength > limit else { return nil }
        if let http = response as? HTTPURLResponse,
           let encoding = http.value(forHTTPHeaderField: "Content-Encoding")?.trimmingCharacters(in: .whitespaces),
           !encoding.isEmpty, encoding.lowercased() != "identity" {
            return nil
        }
        return URLError(.dataLengthExceedsMaximum, url: response.url,
                        description: "The response announces a body of \(response.expectedContentLength) bytes, more than the \(limit) bytes allowed; it was not read. URLSessionConfiguration.maximumResponseBodySize sets the limit.")
    }

    /// The error a task whose body grew past `limit` fails with.
    static func exceeded(_ limit: Int64, url: URL?) -> URLError {
        URLError(.dataLengthExceedsMaximum, url: url,
                 description: "The response body is larger than the \(limit) bytes allowed (after content decoding); the transfer was stopped. URLSessionConfiguration.maximumResponseBodySize sets the limit.")
    }
}
