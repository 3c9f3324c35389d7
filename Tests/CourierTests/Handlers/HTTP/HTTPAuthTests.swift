import Foundation
import Testing
@testable import Courier

/// HTTP authentication: a 401 becomes a challenge describing the protection space; the delegate's
/// answer retries, gives up, or cancels; default handling uses the session's credential storage.
@Suite("HTTP authentication")
struct HTTPAuthTests {
    static let realm = "x"
    static let user = "alice"
    static let password = "wonder land"
    static let secret = Data("welcome in\n".utf8)

    private func protectedServer() throws -> FaultServer {
        try FaultServer(routes: ["/private": .basicAuth(realm: Self.realm, user: Self.user, password: Self.password, body: Self.secret)])
    }

    private func expectedAuthorization() -> String {
        "Basic " + Data("\(Self.user):\(Self.password)".utf8).base64EncodedString()
    }

    @Test func streamedBodyIsAskedForAgainAfterTheChallenge() async throws {
        let server = try protectedServer()
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
        let server = try protectedServer()
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
        let server = try protectedServer()
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

    @Test func wrongCredentialIsChallengedAgainWithAFailureCount() async throws {
        let server = try protectedServer()
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

    @Test func cancellingTheChallengeCancelsTheTask() async throws {
        let server = try protectedServer()
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
    }

    @Test func defaultHandlingUsesTheCredentialStorage() async throws {
        let server = try protectedServer()
        defer { server.stop() }
        let delegate = EventDelegate(EventDelegate.Hooks(challenge: { _, _, answer in answer(.performDefaultHandling, nil) }))
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let space = URLProtectionSpace(host: "127.0.0.1", port: server.port, protocol: "http", realm: Self.realm,
                                       authenticationMethod: NSURLAuthenticationMethodHTTPBasic)
        let storage = try #require(session.configuration.urlCredentialStorage)
        storage.setDefaultCredential(URLCredential(user: Self.user, password: Self.password, persistence: .forSession), for: space)
        let task = session.dataTask(with: server.url("/private"))
        try await HTTPTest.run(task, delegate)
        #expect(delegate.error(of: task) == nil)
        #expect(delegate.body(of: task) == Self.secret)
        #expect(server.requests(for: "/private").last?.header("Authorization") == expectedAuthorization())
    }

    @Test func withoutDelegateTheStoredCredentialIsUsed() async throws {
        let server = try protectedServer()
        defer { server.stop() }
        let session = HTTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        let space = URLProtectionSpace(host: "127.0.0.1", port: server.port, protocol: "http", realm: Self.realm,
                                       authenticationMethod: NSURLAuthenticationMethodHTTPBasic)
        session.configuration.urlCredentialStorage?.setDefaultCredential(
            URLCredential(user: Self.user, password: Self.password, persistence: .forSession), for: space)
        let result = try await session.loadData(server.url("/private"))
        #expect(result.error == nil)
        #expect(result.data == Self.secret)
    }

    @Test func withoutCredentialThe401IsTheResult() async throws {
        let server = try protectedServer()
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
        let server = try protectedServer()
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
        let server = try protectedServer()
        defer { server.stop() }
        let session = HTTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        let url = try #require(URL(string: "http://\(Self.user):wonder%20land@127.0.0.1:\(server.port)/private"))
        let result = try await session.loadData(url)
        #expect(result.error == nil)
        #expect(result.data == Self.secret)
    }

    @Test func permanentCredentialIsRememberedForTheNextTask() async throws {
        let server = try protectedServer()
        defer { server.stop() }
        let delegate = EventDelegate(EventDelegate.Hooks(challenge: { _, _, answer in
            answer(.useCredential, URLCredential(user: Self.user, password: Self.password, persistence: .forSession))
        }))
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let first = session.dataTask(with: server.url("/private"))
        try await HTTPTest.run(first, delegate)
        #expect(delegate.body(of: first) == Self.secret)
        let space = URLProtectionSpace(host: "127.0.0.1", port: server.port, protocol: "http", realm: Self.realm,
                                       authenticationMethod: NSURLAuthenticationMethodHTTPBasic)
        #expect(session.configuration.urlCredentialStorage?.credentials(for: space)?[Self.user]?.password == Self.password)
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
}
