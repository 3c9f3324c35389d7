import Foundation
import Testing
@testable import Courier

/// An app's class that reports an HTTP 302 to `target` (the URL's query) and — being, unlike a real
/// app's class, a ``BuiltInURLProtocol`` subclass — could deliver a refused redirect. It is never
/// asked to, because what the task may call comes from the resolution (an app's class has no
/// capabilities), not from the class.
private final class SchemeTableAppRedirector: BuiltInURLProtocol, @unchecked Sendable {
    static let scheme = "courier-scheme-table"
    /// How many times ``deliverRefusedRedirect()`` was called.
    static let refusedDeliveries = Locked(0)

    override class func canInit(with request: URLRequest) -> Bool { request.url?.scheme == scheme }
    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    override func startLoading() {
        guard let url = request.url, let query = url.query, let target = URL(string: query),
              let response = HTTPURLResponse(url: url, statusCode: 302, httpVersion: "HTTP/1.1",
                                             headerFields: ["Location": target.absoluteString, "Content-Length": "0"])
        else { return }
        client?.urlProtocol(self, wasRedirectedTo: URLRequest(url: target), redirectResponse: response)
    }

    override func stopLoading() {}

    override func deliverRefusedRedirect() {
        Self.refusedDeliveries.withLock { $0 += 1 }
    }
}

/// The table of built-in schemes (`Handlers/BuiltInHandlers.swift`) and what the loader derives
/// from it: each built-in scheme's handler and capabilities, the schemes reserved from plugins,
/// capabilities of plugins (from their manifest) and of app classes (none), and where a redirect
/// may lead.
@Suite("Scheme table")
struct SchemeTableTests {
    /// What resolving a request gave: the class, its capabilities and where its redirects may lead.
    struct Resolution: Equatable, CustomStringConvertible {
        var handler: ObjectIdentifier
        var capabilities: HandlerCapabilities
        var redirectSchemes: Set<String>?

        init(_ handler: URLProtocol.Type, _ capabilities: HandlerCapabilities, redirects: Set<String>? = nil) {
            self.handler = ObjectIdentifier(handler)
            self.capabilities = capabilities
            redirectSchemes = redirects
        }

        init(_ resolved: ResolvedHandler) {
            self.init(resolved.type, resolved.capabilities, redirects: resolved.redirectConfinement?.permittedSchemes)
        }

        var description: String { "\(handler) \(capabilities.rawValue) \(redirectSchemes.map { $0.sorted() } ?? [])" }
    }

    /// A resolver with the built-in table, no configured classes and a plugin loader with nothing loaded.
    private static func builtInsOnly(configured: [URLProtocol.Type] = []) -> ProtocolResolver {
        ProtocolResolver(configured: configured.map(ProtocolClassBox.init), builtIns: BuiltInHandlers.table, plugins: PluginLoader())
    }

    /// A URL of each built-in scheme that its handler accepts.
    private static func url(of scheme: BuiltInScheme) -> URL {
        switch scheme {
        case .data: URL(string: "data:,scheme-table")!
        case .file: URL(fileURLWithPath: "/tmp/scheme-table")
        case .http, .https, .ftp, .ftps, .sftp, .ws, .wss: URL(string: "\(scheme.rawValue)://127.0.0.1/scheme-table")!
        }
    }

    /// The handler and capabilities each built-in scheme must have, written out.
    private static func expected(for scheme: BuiltInScheme) -> Resolution {
        let streaming: HandlerCapabilities = [.read, .write, .list, .resume, .flowControl]
        switch scheme {
        case .data: return Resolution(DataURLProtocol.self, [.read, .concurrentStartStop])
        case .file: return Resolution(FileURLProtocol.self, [.read, .list, .resume, .flowControl])
        case .http, .https:
            return Resolution(HTTPURLProtocol.self, [.read, .write, .resume, .flowControl, .concurrentStartStop,
                                                     .deliversRefusedRedirect, .cacheScoping, .cachesResponses],
                              redirects: ["http", "https"])
        case .ftp, .ftps: return Resolution(FTPURLProtocol.self, streaming)
        case .sftp: return Resolution(SFTPURLProtocol.self, streaming)
        case .ws, .wss:
            return Resolution(WebSocketURLProtocol.self, [.read, .concurrentStartStop], redirects: ["http", "https", "ws", "wss"])
        }
    }

    @Test(arguments: BuiltInScheme.allCases)
    func everyBuiltInSchemeResolvesWithItsCapabilities(scheme: BuiltInScheme) throws {
        let resolved = try #require(Self.builtInsOnly().resolve(URLRequest(url: Self.url(of: scheme))))
        #expect(Resolution(resolved) == Self.expected(for: scheme))
    }

    @Test func theReservedSchemesAreTheTablesSchemes() {
        #expect(CourierPlugins.builtInSchemes == Set(BuiltInHandlers.table.schemes))
    }

    @Test func ftpsIsReservedFromPlugins() {
        #expect(CourierPlugins.builtInSchemes.contains("ftps"))
    }

