import Foundation

/// A task that is a TCP connection, optionally TLS: read and write bytes, close either direction,
/// upgrade to TLS at any point (STARTTLS), or hand the connection over as a pair of Foundation
/// streams.
///
/// Make one with ``URLSession/streamTask(withHostName:port:)`` (or get one from a data task's
/// `.becomeStream` disposition) and call ``resume()`` to connect; reads and writes queued before
/// that wait for the connection. Completion handlers run on the session's delegate queue, in order:
/// reads in the order they were queued, writes likewise. The connection is served by the session's
/// event-loop thread, so a stream task costs no thread of its own.
///
/// The task completes — `urlSession(_:task:didCompleteWithError:)` — when it is cancelled, when the
/// connection fails (connect, I/O or TLS errors), or with no error once both directions are closed
/// (``closeWrite()`` took effect, and ``closeRead()`` did or the peer's end of stream was read) and
/// nothing is queued. After ``captureStreams()`` it ends without further messages. Pending reads
/// and writes are completed (with the error) before the task's completion.
open class URLSessionStreamTask: URLSessionTask, @unchecked Sendable {
    /// The connection; `nil` for a task made with `init()`, which belongs to no session.
    let connection: StreamConnection?

    /// A stream task that belongs to no session: resuming it does nothing, and its reads and
    /// writes fail.
    public override init() {
        connection = nil
        super.init()
    }

    /// A task of `session` connecting to `host` and `port`; or, with `adopting`, one over that
    /// connected socket (a data task's after an HTTP upgrade), which it owns from now on.
    init(session: URLSession, context: TaskSessionContext, identifier: Int, host: String, port: Int, creationFailure: URLError?,
         adopting adopted: StreamSocket? = nil) {
        connection = StreamConnection(host: host, port: port, environment: context.environment,
                                      requestTimeout: context.settings.timeoutIntervalForRequest,
                                      resourceTimeout: context.settings.timeoutIntervalForResource, adopting: adopted)
        super.init(session: session, context: context, identifier: identifier, request: nil, completion: .delegate,
                   creationFailure: creationFailure)
        connection?.task = self
    }

    /// Reads at least `minBytes` and at most `maxBytes` bytes. The handler gets the bytes, whether
    /// the stream is at its end (the peer closed its side and nothing is left), and an error:
    /// `timedOut` when `timeout` seconds (0: no limit) pass first, `cancelled` when the task is
    /// cancelled. At the end of the stream a read completes with what is left, even fewer than
    /// `minBytes` bytes. Runs on the delegate queue.
    open func readData(ofMinLength minBytes: Int, maxLength maxBytes: Int, timeout: TimeInterval,
                       completionHandler: @escaping @Sendable (Data?, Bool, (any Error)?) -> Void) {
        guard let connection else {
            DispatchQueue.global().async { completionHandler(nil, false, Self.noSession()) }
            return
        }
        connection.read(minimum: minBytes, maximum: maxBytes, timeout: timeout, handler: completionHandler)
    }

    /// Writes `data`. The handler runs (on the delegate queue) once every byte was handed to the
    /// socket — not once the peer received it — or with `timedOut` when `timeout` seconds (0: no
    /// limit) pass first. Writes are done in the order they are queued.
    open func write(_ data: Data, timeout: TimeInterval, completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        guard let connection else {
            DispatchQueue.global().async { completionHandler(Self.noSession()) }
            return
        }
        connection.write(data, timeout: timeout, handler: completionHandler)
    }

    /// Completes the reads and writes queued so far, then hands the connection (and any bytes read
    /// ahead) to the delegate's `urlSession(_:streamTask:didBecome:outputStream:)` as an
    /// `InputStream` and an `OutputStream`. The task then ends, and its delegate hears nothing more.
    open func captureStreams() { connection?.capture() }

    /// Once the writes queued so far are done, closes the write side (the peer reads its end of
    /// stream; over TLS after a close_notify) and tells the delegate `writeClosedFor`. Writes
    /// queued later fail.
    open func closeWrite() { connection?.closeWrite() }

    /// Once the reads queued so far are done, closes the read side and tells the delegate
    /// `readClosedFor` (unless the peer's end of stream already did). Reads queued later fail.
    open func closeRead() { connection?.closeRead() }

    /// Completes the reads and writes queued so far, then starts TLS on the connection — at once,
    /// or in the middle of a plain-text exchange (STARTTLS). Reads and writes queued later wait for
    /// the handshake. The server is verified with the session's trust settings; one that fails
    /// raises a server-trust challenge, as https does. Plain-text bytes read ahead when TLS starts
    /// are dropped.
    open func startSecureConnection() { connection?.startTLS() }

    /// Does nothing: TLS cannot be turned off once it is on (Apple deprecated this method for
    /// that reason).
    open func stopSecureConnection() {}

    /// Cancels the task: queued reads and writes fail with `cancelled`, the connection closes,
    /// and the task completes with `cancelled`.
    open override func cancel() {
        super.cancel()
        connection?.cancel()
    }

    private static func noSession() -> URLError {
        URLError(.unknown, url: nil, description: "The stream task belongs to no session.")
    }
}

extension URLSessionStreamTask {
    /// Reads at least `minBytes` and at most `maxBytes` bytes: the bytes and whether the stream is
    /// at its end. Throws what the completion handler would get.
    public func readData(ofMinLength minBytes: Int, maxLength maxBytes: Int, timeout: TimeInterval) async throws -> (Data?, Bool) {
        let result: UncheckedSendable<(Data?, Bool)> = try await withHandoffContinuation { continuation in
            readData(ofMinLength: minBytes, maxLength: maxBytes, timeout: timeout) { data, atEOF, error in
                if let error {
                    continuation.resume(throwing: error)
                } else {
                    continuation.resume(returning: UncheckedSendable((data, atEOF)))
                }
            }
        }
        return result.value
    }

    /// Writes `data`; returns once every byte was handed to the socket. Throws what the completion
    /// handler would get.
    public func write(_ data: Data, timeout: TimeInterval) async throws {
        let _: Bool = try await withHandoffContinuation { continuation in
            write(data, timeout: timeout) { error in
                if let error { continuation.resume(throwing: error) } else { continuation.resume(returning: true) }
            }
        }
    }
}
