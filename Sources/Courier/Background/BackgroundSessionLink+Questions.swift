import Foundation

// Answering the agent's questions: a connected app's delegate decides redirects and challenges of
// the agent's transfers, as it would for its own tasks. Each question is answered exactly once
// (the delegate's handler may be called later, on any thread); a delegate that does not implement
// the method gets the default (follow the redirect, default handling).
extension BackgroundSessionLink {
    /// Asks the delegate about `question` for `task` (on the delegate queue).
    func answer(_ question: AgentQuestion, id: Int64, task: URLSessionTask, _ session: URLSession) {
        let once = OnceFlag()
        let reply: @Sendable (AgentAnswer) -> Void = { [weak self] answer in
            guard once.claim() else { return }
            self?.state.withLock { $0.client }?.post(.answer(question: id, answer))
        }
        switch question {
        case .redirect(let responseRecord, let requestRecord):
            guard let response = responseRecord.urlResponse() as? HTTPURLResponse, let proposed = requestRecord.urlRequest() else {
                reply(.redirect(requestRecord, nil))
                return
            }
            let asked = task.sendToDelegate(.redirect, as: (any URLSessionTaskDelegate).self) {
                $0.urlSession(session, task: task, willPerformHTTPRedirection: response, newRequest: proposed) { request in
                    guard let request else { return reply(.redirect(nil, nil)) }
                    if request == proposed { return reply(.redirect(requestRecord, nil)) }
                    let made = AgentRequestRecord.make(from: request)
                    reply(.redirect(made?.0, made?.1))
                }
            }
            if !asked { reply(.redirect(requestRecord, nil)) }
        case .challenge(let record):
            let sender = HandlerChallengeSender { answer in
                switch answer {
                case .use(let credential): reply(AgentAnswer(.useCredential, credential))
                case .withoutCredential: reply(.withoutCredential)
                case .cancel: reply(.cancel)
                case .defaultHandling: reply(.defaultHandling)
                case .rejectProtectionSpace: reply(.rejectProtectionSpace)
                }
            }
            let challenge = URLAuthenticationChallenge(protectionSpace: record.protectionSpace, proposedCredential: nil,
                                                       previousFailureCount: record.previousFailureCount, failureResponse: nil,
                                                       error: nil, sender: sender)
            let asked = task.sendToDelegate(.challenge, as: (any URLSessionTaskDelegate).self) {
                $0.urlSession(session, task: task, didReceive: challenge) { disposition, credential in
                    reply(AgentAnswer(disposition, credential))
                }
            }
            if !asked { reply(.defaultHandling) }
        }
    }
}