    /// A built-in class named in a configuration's `protocolClasses` keeps its row's capabilities:
    /// it is Courier's own code, and the task must still wake it after back-pressure.
    @Test func aBuiltInClassInTheConfigurationKeepsItsRow() throws {
        let resolved = try #require(Self.builtInsOnly(configured: [FileURLProtocol.self])
            .resolve(URLRequest(url: Self.url(of: .file))))
        #expect(Resolution(resolved) == Self.expected(for: .file))
    }

    /// A plugin's capabilities are what its manifest declares for the scheme, plus the bridge's
    /// flow control; its redirects may lead to its own schemes and http(s).
    @Test func aPluginsCapabilitiesComeFromItsManifest() {
        let manifest = PluginManifest(name: "table-test", version: "1.0.0", abiVersion: 1, library: "libTableTest.so",
                                      schemes: [LoadedPlugin.Scheme(name: "table-a", capabilities: [.read, .list]),
                                                LoadedPlugin.Scheme(name: "table-b", capabilities: [.write, .resume])])
        let library = PluginLibrary(manifest: manifest, manifestURL: URL(fileURLWithPath: "/nonexistent/table-test.json"),
                                    libraryURL: URL(fileURLWithPath: "/nonexistent/libTableTest.so"),
                                    identity: PluginFileChecks.Identity(device: 0, inode: 0))
        let resolved = ResolvedHandler(plugin: library, scheme: "TABLE-B")
        #expect(Resolution(resolved) == Resolution(PluginURLProtocol.self, [.write, .resume, .flowControl],
                                                   redirects: ["table-a", "table-b", "http", "https"]))
    }

    /// An app's class has no capabilities — no flow control, no refused-redirect delivery, no cache
    /// scope — and no redirect confinement, even when it claims a built-in scheme.
    @Test func anAppClassHasNoCapabilities() throws {
        let resolved = try #require(Self.builtInsOnly(configured: [ClaimsHTTPProtocol.self])
            .resolve(URLRequest(url: Self.url(of: .http))))
        #expect(Resolution(resolved) == Resolution(ClaimsHTTPProtocol.self, []))
    }

    /// A registered class has none either.
    @Test func aRegisteredClassHasNoCapabilities() throws {
        URLProtocol.registerClass(SchemeTableAppRedirector.self)
        defer { URLProtocol.unregisterClass(SchemeTableAppRedirector.self) }
        let request = URLRequest(url: URL(string: "\(SchemeTableAppRedirector.scheme)://x/")!)
        let resolved = try #require(Self.builtInsOnly().resolve(request))
        #expect(Resolution(resolved) == Resolution(SchemeTableAppRedirector.self, []))
    }

    /// The delegate answering an http redirect with a `file:` request is refused: the http row's
    /// redirect schemes are http and https.
    @Test func anAnswerOutsideTheProposedSchemesRowIsRefused() {
        let refusal = BuiltInHandlers.table.refusal(ofAnswer: URLRequest(url: URL(fileURLWithPath: "/etc/hostname")),
                                                    toProposed: URLRequest(url: URL(string: "https://127.0.0.1/")!))
        #expect(refusal?.code == .unsupportedURL)
    }

    /// A redirect to a scheme whose row does not redirect (file) may be answered with anything.
    @Test func anAnswerToAnUnconfinedSchemeIsNotRefused() {
        let refusal = BuiltInHandlers.table.refusal(ofAnswer: URLRequest(url: URL(string: "data:,x")!),
                                                    toProposed: URLRequest(url: URL(fileURLWithPath: "/tmp/x")))
        #expect(refusal == nil)
    }

    /// An app handler's redirect to http, answered by the delegate with `file:`, obeys the http
    /// row's redirect schemes: the task fails with `unsupportedURL` naming the file URL, and nothing
    /// is loaded.
    @Test func anAppHandlersRedirectToHTTPObeysTheHTTPRow() async throws {
        let file = URL(fileURLWithPath: "/etc/hostname")
        let (delegate, task) = await redirectFromAppHandler(answer: URLRequest(url: file))
        let error = delegate.error(of: task) as? URLError
        #expect(error.map { ($0.code, $0.failingURL) } ?? (.unknown, nil) == (.unsupportedURL, file))
    }

    /// The delegate refusing an app handler's redirect ends the task with the redirect response; the
    /// handler is not asked to deliver it, even though its class could.
    @Test func aRefusedRedirectIsNotDeliveredByAnAppHandler() async throws {
        let before = SchemeTableAppRedirector.refusedDeliveries.current
        let (delegate, task) = await redirectFromAppHandler(answer: nil)
        let status = (delegate.response(of: task) as? HTTPURLResponse)?.statusCode
        #expect((status, SchemeTableAppRedirector.refusedDeliveries.current - before) == (302, 0))
    }

    /// Runs a task whose app handler (``SchemeTableAppRedirector``) redirects to
    /// `http://127.0.0.1:9/` (the discard port on loopback, never loaded here), with a delegate that
    /// answers the redirect with `answer`; waits (bounded) for the task to complete.
    private func redirectFromAppHandler(answer: URLRequest?) async -> (EventDelegate, URLSessionTask) {
        let delegate = EventDelegate(EventDelegate.Hooks(redirect: { _, _, _, reply in reply(answer) }))
        let configuration = URLSessionConfiguration.ephemeral
        configuration.protocolClasses = [SchemeTableAppRedirector.self]
        let session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: URL(string: "\(SchemeTableAppRedirector.scheme)://app/?http://127.0.0.1:9/")!)
        task.resume()
        _ = await waitUntil { delegate.completionCount(of: task) == 1 }
        return (delegate, task)
    }
}

/// An app's class claiming `http:` (it never loads anything: the tests only resolve it).
private final class ClaimsHTTPProtocol: URLProtocol, @unchecked Sendable {
    override class func canInit(with request: URLRequest) -> Bool { request.url?.scheme == "http" }
    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }
}
