import Foundation
import Testing
@testable import Courier

/// The URL cache does not cross users, against ``CacheTestServer`` on 127.0.0.1: a cacheable
/// response to a load that sent credentials (an `Authorization` header, the configuration's, a
/// credential answering a challenge, cookies from the request or from the cookie storage) is not
/// served to a load without them or with others; a `public` one is. Several sessions share one
/// cache, as every `.default` session shares `URLCache.shared`.
@Suite("HTTP cache and credentials")
struct HTTPCacheCredentialTests {

    /// A response fresh for a minute whose body names the credentials the server saw.
    private static func answer(_ request: CacheTestRequest, extra: [(String, String)] = []) -> CacheTestResponse {
        let who = request.header("Authorization") ?? request.header("Cookie") ?? "nobody"
        return .ok("for \(who)", [CacheTestServer.dateHeader, ("Cache-Control", "max-age=60")] + extra)
    }

    // MARK: Authorization

    @Test func authorizedResponseIsNotServedWithoutOrWithOtherAuthorization() async throws {
        let server = try CacheTestServer { request, _ in Self.answer(request) }
        defer { server.stop() }
        let store = CacheTest.store()
        defer { store.remove() }
        let session = CacheTest.session(cache: store.cache)
        defer { session.finishTasksAndInvalidate() }
        let url = server.url("/authorized")

        let alice = try await session.loadData(CacheTest.request(url, headers: ["Authorization": "Bearer alice"]))
        #expect(CacheTest.text(alice) == "for Bearer alice")
        #expect(store.cache.cachedResponse(for: URLRequest(url: url)) == nil)
        let bob = try await session.loadData(CacheTest.request(url, policy: .returnCacheDataElseLoad,
                                                               headers: ["Authorization": "Bearer bob"]))
        #expect(CacheTest.text(bob) == "for Bearer bob")
        let anonymous = try await session.loadData(url)
        #expect(CacheTest.text(anonymous) == "for nobody")
        #expect(server.count("/authorized") == 3)
    }

    @Test func configurationAuthorizationIsNotSharedWithAnotherSession() async throws {
        let server = try CacheTestServer { request, _ in Self.answer(request) }
        defer { server.stop() }
        let store = CacheTest.store()
        defer { store.remove() }
        let authorized = CacheTest.session(cache: store.cache) {
            $0.httpAdditionalHeaders = ["Authorization": "Bearer alice"]
        }
        defer { authorized.finishTasksAndInvalidate() }
        let other = CacheTest.session(cache: store.cache)
        defer { other.finishTasksAndInvalidate() }
        let url = server.url("/configured")

        #expect(CacheTest.text(try await authorized.loadData(url)) == "for Bearer alice")
        #expect(CacheTest.text(try await other.loadData(url)) == "for nobody")
        #expect(server.count("/configured") == 2)
    }

    @Test func responseToAChallengeCredentialIsNotSharedWithAnotherSession() async throws {
        let server = try CacheTestServer { request, _ in
            guard request.header("Authorization") != nil else {
                return CacheTestResponse(status: 401, headers: [("WWW-Authenticate", "Basic realm=\"cache\"")],
                                         body: Data("who are you?".utf8))
            }
            return Self.answer(request)
        }
        defer { server.stop() }
        let store = CacheTest.store()
        defer { store.remove() }
        // libcurl adds the Authorization header itself, after the delegate's answer.
        let answering = CacheTest.session(cache: store.cache, delegate: CredentialDelegate(user: "alice", password: "secret"))
        defer { answering.finishTasksAndInvalidate() }
        let other = CacheTest.session(cache: store.cache)
        defer { other.finishTasksAndInvalidate() }
        let url = server.url("/challenged")

        let alice = try await answering.loadData(url)
        #expect((alice.response as? HTTPURLResponse)?.statusCode == 200)
        #expect(CacheTest.text(alice).hasPrefix("for Basic "))
        let stranger = try await other.loadData(url)
        #expect((stranger.response as? HTTPURLResponse)?.statusCode == 401)
        #expect(!CacheTest.text(stranger).hasPrefix("for Basic "))
    }

