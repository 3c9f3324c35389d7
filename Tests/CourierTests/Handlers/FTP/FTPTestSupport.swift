import Foundation
import Testing
@testable import Courier
#if canImport(Glibc)
import Glibc
#endif

/// Helpers shared by the ftp handler tests.
enum FTPTest {
    /// The process's FTP servers (started on first use).
    static func servers() async throws -> FTPTestServer { try await FTPTestServer.shared() }

    /// A new ephemeral session (its own credential store and connections).
    static func session(delegate: (any URLSessionDelegate)? = nil,
                        configure: (URLSessionConfiguration) -> Void = { _ in }) -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 20
        configure(configuration)
        return URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    }

    /// The `URLError` of a completion, recording an issue when there is none.
    static func urlError(_ error: (any Error)?, sourceLocation: SourceLocation = #_sourceLocation) throws -> URLError {
        try #require(error as? URLError, "expected a URLError, got \(String(describing: error))", sourceLocation: sourceLocation)
    }

    /// A challenge answer that accepts the test servers' self-signed certificate and answers login
    /// challenges with `login` (default handling when `nil`).
    static func accepting(login: URLCredential? = nil)
        -> @Sendable (URLSessionTask, URLAuthenticationChallenge, @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) -> Void {
        { _, challenge, completion in
            if challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodServerTrust,
               let trust = challenge.protectionSpace.serverTrust {
                completion(.useCredential, URLCredential(trust: trust))
            } else if let login {
                completion(.useCredential, login)
            } else {
                completion(.performDefaultHandling, nil)
            }
        }
    }

    /// A port on 127.0.0.1 that nothing listens on (it was free a moment ago).
    static func unusedPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestTimeout(what: "a socket") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(fd, raw, length) == 0 && getsockname(fd, raw, &length) == 0
            }
        }
        guard bound else { throw TestTimeout(what: "a free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
