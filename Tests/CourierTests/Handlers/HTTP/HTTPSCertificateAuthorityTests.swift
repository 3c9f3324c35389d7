import Foundation
import Testing
@testable import Courier

/// HTTPS server trust against certificates issued by a test certificate authority (root →
/// intermediate → server, ``NginxTLSServer``): what an untrusted chain looks like to the delegate,
/// accepting it, a certificate for another host name and an expired one.
///
/// The sessions here trust the system's authorities only (trusting the test CA is
/// ``HTTPSTrustAnchorTests``), so every check goes through the server-trust challenge. OpenSSL
/// reports the first problem it meets, and an unknown issuer comes before a wrong host name or a
/// date, so those two are seen here as chains with an unknown root; the mapping of libcurl's words
/// for them is checked separately below.
@Suite("HTTPS certificate authority")
struct HTTPSCertificateAuthorityTests {

    /// Records every challenge and answers server trust with `answer(challenge)`.
    private func recordingDelegate(
        _ answer: @escaping @Sendable (URLAuthenticationChallenge) -> (URLSession.AuthChallengeDisposition, URLCredential?)
    ) -> (EventDelegate, Locked<[URLAuthenticationChallenge]>) {
        let seen = Locked<[URLAuthenticationChallenge]>([])
        let delegate = EventDelegate(EventDelegate.Hooks(challenge: { _, challenge, completion in
            seen.withLock { $0.append(challenge) }
            let (disposition, credential) = answer(challenge)
            completion(disposition, credential)
        }))
        return (delegate, seen)
    }

    /// Accepts a server-trust challenge with the challenge's own trust.
    private static let accept: @Sendable (URLAuthenticationChallenge) -> (URLSession.AuthChallengeDisposition, URLCredential?) = { challenge in
        guard let trust = challenge.protectionSpace.serverTrust else { return (.performDefaultHandling, nil) }
        return (.useCredential, URLCredential(trust: trust))
    }

    @Test func issuedByAnUnknownCAFailsWithoutDelegate() async throws {
        let server = try await NginxTLSServer.shared()
        let session = HTTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        let url = server.url(server.chainPort)
        let result = try await session.loadData(url)
        let error = try HTTPTest.urlError(result.error)
        // The server sends leaf and intermediate; the root is nowhere to be found.
        #expect(error.code == .serverCertificateHasUnknownRoot, "got \(error.code): \(error.localizedDescription)")
        #expect(HTTPTest.hasFailingURL(error, url))
        #expect(result.response == nil)
        #expect(result.data == nil)
    }

    @Test func challengeCarriesTheChainTheServerSent() async throws {
        let server = try await NginxTLSServer.shared()
        let (delegate, seen) = recordingDelegate { _ in (.cancelAuthenticationChallenge, nil) }
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let url = server.url(server.chainPort)
        let task = session.dataTask(with: url)
        try await HTTPTest.run(task, delegate)

        let challenges = seen.current
        #expect(challenges.count == 1)
        let challenge = try #require(challenges.first)
        let space = challenge.protectionSpace
        #expect(space.authenticationMethod == NSURLAuthenticationMethodServerTrust)
        #expect(space.host == "127.0.0.1")
        #expect(space.port == server.chainPort)
        #expect(space.protocol == "https")
        let trust = try #require(space.serverTrust)
        let leaf = try HTTPTest.derCertificate(fromPEM: server.pki.serverLeaf)
        let intermediate = try HTTPTest.derCertificate(fromPEM: server.pki.intermediateCA)
        #expect(trust.certificates.count == 2, "nginx sends the leaf and the intermediate")
        #expect(trust.certificates.first == leaf, "the server's own certificate comes first")
        #expect(trust.certificates.dropFirst().first == intermediate)
        #expect(!trust.certificates.contains(try HTTPTest.derCertificate(fromPEM: server.pki.rootCA)))
        #expect(trust.host == "127.0.0.1")
        #expect(trust.failureReason?.isEmpty == false)
        #expect(challenge.previousFailureCount == 0)
        #expect(challenge.proposedCredential == nil)

        let error = try HTTPTest.urlError(delegate.error(of: task))
        #expect(error.code == .cancelled)
        #expect(HTTPTest.hasFailingURL(error, url))
        #expect(delegate.response(of: task) == nil)
    }

