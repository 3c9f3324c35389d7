import Foundation
import FoundationNetworking

/// The FoundationNetworking delegate that hears one task's redirects and challenges, asked on its
/// session's delegate queue as FoundationNetworking itself would ask it.
///
/// The bridge asks the delegate itself rather than through FoundationNetworking's
/// `URLProtocolClient`, because that client cannot carry these across for a custom protocol:
/// `wasRedirectedTo` stops the process ("doesn't currently handle redirects directly"), and a
/// challenge's answer never reaches the protocol — `.useCredential` is applied as HTTP Basic by
/// FoundationNetworking's own HTTP protocol (any other method stops the process), and
/// `.performDefaultHandling` without a proposed credential leaves the task waiting for ever.
struct FoundationDelegateRoute: Sendable {
    let session: FoundationNetworking.URLSession
    let task: FoundationNetworking.URLSessionTask
    let delegate: any FoundationNetworking.URLSessionTaskDelegate

    /// Asks `willPerformHTTPRedirection`; `answer` gets the request to load, or nil to stop.
    func redirect(_ response: FoundationNetworking.HTTPURLResponse, to request: FoundationNetworking.URLRequest,
                  answer: @escaping @Sendable (FoundationNetworking.URLRequest?) -> Void) {
        let session = session, task = task, delegate = delegate
        session.delegateQueue.addOperation {
            delegate.urlSession(session, task: task, willPerformHTTPRedirection: response, newRequest: request, completionHandler: answer)
        }
    }

    /// Asks the task-level challenge method; `answer` gets the disposition and credential.
    func challenge(_ challenge: FoundationNetworking.URLAuthenticationChallenge,
                   answer: @escaping @Sendable (FoundationNetworking.URLSession.AuthChallengeDisposition, FoundationNetworking.URLCredential?) -> Void) {
        let session = session, task = task, delegate = delegate
        session.delegateQueue.addOperation {
            delegate.urlSession(session, task: task, didReceive: challenge, completionHandler: answer)
        }
    }
}
