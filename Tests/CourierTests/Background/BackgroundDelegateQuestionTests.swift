import Foundation
import Testing
@testable import Courier

/// The agent asks a connected app's delegate about redirects and challenges of its transfers, as
/// Apple's daemon asks a running app.
@Suite("Background delegate questions", .serialized)
struct BackgroundDelegateQuestionTests {
    @Test("a redirect goes to the connected app's willPerformHTTPRedirection, which picks another URL")
    func redirectIsForwarded() async throws {
        let nginx = try await NginxServer.shared()
        let sandbox = try BackgroundSandbox()
        defer { sandbox.remove() }
        let delegate = AnsweringDelegate()
        delegate.redirect = { _ in URLRequest(url: nginx.url(NginxServer.Files.json)) }
        let session = URLSession(configuration: sandbox.configuration("redirects"), delegate: delegate, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        let task = session.downloadTask(with: nginx.url("/redirect/hello"))
        task.resume()
        await waitUntil { delegate.recorder.state.current.completions[task.taskIdentifier] != nil }
        let state = delegate.recorder.state.current
        #expect(delegate.asked.current == ["redirect \(nginx.url(NginxServer.Files.hello).absoluteString)"]
                && state.files[task.taskIdentifier]?.hash == StreamHash.of(NginxServer.Files.jsonContents))
    }

    @Test("an HTTP Basic challenge goes to the connected app, whose credential opens the protected file")
    func authenticationChallengeIsForwarded() async throws {
        let nginx = try await NginxServer.shared()
        let sandbox = try BackgroundSandbox()
        defer { sandbox.remove() }
        let delegate = AnsweringDelegate()
        delegate.challenge = { challenge in
            guard challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodHTTPBasic else { return (.performDefaultHandling, nil) }
            return (.useCredential, URLCredential(user: NginxServer.basicUser, password: NginxServer.basicPassword, persistence: .none))
        }
        let session = URLSession(configuration: sandbox.configuration("basic"), delegate: delegate, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        let task = session.downloadTask(with: nginx.url(NginxServer.Files.protected))
        task.resume()
        await waitUntil { delegate.recorder.state.current.completions[task.taskIdentifier] != nil }
        let state = delegate.recorder.state.current
        #expect(delegate.asked.current == ["challenge \(NSURLAuthenticationMethodHTTPBasic) \(NginxServer.basicRealm)"]
                && state.files[task.taskIdentifier]?.hash == StreamHash.of(NginxServer.Files.protectedContents)
                && (task.response as? HTTPURLResponse)?.statusCode == 200)
    }

    @Test("a server-trust challenge goes to the connected app, which accepts the self-signed server")
    func serverTrustIsForwarded() async throws {
        let nginx = try await NginxServer.shared()
        let sandbox = try BackgroundSandbox()
        defer { sandbox.remove() }
        let delegate = AnsweringDelegate()
        delegate.challenge = { challenge in
            guard let trust = challenge.protectionSpace.serverTrust else { return (.performDefaultHandling, nil) }
            return (.useCredential, URLCredential(trust: trust))
        }
        let session = URLSession(configuration: sandbox.configuration("trust"), delegate: delegate, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        let task = session.downloadTask(with: nginx.httpsURL(NginxServer.Files.hello))
        task.resume()
        await waitUntil { delegate.recorder.state.current.completions[task.taskIdentifier] != nil }
        #expect(delegate.asked.current.first == "challenge \(NSURLAuthenticationMethodServerTrust) nil"
                && delegate.recorder.state.current.files[task.taskIdentifier]?.hash == StreamHash.of(NginxServer.Files.helloContents))
    }
}

/// A background session's delegate that answers redirects and challenges with closures, records
/// what it was asked, and records files and completions with a ``BackgroundRecorder``.
final class AnsweringDelegate: NSObject, URLSessionDownloadDelegate, @unchecked Sendable {
    // `@unchecked Sendable`: the closures are set before the session is made, then only read.
    let recorder = BackgroundRecorder()
    /// What the delegate was asked, in order.
    let asked = Locked<[String]>([])
    var redirect: @Sendable (URLRequest) -> URLRequest? = { $0 }
    var challenge: @Sendable (URLAuthenticationChallenge) -> (URLSession.AuthChallengeDisposition, URLCredential?) = { _ in
        (.performDefaultHandling, nil)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        asked.withLock { $0.append("redirect \(request.url?.absoluteString ?? "")") }
        completionHandler(redirect(request))
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
                    completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        let space = challenge.protectionSpace
        asked.withLock { $0.append("challenge \(space.authenticationMethod) \(space.realm ?? "nil")") }
        let (disposition, credential) = self.challenge(challenge)
        completionHandler(disposition, credential)
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        recorder.urlSession(session, downloadTask: downloadTask, didFinishDownloadingTo: location)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        recorder.urlSession(session, task: task, didCompleteWithError: error)
    }
}
