import Foundation
import Testing
@testable import Courier

/// Records what a stream task's delegate hears, in order, and answers server-trust challenges with
/// `trustAnswer` (default handling when `nil`).
final class StreamTestDelegate: NSObject, URLSessionStreamDelegate, URLSessionDataDelegate, @unchecked Sendable {
    enum Event: Equatable, Sendable {
        case readClosed
        case writeClosed
        case streams
        case challenge
        case completed(URLError.Code?)
    }

    private let state = Locked<(events: [Event], streams: (InputStream, OutputStream)?, errors: [any Error])>(([], nil, []))
    private let trustAnswer: (@Sendable (URLAuthenticationChallenge) -> (URLSession.AuthChallengeDisposition, URLCredential?))?

    init(trustAnswer: (@Sendable (URLAuthenticationChallenge) -> (URLSession.AuthChallengeDisposition, URLCredential?))? = nil) {
        self.trustAnswer = trustAnswer
    }

    var events: [Event] { state.current.events }
    var streams: (InputStream, OutputStream)? { state.current.streams }
    var completionError: (any Error)? { state.current.errors.first }
    var isCompleted: Bool { events.contains { if case .completed = $0 { true } else { false } } }

    func urlSession(_ session: URLSession, readClosedFor streamTask: URLSessionStreamTask) {
        state.withLock { $0.events.append(.readClosed) }
    }

    func urlSession(_ session: URLSession, writeClosedFor streamTask: URLSessionStreamTask) {
        state.withLock { $0.events.append(.writeClosed) }
    }

    func urlSession(_ session: URLSession, streamTask: URLSessionStreamTask, didBecome inputStream: InputStream,
                    outputStream: OutputStream) {
        state.withLock {
            $0.events.append(.streams)
            $0.streams = (inputStream, outputStream)
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
                    completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        state.withLock { $0.events.append(.challenge) }
        let (disposition, credential) = trustAnswer?(challenge) ?? (.performDefaultHandling, nil)
        completionHandler(disposition, credential)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        state.withLock {
            $0.events.append(.completed((error as? URLError)?.code))
            if let error { $0.errors.append(error) }
        }
    }

    /// Waits (bounded) for the task's completion.
    func waitForCompletion() async -> Bool { await waitUntil { self.isCompleted } }
}

enum StreamTest {
    /// An ephemeral session reporting to `delegate`.
    static func session(_ delegate: StreamTestDelegate = StreamTestDelegate(),
                        configure: (URLSessionConfiguration) -> Void = { _ in }) -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.connectionProxyDictionary = [:]
        configure(configuration)
        return URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    }

    /// The per-operation timeout of the tests' reads and writes: a wait that cannot hang.
    static let timeout: TimeInterval = testWaitLimit

    /// Reads exactly `count` bytes (several reads if needed), or until the end of the stream.
    static func read(_ task: URLSessionStreamTask, count: Int) async throws -> Data {
        var data = Data()
        while data.count < count {
            let (chunk, atEOF) = try await task.readData(ofMinLength: 1, maxLength: count - data.count, timeout: timeout)
            data.append(chunk ?? Data())
            if atEOF { break }
        }
        return data
    }

    /// The error as a `URLError`.
    static func urlError(_ error: (any Error)?, sourceLocation: SourceLocation = #_sourceLocation) throws -> URLError {
        try #require(error as? URLError, sourceLocation: sourceLocation)
    }

    /// A trust answer that accepts the challenge's own server.
    static let acceptTrust: @Sendable (URLAuthenticationChallenge) -> (URLSession.AuthChallengeDisposition, URLCredential?) = { challenge in
        guard let trust = challenge.protectionSpace.serverTrust else { return (.performDefaultHandling, nil) }
        return (.useCredential, URLCredential(trust: trust))
    }

    /// A session that trusts the test PKI's root CA.
    static func trustingSession(_ pki: NginxTLSServer.PKI, _ delegate: StreamTestDelegate = StreamTestDelegate()) -> URLSession {
        session(delegate) { $0.tlsTrustAnchors = TLSTrustAnchors(file: pki.rootCA.path, directory: nil) }
    }
}