    @Test func acceptingTheTrustLoadsAndLaterTasksAreNotAsked() async throws {
        let server = try await NginxTLSServer.shared()
        let (delegate, seen) = recordingDelegate(Self.accept)
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }

        let first = session.dataTask(with: server.url(server.chainPort))
        try await HTTPTest.run(first, delegate)
        #expect(delegate.error(of: first) == nil)
        #expect(delegate.body(of: first) == NginxServer.Files.helloContents)
        #expect((delegate.response(of: first) as? HTTPURLResponse)?.statusCode == 200)
        #expect(seen.current.count == 1)

        // Later tasks of the session, one after the other and then several at once.
        let second = session.dataTask(with: server.url(server.chainPort, "/whoami"))
        try await HTTPTest.run(second, delegate)
        #expect(delegate.error(of: second) == nil)
        #expect((delegate.response(of: second) as? HTTPURLResponse)?.statusCode == 200)
        let parallel = (0..<3).map { _ in session.dataTask(with: server.url(server.chainPort)) }
        parallel.forEach { $0.resume() }
        for task in parallel {
            #expect(await delegate.waitForCompletion(of: task, timeout: 20))
            #expect(delegate.error(of: task) == nil)
            #expect(delegate.body(of: task) == NginxServer.Files.helloContents)
        }
        #expect(seen.current.count == 1, "the server was accepted once for the session")
        #expect(delegate.collapsedNames(for: second) == ["response", "data", "metrics", "complete"])
        // The accepted key is pinned by its SHA-256: no key file is written (one could outlive a
        // process that exits without releasing its sessions).
        let pinFiles = try FileManager.default.contentsOfDirectory(atPath: FileManager.default.temporaryDirectory.path)
            .filter { $0.hasPrefix("courier-pin-") }
        #expect(pinFiles.isEmpty, "\(pinFiles)")
    }

    @Test func acceptanceIsForThatServerOnly() async throws {
        let server = try await NginxTLSServer.shared()
        let (delegate, seen) = recordingDelegate(Self.accept)
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let first = session.dataTask(with: server.url(server.chainPort))
        try await HTTPTest.run(first, delegate)
        #expect(delegate.error(of: first) == nil)
        // The same CA, another port (another server): asked again.
        let other = session.dataTask(with: server.url(server.tls12Port))
        try await HTTPTest.run(other, delegate)
        #expect(delegate.error(of: other) == nil)
        let ports = seen.current.map(\.protectionSpace.port)
        #expect(ports == [server.chainPort, server.tls12Port])
    }

    @Test func acceptingWithATrustForAnotherServerDoesNotLoad() async throws {
        // The delegate answers with a trust built from the wrong certificate: Courier pins the
        // public key of the trust it is given, which the server does not have.
        let server = try await NginxTLSServer.shared()
        let stranger = try HTTPTest.derCertificate(fromPEM: server.pki.strangerCertificate)
        let (delegate, seen) = recordingDelegate { _ in
            (.useCredential, URLCredential(trust: SecTrust(certificates: [stranger], host: "127.0.0.1", failureReason: nil)))
        }
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let url = server.url(server.chainPort)
        let task = session.dataTask(with: url)
        try await HTTPTest.run(task, delegate)
        let error = try HTTPTest.urlError(delegate.error(of: task))
        #expect(error.code == .secureConnectionFailed,
                "got \(error.code): \(error.localizedDescription)")
        #expect(HTTPTest.hasFailingURL(error, url))
        #expect(delegate.response(of: task) == nil)
        #expect(seen.current.count == 1)
    }

    @Test func certificateForAnotherHostName() async throws {
        let server = try await NginxTLSServer.shared()
        let url = server.url(server.wrongHostPort)

        // Without a delegate: refused.
        let plain = HTTPTest.session()
        defer { plain.finishTasksAndInvalidate() }
        let result = try await plain.loadData(url)
        let error = try HTTPTest.urlError(result.error)
        #expect(error.code == .serverCertificateHasUnknownRoot,
                "got \(error.code): \(error.localizedDescription)")
        #expect(result.response == nil)

        // Default handling in a challenge: refused the same way; the challenge shows the certificate
        // for other.example while the host is 127.0.0.1.
        let (delegate, seen) = recordingDelegate { _ in (.performDefaultHandling, nil) }
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: url)
        try await HTTPTest.run(task, delegate)
        #expect((delegate.error(of: task) as? URLError)?.code == error.code)
        let trust = try #require(seen.current.first?.protectionSpace.serverTrust)
        #expect(trust.certificates.first == (try HTTPTest.derCertificate(fromPEM: server.pki.wrongHostLeaf)))
        #expect(trust.host == "127.0.0.1")
    }

    @Test func certificateForAnotherHostNameCanBeAccepted() async throws {
        // As on Apple's platforms, the delegate's `URLCredential(trust:)` overrides every check.
        let server = try await NginxTLSServer.shared()
        let (delegate, seen) = recordingDelegate(Self.accept)
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: server.url(server.wrongHostPort))
        try await HTTPTest.run(task, delegate)
        #expect(delegate.error(of: task) == nil)
        #expect(delegate.body(of: task) == NginxServer.Files.helloContents)
        #expect(seen.current.count == 1)
    }

    @Test func expiredCertificate() async throws {
        let server = try await NginxTLSServer.shared()
        let url = server.url(server.expiredPort)
        let (delegate, seen) = recordingDelegate { _ in (.performDefaultHandling, nil) }
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: url)
        try await HTTPTest.run(task, delegate)
        let error = try HTTPTest.urlError(delegate.error(of: task))
        // OpenSSL meets the unknown issuer before the date (see the suite's comment).
        #expect(error.code == .serverCertificateHasUnknownRoot,
                "got \(error.code): \(error.localizedDescription)")
        #expect(HTTPTest.hasFailingURL(error, url))
        let trust = try #require(seen.current.first?.protectionSpace.serverTrust)
        #expect(trust.certificates.first == (try HTTPTest.derCertificate(fromPEM: server.pki.expiredLeaf)))

        // Accepted by the delegate, the expired certificate is used.
        let (accepting, _) = recordingDelegate(Self.accept)
        let acceptingSession = HTTPTest.session(delegate: accepting)
        defer { acceptingSession.finishTasksAndInvalidate() }
        let accepted = acceptingSession.dataTask(with: url)
        try await HTTPTest.run(accepted, accepting)
        #expect(accepting.error(of: accepted) == nil)
        #expect(accepting.body(of: accepted) == NginxServer.Files.helloContents)
    }

    /// libcurl's words for each verification failure (as libcurl 7.88 with OpenSSL 3 writes them,
    /// e.g. `curl --cacert root.pem` against ``NginxTLSServer/expiredPort``) and the `URLError` code
    /// Courier reports for them.
    @Test(arguments: [
        ("SSL certificate problem: certificate has expired", URLError.Code.serverCertificateHasBadDate),
        ("SSL certificate problem: certificate is not yet valid", .serverCertificateNotYetValid),
        ("SSL certificate problem: unable to get local issuer certificate", .serverCertificateHasUnknownRoot),
        ("SSL certificate problem: self-signed certificate", .serverCertificateUntrusted),
        ("SSL: no alternative certificate subject name matches target host name '127.0.0.1'", .serverCertificateUntrusted),
    ])
    func verificationFailureCodes(message: String, code: URLError.Code) {
        #expect(TLSServerTrust.errorCode(forVerificationFailure: message) == code)
    }
}
