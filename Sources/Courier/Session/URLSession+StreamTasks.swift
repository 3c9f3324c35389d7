import Foundation

extension URLSession {
    /// ``streamTask(withHostName:port:)``: the host (brackets of an IPv6 literal removed) and port
    /// are checked here; a bad one fails the task with `badURL` when resumed.
    func makeStreamTask(host hostname: String, port: Int) -> URLSessionStreamTask {
        let host = hostname.hasPrefix("[") && hostname.hasSuffix("]") ? String(hostname.dropFirst().dropLast()) : hostname
        var invalid: URLError?
        if host.isEmpty || host.contains(where: { $0.isWhitespace || $0 == "/" }) {
            invalid = URLError(.badURL, url: nil, description: "“\(hostname)” is not a host name.")
        } else if !(1...65535).contains(port) {
            invalid = URLError(.badURL, url: nil, description: "\(port) is not a TCP port.")
        }
        return register { identifier, refusal, context in
            URLSessionStreamTask(session: self, context: context, identifier: identifier, host: host, port: port,
                                 creationFailure: refusal ?? invalid)
        }
    }

    /// A registered stream task, not yet resumed, over `descriptor`: the connection of a data task
    /// to `url` that became a stream task (`.becomeStream`). The task owns the descriptor; in an
    /// invalidated session it fails and closes it when completed.
    func makeSuccessorStreamTask(for url: URL?, adopting descriptor: Int32) -> URLSessionStreamTask {
        let host = url?.host ?? ""
        let port = url?.port ?? 80
        return register { identifier, refusal, context in
            URLSessionStreamTask(session: self, context: context, identifier: identifier, host: host, port: port, creationFailure: refusal,
                                 adopting: StreamSocket(descriptor: descriptor))
        }
    }
}
