import Foundation

// Building tasks: the public factory methods (in URLSession.swift, since `open` members must be in
// the class body) all come here.
extension URLSession {
    func dataTask(_ request: URLRequest, _ completion: TaskCompletion) -> URLSessionDataTask {
        register { identifier, refusal, context in
            URLSessionDataTask(session: self, context: context, identifier: identifier, request: request, completion: completion,
                               creationFailure: refusal ?? backgroundRefusal(completion, request.url))
        }
    }

    func uploadTask(_ request: URLRequest, _ body: UploadBody, _ completion: TaskCompletion) -> URLSessionUploadTask {
        register { identifier, refusal, context in
            if refusal == nil, let task = background?.makeUploadTask(self, identifier, context, request, body, completion) { return task }
            return URLSessionUploadTask(session: self, context: context, identifier: identifier, request: request, completion: completion,
                                        uploadBody: body, creationFailure: refusal ?? backgroundRefusal(completion, request.url))
        }
    }

    func downloadTask(_ request: URLRequest?, _ completion: TaskCompletion,
                      resume: Result<DownloadResumeData, URLError>? = nil) -> URLSessionDownloadTask {
        register { identifier, refusal, context in
            if refusal == nil, let task = background?.makeDownloadTask(self, identifier, context, request, completion, resume: resume) {
                return task
            }
            return URLSessionDownloadTask(session: self, context: context, identifier: identifier, request: request, completion: completion,
                                          resumeSource: resume, creationFailure: refusal ?? backgroundRefusal(completion, request?.url))
        }
    }

    /// Why a task with a completion handler may not run in a background session (they cannot
    /// outlive the process): Apple raises an exception; Courier fails the task when resumed.
    private func backgroundRefusal(_ completion: TaskCompletion, _ url: URL?) -> URLError? {
        guard background != nil else { return nil }
        if case .delegate = completion { return nil }
        return URLError(.unsupportedURL, url: url, description:
            "Completion handlers are not supported in background sessions: use the session's delegate instead.")
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
