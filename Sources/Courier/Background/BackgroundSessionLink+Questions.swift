import Foundation
import Logging

// Answering the agent's questions: a connected app's delegate decides redirects, challenges, upload
// responses and delayed starts of the agent's transfers, as it would for its own tasks. Each
// question is answered exactly once (the delegate's handler may be called later, on any thread); a
// delegate that does not implement the method gets the protocol's default (follow the redirect,
// default handling, `.allow`, `.continueLoading`), as for any task.
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
        case .response(let record):
            guard let response = record.urlResponse(), let dataTask = task as? URLSessionDataTask else {
                return reply(.response(allow: true))
            }
            Self.link(of: task)?.update { $0.response = response }
            let asked = task.sendToDelegate(.response, as: (any URLSessionDataDelegate).self) {
                $0.urlSession(session, dataTask: dataTask, didReceive: response) { disposition in
                    reply(.response(allow: Self.allowsResponse(disposition, task, session)))
                }
            }
            if !asked { reply(.response(allow: true)) }
        case .delayedRequest(let record):
            guard let request = record.urlRequest() else { return reply(.continueLoading) }
            let asked = task.sendToDelegate(.delayedRequest, as: (any URLSessionTaskDelegate).self) {
                $0.urlSession(session, task: task, willBeginDelayedRequest: request) { disposition, newRequest in
                    switch disposition {
                    case .continueLoading:
                        reply(.continueLoading)
                    case .useNewRequest:
                        // The agent checks the request as it checks any task's (a URL with a scheme).
                        guard let newRequest, let (made, secrets) = AgentRequestRecord.make(from: newRequest) else {
                            return reply(.continueLoading)
                        }
                        reply(.useNewRequest(made, secrets))
                    case .cancel:
                        reply(.cancelDelayedRequest)
                    }
                }
            }
            if !asked { reply(.continueLoading) }
        }
    }

    /// Whether a response disposition lets an agent's upload go on. `.becomeDownload` and
    /// `.becomeStream` cannot be honoured for a background upload (Apple supports neither in
    /// background sessions): the task is cancelled, and the log says why.
    private static func allowsResponse(_ disposition: URLSession.ResponseDisposition, _ task: URLSessionTask,
                                       _ session: URLSession) -> Bool {
        switch disposition {
        case .allow:
            return true
        case .cancel:
            return false
        case .becomeDownload, .becomeStream:
            session.configuration.logger.warning(
                "A background upload task cannot become a download or a stream task: the task is cancelled.",
                metadata: [CourierLogKey.task: "\(task.taskIdentifier)"])
            return false
        }
    }
}
