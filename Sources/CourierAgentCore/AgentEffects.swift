import Courier
import Foundation

/// What the agent does after releasing its lock: every call into Courier's `URLSession` (making,
/// resuming, cancelling and suspending transfers) and every file removal is decided under the lock
/// and carried out here, so the agent never calls out while holding it.
struct AgentEffects: Sendable {
    /// Transfers to make and resume.
    var starts: [AgentStartOrder] = []
    /// Transfers to cancel (their partial files go with them).
    var cancels: [URLSessionTask] = []
    /// Downloads to stop keeping their resume data (a suspension).
    var suspends: [(task: URLSessionTask, key: AgentTaskKey)] = []
    /// Files to remove (partial downloads of ended tasks, upload bodies).
    var removals: [String] = []
    /// Running downloads ended keeping what they have (past their resource timeout, or
    /// `cancel(byProducingResumeData:)`): stopped producing their resume data, which the task's
    /// completion with `error` then carries.
    var endings: [(task: URLSessionDownloadTask, key: AgentTaskKey, error: AgentErrorRecord)] = []
    /// Answers to pass to waiting transfers (`nil`: the default).
    var answers: [(reply: AgentQuestionReply, answer: AgentAnswer?)] = []

    /// Whether there is nothing to do.
    var isEmpty: Bool { starts.isEmpty && cancels.isEmpty && suspends.isEmpty && removals.isEmpty && answers.isEmpty && endings.isEmpty }

    /// Adds `other`'s work after this one's.
    mutating func merge(_ other: AgentEffects) {
        starts += other.starts
        cancels += other.cancels
        suspends += other.suspends
        removals += other.removals
        answers += other.answers
        endings += other.endings
    }
}

/// A transfer the scheduler started under the lock (the task is `running` with `generation`), to
/// be made and resumed after it is released.
struct AgentStartOrder: Sendable {
    let key: AgentTaskKey
    let generation: Int
    let kind: AgentTaskKind
    /// The request, with the credentials the agent still holds; `nil` when it cannot be made again.
    let request: URLRequest?
    /// The checkpoint or the app's resume data a download continues from.
    let resumeData: Data?
    /// An upload's body, in the agent's `uploads/`.
    let uploadFile: String?
    /// The settings of the task's identifier (for its transfer session).
    let settings: AgentSessionSettings
    /// Whether the connected app is asked `willBeginDelayedRequest` before the transfer is resumed
    /// (the first start of a task with an `earliestBeginDate`).
    var asksBeforeStart = false
}
