import Foundation
import Testing
@testable import Courier

/// HTTP redirects through the handler and the task: how each status rewrites the request, what the
/// delegate can do, the redirect limit, headers that must not cross origins, and redirects that
/// leave HTTP.
@Suite("HTTP redirects")
struct HTTPRedirectTests {

    struct MethodCase: Sendable, CustomTestStringConvertible {
        var status: Int
        var method: String
        var expectedMethod: String
        var keepsBody: Bool
        var testDescription: String { "\(status) after \(method) → \(expectedMethod)\(keepsBody ? " with body" : "")" }
    }

    @Test(arguments: [
        MethodCase(status: 301, method: "POST", expectedMethod: "GET", keepsBody: false),
        MethodCase(status: 302, method: "POST", expectedMethod: "GET", keepsBody: false),
        MethodCase(status: 303, method: "POST", expectedMethod: "GET", keepsBody: false),
        MethodCase(status: 303, method: "PUT", expectedMethod: "GET", keepsBody: false),
        MethodCase(status: 307, method: "POST", expectedMethod: "POST", keepsBody: true),
        MethodCase(status: 308, method: "POST", expectedMethod: "POST", keepsBody: true),
        MethodCase(status: 307, method: "PUT", expectedMethod: "PUT", keepsBody: true),
        MethodCase(status: 302, method: "PUT", expectedMethod: "PUT", keepsBody: true),
        MethodCase(status: 301, method: "GET", expectedMethod: "GET", keepsBody: false),
    ])
    func statusDecidesTheNextMethod(_ example: MethodCase) async throws {
        let server = try await HTTPTest.nginx()
        let delegate = EventDelegate()
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        var request = URLRequest(url: server.url("/redirect/\(example.status)"))
        request.httpMethod = example.method
        let body = Data("field=value&other=\(example.status)".utf8)
        if example.method != "GET" {
            request.httpBody = body
            request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        }
        let task = session.dataTask(with: request)
        try await HTTPTest.run(task, delegate)
        #expect(delegate.error(of: task) == nil)
        let echo = try HTTPTest.echoed(delegate.body(of: task))
        #expect(echo.method == example.expectedMethod)
        if example.keepsBody {
            #expect(echo.body == body)
            #expect(echo.header("content-type") == "application/x-www-form-urlencoded")
        } else {
            #expect(echo.bodyLength == 0)
            #expect(echo.header("content-type") == nil)
        }
        #expect(delegate.redirectResponses(of: task).map(\.statusCode) == [example.status])
        #expect(delegate.response(of: task)?.url == server.url("/echo"))
        #expect(task.currentRequest?.url == server.url("/echo"))
        #expect(task.originalRequest?.url == server.url("/redirect/\(example.status)"))
    }

