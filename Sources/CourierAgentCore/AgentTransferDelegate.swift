import Courier
import Foundation

/// The delegate of the agent's transfer sessions: forwards each report to the agent.
final class AgentTransferDelegate: NSObject, URLSessionDownloadDelegate, URLSessionDataDelegate, @unchecked Sendable {
    // `@unchecked Sendable`: `agent` is set once, before any transfer starts.
    weak var agent: Agent?

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        agent?.transferFinished(downloadTask, at: location)
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
                    totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64) {
        agent?.transferWrote(downloadTask, written: bytesWritten, total: totalBytesWritten, expected: totalBytesExpectedToWrite)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
                    totalBytesExpectedToSend: Int64) {
        agent?.transferSent(task, total: totalBytesSent, expected: totalBytesExpectedToSend)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        agent?.transferReceived(dataTask, data)
    }

    /// A redirect: the connected app decides; without one it is followed.
    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        guard let agent, let (record, _) = AgentRequestRecord.make(from: request),
              agent.ask(task, .redirect(response: AgentResponseRecord(response), request: record),
                        .redirect(proposed: request, sent: record, handler: completionHandler)) else {
            completionHandler(request)
            return
        }
    }

    /// A challenge (server trust, HTTP authentication, client certificate): the connected app
    /// answers (a client certificate by its files' paths); without one, default handling (the
    /// credential storage's `.permanent` credentials, the system's trust).
    func urlSession(_ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
                    completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        guard let agent,
              agent.ask(task, .challenge(AgentChallengeRecord(challenge)),
                        .challenge(trust: challenge.protectionSpace.serverTrust, handler: completionHandler)) else {
            completionHandler(.performDefaultHandling, nil)
            return
        }
    }

    /// An upload's response (upload tasks are data tasks): the connected app decides `.allow` or
    /// `.cancel`; without one it is taken, as Apple's daemon does for an app that is not running.
    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        guard let agent, agent.ask(dataTask, .response(AgentResponseRecord(response)), .response(handler: completionHandler)) else {
            completionHandler(.allow)
            return
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        agent?.transferEnded(task, error: error)
    }
}
