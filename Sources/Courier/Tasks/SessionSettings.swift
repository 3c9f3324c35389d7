import Foundation
import Logging

/// The parts of a session's configuration every task reads, captured once when the session is
/// created (a configuration is copied at creation, so they cannot change afterwards; the session
/// layer reads them from its `URLSessionConfiguration`, `SessionSettings+Configuration.swift`). Tasks get
/// them in their ``TaskSessionContext``; the request a handler sees, its timeouts and its
/// ``HandlerConfiguration`` are computed from them here, without asking the session.
struct SessionSettings: Sendable {
    let timeoutIntervalForRequest: TimeInterval
    let timeoutIntervalForResource: TimeInterval
    let requestCachePolicy: URLRequest.CachePolicy
    /// `httpAdditionalHeaders` as name/value strings.
    let additionalHeaders: [(name: String, value: String)]

    /// The request a handler sees: the configuration's additional headers where the request has
    /// none of that name (one whose value holds a NUL or line break is dropped, as
    /// `setValue(_:forHTTPHeaderField:)` drops it), the configuration's cache policy where the
    /// request uses the default, and an upload task's body.
    ///
    /// - Parameters:
    ///   - originalURL: the task's original URL. On a redirected request to another origin the
    ///     configuration's `Authorization`, `Cookie` and `Proxy-Authorization`
    ///     (``URLOrigin/originBoundFields``) are not added: the redirect dropped the request's own,
    ///     and the session's must not reach that origin either.
    ///   - redirected: the request follows a redirect. An upload's body then goes on only when the
    ///     redirected request still carries one (307, 308); after a redirect that turned the
    ///     method into GET (301, 302, 303) it has none and gets none.
    func prepare(_ request: URLRequest, uploadBody: UploadBody, originalURL: URL?, redirected: Bool) -> URLRequest {
        var prepared = request
        let crossOrigin = redirected && !URLOrigin.same(request.url, originalURL)
        for header in additionalHeaders where prepared.value(forHTTPHeaderField: header.name) == nil {
            if crossOrigin, URLOrigin.originBoundFields.contains(where: { $0.caseInsensitiveCompare(header.name) == .orderedSame }) {
                continue
            }
            prepared.setValue(header.value, forHTTPHeaderField: header.name)
        }
        if prepared.cachePolicy == .useProtocolCachePolicy {
            prepared.cachePolicy = requestCachePolicy
        }
        if redirected, prepared.httpBody == nil, prepared.httpBodyStream == nil { return prepared }
        switch uploadBody {
        case .none, .stream:
            break
        case .data(let data):
            prepared.httpBody = data
        case .file(let url):
            if let stream = InputStream(url: url) {
                prepared.httpBodyStream = stream
                UploadFileRequest.mark(&prepared, file: url)
            }
            if prepared.value(forHTTPHeaderField: "Content-Length") == nil, let length = uploadBody.knownLength {
                prepared.setValue(String(length), forHTTPHeaderField: "Content-Length")
            }
        }
        return prepared
    }

    /// The idle timeout of `request`: its own `timeoutInterval` when that is not the default 60 s,
    /// else the configuration's `timeoutIntervalForRequest` (0 or less: none).
    func requestTimeout(for request: URLRequest) -> TimeInterval {
        request.timeoutInterval != 60 ? request.timeoutInterval : timeoutIntervalForRequest
    }

    /// The idle and whole-task timeouts for `request`, in nanoseconds (0: none), as the task's
    /// timeout check counts them.
    func timeouts(for request: URLRequest) -> (request: UInt64, resource: UInt64) {
        (Self.nanoseconds(requestTimeout(for: request)), Self.nanoseconds(timeoutIntervalForResource))
    }

    /// The configuration a handler instance for `request` is made with: the session's
    /// `environment`, the request's effective cache policy and timeouts, and when the cached
    /// response the task looked up for it was stored (`cachedResponseStoredAt`). Its logger is the
    /// session's, with `task` (the task's identifier) in its metadata when it logs at `debug` or
    /// below (at `info` nothing is added, so a load pays nothing for logging).
    func handlerConfiguration(for request: URLRequest, environment: HandlerEnvironment,
                              cachedResponseStoredAt: Date?, task: Int? = nil) -> HandlerConfiguration {
        var configuration = HandlerConfiguration(
            environment: environment,
            cachePolicy: request.cachePolicy == .useProtocolCachePolicy ? requestCachePolicy : request.cachePolicy,
            requestTimeout: requestTimeout(for: request),
            resourceTimeout: timeoutIntervalForResource,
            cachedResponseStoredAt: cachedResponseStoredAt)
        configuration.logger = environment.logger
        if let task, CourierLogging.emits(.debug, environment.logger) {
            configuration.logger[metadataKey: CourierLogKey.task] = "\(task)"
        }
        return configuration
    }

    private static func nanoseconds(_ interval: TimeInterval) -> UInt64 {
        guard interval > 0, interval.isFinite else { return 0 }
        return UInt64(min(interval, 1e9) * 1e9)
    }
}
