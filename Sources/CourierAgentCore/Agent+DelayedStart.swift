import Courier
import Foundation

// `willBeginDelayedRequest`: when a task with an `earliestBeginDate` becomes due, the app connected
// with its identifier decides whether it starts as it is, with another request, or not at all.
// Its transfer is made (and registered) but not resumed until the answer comes; with no app
// connected, or no answer within ``AgentOptions/questionTimeout``, it starts as it is — what Apple does
// when the delegate does not implement the method.
extension Agent {
    /// Asks the connected app about `transfer`, the first transfer of a delayed task; `false` when
    /// no app is connected (the caller resumes it at once).
    func askBeforeStart(_ transfer: URLSessionTask, _ order: AgentStartOrder) -> Bool {
        guard let request = order.request, let (record, _) = AgentRequestRecord.make(from: request) else { return false }
        return ask(transfer, .delayedRequest(record), .delayedRequest(handler: { [self] answer in
            let (resume, effects) = beginDelayed(transfer, order, answer)
            if let resume { resume.resume() }
            perform(effects)
        }))
    }

    /// The app's `answer` (`nil`: the default) for the delayed task of `order`, whose transfer is
    /// `transfer`: the transfer to resume (`.continueLoading`), or the effects of a new request
    /// (the old transfer is cancelled unresumed and a new one started in the same generation) or of
    /// `.cancel` (the task ends `cancelled`). Nothing when the task was stopped meanwhile.
    func beginDelayed(_ transfer: URLSessionTask, _ order: AgentStartOrder, _ answer: AgentAnswer?) -> (URLSessionTask?, AgentEffects) {
        state.withLock { state in
            guard let current = state.transfers[ObjectIdentifier(transfer)], current.key == order.key,
                  current.generation == order.generation else { return (nil, AgentEffects()) }
            var effects = AgentEffects()
            switch answer {
            case .cancelDelayedRequest?:
                let error = AgentErrorRecord(code: .cancelled, message: "The delegate cancelled the delayed request.",
                                             url: state.tasks[order.key]?.row.request.url)
                effects.merge((try? endLocked(&state, order.key, error)) ?? AgentEffects())
            case .useNewRequest(let record, let secrets)?:
                state.transfers[ObjectIdentifier(transfer)] = nil
                effects.cancels.append(transfer)
                guard var entry = state.tasks[order.key] else { return (nil, effects) }
                entry.transfer = nil
                // Checked as `enqueue` checks a task's request.
                guard let url = URL(string: record.url), url.scheme != nil, let request = record.urlRequest(secrets: secrets) else {
                    _ = entry.lifecycle.transferEnded(generation: order.generation, transient: false)
                    state.tasks[order.key] = entry
                    let error = AgentErrorRecord(code: .badURL, message: "The delegate's new request has no usable URL (\(record.url)).",
                                                 url: entry.row.request.url)
                    try? completeLocked(&state, order.key, AgentCompletion(file: nil, error: error, response: nil,
                                                                           counts: entry.row.counts, body: nil))
                    effects.merge(scheduleLocked(&state))
                    return (nil, effects)
                }
                entry.row.request = record
                entry.secrets = secrets
                state.tasks[order.key] = entry
                effects.starts.append(AgentStartOrder(key: order.key, generation: order.generation, kind: order.kind, request: request,
                                                      resumeData: nil, uploadFile: order.uploadFile, settings: order.settings))
            case .continueLoading?, .redirect?, .useCredential?, .trustServer?, .withoutCredential?, .defaultHandling?, .cancel?,
                 .rejectProtectionSpace?, .useClientCertificate?, .response?, nil:
                return (transfer, effects)
            }
            effects.merge(scheduleLocked(&state))
            return (nil, effects)
        }
    }
}
