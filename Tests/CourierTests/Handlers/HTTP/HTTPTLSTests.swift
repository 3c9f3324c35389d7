import Foundation
import Testing
@testable import Courier

/// HTTPS certificate verification against nginx's self-signed certificate: the failure without a
/// delegate, the server-trust challenge and each answer to it.
@Suite("HTTPS server trust")
struct HTTPTLSTests {

    @Test func untrustedCertificateFailsWithoutDelegate() async throws {
        let server = try await HTTPTest.nginx()
        let session = HTTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        let url = server.httpsURL(NginxServer.Files.hello)
        let result = try await session.loadData(url)
        let error = try HTTPTest.urlError(result.error)
        #expect(error.code == .serverCertificateUntrusted)
        #expect(HTTPTest.hasFailingURL(error, url))
        #expect(result.data == nil)
        #expect(result.response == nil)
    }

    @Test func challengeDescribesTheServer() async throws {
        let server = try await HTTPTest.nginx()
        let seen = Locked<[URLAuthenticationChallenge]>([])
        let delegate = EventDelegate(EventDelegate.Hooks(challenge: { _, challenge, answer in
            seen.withLock { $0.append(challenge) }
            answer(.cancelAuthenticationChallenge, nil)
        }))
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: server.httpsURL(NginxServer.Files.hello))
        try await HTTPTest.run(task, delegate)
        let challenge = try #require(seen.current.first)
        let space = challenge.protectionSpace
        #expect(space.authenticationMethod == NSURLAuthenticationMethodServerTrust)
        #expect(space.host == "127.0.0.1")
        #expect(space.port == server.httpsPort)
        #expect(space.protocol == "https")
        #expect(space.receivesCredentialSecurely)
        let trust = try #require(space.serverTrust)
        #expect(trust.certificates.first == (try HTTPTest.derCertificate(fromPEM: server.certificatePEM)))
        #expect(challenge.previousFailureCount == 0)
        #expect(challenge.proposedCredential == nil)
        #expect(challenge.failureResponse == nil)
    }

    @Test func useCredentialWithTrustLoads() async throws {
        let server = try await HTTPTest.nginx()
        let delegate = try HTTPTest.trustingDelegate(server)
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: server.httpsURL(NginxServer.Files.json))
        try await HTTPTest.run(task, delegate)
        #expect(delegate.error(of: task) == nil)
        #expect(delegate.body(of: task) == NginxServer.Files.jsonContents)
        #expect(delegate.collapsedNames(for: task) == ["challenge", "response", "data", "metrics", "complete"])
    }

    @Test(arguments: [
        (URLSession.AuthChallengeDisposition.cancelAuthenticationChallenge, false, URLError.Code.cancelled),
        (.performDefaultHandling, false, .serverCertificateUntrusted),
        (.rejectProtectionSpace, false, .serverCertificateUntrusted),
        (.useCredential, false, .serverCertificateUntrusted), // with no credential: continue without one
        (.useCredential, true, .serverCertificateUntrusted), // only URLCredential(trust:) accepts a server
    ])
    func otherAnswersFail(disposition: URLSession.AuthChallengeDisposition, withPassword: Bool, code: URLError.Code) async throws {
        let server = try await HTTPTest.nginx()
        let credential = withPassword ? URLCredential(user: "user", password: "secret", persistence: .none) : nil
        let delegate = EventDelegate(EventDelegate.Hooks(challenge: { _, _, answer in answer(disposition, credential) }))
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let url = server.httpsURL(NginxServer.Files.hello)
        let task = session.dataTask(with: url)
        try await HTTPTest.run(task, delegate)
        let error = try HTTPTest.urlError(delegate.error(of: task))
        #expect(error.code == code)
        #expect(HTTPTest.hasFailingURL(error, url))
        #expect(delegate.response(of: task) == nil)
        #expect(delegate.body(of: task).isEmpty)
    }

    @Test func trustingOneTaskDoesNotTrustForAnotherSession() async throws {
        let server = try await HTTPTest.nginx()
        let delegate = try HTTPTest.trustingDelegate(server)
        let trusting = HTTPTest.session(delegate: delegate)
        let plain = HTTPTest.session()
        defer {
            trusting.finishTasksAndInvalidate()
            plain.finishTasksAndInvalidate()
        }
        let task = trusting.dataTask(with: server.httpsURL(NginxServer.Files.hello))
        try await HTTPTest.run(task, delegate)
        #expect(delegate.error(of: task) == nil)
        let result = try await plain.loadData(server.httpsURL(NginxServer.Files.hello))
        #expect(result.urlError?.code == .serverCertificateUntrusted)
    }
}
