import Foundation

// Which delegate receives which message: the task's own delegate first, when it adopts the
// protocol the message belongs to, otherwise the session's.
extension URLSessionTask {
    /// The receiver of task-level messages (redirects, challenges, completion, metrics).
    var taskDelegate: (any URLSessionTaskDelegate)? {
        if let own = lock.withLock({ core.delegate }) { return own }
        return session?.delegate as? URLSessionTaskDelegate
    }

    /// The receiver of data-task messages.
    var dataDelegate: (any URLSessionDataDelegate)? {
        if let own = lock.withLock({ core.delegate }) as? URLSessionDataDelegate { return own }
        return session?.delegate as? URLSessionDataDelegate
    }

    /// The receiver of download-task messages.
    var downloadDelegate: (any URLSessionDownloadDelegate)? {
        if let own = lock.withLock({ core.delegate }) as? URLSessionDownloadDelegate { return own }
        return session?.delegate as? URLSessionDownloadDelegate
    }
}
