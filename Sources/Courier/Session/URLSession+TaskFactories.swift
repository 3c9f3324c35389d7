import Foundation

// Building tasks: the public factory methods (in URLSession.swift, since `open` members must be in
// the class body) all come here.
extension URLSession {
    func makeTask(request: URLRequest?, kind: TaskKind, completion: TaskCompletion,
                          uploadBody: UploadBody = .none,
                          resumeSource: Result<DownloadResumeData, URLError>? = nil) -> URLSessionTask {
        register { identifier, refusal in
            switch kind {
            case .data:
                return URLSessionDataTask(session: self, identifier: identifier, request: request, kind: kind,
                                          completion: completion, creationFailure: refusal)
            case .upload:
                return URLSessionUploadTask(session: self, identifier: identifier, request: request, kind: kind,
                                            completion: completion, uploadBody: uploadBody, creationFailure: refusal)
            case .download:
                return URLSessionDownloadTask(session: self, identifier: identifier, request: request, kind: kind,
                                              completion: completion, resumeSource: resumeSource, creationFailure: refusal)
            }
        }
    }

    func dataTask(_ request: URLRequest, _ completion: TaskCompletion) -> URLSessionDataTask {
        // `makeTask(kind: .data)` always builds a URLSessionDataTask.
        makeTask(request: request, kind: .data, completion: completion) as? URLSessionDataTask ?? URLSessionDataTask()
    }

    func uploadTask(_ request: URLRequest, _ body: UploadBody, _ completion: TaskCompletion) -> URLSessionUploadTask {
        makeTask(request: request, kind: .upload, completion: completion, uploadBody: body) as? URLSessionUploadTask ?? URLSessionUploadTask()
    }

    func downloadTask(_ request: URLRequest?, _ completion: TaskCompletion,
                              resume: Result<DownloadResumeData, URLError>? = nil) -> URLSessionDownloadTask {
        makeTask(request: request, kind: .download, completion: completion, resumeSource: resume) as? URLSessionDownloadTask ?? URLSessionDownloadTask()
    }

    static func resumeRequest(_ decoded: Result<DownloadResumeData, URLError>) -> URLRequest? {
        guard case .success(let resume) = decoded else { return nil }
        return resume.request
    }

    /// A registered download task, already resumed, that takes over a data task's load
    /// (`.becomeDownload`).
    func makeSuccessorDownloadTask(for request: URLRequest?) -> URLSessionDownloadTask {
        downloadTask(request, .delegate)
    }
}
