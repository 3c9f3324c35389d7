import Foundation
import Testing
@testable import Courier

/// Cookies between nginx and the session's cookie store: stored from `Set-Cookie`, sent back, and
/// the switches that turn that off.
@Suite("HTTP cookies")
struct HTTPCookieTests {

    /// A cookie name no other test uses.
    private func uniqueName() -> String { "c" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(12).lowercased() }

    @Test func setCookieIsStoredAndSentBack() async throws {
        let server = try await HTTPTest.nginx()
        let session = HTTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        let name = uniqueName()
        let set = try await session.loadData(server.url("/cookies/set?name=\(name)&value=oatmeal"))
        #expect(set.error == nil)
        #expect(try HTTPTest.http(set.response).value(forHTTPHeaderField: "Set-Cookie") == "\(name)=oatmeal; Path=/")

        let storage = try #require(session.configuration.httpCookieStorage)
        let stored = storage.cookies(for: server.url("/"))?.filter { $0.name == name } ?? []
        #expect(stored.count == 1)
        #expect(stored.first?.value == "oatmeal")
        #expect(stored.first?.domain == "127.0.0.1")
        #expect(stored.first?.path == "/")

        let shown = try await session.loadData(server.url("/cookies/show"))
        #expect(String(decoding: shown.data ?? Data(), as: UTF8.self).contains("\(name)=oatmeal"))
    }

    @Test func cookiesStoredByTheAppAreSent() async throws {
        let server = try await HTTPTest.nginx()
        let session = HTTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        let name = uniqueName()
        let cookie = try #require(HTTPCookie(properties: [.name: name, .value: "chip", .domain: "127.0.0.1", .path: "/"]))
        session.configuration.httpCookieStorage?.setCookie(cookie)
        let shown = try await session.loadData(server.url("/cookies/show"))
        #expect(String(decoding: shown.data ?? Data(), as: UTF8.self) == "\(name)=chip")
    }

    @Test func httpShouldSetCookiesFalseDisablesBothDirections() async throws {
        let server = try await HTTPTest.nginx()
        let session = HTTPTest.session { $0.httpShouldSetCookies = false }
        defer { session.finishTasksAndInvalidate() }
        let name = uniqueName()
        let storage = try #require(session.configuration.httpCookieStorage)
        _ = try await session.loadData(server.url("/cookies/set?name=\(name)&value=nope"))
        #expect(storage.cookies(for: server.url("/"))?.contains { $0.name == name } != true)

        let preset = try #require(HTTPCookie(properties: [.name: name + "x", .value: "stored", .domain: "127.0.0.1", .path: "/"]))
        storage.setCookie(preset)
        let shown = try await session.loadData(server.url("/cookies/show"))
        #expect(shown.data == Data())
    }

    @Test func requestHTTPShouldHandleCookiesFalseDisablesBothDirections() async throws {
        let server = try await HTTPTest.nginx()
        let session = HTTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        let name = uniqueName()
        let storage = try #require(session.configuration.httpCookieStorage)
        var setRequest = URLRequest(url: server.url("/cookies/set?name=\(name)&value=nope"))
        setRequest.httpShouldHandleCookies = false
        _ = try await session.loadData(setRequest)
        #expect(storage.cookies(for: server.url("/"))?.contains { $0.name == name } != true)

        let preset = try #require(HTTPCookie(properties: [.name: name, .value: "stored", .domain: "127.0.0.1", .path: "/"]))
        storage.setCookie(preset)
        var showRequest = URLRequest(url: server.url("/cookies/show"))
        showRequest.httpShouldHandleCookies = false
        let hidden = try await session.loadData(showRequest)
        #expect(hidden.data == Data())
        // The same request with cookie handling on sends it.
        let shown = try await session.loadData(server.url("/cookies/show"))
        #expect(shown.data == Data("\(name)=stored".utf8))
    }

    @Test func acceptPolicyNeverStoresNothing() async throws {
        let server = try await HTTPTest.nginx()
        let session = HTTPTest.session { $0.httpCookieAcceptPolicy = .never }
        defer { session.finishTasksAndInvalidate() }
        let name = uniqueName()
        _ = try await session.loadData(server.url("/cookies/set?name=\(name)&value=nope"))
        #expect(session.configuration.httpCookieStorage?.cookies(for: server.url("/"))?.contains { $0.name == name } != true)
    }

    @Test func ephemeralSessionsDoNotShareCookies() async throws {
        let server = try await HTTPTest.nginx()
        let first = HTTPTest.session()
        let second = HTTPTest.session()
        defer {
            first.finishTasksAndInvalidate()
            second.finishTasksAndInvalidate()
        }
        let name = uniqueName()
        _ = try await first.loadData(server.url("/cookies/set?name=\(name)&value=mine"))
        let inFirst = try await first.loadData(server.url("/cookies/show"))
        #expect(String(decoding: inFirst.data ?? Data(), as: UTF8.self).contains("\(name)=mine"))
        let inSecond = try await second.loadData(server.url("/cookies/show"))
        #expect(inSecond.data == Data())
    }

    @Test func cookiesFromARedirectResponseAreStoredAndSent() async throws {
        let server = try FaultServer(routes: [
            "/login": .respond(.ok(Data(), status: 302, reason: "Found",
                                   headers: [("Location", "/home"), ("Set-Cookie", "token=abc123; Path=/")])),
        ], fallback: .echo)
        defer { server.stop() }
        let session = HTTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        let result = try await session.loadData(server.url("/login"))
        #expect(result.error == nil)
        let echo = try HTTPTest.echoed(result.data)
        #expect(echo.target == "/home")
        #expect(echo.header("cookie") == "token=abc123")
        #expect(session.configuration.httpCookieStorage?.cookies(for: server.url("/"))?.map(\.name) == ["token"])
    }

    @Test func pathAndMultipleCookies() async throws {
        let server = try FaultServer(routes: [
            "/set": .respond(.ok(Data(), headers: [
                ("Set-Cookie", "a=1; Path=/"),
                ("Set-Cookie", "b=2; Path=/private"),
                ("Set-Cookie", "c=3; Path=/; Max-Age=0"),
            ])),
        ], fallback: .echo)
        defer { server.stop() }
        let session = HTTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        _ = try await session.loadData(server.url("/set"))
        let root = try HTTPTest.echoed(try await session.loadData(server.url("/other")).data)
        #expect(root.header("cookie") == "a=1")
        let privatePath = try HTTPTest.echoed(try await session.loadData(server.url("/private/page")).data)
        let sent = Set((privatePath.header("cookie") ?? "").components(separatedBy: "; "))
        #expect(sent == ["a=1", "b=2"])
    }
}
