import Foundation
import Testing
@testable import Courier

/// HTTP authentication: a 401 becomes a challenge describing the protection space; the delegate's
/// answer retries, gives up, or cancels; default handling uses the session's credential storage.
/// Tests marked with `scheme` run against ``FaultServer``'s Basic and Digest routes
/// (``HTTPDigestAuthTests`` has what only Digest does).
@Suite("HTTP authentication")
struct HTTPAuthTests {
    static let realm = "x"
    static let user = "alice"
    static let password = "wonder land"
    static let secret = Data("welcome in\n".utf8)

    /// The schemes the test server asks for.
    enum Scheme: String, CaseIterable, Sendable {
        case basic, digest

        /// Apple's constant for the scheme.
        var method: String { self == .basic ? NSURLAuthenticationMethodHTTPBasic : NSURLAuthenticationMethodHTTPDigest }
    }

    /// A server whose `/private` asks for `scheme` with realm ``realm`` and answers ``secret``.
    static func protectedServer(_ scheme: Scheme = .basic) throws -> FaultServer {
        switch scheme {
        case .basic:
            try FaultServer(routes: ["/private": .basicAuth(realm: realm, user: user, password: password, body: secret)])
        case .digest:
            try FaultServer(routes: ["/private": .digestAuth(realm: realm, user: user, password: password, body: secret)])
        }
    }

    /// The protection space of `server`'s `/private` for `scheme`.
    static func space(_ server: FaultServer, _ scheme: Scheme = .basic) -> URLProtectionSpace {
        URLProtectionSpace(host: "127.0.0.1", port: server.port, protocol: "http", realm: realm, authenticationMethod: scheme.method)
    }

    private func expectedAuthorization() -> String {
        "Basic " + Data("\(Self.user):\(Self.password)".utf8).base64EncodedString()
    }

    @Test func streamedBodyIsAskedForAgainAfterTheChallenge() async throws {
        let server = try Self.protectedServer()
        defer { server.stop() }
        let body = Data(repeating: 0x42, count: 50_000)
        let delegate = EventDelegate(EventDelegate.Hooks(
            challenge: { _, _, answer in
                answer(.useCredential, URLCredential(user: Self.user, password: Self.password, persistence: .none))
            },
            bodyStream: { _ in InputStream(data: body) }))
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        var request = URLRequest(url: server.url("/private"))
        request.httpMethod = "POST"
        request.setValue("\(body.count)", forHTTPHeaderField: "Content-Length")
        let task = session.uploadTask(withStreamedRequest: request)
        try await HTTPTest.run(task, delegate)
        #expect(delegate.error(of: task) == nil)
        #expect(delegate.body(of: task) == Self.secret)
        let names = delegate.events(for: task).map(\.name)
        #expect(names.filter { $0 == "needStream" }.count == 2, "one stream per attempt: \(names)")
        let challenge = try #require(names.firstIndex(of: "challenge"))
        #expect(names.lastIndex(of: "needStream").map { $0 > challenge } == true, "the second stream is asked for after the challenge")
        #expect(server.requests(for: "/private").last?.bodyLength == body.count, "the retry sent the whole body")
    }

    @Test func noNewStreamFailsTheRetry() async throws {
        let server = try Self.protectedServer()
        defer { server.stop() }
        let asked = Locked(0)
        let delegate = EventDelegate(EventDelegate.Hooks(
            challenge: { _, _, answer in
                answer(.useCredential, URLCredential(user: Self.user, password: Self.password, persistence: .none))
            },
            bodyStream: { _ in
                let count = asked.withLock { $0 += 1; return $0 }
                return count == 1 ? InputStream(data: Data("once".utf8)) : nil
            }))
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        var request = URLRequest(url: server.url("/private"))
        request.httpMethod = "POST"
        let task = session.uploadTask(withStreamedRequest: request)
        try await HTTPTest.run(task, delegate)
        #expect(try HTTPTest.urlError(delegate.error(of: task)).code == .requestBodyStreamExhausted)
    }

    @Test func challengeDescribesTheProtectionSpaceAndCredentialRetries() async throws {
        let server = try Self.protectedServer()
        defer { server.stop() }
        let seen = Locked<[URLAuthenticationChallenge]>([])
        let delegate = EventDelegate(EventDelegate.Hooks(challenge: { _, challenge, answer in
            seen.withLock { $0.append(challenge) }
            answer(.useCredential, URLCredential(user: Self.user, password: Self.password, persistence: .forSession))
        }))
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: server.url("/private"))
        try await HTTPTest.run(task, delegate)
        #expect(delegate.error(of: task) == nil)
        #expect(delegate.body(of: task) == Self.secret)
        #expect(try HTTPTest.http(delegate.response(of: task)).statusCode == 200)

