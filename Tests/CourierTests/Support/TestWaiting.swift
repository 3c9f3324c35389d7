import Foundation
@testable import Courier

/// A value behind a lock, for state shared between a test and the callbacks it observes.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    /// Reads or changes the value while holding the lock.
    @discardableResult
    func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    /// A copy of the value.
    var current: Value { withLock { $0 } }
}

/// A weak reference that can be shared with `@Sendable` closures.
final class WeakRef<Object: AnyObject>: @unchecked Sendable {
    private let lock = NSLock()
    private weak var stored: Object?

    init(_ object: Object? = nil) { stored = object }

    var value: Object? {
        get { lock.lock(); defer { lock.unlock() }; return stored }
        set { lock.lock(); defer { lock.unlock() }; stored = newValue }
    }
}

/// How much longer waits may last: `COURIER_TEST_TIME_SCALE` (`scripts/test --sanitize address`
/// sets 4, as AddressSanitizer slows the process down), else 1.
let testTimeScale: Double = ProcessInfo.processInfo.environment["COURIER_TEST_TIME_SCALE"]
    .flatMap(Double.init).map { max($0, 1) } ?? 1

/// Whether this run is instrumented by a sanitizer (the test runner and the `courier` and
/// `courier-agent` executables built beside it): `scripts/test --sanitize` is what sets
/// `COURIER_TEST_TIME_SCALE` above 1. A bound other than time (memory) that a sanitizer changes
/// scales by a factor of its own when this holds, stated and justified where it is used.
let testRunIsInstrumented = testTimeScale > 1

/// The longest any single wait in these tests lasts.
let testWaitLimit: TimeInterval = 10 * testTimeScale

/// Polls `condition` every few milliseconds until it holds or `timeout` passes; returns whether it
/// held. Never hangs.
@discardableResult
func waitUntil(timeout: TimeInterval = testWaitLimit, _ condition: @Sendable () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while !condition() {
        if Date() >= deadline { return false }
        try? await Task.sleep(nanoseconds: 5_000_000)
    }
    return true
}

/// Lets other work run for `seconds`, to check that something does NOT happen in that time.
func settle(_ seconds: TimeInterval = 0.3) async {
    try? await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
}

/// Thrown when a bounded wait runs out.
struct TestTimeout: Error, CustomStringConvertible {
    var what: String
    var description: String { "timed out waiting for \(what)" }
}

/// Runs `operation`, failing with ``TestTimeout`` if it takes longer than `seconds`. When the time
/// runs out the operation is cancelled and abandoned: this returns even if the operation ignores
/// cancellation (a hung load), so a test can never hang here.
func withTimeout<T: Sendable>(_ seconds: TimeInterval = testWaitLimit, _ what: String = "an operation",
                              _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
    let outcome = Locked<Result<T, any Error>?>(nil)
    let work = Task {
        let result: Result<T, any Error>
        do { result = .success(try await operation()) } catch { result = .failure(error) }
        outcome.withLock { if $0 == nil { $0 = result } }
    }
    let finished = await waitUntil(timeout: seconds) { outcome.current != nil }
    if !finished {
        work.cancel()
        outcome.withLock { if $0 == nil { $0 = .failure(TestTimeout(what: what)) } }
    }
    guard let result = outcome.current else { throw TestTimeout(what: what) }
    return try result.get()
}

/// A value delivered once by a callback (a completion handler), awaited with a bound.
final class OneShot<Value: Sendable>: @unchecked Sendable {
    private let state = Locked<(value: Value?, count: Int)>((nil, 0))

    /// Stores the value (the first one wins) and counts the calls.
    func fulfil(_ value: Value) {
        state.withLock {
            if $0.value == nil { $0.value = value }
            $0.count += 1
        }
    }

    /// How many times ``fulfil(_:)`` was called.
    var callCount: Int { state.current.count }

    /// The value, if delivered.
    var value: Value? { state.current.value }

    /// Waits (bounded) for the value; throws ``TestTimeout`` when it never comes.
    func wait(timeout: TimeInterval = testWaitLimit, _ what: String = "a completion") async throws -> Value {
        await waitUntil(timeout: timeout) { self.state.current.value != nil }
        guard let value = state.current.value else { throw TestTimeout(what: what) }
        return value
    }
}

/// What a data-style completion handler received.
struct DataResult: @unchecked Sendable {
    var data: Data?
    var response: URLResponse?
    var error: (any Error)?
    /// The queue the handler ran on.
    var queue: OperationQueue?

    var urlError: URLError? { error as? URLError }
}

/// What a download completion handler received, plus the file's content read inside the handler.
struct DownloadResult: @unchecked Sendable {
    var location: URL?
    var response: URLResponse?
    var error: (any Error)?
    var contentDuringHandler: Data?

    var urlError: URLError? { error as? URLError }
}

extension URLSession {
    /// Runs a data task with a completion handler and waits (bounded) for its result.
    func loadData(_ request: URLRequest, timeout: TimeInterval = testWaitLimit) async throws -> DataResult {
        let shot = OneShot<DataResult>()
        let task = dataTask(with: request) { data, response, error in
            shot.fulfil(DataResult(data: data, response: response, error: error, queue: OperationQueue.current))
        }
        task.resume()
        return try await shot.wait(timeout: timeout, "the data task for \(request.url?.absoluteString ?? "?")")
    }

    /// Runs a data task for `url` with a completion handler and waits (bounded) for its result.
    func loadData(_ url: URL, timeout: TimeInterval = testWaitLimit) async throws -> DataResult {
        try await loadData(URLRequest(url: url), timeout: timeout)
    }
}

/// Holds a serial operation queue (a session's delegate queue): nothing queued behind the hold runs
/// until ``release()``, so a test can look at a state that a delegate message would end, such as a
/// task's `.canceling` before its completion is delivered. The hold ends by itself after
/// ``testWaitLimit``.
final class QueueHold: Sendable {
    private let gate = DispatchSemaphore(value: 0)

    /// Returns once the hold runs on `queue`: whatever was queued before it has run.
    init(_ queue: OperationQueue) async throws {
        let entered = Locked(false)
        queue.addOperation { [gate] in
            entered.withLock { $0 = true }
            _ = gate.wait(timeout: .now() + testWaitLimit)
        }
        guard await waitUntil({ entered.current }) else { throw TestTimeout(what: "the queue to be held") }
    }

    /// Lets the queue go on.
    func release() { gate.signal() }
}
