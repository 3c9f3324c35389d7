import Foundation
import Testing
@testable import Courier

/// Redirects a plugin reports (`Tests/PluginFixtures/Redirecting`): they lead only to the plugin's
/// own schemes and http(s) — never to `file:`, `data:`, `ftp(s):`, `sftp:`, another plugin's scheme or
/// a scheme the app registered — whether the plugin proposes them or a delegate answers with them;
/// and credentials do not follow them to another origin.
@Suite("Plugin redirects")
struct PluginRedirectTests {
    /// `redirecting://fixture/to?<target>`: a redirect with a plain `URLResponse`;
    /// `redirecting://fixture/http-to?<target>`: with an HTTP-like 302.
    private func redirect(to target: String, http: Bool = false, scheme: String = "redirecting") -> URL {
        URL(string: "\(scheme)://fixture/\(http ? "http-to" : "to")?\(target)")!
    }

    /// Today's bug: a plugin's redirect to `file:///etc/hostname` was loaded, and the file's contents
    /// came back as the body of the plugin's URL.
    @Test func aRedirectToALocalFileIsNotLoaded() async throws {
        try InstalledPlugins.install()
        let hostname = try Data(contentsOf: URL(fileURLWithPath: "/etc/hostname"))
        let result = await fetch(redirect(to: "file:///etc/hostname"))
        let error = try #require(result.urlError, "the redirect was followed: \(result.text)")
        #expect(error.code == .unsupportedURL)
        #expect(error.failingURL == URL(string: "file:///etc/hostname"))
        #expect(error.localizedDescription.contains("redirecting"), "names the plugin: \(error.localizedDescription)")
        #expect(result.data == nil)
        #expect(result.data != hostname)
    }

    /// Every scheme a plugin's redirect may not lead to: Courier's other built-in schemes, another
    /// plugin's, and one an app registered a `URLProtocol` for — with or without an HTTP-like response.
    @Test(arguments: [false, true])
    func aRedirectLeavingThePluginsSchemesFailsBeforeAnythingIsLoaded(http: Bool) async throws {
        try InstalledPlugins.install()
        let gopher = try #require(GopherTestServer.shared, "the gopher test server did not start")
        let probe = "/probe-\(UUID().uuidString)"
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForResource = pluginTestLimit
        configuration.protocolClasses = [AppSchemeProtocol.self]
        let session = URLSession(configuration: configuration)
        defer { session.finishTasksAndInvalidate() }
        let targets = ["file:///etc/hostname", "data:,not%20for%20plugins", "ftp://127.0.0.1:9/file.txt",
                       "ftps://127.0.0.1:9/file.txt", "sftp://127.0.0.1:9/file.txt",
                       gopher.url("/1\(probe)").absoluteString, "zip:///tmp/archive.zip!/entry.txt",
                       "\(AppSchemeProtocol.scheme)://app/secret"]
        let startsBefore = AppSchemeProtocol.starts.current
        for target in targets {
            let result = await fetch(redirect(to: target, http: http), session: session)
            #expect(result.urlError?.code == .unsupportedURL, "\(target): \(String(describing: result.error))")
            #expect(result.urlError?.failingURL?.absoluteString == target)
            #expect(result.data == nil, "\(target)")
        }
        #expect(!gopher.selectors.contains { $0.contains(probe) }, "another plugin's server was not asked")
        #expect(AppSchemeProtocol.starts.current == startsBefore, "the app's handler was not started")
    }

    /// The plugin's own schemes — the one it was asked for and its others — and http(s) are followed.
    @Test func aRedirectToThePluginsOwnSchemesOrToHTTPIsFollowed() async throws {
        try InstalledPlugins.install()
        for target in ["redirecting://fixture/headers", "redirecting-alt://fixture/headers"] {
            let result = await fetch(redirect(to: target))
            #expect(result.error == nil, "\(target): \(String(describing: result.error))")
            #expect(result.text.hasPrefix("GET\n"))
            #expect(result.response?.url?.absoluteString == target)
        }
        // The gopher test server answers anything; that it was asked is what counts here.
        let gopher = try #require(GopherTestServer.shared, "the gopher test server did not start")
        let probe = "/http-probe-\(UUID().uuidString)"
        _ = await fetch(redirect(to: "http://127.0.0.1:\(gopher.port)\(probe)", http: true))
        #expect(gopher.selectors.contains { $0.hasPrefix("GET \(probe) HTTP/1.1") }, "\(gopher.selectors.suffix(3))")
    }

