import Foundation

// Building tasks: the public factory methods (in URLSession.swift, since `open` members must be in
// the class body) all come here.
extension URLSession {
    func dataTask(_ request: URLRequest, _ completion: TaskCompletion) -> URLSessionDataTask {
        register { identifier, refusal in
            URLSessionDataTask(context: taskContext, identifier: identifier, request: request, completion: completion,
                               creationFailure: refusal)
        }
    }

    func uploadTask(_ request: URLRequest, _ body: UploadBody, _ completion: TaskCompletion) -> URLSessionUploadTask {
        register { identifier, refusal in
            URLSessionUploadTask(context: taskContext, identifier: identifier, request: request, completion: completion,
                                 uploadBody: body, creationFailure: refusal)
        }
    }

    func downloadTask(_ request: URLRequest?, _ completion: TaskCompletion,
                      resume: Result<DownloadResumeData, URLError>? = nil) -> URLSessionDownloadTask {
        register { identifier, refusal in
            URLSessionDownloadTask(context: taskContext, identifier: identifier, request: request, completion: completion,
                                   resumeSource: resume, creationFailure: refusal)
        }
    }

    static func resumeRequest(_ decoded: Result<DownloadResumeData, URLError>) -> URLRequest? {
        guard case .success(let resume) = decoded else { return nil }
        return resume.request
    }

    /// What a new task is handed: everything it needs of this session, so it never asks the
    /// session again (see ``TaskSessionContext``).
    var taskContext: TaskSessionContext {
        TaskSessionContext(session: self, owner: self, delegateQueue: delegateQueue, drains: drains, settings: settings,
                           resolver: resolver, cache: cache, environment: environment)
    }
}
