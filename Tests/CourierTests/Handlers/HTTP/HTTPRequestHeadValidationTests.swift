import Foundation
import Testing
@testable import Courier

/// Header fields and methods that would break the request head (CR, LF, NUL, a name or method that is
/// not a token) are refused before anything is sent: the server never sees an injected line.
@Suite("HTTP request head validation")
struct HTTPRequestHeadValidationTests {

    struct Injection: Sendable, CustomTestStringConvertible {
        var name: String
        var value: String
        var method = "GET"
        var testDescription: String { "\(name.debugDescription): \(value.debugDescription) (\(method.debugDescription))" }
    }

    @Test(arguments: [
        Injection(name: "X-Note", value: "a\r\nX-Injected: yes"),
        Injection(name: "X-Note", value: "a\nX-Injected: yes"),
        Injection(name: "X-Note", value: "a\rX-Injected: yes"),
        Injection(name: "X-Note", value: "a\u{0}X-Injected: yes"),
        Injection(name: "X-Note\r\nX-Injected", value: "yes"),
        Injection(name: "X-Note: a\r\nX-Injected", value: "yes"),
        Injection(name: "X-Note", value: "fine", method: "GET /other HTTP/1.1\r\nX-Injected: yes\r\nX-Pad:"),
    ])
    func injectedLinesAreRefused(_ injection: Injection) async throws {
        let server = try FaultServer(fallback: .echo)
        defer { server.stop() }
        let session = HTTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        let url = server.url("/target")
        var request = URLRequest(url: url)
        request.httpMethod = injection.method
        // Set past `setValue`, which drops such values already: the HTTP layer's own check is
        // what is tested here (defence in depth).
        request.headerFields.set(injection.value, for: injection.name)
        let result = try await session.loadData(request)
        let error = try HTTPTest.urlError(result.error)
        #expect(error.code == .badURL)
        #expect(HTTPTest.hasFailingURL(error, url))
        #expect(result.response == nil)

        // The server is there and answers a clean request: nothing of the refused one reached it.
        let clean = try await session.loadData(server.url("/clean"))
        #expect(clean.error == nil)
        #expect(server.requests.map(\.path) == ["/clean"])
        #expect(server.requests.allSatisfy { $0.header("X-Injected") == nil })
    }

    @Test func foldedValueIsRefused() async throws {
        let server = try FaultServer(fallback: .echo)
        defer { server.stop() }
        let session = HTTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        var request = URLRequest(url: server.url("/target"))
        request.setValue("a\r\n X-Injected: yes", forHTTPHeaderField: "X-Note")
        let result = try await session.loadData(request)
        #expect((result.error as? URLError)?.code == .badURL)
    }

    @Test func foldedValueIsNeverSent() async throws {
        let server = try FaultServer(fallback: .echo)
        defer { server.stop() }
        let session = HTTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        var request = URLRequest(url: server.url("/target"))
        request.setValue("a\r\n X-Injected: yes", forHTTPHeaderField: "X-Note")
        _ = try await session.loadData(request)
        #expect(try await session.loadData(server.url("/clean")).error == nil)
        #expect(server.requests.map(\.path) == ["/clean"])
    }

    @Test func additionalHeaderWithALineBreakIsDropped() async throws {
        let server = try FaultServer(fallback: .echo)
        defer { server.stop() }
        let session = HTTPTest.session { $0.httpAdditionalHeaders = ["X-Note": "a\r\nX-Injected: yes", "X-Fine": "1"] }
        defer { session.finishTasksAndInvalidate() }
        #expect(try await session.loadData(server.url("/target")).error == nil)
        let received = try #require(server.requests.first)
        #expect(received.headers.map { $0.name.lowercased() }.filter { $0.hasPrefix("x-") } == ["x-fine"])
    }

    @Test func storedCookieWithALineBreakIsRefused() async throws {
        let server = try FaultServer(fallback: .echo)
        defer { server.stop() }
        let session = HTTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        let url = server.url("/target")
        let cookie = try #require(HTTPCookie(properties: [.name: "sid", .value: "v\r\nX-Injected: yes", .domain: "127.0.0.1", .path: "/"]))
        let storage = try #require(session.configuration.httpCookieStorage)
        storage.setCookie(cookie)
        let result = try await session.loadData(url)
        let error = try HTTPTest.urlError(result.error)
        #expect(error.code == .badURL)
        #expect(HTTPTest.hasFailingURL(error, url))
        storage.deleteCookie(cookie)
        #expect(try await session.loadData(server.url("/clean")).error == nil)
        #expect(server.requests.map(\.path) == ["/clean"])
        #expect(server.requests.allSatisfy { $0.header("X-Injected") == nil })
    }

    @Test func ordinaryValuesAreSentAsTheyAre() async throws {
        let server = try FaultServer(fallback: .echo)
        defer { server.stop() }
        let session = HTTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        var request = URLRequest(url: server.url("/target"))
        request.httpMethod = "PATCH"
        request.setValue("tab\there, quotes \"x\"", forHTTPHeaderField: "X-Note")
        request.setValue("", forHTTPHeaderField: "X-Empty")
        let result = try await session.loadData(request)
        #expect(result.error == nil)
        let received = try #require(server.requests.first)
        #expect(received.method == "PATCH")
        #expect(received.header("X-Note") == "tab\there, quotes \"x\"")
        #expect(received.header("X-Empty") == "")
    }
}
