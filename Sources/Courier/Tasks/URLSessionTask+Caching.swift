import Foundation

/// What a task does with the session's `URLCache` before starting a load, decided from the
/// request's (effective) cache policy.
enum TaskCacheLookup {
    /// Start a handler, giving it the cached response (or none) to judge by its protocol's rules
    /// (`useProtocolCachePolicy`, `reloadRevalidatingCacheData`, the `reloadIgnoring…` policies).
    case load(CachedURLResponse?)
    /// Deliver the cached response as the result without loading (`returnCacheData…` policies).
    case serve(CachedURLResponse)
    /// `returnCacheDataDontLoad` and nothing is cached: fail without loading.
    case unavailable
}

// The task's side of caching: the lookup before a load, the copy of the body kept for the cache,
// and storing the response (after `willCacheResponse`) when a data task succeeds. Whether a
// response may be cached, and whether a cached one is still fresh, is the handler's decision: it
// passes a storage policy with the response, and answers with `cachedResponseIsValid` when the
// cached response it was given will do.
extension URLSessionTask {
    /// A response is kept for the cache only when its body is at most this fraction of the cache's
    /// capacity (1/20: Apple documents "about 5% of the disk cache size").
    static let cacheableCapacityDivisor = 20

    /// Looks `request` up in the session's cache as its cache policy says.
    ///
    /// Data and download tasks are looked up (upload tasks, requests with a body and resumed
    /// downloads are not); the cache itself only answers `GET` requests. `returnCacheDataDontLoad` with nothing cached is
    /// ``TaskCacheLookup/unavailable`` for every task.
    func cacheLookup(for request: URLRequest) -> TaskCacheLookup {
        // Only the schemes whose row caches responses (http, https) are looked up; others skip the
        // lookup (and its cost) entirely.
        guard let scheme = request.url?.scheme, context?.resolver.cachesResponses(forScheme: scheme) == true else {
            return .load(nil)
        }
        // A request carrying a body is never answered from the cache: its handler decides (a GET or
        // HEAD with a body fails with `dataLengthExceedsMaximum`, as on Apple's platforms, whatever
        // is cached for its URL).
        guard request.httpBody == nil, request.httpBodyStream == nil else { return .load(nil) }
        switch request.cachePolicy {
        case .reloadIgnoringLocalCacheData, .reloadIgnoringLocalAndRemoteCacheData:
            return .load(nil)
        case .returnCacheDataDontLoad:
            return cachedResponse(for: request).map(TaskCacheLookup.serve) ?? .unavailable
        case .returnCacheDataElseLoad:
            return cachedResponse(for: request).map(TaskCacheLookup.serve) ?? .load(nil)
        case .useProtocolCachePolicy, .reloadRevalidatingCacheData:
            return .load(cachedResponse(for: request))
        }
    }

    /// The session cache's response for `request`, when this task may use one.
    private func cachedResponse(for request: URLRequest) -> CachedURLResponse? {
        guard !(self is URLSessionUploadTask), ResumeRequest.parameters(of: request) == nil,
              let cache = context?.cache else { return nil }
        return cache.cachedResponse(for: request)
    }

    /// Delivers a cached response as the result of loading `request`, without a handler: the
    /// response and body go through the usual steps and the task completes. The metrics record one
    /// transaction fetched from the local cache.
    func serveCachedResponse(_ cached: CachedURLResponse, for request: URLRequest) {
        let proceed: Bool = lock.withLock {
            guard core.machine.servingWithoutHandler() else { return false }
            core.currentRequest = request
            core.resumedAtOffset = nil
            core.lastActivity = monotonicNanoseconds()
            core.metrics.loadStarted(request: request)
            core.metrics.updateCurrent { $0.resourceFetchType = .localCache }
            return true
        }
        guard proceed else { return }
        handleResponse(cached.response, generation: nil)
        handleData(cached.data, generation: nil)
        complete(error: nil, generation: nil)
    }

    /// The response arrived with the handler's storage policy: decide whether this task keeps a
    /// copy of the body for the cache. Call with the lock held.
    ///
    /// Only data tasks (not uploads or downloads) with a session cache cache their response, and
    /// only when the policy allows it and the cache could take it (see
    /// ``cacheableCapacityDivisor``).
    func beginCacheCopyLocked(for response: URLResponse, policy: URLCache.StoragePolicy) {
        core.cacheBody = nil
        core.cacheStoragePolicy = .notAllowed
        guard policy != .notAllowed, bodyDestination != .file, !(self is URLSessionUploadTask), let cache = context?.cache else { return }
        let memoryLimit = cache.memoryCapacity / Self.cacheableCapacityDivisor
        let diskLimit = policy == .allowed ? cache.diskCapacity / Self.cacheableCapacityDivisor : 0
        let limit = max(memoryLimit, diskLimit)
        guard limit > 0, response.expectedContentLength <= Int64(limit) else { return }
        core.cacheStoragePolicy = policy
        core.cacheBodyLimit = limit
        // A task with a completion handler keeps the whole body anyway; others keep a copy.
        if case .data = completion {} else { core.cacheBody = Data() }
    }

    /// Adds body bytes to the cache copy, giving up on caching once the body outgrows the limit.
    /// Call with the lock held.
    func appendCacheCopyLocked(_ data: Data) {
        guard core.cacheStoragePolicy != .notAllowed else { return }
        guard core.bytesReceived <= Int64(core.cacheBodyLimit) else {
            core.cacheStoragePolicy = .notAllowed
            core.cacheBody = nil
            return
        }
        core.cacheBody?.append(data)
    }

    /// The response to cache now that the task succeeded, or `nil`; forgets the copy. Call with
    /// the lock held.
    func takeResponseToCacheLocked() -> CachedURLResponse? {
        defer {
            core.cacheBody = nil
            core.cacheStoragePolicy = .notAllowed
        }
        guard core.cacheStoragePolicy != .notAllowed, let response = core.response else { return nil }
        let body: Data
        if case .data = completion { body = core.body } else if let copy = core.cacheBody { body = copy } else { return nil }
        return CachedURLResponse(response: response, data: body, userInfo: nil, storagePolicy: core.cacheStoragePolicy)
    }

    /// The step storing `proposed`, queued ahead of the completion: a task with a delegate first
    /// asks its data delegate's `willCacheResponse`, which may change the response or refuse
    /// (`nil`); the answer is stored with `storeCachedResponse(_:for:)` before the completion is
    /// delivered. `nil` when there is nothing to store it in.
    func makeCacheStoreStep(_ proposed: CachedURLResponse) -> TaskEventQueue.AwaitingStep? {
        guard let session, let dataTask = self as? URLSessionDataTask else { return nil }
        let asksDelegate = completion.usesDelegate
        return { [self] resume in
            guard let cache = context?.cache else { resume(); return }
            let store: @Sendable (CachedURLResponse?) -> Void = { answer in
                if let answer { cache.storeCachedResponse(answer, for: dataTask) }
                resume()
            }
            let asked = asksDelegate && sendToDelegate(.cacheResponse, as: (any URLSessionDataDelegate).self) {
                $0.urlSession(session, dataTask: dataTask, willCacheResponse: proposed, completionHandler: store)
            }
            if !asked { store(proposed) }
        }
    }
}
