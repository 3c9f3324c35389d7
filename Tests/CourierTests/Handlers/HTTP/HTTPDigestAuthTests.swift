import Foundation
import Testing
@testable import Courier

/// HTTP Digest authentication (RFC 7616, MD5, `qop=auth`) against ``FaultServer``'s Digest route,
/// which checks the response hash. libcurl answers the server's nonce itself, so one attempt with a
/// credential is two exchanges (401, then the answer); the task must see one challenge per
/// attempt the delegate decides, and the final response and body exactly once. What Basic and
/// Digest share (a wrong password, cancelling, stored credentials) is in ``HTTPAuthTests``.
@Suite("HTTP Digest authentication")
struct HTTPDigestAuthTests {
    private typealias Auth = HTTPAuthTests

    private func protectedServer() throws -> FaultServer { try Auth.protectedServer(.digest) }

    // MARK: The test server's hashing

    @Test func md5MatchesTheRFC1321TestVectors() {
        let vectors = [
            ("", "d41d8cd98f00b204e9800998ecf8427e"),
            ("a", "0cc175b9c0f1b6a831c399e269772661"),
            ("abc", "900150983cd24fb0d6963f7d28e17f72"),
            ("message digest", "f96b697d7cb7938d525a2f31aaf161d0"),
            ("abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"),
            ("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", "d174ab98d277d9f5a5611c2c9f419d9f"),
            ("12345678901234567890123456789012345678901234567890123456789012345678901234567890", "57edf4a22be3c955ac49da2e2107b67a"),
        ]
        for (input, digest) in vectors {
            #expect(TestMD5.hex(input) == digest, "MD5(\"\(input)\")")
        }
    }

    /// RFC 7616 section 3.9.1's MD5 example, parsed from the header and verified as the server does.
    @Test func digestVerifierAcceptsTheRFC7616ExampleOnlyWithItsPassword() throws {
        let header = #"Digest username="Mufasa", realm="http-auth@example.org", uri="/dir/index.html", algorithm=MD5, "#
            + #"nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", nc=00000001, "#
            + #"cnonce="f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ", qop=auth, "#
            + #"response="8ca523f5e9506fed4657c9700eebdbec", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS""#
        let authorization = try #require(DigestAuthorization(header))
        #expect(authorization.parameters["username"] == "Mufasa")
        #expect(authorization.parameters["nc"] == "00000001")
        func verifies(password: String, method: String = "GET", target: String = "/dir/index.html",
                      issued: @escaping (String) -> Bool = { _ in true }) -> Bool {
            authorization.verifies(method: method, target: target, realm: "http-auth@example.org", user: "Mufasa",
                                   password: password, issued: issued)
        }
        #expect(verifies(password: "Circle of Life"))
        #expect(!verifies(password: "Circle of life"))
        #expect(!verifies(password: "Circle of Life", method: "POST"))
        #expect(!verifies(password: "Circle of Life", target: "/dir/other.html"))
        #expect(!verifies(password: "Circle of Life", issued: { _ in false }), "a nonce the server did not issue")
        #expect(DigestAuthorization(#"Basic TXVmYXNhOkNpcmNsZSBvZiBMaWZl"#) == nil)
    }

    // MARK: Through Courier

    @Test func digestChallengeDescribesTheSpaceAndACredentialLoadsTheBodyOnce() async throws {
        let server = try protectedServer()
        defer { server.stop() }
        let storage = URLCredentialStorage()
        let seen = Locked<[URLAuthenticationChallenge]>([])
        let delegate = EventDelegate(EventDelegate.Hooks(challenge: { _, challenge, answer in
            let count = seen.withLock { $0.append(challenge); return $0.count }
            guard count < 3 else { return answer(.cancelAuthenticationChallenge, nil) }
            answer(.useCredential, URLCredential(user: Auth.user, password: Auth.password, persistence: .forSession))
        }))
        let session = HTTPTest.session(delegate: delegate) { $0.urlCredentialStorage = storage }
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: server.url("/private"))
        try await HTTPTest.run(task, delegate)
        #expect(delegate.error(of: task) == nil)
        #expect(try HTTPTest.http(delegate.response(of: task)).statusCode == 200)
        #expect(delegate.body(of: task) == Auth.secret, "the body of the 200, once")
        #expect(delegate.collapsedNames(for: task) == ["challenge", "response", "data", "metrics", "complete"])

