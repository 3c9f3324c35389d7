import Foundation

extension URLSession {
    /// A stream task that connects to `hostname` (a name, or an IPv4 or IPv6 address) on TCP
    /// `port` when resumed. A name that cannot be resolved fails the task with `cannotFindHost`, a
    /// refused connection with `cannotConnectToHost`, a connect longer than the configuration's
    /// `timeoutIntervalForRequest` with `timedOut`.
    public func streamTask(withHostName hostname: String, port: Int) -> URLSessionStreamTask {
        let host = hostname.hasPrefix("[") && hostname.hasSuffix("]") ? String(hostname.dropFirst().dropLast()) : hostname
        var invalid: URLError?
        if host.isEmpty || host.contains(where: { $0.isWhitespace || $0 == "/" }) {
            invalid = URLError(.badURL, url: nil, description: "“\(hostname)” is not a host name.")
        } else if !(1...65535).contains(port) {
            invalid = URLError(.badURL, url: nil, description: "\(port) is not a TCP port.")
        }
        return register { identifier, refusal in
            URLSessionStreamTask(session: self, identifier: identifier, host: host, port: port, creationFailure: refusal ?? invalid)
        }
    }
}
