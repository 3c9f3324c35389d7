import Foundation
import Testing
@testable import Courier

/// Client certificates (`NSURLAuthenticationMethodClientCertificate`) against ``NginxTLSServer``:
///
/// - nginx with `ssl_verify_client on` asks every client for a certificate during the handshake but
///   lets the handshake finish without one (it answers 400 afterwards); with `optional` it serves
///   the page either way. As on Apple's platforms, a server's certificate request raises the
///   challenge; default handling goes on without a certificate.
/// - `openssl s_server -Verify` refuses the handshake itself without a valid certificate.
///
/// Answers use `URLCredential(clientCertificateURL:privateKeyURL:passphrase:persistence:)` with PEM
/// files (separate or combined, plain or encrypted key) and PKCS#12. nginx reports the certificate it
/// got in `X-Client-DN` (`$ssl_client_s_dn`) and `X-Client-Verify`. The test CA is not trusted, so
/// every load first accepts the server in a server-trust challenge.
@Suite("HTTPS client certificates")
struct HTTPSClientCertificateTests {

    typealias Answer = @Sendable (URLAuthenticationChallenge) -> (URLSession.AuthChallengeDisposition, URLCredential?)

    /// A delegate that accepts any server trust, answers client-certificate challenges with
    /// `answer`, and records every challenge.
    private func delegate(_ answer: @escaping Answer) -> (EventDelegate, Locked<[URLAuthenticationChallenge]>) {
        let seen = Locked<[URLAuthenticationChallenge]>([])
        let delegate = EventDelegate(EventDelegate.Hooks(challenge: { _, challenge, completion in
            seen.withLock { $0.append(challenge) }
            if challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodServerTrust,
               let trust = challenge.protectionSpace.serverTrust {
                completion(.useCredential, URLCredential(trust: trust))
                return
            }
            let (disposition, credential) = answer(challenge)
            completion(disposition, credential)
        }))
        return (delegate, seen)
    }

    private static func use(_ credential: URLCredential) -> Answer {
        { challenge in
            challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodClientCertificate
                ? (.useCredential, credential) : (.performDefaultHandling, nil)
        }
    }

