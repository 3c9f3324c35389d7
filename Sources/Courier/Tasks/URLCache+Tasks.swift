import Dispatch
import Foundation

/// What `URLCache`'s data-task methods do. They are declared in the class itself (Apple's are
/// `open`, and only members of the class body can be overridden), and forward here so that the
/// cache's own file needs nothing from the task layer but the type's name.
///
/// A task's cache entry is the one for its `currentRequest`, the request after redirects; a task
/// without one has no entry. Each method goes through the request-taking method, so a subclass
/// that overrides those is honoured.
extension URLCache {

    /// Stores `cachedResponse` as the response to `dataTask`'s current request.
    func storeCachedResponse(_ cachedResponse: CachedURLResponse, forRequestOf dataTask: URLSessionDataTask) {
        guard let request = dataTask.currentRequest else { return }
        storeCachedResponse(cachedResponse, for: request)
    }

    /// Looks up the response to `dataTask`'s current request on a background queue and passes it
    /// (or `nil`) to `completionHandler` there.
    func getCachedResponse(forRequestOf dataTask: URLSessionDataTask, completionHandler: @escaping @Sendable (CachedURLResponse?) -> Void) {
        let request = dataTask.currentRequest
        DispatchQueue.global().async { [self] in
            completionHandler(request.flatMap { cachedResponse(for: $0) })
        }
    }

    /// Removes the response to `dataTask`'s current request.
    func removeCachedResponse(forRequestOf dataTask: URLSessionDataTask) {
        guard let request = dataTask.currentRequest else { return }
        removeCachedResponse(for: request)
    }
}
