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

    @Test("a client-certificate challenge goes to the connected app, whose certificate files (an encrypted key and its passphrase) the agent presents")
    func clientCertificateIsForwarded() async throws {
        let server = try await NginxTLSServer.shared()
        let pki = server.pki
        let sandbox = try BackgroundSandbox()
        defer { sandbox.remove() }
        let delegate = AnsweringDelegate()
        delegate.challenge = { challenge in
            if let trust = challenge.protectionSpace.serverTrust { return (.useCredential, URLCredential(trust: trust)) }
            guard challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodClientCertificate else {
                return (.performDefaultHandling, nil)
            }
            return (.useCredential, URLCredential(clientCertificateURL: pki.clientCertificate, privateKeyURL: pki.clientEncryptedKey,
                                                  passphrase: NginxTLSServer.PKI.clientKeyPassphrase, persistence: .forSession))
        }
        let session = URLSession(configuration: sandbox.configuration("clientcert"), delegate: delegate, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        let task = session.downloadTask(with: server.url(server.clientCertificatePort, "/whoami"))
        task.resume()
        await waitUntil { delegate.recorder.state.current.completions[task.taskIdentifier] != nil }
        let expected = Data("dn=\(NginxTLSServer.PKI.clientSubject)\nverify=SUCCESS\n".utf8)
        #expect(delegate.asked.current.contains("challenge \(NSURLAuthenticationMethodClientCertificate) nil")
                && delegate.recorder.state.current.files[task.taskIdentifier]?.hash == StreamHash.of(expected))
    }
}

/// A background session's delegate that answers redirects, challenges, upload responses and
/// delayed requests with closures, records what it was asked, and records files and completions
/// with a ``BackgroundRecorder`` (and uploads' response bodies).
final class AnsweringDelegate: NSObject, URLSessionDownloadDelegate, URLSessionDataDelegate, @unchecked Sendable {
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

    var response: @Sendable (URLResponse) -> URLSession.ResponseDisposition = { _ in .allow }
    /// The answer to a delayed request; `nil`: the delegate never calls its completion handler.
    var delayed: @Sendable (URLRequest) -> (URLSession.DelayedRequestDisposition, URLRequest?)? = { _ in (.continueLoading, nil) }
    /// Task → the response body its data delegate received.
    let bodies = Locked<[Int: Data]>([:])

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        asked.withLock { $0.append("response \((response as? HTTPURLResponse)?.statusCode ?? 0)") }
        completionHandler(self.response(response))
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        bodies.withLock { $0[dataTask.taskIdentifier, default: Data()].append(data) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, willBeginDelayedRequest request: URLRequest,
                    completionHandler: @escaping @Sendable (URLSession.DelayedRequestDisposition, URLRequest?) -> Void) {
        asked.withLock { $0.append("delayed \(request.url?.absoluteString ?? "")") }
        guard let (disposition, newRequest) = delayed(request) else { return }
        completionHandler(disposition, newRequest)
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        recorder.urlSession(session, downloadTask: downloadTask, didFinishDownloadingTo: location)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        recorder.urlSession(session, task: task, didCompleteWithError: error)
    }
}