    /// Loads `url` and returns the delegate, the task and the challenges seen.
    private func load(_ url: URL, answer: @escaping Answer) async throws
        -> (EventDelegate, URLSessionTask, [URLAuthenticationChallenge]) {
        let (delegate, seen) = delegate(answer)
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: url)
        try await HTTPTest.run(task, delegate)
        return (delegate, task, seen.current)
    }

    private static func methods(_ challenges: [URLAuthenticationChallenge]) -> [String] {
        challenges.map(\.protectionSpace.authenticationMethod)
    }

    /// Expects a 200 from nginx that verified the test client certificate.
    private func expectClientCertificateUsed(_ delegate: EventDelegate, _ task: URLSessionTask,
                                             sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(delegate.error(of: task) == nil, "\(String(describing: delegate.error(of: task)))", sourceLocation: sourceLocation)
        let response = delegate.response(of: task) as? HTTPURLResponse
        #expect(response?.statusCode == 200, sourceLocation: sourceLocation)
        #expect(response?.value(forHTTPHeaderField: "X-Client-DN") == NginxTLSServer.PKI.clientSubject, sourceLocation: sourceLocation)
        #expect(response?.value(forHTTPHeaderField: "X-Client-Verify") == "SUCCESS", sourceLocation: sourceLocation)
        #expect(String(decoding: delegate.body(of: task), as: UTF8.self)
                == "dn=\(NginxTLSServer.PKI.clientSubject)\nverify=SUCCESS\n", sourceLocation: sourceLocation)
    }

    // MARK: nginx, ssl_verify_client on

    @Test func serverAskingForACertificateRaisesTheChallenge() async throws {
        let server = try await NginxTLSServer.shared()
        let url = server.url(server.clientCertificatePort, "/whoami")
        let (delegate, task, challenges) = try await load(url) { _ in (.cancelAuthenticationChallenge, nil) }
        #expect(Self.methods(challenges) == [NSURLAuthenticationMethodServerTrust, NSURLAuthenticationMethodClientCertificate])
        let challenge = try #require(challenges.last)
        let space = challenge.protectionSpace
        #expect(space.authenticationMethod == NSURLAuthenticationMethodClientCertificate)
        #expect(space.host == "127.0.0.1")
        #expect(space.port == server.clientCertificatePort)
        #expect(space.protocol == "https")
        #expect(space.receivesCredentialSecurely)
        #expect(space.serverTrust == nil)
        #expect(challenge.previousFailureCount == 0)
        #expect(challenge.proposedCredential == nil)
        let error = try HTTPTest.urlError(delegate.error(of: task))
        #expect(error.code == .cancelled)
        #expect(HTTPTest.hasFailingURL(error, url))
        #expect(delegate.response(of: task) == nil)
    }

    @Test func pemCertificateAndSeparateKey() async throws {
        let server = try await NginxTLSServer.shared()
        let pki = server.pki
        let credential = URLCredential(clientCertificateURL: pki.clientCertificate, privateKeyURL: pki.clientKey,
                                       passphrase: nil, persistence: .forSession)
        let (delegate, task, challenges) = try await load(server.url(server.clientCertificatePort, "/whoami"), answer: Self.use(credential))
        expectClientCertificateUsed(delegate, task)
        #expect(Self.methods(challenges).filter { $0 == NSURLAuthenticationMethodClientCertificate }.count == 1)
    }

    @Test func pemFileWithCertificateAndKey() async throws {
        let server = try await NginxTLSServer.shared()
        let credential = URLCredential(clientCertificateURL: server.pki.clientCombined, persistence: .none)
        let (delegate, task, _) = try await load(server.url(server.clientCertificatePort, "/whoami"), answer: Self.use(credential))
        expectClientCertificateUsed(delegate, task)
    }

    @Test func encryptedKeyWithPassphrase() async throws {
        let server = try await NginxTLSServer.shared()
        let pki = server.pki
        let credential = URLCredential(clientCertificateURL: pki.clientCertificate, privateKeyURL: pki.clientEncryptedKey,
                                       passphrase: NginxTLSServer.PKI.clientKeyPassphrase, persistence: .none)
        let (delegate, task, _) = try await load(server.url(server.clientCertificatePort, "/whoami"), answer: Self.use(credential))
        expectClientCertificateUsed(delegate, task)
    }

    @Test func pkcs12WithPassphrase() async throws {
        let server = try await NginxTLSServer.shared()
        let credential = URLCredential(clientCertificateURL: server.pki.clientPKCS12,
                                       passphrase: NginxTLSServer.PKI.clientKeyPassphrase, persistence: .none)
        let (delegate, task, _) = try await load(server.url(server.clientCertificatePort, "/whoami"), answer: Self.use(credential))
        expectClientCertificateUsed(delegate, task)
    }

    @Test func wrongPassphraseFails() async throws {
        let server = try await NginxTLSServer.shared()
        let pki = server.pki
        let url = server.url(server.clientCertificatePort, "/whoami")
        for credential in [
            URLCredential(clientCertificateURL: pki.clientCertificate, privateKeyURL: pki.clientEncryptedKey,
                          passphrase: "not the passphrase", persistence: .none),
            URLCredential(clientCertificateURL: pki.clientPKCS12, passphrase: "not the passphrase", persistence: .none),
        ] {
            let (delegate, task, _) = try await load(url, answer: Self.use(credential))
            let error = try HTTPTest.urlError(delegate.error(of: task))
            // libcurl cannot load the identity (CURLE_SSL_CERTPROBLEM), which Courier reports as a
            // rejected client certificate.
            #expect(error.code == .clientCertificateRejected, "got \(error.code): \(error.localizedDescription)")
            #expect(HTTPTest.hasFailingURL(error, url))
            #expect(delegate.response(of: task) == nil)
        }
    }

    @Test func certificateFromAnotherCAIsRefusedByTheServer() async throws {
        // nginx finishes the handshake whatever the certificate and answers 400: the app sees that
        // response, as it would on Apple's platforms.
        let server = try await NginxTLSServer.shared()
        let credential = URLCredential(clientCertificateURL: server.pki.strangerCertificate, privateKeyURL: server.pki.strangerKey,
                                       passphrase: nil, persistence: .none)
        let (delegate, task, _) = try await load(server.url(server.clientCertificatePort, "/whoami"), answer: Self.use(credential))
        #expect(delegate.error(of: task) == nil)
        let response = try HTTPTest.http(delegate.response(of: task))
        #expect(response.statusCode == 400)
        #expect(response.value(forHTTPHeaderField: "X-Client-Verify")?.hasPrefix("FAILED") == true)
        #expect(response.value(forHTTPHeaderField: "X-Client-DN") == NginxTLSServer.PKI.strangerSubject)
    }

    @Test(arguments: [URLSession.AuthChallengeDisposition.performDefaultHandling, .rejectProtectionSpace, .useCredential])
    func goingOnWithoutACertificate(disposition: URLSession.AuthChallengeDisposition) async throws {
        // Default handling, rejecting the space or no credential: the handshake goes on without a
        // certificate, and nginx answers "400 No required SSL certificate was sent".
        let server = try await NginxTLSServer.shared()
        let (delegate, task, challenges) = try await load(server.url(server.clientCertificatePort, "/whoami")) { _ in (disposition, nil) }
        #expect(Self.methods(challenges).last == NSURLAuthenticationMethodClientCertificate)
        #expect(delegate.error(of: task) == nil, "\(String(describing: delegate.error(of: task)))")
        let response = try HTTPTest.http(delegate.response(of: task))
        #expect(response.statusCode == 400)
        #expect(response.value(forHTTPHeaderField: "X-Client-Verify") == "NONE")
    }

    @Test func withoutDelegateTheServerAnswersWithoutACertificate() async throws {
        // No delegate: the untrusted server already stops the load.
        let server = try await NginxTLSServer.shared()
        let session = HTTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        let result = try await session.loadData(server.url(server.clientCertificatePort, "/whoami"))
        #expect(result.urlError?.code == .serverCertificateHasUnknownRoot)
    }

    // MARK: nginx, ssl_verify_client optional

    @Test func optionalCertificateIsAskedForAndCanBeDeclined() async throws {
        let server = try await NginxTLSServer.shared()
        let url = server.url(server.optionalClientCertificatePort, "/whoami")
        let (declined, declinedTask, declinedChallenges) = try await load(url) { _ in (.performDefaultHandling, nil) }
        #expect(Self.methods(declinedChallenges) == [NSURLAuthenticationMethodServerTrust, NSURLAuthenticationMethodClientCertificate])
        #expect(declined.error(of: declinedTask) == nil)
        let response = try HTTPTest.http(declined.response(of: declinedTask))
        #expect(response.statusCode == 200)
        #expect(response.value(forHTTPHeaderField: "X-Client-Verify") == "NONE")

        let credential = URLCredential(clientCertificateURL: server.pki.clientCertificate, privateKeyURL: server.pki.clientKey,
                                       passphrase: nil, persistence: .none)
        let (given, givenTask, _) = try await load(url, answer: Self.use(credential))
        expectClientCertificateUsed(given, givenTask)
    }

    // MARK: A server that refuses the handshake

    @Test(arguments: [false, true])
    func strictServerRaisesTheChallengeAndAcceptsTheCertificate(tls12: Bool) async throws {
        let server = try await NginxTLSServer.shared()
        let url = server.url(tls12 ? server.strictClientCertificateTLS12Port : server.strictClientCertificatePort, "/")
        let credential = URLCredential(clientCertificateURL: server.pki.clientCertificate, privateKeyURL: server.pki.clientKey,
                                       passphrase: nil, persistence: .none)
        let (delegate, task, challenges) = try await load(url, answer: Self.use(credential))
        #expect(Self.methods(challenges) == [NSURLAuthenticationMethodServerTrust, NSURLAuthenticationMethodClientCertificate])
        // The server ends a TLS 1.2 handshake without a certificate before libcurl would collect the
        // chain: the server-trust challenge shows it all the same.
        #expect(challenges.first?.protectionSpace.serverTrust?.certificates
                == [try HTTPTest.derCertificate(fromPEM: server.pki.serverLeaf), try HTTPTest.derCertificate(fromPEM: server.pki.intermediateCA)])
        #expect(delegate.error(of: task) == nil, "\(String(describing: delegate.error(of: task)))")
        #expect((delegate.response(of: task) as? HTTPURLResponse)?.statusCode == 200)
        #expect(String(decoding: delegate.body(of: task), as: UTF8.self).contains("Subject: CN=Courier Client, O=Courier Tests"))
    }

    @Test(arguments: [false, true])
    func strictServerRejectsACertificateFromAnotherCA(tls12: Bool) async throws {
        let server = try await NginxTLSServer.shared()
        let url = server.url(tls12 ? server.strictClientCertificateTLS12Port : server.strictClientCertificatePort, "/")
        let credential = URLCredential(clientCertificateURL: server.pki.strangerCertificate, privateKeyURL: server.pki.strangerKey,
                                       passphrase: nil, persistence: .none)
        let (delegate, task, _) = try await load(url, answer: Self.use(credential))
        let error = try HTTPTest.urlError(delegate.error(of: task))
        #expect(error.code == .clientCertificateRejected, "got \(error.code): \(error.localizedDescription)")
        #expect(HTTPTest.hasFailingURL(error, url))
        #expect(delegate.response(of: task) == nil)
    }

    @Test(arguments: [false, true])
    func strictServerWithoutACertificateFails(tls12: Bool) async throws {
        let server = try await NginxTLSServer.shared()
        let url = server.url(tls12 ? server.strictClientCertificateTLS12Port : server.strictClientCertificatePort, "/")
        let (delegate, task, challenges) = try await load(url) { _ in (.performDefaultHandling, nil) }
        #expect(Self.methods(challenges).last == NSURLAuthenticationMethodClientCertificate)
        let error = try HTTPTest.urlError(delegate.error(of: task))
        #expect(error.code == .clientCertificateRequired, "got \(error.code): \(error.localizedDescription)")
        #expect(delegate.response(of: task) == nil)
        #expect(Self.methods(challenges).filter { $0 == NSURLAuthenticationMethodClientCertificate }.count == 1,
                "asked once, not again after going on without a certificate")
    }

    @Test func cancellingTheChallengeCancelsTheTask() async throws {
        let server = try await NginxTLSServer.shared()
        let url = server.url(server.strictClientCertificatePort, "/")
        let (delegate, task, _) = try await load(url) { _ in (.cancelAuthenticationChallenge, nil) }
        let error = try HTTPTest.urlError(delegate.error(of: task))
        #expect(error.code == .cancelled)
        #expect(HTTPTest.hasFailingURL(error, url))
    }

    @Test func cancellingTheTaskWhileTheDelegateDecides() async throws {
        let server = try await NginxTLSServer.shared()
        let pending = Locked<(@Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void)?>(nil)
        let delegate = EventDelegate(EventDelegate.Hooks(challenge: { _, challenge, completion in
            if let trust = challenge.protectionSpace.serverTrust {
                completion(.useCredential, URLCredential(trust: trust))
            } else {
                pending.withLock { $0 = completion } // answered only after the task was cancelled
            }
        }))
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: server.url(server.clientCertificatePort, "/whoami"))
        task.resume()
        #expect(await waitUntil(timeout: 10) { pending.current != nil })
        task.cancel()
        #expect(await delegate.waitForCompletion(of: task, timeout: 10))
        #expect((delegate.error(of: task) as? URLError)?.code == .cancelled)
        // A late answer changes nothing.
        pending.current?(.useCredential, URLCredential(clientCertificateURL: server.pki.clientCertificate,
                                                       privateKeyURL: server.pki.clientKey, passphrase: nil, persistence: .none))
        await settle(0.3)
        #expect(delegate.completionCount(of: task) == 1)
        #expect(delegate.response(of: task) == nil)
    }
}
