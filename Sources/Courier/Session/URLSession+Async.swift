import Foundation

// The async/await API. Each call runs one task with a completion handler; cancelling the Swift
// task cancels the URL session task. `delegate` receives that task's task-level messages
// (redirects, challenges, metrics). Without one, `data` and `upload` resume their caller straight
// from the thread that ends the task (`URLSessionTask.scheduleDrain()`), not through the delegate queue.
extension URLSession {
    /// Loads `request` and returns its body and response.
    public func data(for request: URLRequest, delegate: (any URLSessionTaskDelegate)? = nil) async throws -> (Data, URLResponse) {
        try await run(delegate: delegate) { handler in
            self.dataTask(with: request) { data, response, error in handler(data, response, error) }
        }
    }

    /// Loads `url` and returns its body and response.
    public func data(from url: URL, delegate: (any URLSessionTaskDelegate)? = nil) async throws -> (Data, URLResponse) {
        try await data(for: URLRequest(url: url), delegate: delegate)
    }

    /// Uploads the file at `fileURL` with `request` and returns the response body and response.
    public func upload(for request: URLRequest, fromFile fileURL: URL, delegate: (any URLSessionTaskDelegate)? = nil) async throws -> (Data, URLResponse) {
        try await run(delegate: delegate) { handler in
            self.uploadTask(with: request, fromFile: fileURL) { data, response, error in handler(data, response, error) }
        }
    }

    /// Uploads `bodyData` with `request` and returns the response body and response.
    public func upload(for request: URLRequest, from bodyData: Data, delegate: (any URLSessionTaskDelegate)? = nil) async throws -> (Data, URLResponse) {
        try await run(delegate: delegate) { handler in
            self.uploadTask(with: request, from: bodyData) { data, response, error in handler(data, response, error) }
        }
    }

    /// Downloads `request` to a file and returns its location and the response. The file is moved
    /// to a new temporary location that stays until the caller removes it.
    public func download(for request: URLRequest, delegate: (any URLSessionTaskDelegate)? = nil) async throws -> (URL, URLResponse) {
        try await runDownload(delegate: delegate) { handler in self.downloadTask(with: request, completionHandler: handler) }
    }

    /// Downloads `url` to a file and returns its location and the response.
    public func download(from url: URL, delegate: (any URLSessionTaskDelegate)? = nil) async throws -> (URL, URLResponse) {
        try await download(for: URLRequest(url: url), delegate: delegate)
    }

    /// Continues a download from resume data and returns the file's location and the response.
    public func download(resumeFrom resumeData: Data, delegate: (any URLSessionTaskDelegate)? = nil) async throws -> (URL, URLResponse) {
        try await runDownload(delegate: delegate) { handler in self.downloadTask(withResumeData: resumeData, completionHandler: handler) }
    }

    private func run<T: URLSessionTask>(delegate: (any URLSessionTaskDelegate)?,
                                        make: (@escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void) -> T) async throws -> (Data, URLResponse) {
        let holder = AsyncTaskHolder()
        return try await withTaskCancellationHandler {
            try await withHandoffContinuation { (continuation: HandoffContinuation<(Data, URLResponse)>) in
                let task = make { data, response, error in
                    if let error {
                        continuation.resume(throwing: error)
                    } else if let response {
                        continuation.resume(returning: (data ?? Data(), response))
                    } else {
                        continuation.resume(throwing: URLError(.badServerResponse, url: nil, description: "The task finished without a response."))
                    }
                }
                task.delegate = delegate
                // With no delegate nothing needs the delegate queue: the continuation resumes from
                // the thread that ends the task (unless the session's delegate takes metrics).
                if delegate == nil { task.allowCompletionInPlace() }
                holder.start(task)
            }
        } onCancel: {
            holder.cancel()
        }
    }

    private func runDownload(delegate: (any URLSessionTaskDelegate)?,
                             make: (@escaping @Sendable (URL?, URLResponse?, (any Error)?) -> Void) -> URLSessionDownloadTask) async throws -> (URL, URLResponse) {
        let holder = AsyncTaskHolder()
        return try await withTaskCancellationHandler {
            try await withHandoffContinuation { (continuation: HandoffContinuation<(URL, URLResponse)>) in
                let task = make { location, response, error in
                    if let error {
                        continuation.resume(throwing: error)
                        return
                    }
                    guard let location, let response else {
                        continuation.resume(throwing: URLError(.cannotCreateFile, url: nil, description: "The download produced no file."))
                        return
                    }
                    // The task removes its file when this handler returns: keep it under a new name.
                    do {
                        let kept = FileManager.default.temporaryDirectory
                            .appendingPathComponent("CFNetworkDownload_\(UUID().uuidString).tmp")
                        try FileManager.default.moveItem(at: location, to: kept)
                        continuation.resume(returning: (kept, response))
                    } catch {
                        continuation.resume(throwing: URLError(.cannotMoveFile, url: response.url,
                                                               description: "Cannot keep the downloaded file: \(error.localizedDescription)"))
                    }
                }
                task.delegate = delegate
                holder.start(task)
            }
        } onCancel: {
            holder.cancel()
        }
    }
}

/// Links a Swift task's cancellation to the URL session task it waits for, whichever comes first.
final class AsyncTaskHolder: @unchecked Sendable {
    private let lock = Lock()
    private var task: URLSessionTask?
    private var cancelled = false

    /// Resumes `task`, or cancels it at once if the Swift task was already cancelled.
    func start(_ task: URLSessionTask) {
        let cancelNow: Bool = lock.withLock {
            self.task = task
            return cancelled
        }
        task.resume()
        if cancelNow { task.cancel() }
    }

    /// Cancels the task (now, or as soon as it starts).
    func cancel() {
        let task: URLSessionTask? = lock.withLock {
            cancelled = true
            return self.task
        }
        task?.cancel()
    }
}