        let challenge = try #require(seen.current.first)
        #expect(seen.current.count == 1)
        let space = challenge.protectionSpace
        #expect(space.host == "127.0.0.1")
        #expect(space.port == server.port)
        #expect(space.protocol == "http")
        #expect(space.realm == Self.realm)
        #expect(space.authenticationMethod == NSURLAuthenticationMethodHTTPBasic)
        #expect(!space.isProxy())
        #expect(challenge.previousFailureCount == 0)
        #expect((challenge.failureResponse as? HTTPURLResponse)?.statusCode == 401)
        #expect(delegate.collapsedNames(for: task) == ["challenge", "response", "data", "metrics", "complete"])

        let requests = server.requests(for: "/private")
        #expect(requests.count == 2)
        #expect(requests.first?.header("Authorization") == nil)
        #expect(requests.last?.header("Authorization") == expectedAuthorization())
    }

    @Test(arguments: Scheme.allCases)
    func wrongCredentialIsChallengedAgainWithAFailureCount(scheme: Scheme) async throws {
        let server = try Self.protectedServer(scheme)
        defer { server.stop() }
        let counts = Locked<[Int]>([])
        let delegate = EventDelegate(EventDelegate.Hooks(challenge: { _, challenge, answer in
            let attempt = counts.withLock { list -> Int in
                list.append(challenge.previousFailureCount)
                return list.count
            }
            let password = attempt == 1 ? "wrong" : Self.password
            answer(.useCredential, URLCredential(user: Self.user, password: password, persistence: .none))
        }))
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: server.url("/private"))
        try await HTTPTest.run(task, delegate)
        #expect(delegate.error(of: task) == nil)
        #expect(delegate.body(of: task) == Self.secret)
        #expect(counts.current == [0, 1])
    }

    @Test(arguments: Scheme.allCases)
    func cancellingTheChallengeCancelsTheTask(scheme: Scheme) async throws {
        let server = try Self.protectedServer(scheme)
        defer { server.stop() }
        let delegate = EventDelegate(EventDelegate.Hooks(challenge: { _, _, answer in answer(.cancelAuthenticationChallenge, nil) }))
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let url = server.url("/private")
        let task = session.dataTask(with: url)
        try await HTTPTest.run(task, delegate)
        let error = try HTTPTest.urlError(delegate.error(of: task))
        #expect(error.code == .cancelled)
        #expect(HTTPTest.hasFailingURL(error, url))
        #expect(delegate.response(of: task) == nil)
        #expect(server.requests(for: "/private").count == 1)
    }

    @Test func defaultHandlingUsesTheCredentialStorage() async throws {
        let server = try Self.protectedServer()
        defer { server.stop() }
        let delegate = EventDelegate(EventDelegate.Hooks(challenge: { _, _, answer in answer(.performDefaultHandling, nil) }))
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let space = Self.space(server)
        let storage = try #require(session.configuration.urlCredentialStorage)
        storage.setDefaultCredential(URLCredential(user: Self.user, password: Self.password, persistence: .forSession), for: space)
        let task = session.dataTask(with: server.url("/private"))
        try await HTTPTest.run(task, delegate)
        #expect(delegate.error(of: task) == nil)
        #expect(delegate.body(of: task) == Self.secret)
        #expect(server.requests(for: "/private").last?.header("Authorization") == expectedAuthorization())
    }

    @Test(arguments: Scheme.allCases)
    func withoutDelegateTheStoredCredentialIsUsed(scheme: Scheme) async throws {
        let server = try Self.protectedServer(scheme)
        defer { server.stop() }
        let session = HTTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        session.configuration.urlCredentialStorage?.setDefaultCredential(
            URLCredential(user: Self.user, password: Self.password, persistence: .forSession), for: Self.space(server, scheme))
        let result = try await session.loadData(server.url("/private"))
        #expect(result.error == nil)
        #expect(try HTTPTest.http(result.response).statusCode == 200)
        #expect(result.data == Self.secret)
    }

    @Test func withoutCredentialThe401IsTheResult() async throws {
        let server = try Self.protectedServer()
        defer { server.stop() }
        let session = HTTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        let result = try await session.loadData(server.url("/private"))
        #expect(result.error == nil)
        let response = try HTTPTest.http(result.response)
        #expect(response.statusCode == 401)
        #expect(response.value(forHTTPHeaderField: "WWW-Authenticate") == "Basic realm=\"\(Self.realm)\"")
        #expect(result.data == Data("authentication required\n".utf8))
    }

    @Test func continueWithoutCredentialDeliversThe401() async throws {
        let server = try Self.protectedServer()
        defer { server.stop() }
        let delegate = EventDelegate(EventDelegate.Hooks(challenge: { _, _, answer in answer(.useCredential, nil) }))
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: server.url("/private"))
        try await HTTPTest.run(task, delegate)
        #expect(delegate.error(of: task) == nil)
        #expect(try HTTPTest.http(delegate.response(of: task)).statusCode == 401)
        #expect(delegate.body(of: task) == Data("authentication required\n".utf8))
    }

    @Test func credentialInTheURLIsUsed() async throws {
        let server = try Self.protectedServer()
        defer { server.stop() }
        let session = HTTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        let url = try #require(URL(string: "http://\(Self.user):wonder%20land@127.0.0.1:\(server.port)/private"))
        let result = try await session.loadData(url)
        #expect(result.error == nil)
        #expect(result.data == Self.secret)
    }

    @Test func permanentCredentialIsRememberedForTheNextTask() async throws {
        let server = try Self.protectedServer()
        defer { server.stop() }
        let delegate = EventDelegate(EventDelegate.Hooks(challenge: { _, _, answer in
            answer(.useCredential, URLCredential(user: Self.user, password: Self.password, persistence: .forSession))
        }))
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let first = session.dataTask(with: server.url("/private"))
        try await HTTPTest.run(first, delegate)
        #expect(delegate.body(of: first) == Self.secret)
        let space = Self.space(server)
        #expect(session.configuration.urlCredentialStorage?.credentials(for: space)?[Self.user]?.password == Self.password)
    }

    @Test(arguments: Scheme.allCases)
    func refusedPermanentCredentialIsNotStoredAndAnAcceptedOneIs(scheme: Scheme) async throws {
        let server = try Self.protectedServer(scheme)
        defer { server.stop() }
        let storage = URLCredentialStorage()
        let space = Self.space(server, scheme)
        let storedAtChallenge = Locked<[[String: URLCredential]]>([])
        let delegate = EventDelegate(EventDelegate.Hooks(challenge: { _, challenge, answer in
            let attempt = storedAtChallenge.withLock { list -> Int in
                list.append(storage.credentials(for: space) ?? [:])
                return list.count
            }
            let password = attempt == 1 ? "wrong" : Self.password
            answer(.useCredential, URLCredential(user: Self.user, password: password, persistence: .permanent))
        }))
        let session = HTTPTest.session(delegate: delegate) { $0.urlCredentialStorage = storage }
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: server.url("/private"))
        try await HTTPTest.run(task, delegate)
        #expect(delegate.body(of: task) == Self.secret)
        #expect(storedAtChallenge.current == [[:], [:]], "the refused credential was not stored")
        #expect(storage.credentials(for: space)?[Self.user]?.password == Self.password)
        #expect(storage.credentials(for: space)?.count == 1)
    }

    @Test func nginxBasicAuthentication() async throws {
        let server = try await HTTPTest.nginx()
        let seen = Locked<[URLProtectionSpace]>([])
        let delegate = EventDelegate(EventDelegate.Hooks(challenge: { _, challenge, answer in
            seen.withLock { $0.append(challenge.protectionSpace) }
            answer(.useCredential, URLCredential(user: NginxServer.basicUser, password: NginxServer.basicPassword, persistence: .none))
        }))
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: server.url(NginxServer.Files.protected))
        try await HTTPTest.run(task, delegate)
        #expect(delegate.error(of: task) == nil)
        #expect(delegate.body(of: task) == NginxServer.Files.protectedContents)
        #expect(seen.current.first?.realm == NginxServer.basicRealm)
        #expect(seen.current.first?.port == server.httpPort)
    }

    /// A server that offers the same scheme and realm twice (two `WWW-Authenticate` fields, or a
    /// repeat in one) raises one challenge for it: rejecting that space ends the exchange.
    @Test func repeatedOfferRaisesOneChallenge() async throws {
        let offers = [("WWW-Authenticate", "Basic realm=\"x\""), ("WWW-Authenticate", "basic realm=\"x\", Basic realm=\"x\"")]
        let server = try FaultServer(routes: ["/private": .respond(.ok(Data("no".utf8), status: 401, reason: "Unauthorized",
                                                                       headers: offers))])
        defer { server.stop() }
        let seen = Locked<[URLProtectionSpace]>([])
        let delegate = EventDelegate(EventDelegate.Hooks(challenge: { _, challenge, answer in
            seen.withLock { $0.append(challenge.protectionSpace) }
            answer(.rejectProtectionSpace, nil)
        }))
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: server.url("/private"))
        try await HTTPTest.run(task, delegate)
        #expect(delegate.error(of: task) == nil)
        #expect(try HTTPTest.http(delegate.response(of: task)).statusCode == 401)
        #expect(seen.current.count == 1, "challenges: \(seen.current)")
    }

    @Test func headerOffersAreDeduplicated() {
        let offers = HTTPAuthenticationHeader.offers(in: "Basic realm=\"x\", Digest realm=\"x\", nonce=\"n\", basic realm=\"x\", Basic realm=\"y\", Basic realm=\"X\"")
        #expect(offers == [.init(scheme: "Basic", realm: "x"), .init(scheme: "Digest", realm: "x"),
                           .init(scheme: "Basic", realm: "y"), .init(scheme: "Basic", realm: "X")])
    }
}
