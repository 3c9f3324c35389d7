import Foundation

/// `.becomeStream` for the http handler: an `http:` request that asks for a protocol upgrade
/// (`Upgrade` header field) runs on a connection whose socket Courier owns (``CurlUpgradeSocket``),
/// and when the server answers `101 Switching Protocols` the connection — with the bytes libcurl read
/// past the head — can be handed to a stream task.
///
/// https and HTTP/2 cannot: libcurl holds the TLS session of an https connection (its keys and
/// buffered records live in libcurl's OpenSSL objects, which cannot be moved to another owner), and
/// an HTTP/2 connection carries other streams. They fail with `unsupportedURL`.
enum HTTPUpgrade {
    /// Whether `request` may be answered with an upgrade that a stream task can take over: plain
    /// `http:` with an `Upgrade` header field.
    static func mayHandOver(_ request: URLRequest) -> Bool {
        !(request.value(forHTTPHeaderField: "Upgrade") ?? "").isEmpty && request.url.map(HTTPSchemeCheck.isHTTP) == true
    }

    /// Why `response` to `request` cannot become a stream task, or `nil` when it can.
    static func refusal(of response: URLResponse, for request: URLRequest) -> URLError? {
        let url = response.url ?? request.url
        let hint = "open one with streamTask(withHostName:port:) instead"
        if request.url?.scheme?.lowercased() == "https" {
            return URLError(.unsupportedURL, url: url, description:
                "An https data task cannot become a stream task in Courier: libcurl holds the connection's TLS session (and HTTP/2 multiplexes it); \(hint), and call startSecureConnection().")
        }
        guard let http = response as? HTTPURLResponse, http.statusCode == 101 else {
            return URLError(.unsupportedURL, url: url, description:
                "Only a 101 Switching Protocols answer can become a stream task in Courier; \(hint).")
        }
        if let version = http.httpVersion, !version.hasPrefix("HTTP/1") {
            return URLError(.unsupportedURL, url: url, description:
                "An \(version) response cannot become a stream task: the connection carries other streams; \(hint).")
        }
        guard mayHandOver(request) else {
            return URLError(.unsupportedURL, url: url, description:
                "Only a request that asks for an upgrade (an Upgrade header field) can become a stream task; \(hint).")
        }
        return nil
    }
}

extension HTTPURLProtocol {
    /// Hands the upgraded connection to a stream task: the loop takes it from libcurl with the bytes
    /// read past the head, and the load ends without another report.
    func handOverUpgradedConnection(after response: URLResponse,
                                    completion: @escaping @Sendable (Result<HandedOverConnection, URLError>) -> Void) {
        if let refusal = HTTPUpgrade.refusal(of: response, for: request) {
            completion(.failure(refusal))
            return
        }
        guard let (transfer, loop) = load.running else {
            completion(.failure(URLError(.networkConnectionLost, url: response.url ?? request.url,
                                         description: "The server ended the upgraded connection before it could become a stream task.")))
            return
        }
        loop.handOver(transfer) { [self] result in
            if case .success = result { _ = load.conclude(from: .running) }
            completion(result)
        }
    }
}
