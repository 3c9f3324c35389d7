import Foundation

// The session as its tasks' owner: the notifications the task layer sends (``TaskOwner``), and
// nothing else — a task asks its session for nothing at run time but its current delegate.
extension URLSession: TaskOwner {
    /// A task started a handler: watch it for timeouts.
    func taskDidStartLoading(_ task: URLSessionTask) {
        timeoutMonitor.start()
    }

    /// A task delivered its completion: forget it, and finish invalidating when it was the last.
    func taskDidComplete(_ task: URLSessionTask) {
        task.log(.completed)
        let finished: Bool = lock.withLock {
            registry.tasks.removeValue(forKey: task.identifier)
            return registry.invalidating && registry.tasks.isEmpty
        }
        if finished { completeInvalidation() }
    }

    /// A registered download task, already resumed, that takes over a data task's load
    /// (`.becomeDownload`).
    func makeSuccessorDownloadTask(for request: URLRequest?) -> URLSessionDownloadTask {
        downloadTask(request, .delegate)
    }
}
