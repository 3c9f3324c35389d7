import Foundation

extension URLSession {
    /// The configuration a handler instance for `request` is made with: the session's environment,
    /// the request's effective cache policy and timeouts, and when `cachedResponse` (the response the
    /// task looked up for it, if any) was stored. Built once per handler instance and carried by its
    /// client, so the handler never asks the task or the session.
    func handlerConfiguration(for request: URLRequest, cachedResponse: CachedURLResponse?) -> HandlerConfiguration {
        let requestTimeout = request.timeoutInterval != 60 ? request.timeoutInterval : settings.timeoutIntervalForRequest
        return HandlerConfiguration(environment: environment,
                                    cachePolicy: request.cachePolicy == .useProtocolCachePolicy ? settings.requestCachePolicy : request.cachePolicy,
                                    requestTimeout: requestTimeout,
                                    resourceTimeout: settings.timeoutIntervalForResource,
                                    cachedResponseStoredAt: cachedResponse.flatMap { cache?.storageDate(of: $0, for: request) })
    }
}