    /// Authorization, Cookie and Proxy-Authorization follow a redirect within the origin, not to
    /// another (scheme, host and port).
    @Test func credentialsDoNotFollowARedirectToAnotherOrigin() async throws {
        try InstalledPlugins.install()
        func headers(after target: String) async throws -> String {
            var request = URLRequest(url: redirect(to: target))
            request.setValue("Bearer plugin-secret", forHTTPHeaderField: "Authorization")
            request.setValue("sid=plugin-secret", forHTTPHeaderField: "Cookie")
            request.setValue("Basic cHJveHk6c2VjcmV0", forHTTPHeaderField: "Proxy-Authorization")
            request.setValue("kept", forHTTPHeaderField: "X-Custom")
            let result = await fetch(request)
            try #require(result.error == nil, "\(target): \(String(describing: result.error))")
            return result.text
        }
        let same = try await headers(after: "redirecting://fixture/headers")
        #expect(same.contains("Authorization: Bearer plugin-secret"))
        #expect(same.contains("Cookie: sid=plugin-secret"))
        #expect(same.contains("Proxy-Authorization: Basic cHJveHk6c2VjcmV0"))
        #expect(same.contains("X-Custom: kept"))
        for other in ["redirecting://elsewhere/headers", "redirecting-alt://fixture/headers", "redirecting://fixture:8080/headers"] {
            let text = try await headers(after: other)
            #expect(!text.contains("secret"), "\(other): \(text)")
            #expect(text.contains("X-Custom: kept"), "\(other): \(text)")
        }
    }

    /// A delegate's answer to a plugin's HTTP-like redirect is held to the same schemes.
    @Test func aDelegatesAnswerToAPluginsRedirectFollowsTheSameRule() async throws {
        try InstalledPlugins.install()
        let hostname = try Data(contentsOf: URL(fileURLWithPath: "/etc/hostname"))
        for (answer, allowed) in [("file:///etc/hostname", false), ("data:,from%20the%20delegate", false),
                                  ("redirecting-alt://fixture/headers", true)] {
            let delegate = RedirectAnsweringDelegate(answer: try #require(URL(string: answer)))
            let session = makeSession(delegate: delegate)
            defer { session.finishTasksAndInvalidate() }
            let result = await fetch(redirect(to: "redirecting://fixture/headers", http: true), session: session)
            #expect(delegate.proposals.current.map(\.url?.absoluteString) == ["redirecting://fixture/headers"])
            if allowed {
                #expect(result.error == nil, "\(answer): \(String(describing: result.error))")
                #expect(result.response?.url?.absoluteString == answer)
            } else {
                #expect(result.urlError?.code == .unsupportedURL, "\(answer): \(String(describing: result.error))")
                #expect(result.urlError?.failingURL?.absoluteString == answer)
                #expect(result.data == nil)
                #expect(result.data != hostname)
            }
        }
    }
}

/// An app's `URLProtocol` for one scheme of its own, counting its loads: a plugin must not redirect
/// into it.
final class AppSchemeProtocol: URLProtocol, @unchecked Sendable {
    static let scheme = "courier-test-app"
    static let starts = Locked(0)

    override class func canInit(with request: URLRequest) -> Bool { request.url?.scheme == scheme }
    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }
    override func startLoading() {
        Self.starts.withLock { $0 += 1 }
        let url = request.url ?? URL(fileURLWithPath: "/")
        client?.urlProtocol(self, didReceive: URLResponse(url: url, mimeType: "text/plain", expectedContentLength: 6,
                                                          textEncodingName: nil), cacheStoragePolicy: .notAllowed)
        client?.urlProtocol(self, didLoad: Data("secret".utf8))
        client?.urlProtocolDidFinishLoading(self)
    }
    override func stopLoading() {}
}

/// Answers every redirect with a request for ``answer``, recording the requests proposed.
final class RedirectAnsweringDelegate: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    let answer: URL
    let proposals = Locked<[URLRequest]>([])

    init(answer: URL) { self.answer = answer }

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        proposals.withLock { $0.append(request) }
        completionHandler(URLRequest(url: answer))
    }
}