    @Test func delegateCanRewriteTheRedirect() async throws {
        let server = try await HTTPTest.nginx()
        let delegate = EventDelegate(EventDelegate.Hooks(redirect: { _, _, proposed, answer in
            var changed = proposed
            changed.url = server.url(NginxServer.Files.hello)
            answer(changed)
        }))
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: server.url("/redirect/302"))
        try await HTTPTest.run(task, delegate)
        #expect(delegate.error(of: task) == nil)
        #expect(delegate.body(of: task) == NginxServer.Files.helloContents)
        #expect(delegate.response(of: task)?.url == server.url(NginxServer.Files.hello))
    }

    @Test func refusedRedirectBecomesTheFinalResponse() async throws {
        let server = try await HTTPTest.nginx()
        let delegate = EventDelegate(EventDelegate.Hooks(redirect: { _, _, _, answer in answer(nil) }))
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: server.url("/redirect/302"))
        try await HTTPTest.run(task, delegate)
        #expect(delegate.error(of: task) == nil)
        let response = try HTTPTest.http(delegate.response(of: task))
        #expect(response.statusCode == 302)
        #expect(response.value(forHTTPHeaderField: "Location") == server.url("/echo").absoluteString)
        #expect(response.url == server.url("/redirect/302"))
        // Apple: refusing "causes the body of the redirect response to be delivered as the payload".
        #expect(String(decoding: delegate.body(of: task), as: UTF8.self).contains("302 Found"))
    }

    @Test func refusedRedirectWithCompletionHandlerKeepsTheBody() async throws {
        let server = try await HTTPTest.nginx()
        let delegate = EventDelegate(EventDelegate.Hooks(redirect: { _, _, _, answer in answer(nil) }))
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let result = try await session.loadData(server.url("/redirect/301"))
        #expect(result.error == nil)
        #expect(try HTTPTest.http(result.response).statusCode == 301)
        #expect(String(decoding: result.data ?? Data(), as: UTF8.self).contains("301 Moved Permanently"))
    }

    @Test func withoutDelegateRedirectsAreFollowed() async throws {
        let server = try await HTTPTest.nginx()
        let session = HTTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        let result = try await session.loadData(server.url("/redirect/hello"))
        #expect(result.error == nil)
        #expect(result.data == NginxServer.Files.helloContents)
        #expect(result.response?.url == server.url(NginxServer.Files.hello))
    }

    @Test func sixteenRedirectsAreFollowed() async throws {
        let server = try await HTTPTest.nginx()
        let delegate = EventDelegate()
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: server.url("/hops/16"))
        try await HTTPTest.run(task, delegate)
        #expect(delegate.error(of: task) == nil)
        #expect(delegate.body(of: task) == Data("arrived\n".utf8))
        #expect(delegate.redirectResponses(of: task).count == 16)
        let metrics = try #require(delegate.metrics(of: task))
        #expect(metrics.redirectCount == 16)
        #expect(metrics.transactionMetrics.count == 17)
    }

    @Test func moreThanSixteenRedirectsFail() async throws {
        let server = try await HTTPTest.nginx()
        let session = HTTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        let url = server.url("/hops/20")
        let result = try await session.loadData(url)
        let error = try HTTPTest.urlError(result.error)
        #expect(error.code == .httpTooManyRedirects)
        #expect(error.failingURL != nil)
        #expect(result.data == nil)
    }

    @Test func credentialsAndCookiesDoNotCrossOrigins() async throws {
        let server = try await HTTPTest.nginx()
        let session = HTTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        func load(_ path: String) async throws -> EchoedRequest {
            var request = URLRequest(url: server.url(path))
            request.setValue("Basic dXNlcjpwYXNz", forHTTPHeaderField: "Authorization")
            request.setValue("session=secret", forHTTPHeaderField: "Cookie")
            request.setValue("kept", forHTTPHeaderField: "X-Custom")
            let result = try await session.loadData(request)
            #expect(result.error == nil)
            return try HTTPTest.echoed(result.data)
        }
        let sameOrigin = try await load("/redirect/302")
        #expect(sameOrigin.header("authorization") == "Basic dXNlcjpwYXNz")
        #expect(sameOrigin.header("cookie") == "session=secret")
        #expect(sameOrigin.header("x-custom") == "kept")

        let crossOrigin = try await load("/redirect/cross")
        #expect(crossOrigin.header("host") == "127.0.0.1:\(server.otherOriginPort)")
        #expect(crossOrigin.header("authorization") == nil)
        #expect(crossOrigin.header("cookie") == nil)
        #expect(crossOrigin.header("x-custom") == "kept")
    }

    @Test func crossOrigin307KeepsBodyButNotAuthorization() async throws {
        let server = try await HTTPTest.nginx()
        let session = HTTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        var request = URLRequest(url: server.url("/redirect/cross307"))
        request.httpMethod = "POST"
        request.httpBody = Data("payload".utf8)
        request.setValue("Bearer token", forHTTPHeaderField: "Authorization")
        let result = try await session.loadData(request)
        #expect(result.error == nil)
        let echo = try HTTPTest.echoed(result.data)
        #expect(echo.method == "POST")
        #expect(echo.body == Data("payload".utf8))
        #expect(echo.header("authorization") == nil)
        #expect(result.response?.url == server.otherOriginURL("/echo"))
    }

    @Test(arguments: ["ftp://127.0.0.1:9/file.txt", "mailto:someone@example.invalid", "courier-unknown://host/path"])
    func redirectOutOfHTTPIsNotFollowed(location: String) async throws {
        let server = try FaultServer(routes: [
            "/away": .respond(.ok(Data("moved away".utf8), status: 302, reason: "Found", headers: [("Location", location)])),
        ])
        defer { server.stop() }
        let delegate = EventDelegate()
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: server.url("/away"))
        try await HTTPTest.run(task, delegate)
        #expect(delegate.error(of: task) == nil)
        #expect(delegate.redirectResponses(of: task).isEmpty)
        let response = try HTTPTest.http(delegate.response(of: task))
        #expect(response.statusCode == 302)
        #expect(response.value(forHTTPHeaderField: "Location") == location)
        #expect(delegate.body(of: task) == Data("moved away".utf8))
        #expect(server.requests.count == 1)
    }

    @Test func relativeLocationsResolveAgainstTheResponseURL() async throws {
        let server = try FaultServer(routes: [
            "/a/b/start": .respond(.ok(Data(), status: 302, reason: "Found", headers: [("Location", "../next?x=1")])),
            "/a/next": .respond(.ok(Data(), status: 307, reason: "Temporary Redirect", headers: [("Location", "/final")])),
            "/final": .respond(.ok(Data("done".utf8))),
        ])
        defer { server.stop() }
        let session = HTTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        let result = try await session.loadData(server.url("/a/b/start"))
        #expect(result.error == nil)
        #expect(result.data == Data("done".utf8))
        #expect(result.response?.url == server.url("/final"))
        #expect(server.requests.map(\.target) == ["/a/b/start", "/a/next?x=1", "/final"])
    }

    @Test func redirectWithoutLocationIsFinal() async throws {
        let server = try FaultServer(routes: [
            "/nowhere": .respond(.ok(Data("no location".utf8), status: 301, reason: "Moved Permanently")),
        ])
        defer { server.stop() }
        let session = HTTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        let result = try await session.loadData(server.url("/nowhere"))
        #expect(result.error == nil)
        #expect(try HTTPTest.http(result.response).statusCode == 301)
        #expect(result.data == Data("no location".utf8))
    }

    /// Where an upload task's body comes from.
    enum UploadSource: String, CaseIterable, Sendable { case data, file }

    struct UploadCase: Sendable, CustomTestStringConvertible {
        var status: Int
        var source: UploadSource
        var keepsBody: Bool
        var testDescription: String { "upload from \(source.rawValue), \(status) → \(keepsBody ? "same method and body" : "GET without body")" }
    }

    @Test(arguments: [
        UploadCase(status: 303, source: .data, keepsBody: false),
        UploadCase(status: 303, source: .file, keepsBody: false),
        UploadCase(status: 302, source: .data, keepsBody: false),
        UploadCase(status: 307, source: .data, keepsBody: true),
        UploadCase(status: 307, source: .file, keepsBody: true),
        UploadCase(status: 308, source: .file, keepsBody: true),
    ])
    func uploadTaskBodyAfterRedirect(_ example: UploadCase) async throws {
        let server = try FaultServer(routes: [
            "/upload": .respond(.ok(Data("see other".utf8), status: example.status, reason: "Redirect", headers: [("Location", "/landing")])),
            "/landing": .respond(.ok(Data("landed".utf8))),
        ])
        defer { server.stop() }
        let body = try HTTPTest.randomBytes(300_000)
        let file = try TestFiles.make(body)
        defer { TestFiles.remove(file) }
        let delegate = EventDelegate()
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        var request = URLRequest(url: server.url("/upload"))
        request.httpMethod = "POST"
        request.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
        let task = switch example.source {
        case .data: session.uploadTask(with: request, from: body)
        case .file: session.uploadTask(with: request, fromFile: file)
        }
        try await HTTPTest.run(task, delegate)
        #expect(delegate.error(of: task) == nil)
        #expect(delegate.body(of: task) == Data("landed".utf8))
        let first = try #require(server.requests(for: "/upload").first)
        #expect(first.method == "POST")
        #expect(first.bodyLength == body.count)
        let second = try #require(server.requests(for: "/landing").first)
        #expect(server.requests.count == 2)
        if example.keepsBody {
            #expect(second.method == "POST")
            #expect(second.bodyLength == body.count)
            #expect(second.bodyHash == StreamHash.of(body))
            #expect(second.body == body)
            #expect(second.header("Content-Length") == "\(body.count)")
        } else {
            #expect(second.method == "GET")
            #expect(second.bodyLength == 0)
            #expect(second.header("Content-Length") == nil)
            #expect(second.header("Transfer-Encoding") == nil)
            #expect(second.header("Content-Type") == nil)
        }
    }

    /// Two servers, so two origins: `origin` redirects `/same` to its own `/landing` and `/away` to
    /// `other`'s `/hop`, which redirects on to `other`'s `/landing`.
    private static func twoOrigins() throws -> (origin: FaultServer, other: FaultServer) {
        let other = try FaultServer(routes: [
            "/hop": .respond(.ok(Data(), status: 302, reason: "Found", headers: [("Location", "/landing")])),
            "/landing": .respond(.ok(Data("other origin".utf8))),
        ])
        do {
            let origin = try FaultServer(routes: [
                "/away": .respond(.ok(Data(), status: 302, reason: "Found", headers: [("Location", other.url("/hop").absoluteString)])),
                "/same": .respond(.ok(Data(), status: 302, reason: "Found", headers: [("Location", "/landing")])),
                "/landing": .respond(.ok(Data("same origin".utf8))),
            ])
            return (origin, other)
        } catch {
            other.stop()
            throw error
        }
    }

    @Test func sessionAuthorizationAndCookieDoNotFollowARedirectToAnotherOrigin() async throws {
        let (origin, other) = try Self.twoOrigins()
        defer { other.stop() }
        defer { origin.stop() }
        let session = HTTPTest.session { configuration in
            configuration.httpAdditionalHeaders = ["Authorization": "Bearer session-secret", "Cookie": "sid=session-secret",
                                                   "X-Session": "kept"]
        }
        defer { session.finishTasksAndInvalidate() }

        let same = try await session.loadData(origin.url("/same"))
        #expect(same.error == nil)
        #expect(same.data == Data("same origin".utf8))
        let sameLanding = try #require(origin.requests(for: "/landing").first)
        #expect(sameLanding.header("Authorization") == "Bearer session-secret")
        #expect(sameLanding.header("Cookie") == "sid=session-secret")

        let away = try await session.loadData(origin.url("/away"))
        #expect(away.error == nil)
        #expect(away.data == Data("other origin".utf8))
        let start = try #require(origin.requests(for: "/away").first)
        #expect(start.header("Authorization") == "Bearer session-secret")
        #expect(start.header("Cookie") == "sid=session-secret")
        // The first hop to the other origin and the same-origin hop after it.
        let foreign = other.requests
        #expect(foreign.map(\.path) == ["/hop", "/landing"])
        for request in foreign {
            #expect(request.header("Authorization") == nil, "\(request.path)")
            #expect(request.header("Cookie") == nil, "\(request.path)")
            #expect(request.header("X-Session") == "kept", "\(request.path)")
        }
    }

    /// A `Proxy-Authorization` the app sets — on the request or in `httpAdditionalHeaders` — is sent
    /// as a header field, which reaches the origin server on a direct connection: it stays within
    /// the origin, as `Authorization` does.
    @Test func appSetProxyAuthorizationDoesNotFollowARedirectToAnotherOrigin() async throws {
        let (origin, other) = try Self.twoOrigins()
        defer { other.stop() }
        defer { origin.stop() }
        let requestValue = "Basic " + Data("request:secret".utf8).base64EncodedString()
        let sessionValue = "Basic " + Data("session:secret".utf8).base64EncodedString()

        let plain = HTTPTest.session()
        defer { plain.finishTasksAndInvalidate() }
        for path in ["/same", "/away"] {
            var request = URLRequest(url: origin.url(path))
            request.setValue(requestValue, forHTTPHeaderField: "Proxy-Authorization")
            let result = try await plain.loadData(request)
            #expect(result.error == nil, "\(path): \(String(describing: result.error))")
        }
        let configured = HTTPTest.session { $0.httpAdditionalHeaders = ["Proxy-Authorization": sessionValue] }
        defer { configured.finishTasksAndInvalidate() }
        for path in ["/same", "/away"] {
            let result = try await configured.loadData(origin.url(path))
            #expect(result.error == nil, "\(path): \(String(describing: result.error))")
        }
        #expect(origin.requests(for: "/landing").map { $0.header("Proxy-Authorization") } == [requestValue, sessionValue])
        #expect(origin.requests(for: "/away").map { $0.header("Proxy-Authorization") } == [requestValue, sessionValue])
        // Two loads, each reaching the other origin's /hop and then its /landing.
        let foreign = other.requests
        #expect(foreign.map(\.path) == ["/hop", "/landing", "/hop", "/landing"])
        #expect(foreign.allSatisfy { $0.header("Proxy-Authorization") == nil }, "\(foreign.map { $0.header("Proxy-Authorization") })")
    }

    @Test(arguments: ["file", "ftp://127.0.0.1:9/file.txt", "data:,delegate%20supplied"])
    func delegateRedirectOutOfHTTPIsNotLoaded(target: String) async throws {
        let server = try FaultServer(routes: [
            "/start": .respond(.ok(Data("moved".utf8), status: 302, reason: "Found", headers: [("Location", "/next")])),
        ])
        defer { server.stop() }
        let secret = try TestFiles.make(Data("local file contents".utf8), name: "secret.txt")
        defer { TestFiles.remove(secret) }
        let replacement = target == "file" ? secret : try #require(URL(string: target))
        let delegate = EventDelegate(EventDelegate.Hooks(redirect: { _, _, _, answer in answer(URLRequest(url: replacement)) }))
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: server.url("/start"))
        try await HTTPTest.run(task, delegate)
        let error = try HTTPTest.urlError(delegate.error(of: task))
        #expect(error.code == .unsupportedURL)
        #expect(error.failingURL == replacement)
        #expect(delegate.redirectResponses(of: task).map(\.statusCode) == [302])
        #expect(delegate.response(of: task) == nil)
        #expect(delegate.body(of: task).isEmpty)
        #expect(server.requests.map(\.path) == ["/start"])
    }
}
