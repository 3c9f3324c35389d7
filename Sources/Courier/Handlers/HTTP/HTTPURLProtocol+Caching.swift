import Foundation

// The HTTP handler's part in caching: using a fresh stored response without the network,
// revalidating a stale one, turning a 304 into the stored response, and telling the task whether
// a new response may be stored. The rules are in HTTPCacheValidation, HTTPCacheFreshness and
// HTTPCacheStorage; the state of one load is in HTTPCacheExchange.
extension HTTPURLProtocol {
    /// Judges the cached response the task passed in, before any transfer starts. Returns `true`
    /// when it was fresh and has been reported as the result (`cachedResponseIsValid`, metrics
    /// marked as a local-cache fetch); when it is stale but has validators, arranges the
    /// conditional request and returns `false`; otherwise returns `false`.
    func answerFromCacheIfFresh() -> Bool {
        guard let cached = cachedResponse else { return false }
        switch HTTPCacheValidation.decide(cached: cached, request: request, receivedAt: configuration.cachedResponseStoredAt) {
        case .useStored:
            // The load ends here (unless it was stopped already).
            guard load.conclude(from: .idle) else { return true }
            builtInClient?.didCollectTransactionMetrics { $0.resourceFetchType = .localCache }
            client?.urlProtocol(self, cachedResponseIsValid: cached)
            return true
        case .revalidate(let headers):
            cacheExchange.beginRevalidation(of: cached, with: headers)
            return false
        case .load:
            return false
        }
    }

    /// Whether the response head is the `304` answering this load's revalidation (then nothing is
    /// delivered; the transfer's end reports the stored response, see
    /// ``finishRevalidationIfAnswered()``).
    func acceptNotModified(_ response: HTTPURLResponse) -> Bool {
        cacheExchange.acceptNotModified(response)
    }

    /// After a transfer that ended with a `304` to the revalidation: reports the stored response
    /// with the 304's headers and whether it may be stored again for this load's credentials
    /// (``BuiltInHandlerClient/didRevalidateCachedResponse(_:for:storagePolicy:)``: the task stores
    /// it, which also restarts its age, or removes the entry, and delivers it). Returns whether it
    /// did. A client that is not a task's just gets `cachedResponseIsValid`.
    func finishRevalidationIfAnswered() -> Bool {
        guard let refreshed = cacheExchange.takeRefreshed() else { return false }
        guard let builtIn = builtInClient else {
            client?.urlProtocol(self, cachedResponseIsValid: refreshed)
            return true
        }
        var policy = refreshed.storagePolicy
        if let http = refreshed.response as? HTTPURLResponse,
           HTTPCacheStorage.policy(for: http, request: request, credentials: lock.withLock { sentCredentials }) == .notAllowed {
            policy = .notAllowed
        }
        builtIn.didRevalidateCachedResponse(refreshed, for: request, storagePolicy: policy)
        return true
    }

    /// The storage policy to report with `response`. A successful answer to an unsafe method
    /// (`POST`, `PUT`, `DELETE`…) also tells the task that the stored response for the URL is
    /// obsolete (``BuiltInHandlerClient/cachedResponseIsObsolete(for:)``).
    func cacheStoragePolicy(for response: HTTPURLResponse) -> URLCache.StoragePolicy {
        if HTTPCacheStorage.invalidatesStoredResponse(response, request: request), let url = request.url {
            builtInClient?.cachedResponseIsObsolete(for: url)
        }
        return HTTPCacheStorage.policy(for: response, request: request, credentials: lock.withLock { sentCredentials })
    }
}
