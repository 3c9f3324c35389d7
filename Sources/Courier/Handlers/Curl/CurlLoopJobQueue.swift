import Foundation

/// One Swift job waiting to run on a ``CurlMultiLoop``'s thread (``URLSessionLoopTaskExecutor``):
/// the job and the task executor it runs as.
struct CurlLoopJob: Sendable {
    /// The job the executor was given (a task's next slice, up to its next suspension).
    let job: UnownedJob
    /// The executor the job runs as, so that what it awaits comes back to the same executor.
    let executor: UnownedTaskExecutor

    /// Runs the job to its next suspension on the calling thread.
    func run() {
        job.runSynchronously(on: executor)
    }
}

/// The jobs queued for a ``CurlMultiLoop``'s thread, first in first out: appending and taking are
/// amortised O(1) (an array read from a moving head, compacted as the head moves on), and an
/// empty queue keeps its storage for the next burst. Once the loop stops, ``close()`` sends what
/// is left to the fallback queue the executor gave, and the queue refuses jobs from then on. A value
/// guarded by the loop's state lock.
struct CurlLoopJobQueue {
    private var jobs: [CurlLoopJob] = []
    /// The index of the first job not yet taken.
    private var head = 0
    /// Set by ``close()``: jobs are refused (their executor runs them elsewhere).
    private var closed = false
    /// Where the jobs still queued at ``close()`` run (the executor's serial queue).
    private var fallback: DispatchQueue?

    /// Whether no job waits.
    var isEmpty: Bool { head == jobs.count }

    /// Queues `job` after every job queued before; `false` (nothing queued) once closed.
    /// `fallback`: where the job runs if the queue is closed before the loop took it.
    mutating func append(_ job: CurlLoopJob, fallback: DispatchQueue) -> Bool {
        guard !closed else { return false }
        jobs.append(job)
        if self.fallback == nil { self.fallback = fallback }
        return true
    }

    /// Takes the oldest job, if any.
    mutating func popFirst() -> CurlLoopJob? {
        guard head < jobs.count else { return nil }
        let job = jobs[head]
        head += 1
        if head == jobs.count {
            jobs.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 256, head * 2 >= jobs.count {
            // A queue that never empties (jobs keep queueing jobs): drop the taken prefix now and then.
            jobs.removeFirst(head)
            head = 0
        }
        return job
    }

    /// Refuses jobs from now on and hands those still waiting, in order, to the fallback queue.
    /// Called under the loop's state lock, so that they run before any job refused later (which
    /// its executor sends to the same queue).
    mutating func close() {
        closed = true
        let stranded = Array(jobs[head...])
        jobs = []
        head = 0
        guard !stranded.isEmpty, let fallback else { return }
        fallback.async { for job in stranded { job.run() } }
    }
}
