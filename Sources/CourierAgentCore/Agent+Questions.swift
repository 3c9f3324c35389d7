import Courier
import Foundation

/// A question to the app (``AgentQuestion``) waiting for its answer.
struct AgentPendingQuestion: Sendable {
    /// The identifier whose app was asked, and its connection.
    let session: String
    let client: ObjectIdentifier
    /// When the agent stops waiting and decides alone.
    let deadline: Date
    /// How the waiting transfer takes the answer.
    let reply: AgentQuestionReply
}

/// The completion handler of a transfer's delegate method that waits for the app's answer.
enum AgentQuestionReply: Sendable {
    /// `willPerformHTTPRedirection`: the request Courier proposed, as sent to the app.
    case redirect(proposed: URLRequest, sent: AgentRequestRecord, handler: @Sendable (URLRequest?) -> Void)
    /// `didReceive challenge`: a server-trust challenge's trust object, to accept it with.
    case challenge(trust: SecTrust?, handler: @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void)
    /// `urlSession(_:dataTask:didReceive:completionHandler:)` of an upload.
    case response(handler: @Sendable (URLSession.ResponseDisposition) -> Void)
    /// `willBeginDelayedRequest`: how the agent goes on with a delayed task (``Agent/beginDelayed(_:_:_:)``).
    case delayedRequest(handler: @Sendable (AgentAnswer?) -> Void)

    /// Calls the handler with the app's `answer`, or with the default when there is none (no app
    /// connected, it went away, or it did not answer in time): follow the redirect, default
    /// handling (the credential storage's credentials, the system's trust), take the response,
    /// start the delayed request.
    func deliver(_ answer: AgentAnswer?) {
        switch self {
        case .redirect(let proposed, let sent, let handler):
            guard case .redirect(let answered, let secrets)? = answer else { return handler(proposed) }
            guard let answered else { return handler(nil) }
            handler(answered == sent && secrets == nil ? proposed : answered.urlRequest(secrets: secrets) ?? proposed)
        case .challenge(let trust, let handler):
            switch answer {
            case .useCredential(let user, let password, let persistence)?:
                handler(.useCredential, URLCredential(user: user, password: password,
                                                      persistence: URLCredential.Persistence(rawValue: persistence) ?? .forSession))
            case .trustServer?:
                if let trust { handler(.useCredential, URLCredential(trust: trust)) } else { handler(.performDefaultHandling, nil) }
            case .useClientCertificate(let certificate, let privateKey, let passphrase, let persistence)?:
                handler(.useCredential, URLCredential(clientCertificateURL: URL(fileURLWithPath: certificate),
                                                      privateKeyURL: privateKey.map { URL(fileURLWithPath: $0) }, passphrase: passphrase,
                                                      persistence: URLCredential.Persistence(rawValue: persistence) ?? .forSession))
            case .withoutCredential?: handler(.useCredential, nil)
            case .cancel?: handler(.cancelAuthenticationChallenge, nil)
            case .rejectProtectionSpace?: handler(.rejectProtectionSpace, nil)
            case .defaultHandling?, .redirect?, .response?, .continueLoading?, .useNewRequest?, .cancelDelayedRequest?, nil:
                handler(.performDefaultHandling, nil)
            }
        case .response(let handler):
            if case .response(allow: false)? = answer { handler(.cancel) } else { handler(.allow) }
        case .delayedRequest(let handler):
            handler(answer)
        }
    }
}

// Questions to a connected app: redirects, challenges, upload responses and delayed starts of the
// agent's transfers go to the app of their identifier when one is connected, and are decided by
// default otherwise.
extension Agent {
    /// Asks the app connected with `transfer`'s identifier; `false` when none is (the caller then
    /// decides alone). The answer reaches `reply` through ``perform(_:)``.
    func ask(_ transfer: URLSessionTask, _ question: AgentQuestion, _ reply: AgentQuestionReply) -> Bool {
        state.withLock { state in
            guard let (key, _) = state.transfers[ObjectIdentifier(transfer)],
                  let (client, info) = state.clients.first(where: { $0.value.session == key.session }) else { return false }
            state.lastQuestion += 1
            let id = state.lastQuestion
            state.questions[id] = AgentPendingQuestion(session: key.session, client: client,
                                                       deadline: Date().addingTimeInterval(options.questionTimeout), reply: reply)
            info.connection.event(AgentEvent(sequence: 0, taskID: key.taskID, kind: .question(id: id, question)))
            return true
        }
    }

    /// The app answered question `id` (only the connection asked may answer it).
    func answeredLocked(_ state: inout AgentState, _ client: ObjectIdentifier, _ id: Int64, _ answer: AgentAnswer) -> AgentEffects {
        var effects = AgentEffects()
        guard let pending = state.questions[id], pending.client == client else { return effects }
        state.questions[id] = nil
        effects.answers.append((pending.reply, answer))
        return effects
    }

    /// The questions `abandoned` selects get the default answer (their app went away, or their
    /// time is up).
    func abandonQuestionsLocked(_ state: inout AgentState, _ abandoned: (AgentPendingQuestion) -> Bool) -> AgentEffects {
        var effects = AgentEffects()
        for (id, pending) in state.questions where abandoned(pending) {
            state.questions[id] = nil
            effects.answers.append((pending.reply, nil))
        }
        return effects
    }
}
