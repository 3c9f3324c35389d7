import Foundation

extension URLSession {
    /// Starts loading `request` and returns, as soon as the response arrives, the response and an
    /// asynchronous sequence of the body's bytes. Reading slower than the data arrives suspends the
    /// task, so memory stays bounded.
    public func bytes(for request: URLRequest, delegate: (any URLSessionTaskDelegate)? = nil) async throws -> (AsyncBytes, URLResponse) {
        let buffer = AsyncBytesBuffer()
        let task = dataTask(with: request)
        task.delegate = AsyncBytesDelegate(buffer: buffer, forwardingTo: delegate)
        buffer.task = task
        let response = try await withTaskCancellationHandler {
            try await buffer.waitForResponse()
        } onCancel: {
            task.cancel()
        }
        return (AsyncBytes(task: task, buffer: buffer), response)
    }

    /// Starts loading `url`; see ``bytes(for:delegate:)``.
    public func bytes(from url: URL, delegate: (any URLSessionTaskDelegate)? = nil) async throws -> (AsyncBytes, URLResponse) {
        try await bytes(for: URLRequest(url: url), delegate: delegate)
    }

    /// The body of a task as an asynchronous sequence of bytes, from `bytes(for:)`.
    public struct AsyncBytes: AsyncSequence, Sendable {
        public typealias Element = UInt8

        /// The data task delivering the bytes.
        public let task: URLSessionDataTask
        let buffer: AsyncBytesBuffer

        init(task: URLSessionDataTask, buffer: AsyncBytesBuffer) {
            self.task = task
            self.buffer = buffer
        }

        /// An iterator over the bytes; it reads the body chunk by chunk.
        public func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(buffer: buffer)
        }

        /// Reads the body one chunk at a time and hands out its bytes.
        public struct AsyncIterator: AsyncIteratorProtocol {
            private let buffer: AsyncBytesBuffer
            private var chunk = Data()
            private var index = 0

            init(buffer: AsyncBytesBuffer) { self.buffer = buffer }

            /// The next byte, `nil` at the end; throws the task's error.
            public mutating func next() async throws -> UInt8? {
                if index < chunk.count {
                    defer { index += 1 }
                    return chunk[chunk.startIndex + index]
                }
                while true {
                    guard let next = try await buffer.nextChunk() else { return nil }
                    if next.isEmpty { continue }
                    chunk = next
                    index = 1
                    return chunk[chunk.startIndex]
                }
            }
        }

        /// The body's lines, decoded as UTF-8.
        public var lines: AsyncLineSequence<AsyncBytes> { AsyncLineSequence(self) }
    }
}

/// Chunks between the delegate queue (producer) and the `AsyncBytes` reader (consumer), with
/// back-pressure: the task is suspended while too much is unread.
final class AsyncBytesBuffer: @unchecked Sendable {
    static let highWater = 4 << 20
    static let lowWater = 1 << 20

    private let lock = Lock()
    private var chunks: [Data] = []
    private var buffered = 0
    private var outcome: Result<Void, any Error>?
    private var response: URLResponse?
    private var responseWaiter: HandoffContinuation<URLResponse>?
    private var chunkWaiter: HandoffContinuation<Data?>?
    private var pausedTask = false
    weak var task: URLSessionDataTask?

    func waitForResponse() async throws -> URLResponse {
        try await withHandoffContinuation { continuation in
            let ready: Result<URLResponse, any Error>? = lock.withLock {
                if let response { return .success(response) }
                if case .failure(let error)? = outcome { return .failure(error) }
                responseWaiter = continuation
                return nil
            }
            if let ready { continuation.resume(with: ready) }
            task?.resume()
        }
    }

