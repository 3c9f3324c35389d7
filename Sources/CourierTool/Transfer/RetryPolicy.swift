import Foundation
import Courier

/// `--retry N`: which failures are tried again, how often, and how long to wait in between.
///
/// Transient, as curl counts them: a timeout, a host name that did not resolve, a lost or refused
/// connection (curl needs `--retry-connrefused` for that one), and the HTTP statuses 408, 429, 500,
/// 502, 503 and 504. Without `--retry-delay` the waits back off as curl's do: 1 s, then doubling,
/// at most 10 minutes; a `Retry-After` of some seconds from the server wins.
struct RetryPolicy: Sendable, Equatable {
    /// How many more tries a transient failure gets.
    var attempts = 0
    /// `--retry-delay`: the same wait before every retry instead of backing off.
    var fixedDelay: TimeInterval?
    /// `--retry-max-time`: no retry starts once this long has passed since the first try.
    var maxTime: TimeInterval?

    /// The longest wait between two tries.
    static let longestDelay: TimeInterval = 600

    /// The HTTP statuses that ask for another try.
    static let transientStatuses: Set<Int> = [408, 429, 500, 502, 503, 504]

    /// Whether a load that failed with `code` may succeed when tried again.
    static func isTransient(_ code: URLError.Code) -> Bool {
        switch code {
        case .timedOut, .cannotFindHost, .dnsLookupFailed, .cannotConnectToHost, .networkConnectionLost:
            true
        default:
            false
        }
    }

    /// The wait before retry number `retry` (1 for the first), given the server's `Retry-After`.
    func delay(beforeRetry retry: Int, retryAfter: TimeInterval?) -> TimeInterval {
        if let fixedDelay { return fixedDelay }
        if let retryAfter { return min(max(retryAfter, 0), Self.longestDelay) }
        return min(pow(2, Double(max(retry, 1) - 1)), Self.longestDelay)
    }

    /// A `Retry-After` value in seconds (the HTTP-date form is not used).
    static func retryAfter(of response: URLResponse?) -> TimeInterval? {
        guard let http = response as? HTTPURLResponse,
              let text = http.value(forHTTPHeaderField: "Retry-After")?.trimmingCharacters(in: .whitespaces),
              let seconds = Int(text), seconds >= 0 else { return nil }
        return TimeInterval(seconds)
    }
}
