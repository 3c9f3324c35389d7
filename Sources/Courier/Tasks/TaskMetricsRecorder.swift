import Foundation

/// Collects a task's timings as it runs — one transaction per load (the first request, each
/// redirect) — and builds the `URLSessionTaskMetrics` delivered before completion.
///
/// Handlers with finer timings (connection, TLS) will add them to the current transaction; the
/// local handlers only have fetch, response and end dates.
struct TaskMetricsRecorder {
    private var taskStart: Date?
    private var transactions: [(URLRequest, URLSessionTaskTransactionMetrics.Values)] = []

    /// The task was resumed for the first time.
    mutating func taskStarted() { taskStart = Date() }

    /// A handler starts loading `request`.
    mutating func loadStarted(request: URLRequest) {
        var values = URLSessionTaskTransactionMetrics.Values()
        let now = Date()
        values.fetchStartDate = now
        values.requestStartDate = now
        values.resourceFetchType = .networkLoad
        values.networkProtocolName = request.url?.scheme?.lowercased()
        transactions.append((request, values))
    }

    /// The current load's response arrived.
    mutating func responseReceived(_ response: URLResponse) {
        guard !transactions.isEmpty else { return }
        let now = Date()
        transactions[transactions.count - 1].1.response = response
        transactions[transactions.count - 1].1.requestEndDate = now
        transactions[transactions.count - 1].1.responseStartDate = now
    }

    /// The current load ended with `response` (a redirect ends a load too).
    mutating func loadFinished(response: URLResponse?) {
        guard !transactions.isEmpty else { return }
        if let response { transactions[transactions.count - 1].1.response = response }
        transactions[transactions.count - 1].1.responseEndDate = Date()
    }

    /// Lets a handler add what it measured to the current transaction.
    mutating func updateCurrent(_ update: (inout URLSessionTaskTransactionMetrics.Values) -> Void) {
        guard !transactions.isEmpty else { return }
        update(&transactions[transactions.count - 1].1)
    }

    /// The metrics for the whole task, as it completes now.
    mutating func finish(redirectCount: Int) -> URLSessionTaskMetrics {
        if let last = transactions.last, last.1.responseEndDate == nil { loadFinished(response: nil) }
        let end = Date()
        let start = taskStart ?? end
        let records = transactions.map { URLSessionTaskTransactionMetrics(request: $0.0, values: $0.1) }
        return URLSessionTaskMetrics(transactionMetrics: records,
                                     taskInterval: DateInterval(start: start, end: max(start, end)),
                                     redirectCount: redirectCount)
    }
}