    func nextChunk() async throws -> Data? {
        let task = self.task
        return try await withTaskCancellationHandler {
            try await withHandoffContinuation { continuation in
                let ready: Result<Data?, any Error>? = lock.withLock {
                    if !chunks.isEmpty {
                        let chunk = chunks.removeFirst()
                        buffered -= chunk.count
                        return .success(chunk)
                    }
                    switch outcome {
                    case .success?: return .success(nil)
                    case .failure(let error)?: return .failure(error)
                    case nil:
                        chunkWaiter = continuation
                        return nil
                    }
                }
                if let ready { continuation.resume(with: ready) }
                resumeTaskIfDrained()
            }
        } onCancel: {
            task?.cancel()
        }
    }

    private func resumeTaskIfDrained() {
        let resume: Bool = lock.withLock {
            guard pausedTask, buffered < Self.lowWater else { return false }
            pausedTask = false
            return true
        }
        if resume { task?.resume() }
    }

    func received(_ response: URLResponse) {
        let waiter: HandoffContinuation<URLResponse>? = lock.withLock {
            self.response = response
            defer { responseWaiter = nil }
            return responseWaiter
        }
        waiter?.resume(returning: response)
    }

    func received(_ data: Data) {
        let (waiter, pause): (HandoffContinuation<Data?>?, Bool) = lock.withLock {
            if let waiter = chunkWaiter {
                chunkWaiter = nil
                return (waiter, false)
            }
            chunks.append(data)
            buffered += data.count
            if buffered > Self.highWater && !pausedTask {
                pausedTask = true
                return (nil, true)
            }
            return (nil, false)
        }
        waiter?.resume(returning: data)
        if pause { task?.suspend() }
    }

    func finished(_ error: (any Error)?) {
        let (responseWaiter, chunkWaiter) = lock.withLock {
            outcome = error.map { .failure($0) } ?? .success(())
            defer { self.responseWaiter = nil; self.chunkWaiter = nil }
            return (self.responseWaiter, self.chunkWaiter)
        }
        if let error {
            responseWaiter?.resume(throwing: error)
            chunkWaiter?.resume(throwing: error)
        } else {
            responseWaiter?.resume(throwing: URLError(.badServerResponse, url: nil, description: "The task finished without a response."))
            chunkWaiter?.resume(returning: nil)
        }
    }
}

/// The task delegate behind `bytes(for:)`: feeds the buffer and passes everything else to the
/// caller's delegate. What the caller's delegate does not implement (or everything, without one)
/// goes to the session's delegate, as if the caller's delegate were the task's.
final class AsyncBytesDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let buffer: AsyncBytesBuffer
    private let forward: (any URLSessionTaskDelegate)?

    init(buffer: AsyncBytesBuffer, forwardingTo forward: (any URLSessionTaskDelegate)?) {
        self.buffer = buffer
        self.forward = forward
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        buffer.received(response)
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        buffer.received(data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        buffer.finished(error)
        forwarded(.completion) { $0.urlSession(session, task: task, didCompleteWithError: error) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        if forwarded(.redirect, {
            $0.urlSession(session, task: task, willPerformHTTPRedirection: response, newRequest: request, completionHandler: completionHandler)
        }) { return }
        completionHandler(request)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
                    completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        if forwarded(.challenge, { $0.urlSession(session, task: task, didReceive: challenge, completionHandler: completionHandler) }) { return }
        completionHandler(.performDefaultHandling, nil)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didFinishCollecting metrics: URLSessionTaskMetrics) {
        forwarded(.metrics) { $0.urlSession(session, task: task, didFinishCollecting: metrics) }
    }

    /// Passes a message to the caller's delegate; `true` when it was handled there or, the caller's
    /// delegate not implementing it (or there being none), left to the session's delegate. `false`:
    /// the message's default behaviour is up to this delegate.
    @discardableResult
    private func forwarded(_ message: DelegateMessage, _ send: (any URLSessionTaskDelegate) -> Void) -> Bool {
        if let forward, DelegateFallthrough.handled(message, by: forward, { send(forward) }) { return true }
        return DelegateFallthrough.defers(message, of: self)
    }
}
