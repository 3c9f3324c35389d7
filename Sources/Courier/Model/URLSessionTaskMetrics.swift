import Foundation

/// Timing and transfer statistics for a whole task: its lifetime, its redirects, and one
/// `URLSessionTaskTransactionMetrics` per request/response exchange.
///
/// The task engine fills the values in while the task runs and hands the object to
/// `urlSession(_:task:didFinishCollecting:)`; clients only read it.
open class URLSessionTaskMetrics: NSObject, @unchecked Sendable {

    /// Everything the task engine records; guarded by `state`.
    struct Values: Sendable {
        var transactionMetrics: [URLSessionTaskTransactionMetrics] = []
        var taskInterval: DateInterval
        var redirectCount: Int = 0
    }

    private let state: Locked<Values>

    /// Creates metrics with the given values (used by the task engine).
    ///
    /// - Parameters:
    ///   - transactionMetrics: One entry per request/response exchange, in order.
    ///   - taskInterval: From the task's creation (or resumption) to its completion; starts
    ///     empty at the current time by default.
    ///   - redirectCount: How many redirects were followed.
    init(transactionMetrics: [URLSessionTaskTransactionMetrics] = [],
         taskInterval: DateInterval = DateInterval(start: Date(), duration: 0),
         redirectCount: Int = 0) {
        state = Locked(Values(transactionMetrics: transactionMetrics, taskInterval: taskInterval, redirectCount: redirectCount))
        super.init()
    }

    /// The metrics of each request/response exchange of the task, oldest first (redirects and
    /// authentication retries each add one).
    public internal(set) var transactionMetrics: [URLSessionTaskTransactionMetrics] {
        get { state.withLock { $0.transactionMetrics } }
        set { state.withLock { $0.transactionMetrics = newValue } }
    }

    /// The time from the task's start to its completion.
    public internal(set) var taskInterval: DateInterval {
        get { state.withLock { $0.taskInterval } }
        set { state.withLock { $0.taskInterval = newValue } }
    }

    /// How many redirects the task followed.
    public internal(set) var redirectCount: Int {
        get { state.withLock { $0.redirectCount } }
        set { state.withLock { $0.redirectCount = newValue } }
    }

    /// Applies several changes at once, under one lock (used by the task engine).
    func update(_ body: (inout Values) -> Void) {
        state.withLock { body(&$0) }
    }

    /// How a resource was obtained.
    public enum ResourceFetchType: Int, Sendable {

        /// Not known (for example, the load never started).
        case unknown

        /// Loaded over the network.
        case networkLoad

        /// Pushed by the server (HTTP/2 server push); Courier never reports it.
        @available(swift, deprecated: 6.1, message: "Server push is not supported")
        case serverPush

        /// Served from a `URLCache`.
        case localCache
    }

    /// The protocol used to resolve the host name.
    public enum DomainResolutionProtocol: Int, Sendable {

        /// Not known, or no resolution happened.
        case unknown

        /// Plain DNS over UDP.
        case udp

        /// Plain DNS over TCP.
        case tcp

        /// DNS over TLS.
        case tls

        /// DNS over HTTPS.
        case https
    }
}
