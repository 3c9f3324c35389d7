import Foundation
import Testing
@testable import Courier

/// HTTPS servers verified against the test certificate authority (``NginxTLSServer``) given as the
/// trust anchors — what `SSL_CERT_FILE` / `SSL_CERT_DIR` name for a process (``TLSTrustAnchors``):
/// its chain then loads with no challenge, and a wrong host name or an expired certificate from the
/// same CA is reported as such, not as an unknown root.
@Suite("HTTPS trust anchors")
struct HTTPSTrustAnchorTests {

    /// A session trusting `anchors`, whose delegate records every challenge and answers with
    /// default handling.
    private func session(trusting anchors: TLSTrustAnchors) -> (URLSession, EventDelegate, Locked<[URLAuthenticationChallenge]>) {
        let seen = Locked<[URLAuthenticationChallenge]>([])
        let delegate = EventDelegate(EventDelegate.Hooks(challenge: { _, challenge, completion in
            seen.withLock { $0.append(challenge) }
            completion(.performDefaultHandling, nil)
        }))
        let session = HTTPTest.session(delegate: delegate) { $0.tlsTrustAnchors = anchors }
        return (session, delegate, seen)
    }

    @Test func environmentNamesTheAnchors() {
        #expect(TLSTrustAnchors.from(environment: [:]) == nil)
        #expect(TLSTrustAnchors.from(environment: ["SSL_CERT_FILE": "", "SSL_CERT_DIR": ""]) == nil)
        #expect(TLSTrustAnchors.from(environment: ["SSL_CERT_FILE": "/a.pem"]) == TLSTrustAnchors(file: "/a.pem", directory: nil))
        #expect(TLSTrustAnchors.from(environment: ["SSL_CERT_DIR": "/certs"]) == TLSTrustAnchors(file: nil, directory: "/certs"))
        // FoundationNetworking's variable wins over OpenSSL's.
        #expect(TLSTrustAnchors.from(environment: ["SSL_CERT_FILE": "/a.pem", "URLSessionCertificateAuthorityInfoFile": "/b.pem",
                                                   "SSL_CERT_DIR": "/certs"])
                == TLSTrustAnchors(file: "/b.pem", directory: "/certs"))
    }

    @Test func aChainFromTheTrustedRootLoadsWithoutAChallenge() async throws {
        let server = try await NginxTLSServer.shared()
        let (session, delegate, seen) = session(trusting: TLSTrustAnchors(file: server.pki.rootCA.path))
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: server.url(server.chainPort))
        try await HTTPTest.run(task, delegate)
        #expect(delegate.error(of: task) == nil)
        #expect(delegate.body(of: task) == NginxServer.Files.helloContents)
        #expect((delegate.response(of: task) as? HTTPURLResponse)?.statusCode == 200)
        #expect(seen.current.isEmpty, "no challenge: \(seen.current.map(\.protectionSpace.authenticationMethod))")
    }

    @Test func aHashedDirectoryOfAnchorsWorksToo() async throws {
        let server = try await NginxTLSServer.shared()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-anchors-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // OpenSSL finds a directory's certificates by the hash of their subject: "<hash>.0".
        let hash = try Self.subjectHash(of: server.pki.rootCA)
        try FileManager.default.copyItem(at: server.pki.rootCA, to: directory.appendingPathComponent("\(hash).0"))

        let (session, delegate, seen) = session(trusting: TLSTrustAnchors(directory: directory.path))
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: server.url(server.chainPort))
        try await HTTPTest.run(task, delegate)
        #expect(delegate.error(of: task) == nil)
        #expect(delegate.body(of: task) == NginxServer.Files.helloContents)
        #expect(seen.current.isEmpty)
    }

    /// Loads `port` of the test server trusting its root and intermediate (the wrong-host and
    /// expired servers send their leaf alone), and returns the error and the challenges seen.
    private func failure(at port: KeyPath<NginxTLSServer, Int>) async throws -> (URLError, URL, [URLAuthenticationChallenge]) {
        let server = try await NginxTLSServer.shared()
        let bundle = try Self.bundle(server.pki.rootCA, server.pki.intermediateCA)
        defer { try? FileManager.default.removeItem(at: bundle) }
        let (session, delegate, seen) = session(trusting: TLSTrustAnchors(file: bundle.path))
        defer { session.finishTasksAndInvalidate() }
        let url = server.url(server[keyPath: port])
        let task = session.dataTask(with: url)
        try await HTTPTest.run(task, delegate)
        #expect(delegate.response(of: task) == nil)
        return (try HTTPTest.urlError(delegate.error(of: task)), url, seen.current)
    }

    @Test func aCertificateForAnotherHostIsUntrusted() async throws {
        let (error, url, challenges) = try await failure(at: \.wrongHostPort)
        #expect(error.code == .serverCertificateUntrusted, "got \(error.code): \(error.localizedDescription)")
        #expect(HTTPTest.hasFailingURL(error, url))
        // The delegate was asked first, and its default handling refused the server.
        #expect(challenges.map(\.protectionSpace.authenticationMethod) == [NSURLAuthenticationMethodServerTrust])
    }

    @Test func anExpiredCertificateHasABadDate() async throws {
        let (error, url, _) = try await failure(at: \.expiredPort)
        #expect(error.code == .serverCertificateHasBadDate, "got \(error.code): \(error.localizedDescription)")
        #expect(HTTPTest.hasFailingURL(error, url))
    }

    @Test func anchorsReplaceTheSystemStore() async throws {
        // Trusting only an unrelated certificate, the test CA's chain has an unknown root.
        let server = try await NginxTLSServer.shared()
        let (session, delegate, _) = session(trusting: TLSTrustAnchors(file: server.pki.strangerCertificate.path))
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: server.url(server.chainPort))
        try await HTTPTest.run(task, delegate)
        let error = try HTTPTest.urlError(delegate.error(of: task))
        #expect(error.code == .serverCertificateHasUnknownRoot, "got \(error.code): \(error.localizedDescription)")
    }

    @Test func anUnreadableAnchorFileFailsTheLoadClearly() async throws {
        let server = try await NginxTLSServer.shared()
        let missing = "/nonexistent/courier-anchors-\(UUID().uuidString).pem"
        let (session, delegate, _) = session(trusting: TLSTrustAnchors(file: missing))
        defer { session.finishTasksAndInvalidate() }
        let url = server.url(server.chainPort)
        let task = session.dataTask(with: url)
        try await HTTPTest.run(task, delegate)
        let error = try HTTPTest.urlError(delegate.error(of: task))
        #expect(error.code == .secureConnectionFailed, "got \(error.code): \(error.localizedDescription)")
        #expect(HTTPTest.hasFailingURL(error, url))
        #expect(delegate.response(of: task) == nil)
    }

    /// A temporary PEM file holding `certificates` one after the other, as a CA bundle does.
    private static func bundle(_ certificates: URL...) throws -> URL {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-bundle-\(UUID().uuidString).pem")
        try certificates.reduce(Data()) { $0 + (try Data(contentsOf: $1)) }.write(to: file)
        return file
    }

    /// `openssl x509 -hash`: the name OpenSSL looks a CA up by in a certificate directory.
    private static func subjectHash(of certificate: URL) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = ["x509", "-hash", "-noout", "-in", certificate.path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let hash = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        try #require(process.terminationStatus == 0 && hash.count == 8, "openssl x509 -hash gave \(hash)")
        return hash
    }
}
