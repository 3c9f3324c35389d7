import Foundation

// Building tasks: the public factory methods (in URLSession.swift, since `open` members must be in
// the class body) all come here.
extension URLSession {
    func dataTask(_ request: URLRequest, _ completion: TaskCompletion) -> URLSessionDataTask {
        register { identifier, refusal, context in
            URLSessionDataTask(session: self, context: context, identifier: identifier, request: request, completion: completion,
                               creationFailure: refusal)
        }
    }

    func uploadTask(_ request: URLRequest, _ body: UploadBody, _ completion: TaskCompletion) -> URLSessionUploadTask {
        register { identifier, refusal, context in
            URLSessionUploadTask(session: self, context: context, identifier: identifier, request: request, completion: completion,
                                 uploadBody: body, creationFailure: refusal)
        }
    }

    func downloadTask(_ request: URLRequest?, _ completion: TaskCompletion,
                      resume: Result<DownloadResumeData, URLError>? = nil) -> URLSessionDownloadTask {
        register { identifier, refusal, context in
            URLSessionDownloadTask(session: self, context: context, identifier: identifier, request: request, completion: completion,
                                   resumeSource: resume, creationFailure: refusal)
        }
    }

    static func resumeRequest(_ decoded: Result<DownloadResumeData, URLError>) -> URLRequest? {
        guard case .success(let resume) = decoded else { return nil }
        return resume.request
    }

    /// What a new task is handed: everything it needs of this session, so it never asks the
    /// session again (see ``TaskSessionContext``). Made with the first task, under the session's
    /// lock, and shared by every task after it; `delegateQueue` is the session's ``delegateQueue``,
    /// read before locking.
    func sharedTaskContextLocked(delegateQueue: OperationQueue) -> TaskSessionContext {
        if let existing = registry.taskContext { return existing }
        let made = TaskSessionContext(owner: self, delegateQueue: delegateQueue, drains: drains, settings: settings,
                                      resolver: resolver, cache: cache, environment: environment)
        registry.taskContext = made
        return made
    }
}
