import Foundation

/// What a task tells the session that owns it, declared by the task layer and implemented by
/// `URLSession` (`Session/URLSession+TaskOwner.swift`). These notifications and the session's
/// current delegate are the only things a task asks of its session at run time; everything else it
/// needs was handed to it at creation in its ``TaskSessionContext``.
protocol TaskOwner: AnyObject, Sendable {
    /// The session's delegate now (`nil` once the session was invalidated): the delegate messages
    /// the task's own delegate does not take go to it.
    var delegate: (any URLSessionDelegate)? { get }

    /// `task` started a handler: its timeouts must be watched from now on.
    func taskDidStartLoading(_ task: URLSessionTask)

    /// `task` delivered its completion (or handed its load to a download task): the owner forgets it.
    func taskDidComplete(_ task: URLSessionTask)

    /// A new download task of the same owner, registered like any other, that takes over a data
    /// task's load (`.becomeDownload`).
    func makeSuccessorDownloadTask(for request: URLRequest?) -> URLSessionDownloadTask
}
