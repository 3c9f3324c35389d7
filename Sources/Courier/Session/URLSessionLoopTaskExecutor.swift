import Foundation

/// A Swift `TaskExecutor` that runs tasks on the thread that does a session's network I/O (the
/// session's `courier.curl` loop thread, which serves its http(s) and ftp transfers, WebSocket
/// connections and stream tasks). Courier's addition: Apple's API has no such executor.
///
/// Get it from ``URLSession/loopTaskExecutor`` and prefer it for the code that talks to the
/// session's connections:
///
/// ```swift
/// let task = session.webSocketTask(with: url)
/// task.resume()
/// try await withTaskExecutorPreference(session.loopTaskExecutor) {
///     while true {
///         let message = try await task.receive()
///         try await task.send(message)
///     }
/// }
/// ```
///
/// A task that awaits `receive()` there is resumed by the loop thread right after the I/O pass
/// that read the message, and runs on that thread: no other thread is woken for it, as a
/// swift-nio callback runs on the event loop that read the frame. Without the preference, an
/// `await` resumes on the global concurrent executor, and each message costs a thread wake-up.
///
/// - Jobs queued from other threads wake the loop; jobs queued on the loop thread itself wake
///   nothing. They run first in, first out, between the loop's I/O passes, at most 64 at a time,
///   so that transfers keep moving while tasks run. A session with no loop thread yet (or whose
///   thread ended after its transfers) gets one.
/// - **Never block on it.** Work that waits (a semaphore, a synchronous read, a long computation)
///   stalls every transfer and connection of the session while it runs, as blocking a swift-nio
///   event loop does; an `await` is fine (the task leaves the thread until it resumes). Move such
///   work to another executor (`withTaskExecutorPreference(nil)` or a detached task).
/// - Once the session is invalidated and its loop stopped, jobs still queued and every later job
///   run on a serial fallback queue of this executor, in order: no job is lost or left waiting.
/// - Actor-isolated code runs on its actor as usual: a task executor preference applies to
///   `nonisolated` code (see `withTaskExecutorPreference`).
public final class URLSessionLoopTaskExecutor: TaskExecutor, HandlerSessionResource {
    /// The key under which a session keeps its executor.
    static let resourceKey = "curl.multi.executor"

    /// The session's loop; `nil` when none could be made (the session was invalidated first, or
    /// libcurl could not make a multi handle): every job then runs on `fallback`.
    let loop: CurlMultiLoop?
    /// Where jobs run once the loop has stopped, in order.
    private let fallback = DispatchQueue(label: "courier.loop-executor.fallback")

    /// An executor for `loop`'s thread.
    init(loop: CurlMultiLoop?) {
        self.loop = loop
    }

    /// Queues `job` on the session's loop thread (or, once the loop has stopped, on the fallback
    /// queue); it runs as a job of this executor.
    public func enqueue(_ job: consuming ExecutorJob) {
        let queued = CurlLoopJob(job: UnownedJob(job), executor: asUnownedTaskExecutor())
        if let loop, loop.enqueueJob(queued, fallback: fallback) { return }
        fallback.async { queued.run() }
    }

    /// Nothing to release: the loop is the session's own resource, and a job that comes after
    /// the loop stopped runs on the fallback queue.
    func shutDown() {}
}

extension URLSession {
    /// A task executor that runs Swift tasks on this session's I/O loop thread, so that an
    /// `await` on one of its WebSocket or stream tasks resumes on the thread that read the data,
    /// with no thread wake-up. Courier's addition; see ``URLSessionLoopTaskExecutor`` (and its
    /// warning: blocking work on it stalls every transfer of the session). The same executor
    /// every time for a session (a new one, running every job on its fallback queue, once the
    /// session was invalidated).
    public var loopTaskExecutor: URLSessionLoopTaskExecutor {
        // The loop first: `resource(_:make:)` holds the resources' lock while it makes one.
        let loop = CurlMultiLoop.shared(in: environment)
        return environment.resources.resource(URLSessionLoopTaskExecutor.resourceKey) {
            URLSessionLoopTaskExecutor(loop: loop)
        } ?? URLSessionLoopTaskExecutor(loop: nil)
    }
}
