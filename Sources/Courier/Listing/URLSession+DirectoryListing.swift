import Foundation

extension URLSession {
    /// Lists the directory at `request`'s URL: a `file:`, `ftp:`, `ftps:` or `sftp:` URL ending in `/`
    /// (a `file:` directory also without it), or a plugin URL whose handler lists directories.
    ///
    /// It runs a data task like ``data(for:delegate:)`` — same delegate calls, credentials, trust and
    /// timeouts — and decodes its ``URLDirectoryListing`` body.
    /// - Returns: the entries in the order the source listed them, and the response.
    /// - Throws: the task's `URLError`; `URLError(.cannotParseResponse)` when the URL is not a
    ///   directory listing (its response has another MIME type) or the listing cannot be read.
    public func directoryListing(for request: URLRequest, delegate: (any URLSessionTaskDelegate)? = nil) async throws -> ([URLDirectoryEntry], URLResponse) {
        let (body, response) = try await data(for: request, delegate: delegate)
        let url = response.url ?? request.url
        guard response.mimeType == URLDirectoryListing.mimeType else {
            throw URLError(.cannotParseResponse, url: url,
                           description: "\(url?.absoluteString ?? "The URL") is not a directory listing (its type is \(response.mimeType ?? "unknown")).")
        }
        return (try URLDirectoryListing.decode(body, url: url), response)
    }

    /// Lists the directory at `url`; see ``directoryListing(for:delegate:)``.
    public func directoryListing(from url: URL, delegate: (any URLSessionTaskDelegate)? = nil) async throws -> ([URLDirectoryEntry], URLResponse) {
        try await directoryListing(for: URLRequest(url: url), delegate: delegate)
    }
}