    @Test func publicResponseToAnAuthorizedRequestIsServed() async throws {
        let server = try CacheTestServer { request, _ in Self.answer(request, extra: [("Cache-Control", "public")]) }
        defer { server.stop() }
        let store = CacheTest.store()
        defer { store.remove() }
        let session = CacheTest.session(cache: store.cache)
        defer { session.finishTasksAndInvalidate() }
        let url = server.url("/public")

        #expect(CacheTest.text(try await session.loadData(CacheTest.request(url, headers: ["Authorization": "Bearer alice"])))
            == "for Bearer alice")
        #expect(CacheTest.text(try await session.loadData(url)) == "for Bearer alice")
        #expect(CacheTest.text(try await session.loadData(CacheTest.request(url, headers: ["Authorization": "Bearer bob"])))
            == "for Bearer alice")
        #expect(server.count("/public") == 1)
    }

    @Test func privateResponseToAnAuthorizedRequestIsNotStoredEvenIfPublic() async throws {
        let server = try CacheTestServer { request, _ in Self.answer(request, extra: [("Cache-Control", "public, private")]) }
        defer { server.stop() }
        let store = CacheTest.store()
        defer { store.remove() }
        let session = CacheTest.session(cache: store.cache)
        defer { session.finishTasksAndInvalidate() }
        let url = server.url("/private")

        _ = try await session.loadData(CacheTest.request(url, headers: ["Authorization": "Bearer alice"]))
        #expect(CacheTest.text(try await session.loadData(url)) == "for nobody")
        #expect(server.count("/private") == 2)
    }

    // MARK: Cookies

    @Test func responseToACookieHeaderIsServedOnlyWithTheSameCookie() async throws {
        let server = try CacheTestServer { request, _ in Self.answer(request) }
        defer { server.stop() }
        let store = CacheTest.store()
        defer { store.remove() }
        let session = CacheTest.session(cache: store.cache)
        defer { session.finishTasksAndInvalidate() }
        let url = server.url("/cookie")

        #expect(CacheTest.text(try await session.loadData(CacheTest.request(url, headers: ["Cookie": "id=alice"]))) == "for id=alice")
        #expect(CacheTest.text(try await session.loadData(url)) == "for nobody")
        #expect(CacheTest.text(try await session.loadData(CacheTest.request(url, headers: ["Cookie": "id=bob"]))) == "for id=bob")
        #expect(server.count("/cookie") == 3)
        // The same cookie finds its own response (the last one stored for the URL is Bob's).
        #expect(CacheTest.text(try await session.loadData(CacheTest.request(url, headers: ["Cookie": "id=bob"]))) == "for id=bob")
        #expect(server.count("/cookie") == 3)
        // The app's own lookup, without the task's cookies, does not find it either.
        #expect(store.cache.cachedResponse(for: URLRequest(url: url)) == nil)
    }

    @Test func responseToStoredCookiesIsNotServedToAnotherSession() async throws {
        let server = try CacheTestServer { request, _ in Self.answer(request) }
        defer { server.stop() }
        let store = CacheTest.store()
        defer { store.remove() }
        let url = server.url("/jar")
        let jar = HTTPCookieStorage()
        let cookie = try #require(HTTPCookie(properties: [.name: "session", .value: "alice", .domain: "127.0.0.1", .path: "/"]))
        jar.setCookie(cookie)
        let withCookies = CacheTest.session(cache: store.cache) {
            $0.httpCookieStorage = jar
            $0.httpShouldSetCookies = true
        }
        defer { withCookies.finishTasksAndInvalidate() }
        let without = CacheTest.session(cache: store.cache) { $0.httpCookieStorage = HTTPCookieStorage() }
        defer { without.finishTasksAndInvalidate() }

        #expect(CacheTest.text(try await withCookies.loadData(url)) == "for session=alice")
        // The lookup sees the cookie the handler adds: the same session gets its cached response…
        #expect(CacheTest.text(try await withCookies.loadData(url)) == "for session=alice")
        #expect(server.count("/jar") == 1)
        // …and another session, with other cookies or none, does not.
        #expect(CacheTest.text(try await without.loadData(url)) == "for nobody")
        #expect(server.count("/jar") == 2)
    }

    @Test func responseThatSetsACookieIsNotStored() async throws {
        let server = try CacheTestServer { request, count in
            Self.answer(request, extra: [("Set-Cookie", "session=s\(count); Path=/")])
        }
        defer { server.stop() }
        let store = CacheTest.store()
        defer { store.remove() }
        let first = CacheTest.session(cache: store.cache) { $0.httpShouldSetCookies = false }
        defer { first.finishTasksAndInvalidate() }
        let url = server.url("/login")

        _ = try await first.loadData(url)
        let second = try await first.loadData(url)
        #expect((second.response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Set-Cookie") == "session=s2; Path=/")
        #expect(server.count("/login") == 2)
    }

    // MARK: Rules

    @Test func storagePolicyKeepsAuthorizedAndCookieResponsesApart() throws {
        let url = try #require(URL(string: "https://example.com/a"))
        func response(_ control: String?, _ extra: [String: String] = [:]) throws -> HTTPURLResponse {
            var fields = extra
            if let control { fields["Cache-Control"] = control }
            return try #require(HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: fields))
        }
        let plain = URLRequest(url: url)
        let authorized = HTTPCacheCredentials(authorizes: true, cookie: nil)
        #expect(HTTPCacheStorage.policy(for: try response("max-age=60"), request: plain, credentials: authorized) == .notAllowed)
        #expect(HTTPCacheStorage.policy(for: try response("max-age=60, must-revalidate"), request: plain, credentials: authorized) == .notAllowed)
        #expect(HTTPCacheStorage.policy(for: try response("max-age=60, public"), request: plain, credentials: authorized) == .allowed)
        #expect(HTTPCacheStorage.policy(for: try response("public, private"), request: plain, credentials: authorized) == .notAllowed)
        #expect(HTTPCacheStorage.policy(for: try response("private"), request: plain) == .allowed)
        #expect(HTTPCacheStorage.policy(for: try response(nil, ["Set-Cookie": "a=b"]), request: plain) == .notAllowed)
        #expect(HTTPCacheStorage.policy(for: try response("public", ["Set-Cookie": "a=b"]), request: plain) == .allowed)

        // A cookie response is stored only for a request marked with that cookie's scope.
        let withCookie = HTTPCacheCredentials(authorizes: false, cookie: "id=1")
        #expect(HTTPCacheStorage.policy(for: try response("max-age=60"), request: plain, credentials: withCookie) == .notAllowed)
        var marked = plain
        URLCacheScope.mark(&marked, with: HTTPCacheCredentials.scope(ofCookie: "id=1"))
        #expect(HTTPCacheStorage.policy(for: try response("max-age=60"), request: marked, credentials: withCookie) == .allowed)
        #expect(HTTPCacheStorage.policy(for: try response("max-age=60"), request: marked) == .notAllowed)
        #expect(HTTPCacheCredentials.scope(ofCookie: "id=1")?.hasPrefix("sha256:") == true)
        #expect(HTTPCacheCredentials.scope(ofCookie: "id=1") != HTTPCacheCredentials.scope(ofCookie: "id=2"))
        #expect(HTTPCacheCredentials.requestAuthorizes(URLRequest(url: try #require(URL(string: "https://u:p@example.com/")))))
    }
}

/// Answers every server challenge with one user and password.
private final class CredentialDelegate: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    private let credential: URLCredential

    init(user: String, password: String) {
        credential = URLCredential(user: user, password: password, persistence: .none)
        super.init()
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
                    completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        if challenge.previousFailureCount == 0,
           challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodHTTPBasic {
            completionHandler(.useCredential, credential)
        } else {
            completionHandler(.performDefaultHandling, nil)
        }
    }
}