        #expect(seen.current.count == 1, "one challenge: libcurl's own 401 round trip raises none")
        let challenge = try #require(seen.current.first)
        let space = challenge.protectionSpace
        #expect(space.authenticationMethod == NSURLAuthenticationMethodHTTPDigest)
        #expect(space.realm == Auth.realm)
        #expect(space.host == "127.0.0.1")
        #expect(space.port == server.port)
        #expect(space.protocol == "http")
        #expect(challenge.previousFailureCount == 0)
        #expect((challenge.failureResponse as? HTTPURLResponse)?.statusCode == 401)

        let requests = server.requests(for: "/private")
        #expect(requests.map { $0.header("Authorization") == nil } == [true, true, false],
                "the task's 401, then libcurl's own 401 round trip within the credential's attempt")
        let authorization = try #require(requests.last?.header("Authorization"))
        #expect(authorization.hasPrefix("Digest "))
        #expect(DigestAuthorization(authorization)?.parameters["username"] == Auth.user)
        #expect(storage.credentials(for: Auth.space(server, .digest))?[Auth.user]?.password == Auth.password,
                "stored once accepted")
    }

    /// libcurl's own round trip sends the request twice; the body (in memory or streamed) must
    /// reach the server whole.
    @Test(arguments: [false, true])
    func digestPostSendsItsBody(streamed: Bool) async throws {
        let server = try protectedServer()
        defer { server.stop() }
        let body = try HTTPTest.randomBytes(100_000)
        let delegate = EventDelegate(EventDelegate.Hooks(
            challenge: { _, challenge, answer in
                guard challenge.previousFailureCount == 0 else { return answer(.cancelAuthenticationChallenge, nil) }
                answer(.useCredential, URLCredential(user: Auth.user, password: Auth.password, persistence: .none))
            },
            bodyStream: { _ in InputStream(data: body) }))
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        var request = URLRequest(url: server.url("/private"))
        request.httpMethod = "POST"
        let task: URLSessionTask
        if streamed {
            request.setValue("\(body.count)", forHTTPHeaderField: "Content-Length")
            task = session.uploadTask(withStreamedRequest: request)
        } else {
            request.httpBody = body
            task = session.dataTask(with: request)
        }
        try await HTTPTest.run(task, delegate)
        #expect(delegate.error(of: task) == nil)
        #expect(delegate.body(of: task) == Auth.secret)
        let accepted = try #require(server.requests(for: "/private").last)
        #expect(accepted.method == "POST")
        #expect(accepted.bodyLength == body.count)
        #expect(accepted.bodyHash == StreamHash.of(body))
    }

    @Test func defaultHandlingWithoutACredentialDeliversThe401() async throws {
        let server = try protectedServer()
        defer { server.stop() }
        let delegate = EventDelegate(EventDelegate.Hooks(challenge: { _, _, answer in answer(.performDefaultHandling, nil) }))
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: server.url("/private"))
        try await HTTPTest.run(task, delegate)
        #expect(delegate.error(of: task) == nil)
        let response = try HTTPTest.http(delegate.response(of: task))
        #expect(response.statusCode == 401)
        #expect(response.value(forHTTPHeaderField: "WWW-Authenticate")?.hasPrefix("Digest realm=\"\(Auth.realm)\"") == true)
        #expect(delegate.body(of: task) == Data("authentication required\n".utf8))
        #expect(delegate.collapsedNames(for: task) == ["challenge", "response", "data", "metrics", "complete"])
    }
}
