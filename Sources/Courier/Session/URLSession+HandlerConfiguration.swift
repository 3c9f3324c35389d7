import Foundation
import Logging

extension URLSession {
    /// The configuration a handler instance for `request` is made with: the session's environment,
    /// the request's effective cache policy and timeouts, and when `cachedResponse` (the response the
    /// task looked up for it, if any) was stored. Built once per handler instance and carried by its
    /// client, so the handler never asks the task or the session. Its logger is the session's, with
    /// `task` (the task's identifier) in its metadata when it logs at `debug` or below (at `info`
    /// nothing is added, so a load pays nothing for logging).
    func handlerConfiguration(for request: URLRequest, cachedResponse: CachedURLResponse?, task: Int? = nil) -> HandlerConfiguration {
        let requestTimeout = request.timeoutInterval != 60 ? request.timeoutInterval : settings.timeoutIntervalForRequest
        var configuration = HandlerConfiguration(environment: environment,
                                    cachePolicy: request.cachePolicy == .useProtocolCachePolicy ? settings.requestCachePolicy : request.cachePolicy,
                                    requestTimeout: requestTimeout,
                                    resourceTimeout: settings.timeoutIntervalForResource,
                                    cachedResponseStoredAt: cachedResponse.flatMap { cache?.storageDate(of: $0, for: request) })
        configuration.logger = environment.logger
        if let task, CourierLogging.emits(.debug, environment.logger) {
            configuration.logger[metadataKey: CourierLogKey.task] = "\(task)"
        }
        return configuration
    }
}
