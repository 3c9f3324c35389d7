import Foundation
import Testing
@testable import Courier

/// A protocol answering with a fixed text body for the URLs its subclass claims.
class FixedBodyURLProtocol: URLProtocol, @unchecked Sendable {
    class var body: String { "fixed" }
    class func claims(_ url: URL) -> Bool { false }

    override class func canInit(with request: URLRequest) -> Bool { request.url.map(claims) ?? false }
    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    override func startLoading() {
        guard let url = request.url else { return }
        let data = Data(type(of: self).body.utf8)
        client?.urlProtocol(self, didReceive: URLResponse(url: url, mimeType: "text/plain", expectedContentLength: data.count, textEncodingName: "utf-8"),
                            cacheStoragePolicy: .notAllowed)
        client?.urlProtocol(self, didLoad: data)
        client?.urlProtocolDidFinishLoading(self)
    }

    override func stopLoading() {}
}

/// A protocol without flow control that delivers many chunks as fast as it can: a download task
/// writes them on this thread, in order.
private final class ChunkedBodyProtocol: URLProtocol, @unchecked Sendable {
    /// 256 chunks of 16 KiB, each filled with its own index.
    static let chunks: [Data] = (0..<256).map { Data(repeating: UInt8($0), count: 16 * 1024) }

    override class func canInit(with request: URLRequest) -> Bool { request.url?.scheme == "courier-chunked" }
    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    override func startLoading() {
        guard let url = request.url else { return }
        let length = Self.chunks.reduce(0) { $0 + $1.count }
        client?.urlProtocol(self, didReceive: URLResponse(url: url, mimeType: "application/octet-stream", expectedContentLength: length,
                                                          textEncodingName: nil), cacheStoragePolicy: .notAllowed)
        for chunk in Self.chunks { client?.urlProtocol(self, didLoad: chunk) }
        client?.urlProtocolDidFinishLoading(self)
    }

    override func stopLoading() {}
}

// Each registered class claims URLs no other test loads, so registrations made by tests running in
// parallel cannot interfere.
private final class RegisteredSchemeProtocol: FixedBodyURLProtocol, @unchecked Sendable {
    override class var body: String { "registered-scheme" }
    override class func claims(_ url: URL) -> Bool { url.scheme == "courier-registered-scheme" }
}

private final class RegisteredMarkerProtocolB: FixedBodyURLProtocol, @unchecked Sendable {
    override class var body: String { "registered-b" }
    override class func claims(_ url: URL) -> Bool { url.scheme == "data" && url.absoluteString.contains("courier-marker-b") }
}

private final class RegisteredMarkerProtocolC: FixedBodyURLProtocol, @unchecked Sendable {
    override class var body: String { "registered-c" }
    override class func claims(_ url: URL) -> Bool { url.scheme == "data" && url.absoluteString.contains("courier-marker-c") }
}

private final class ConfigMarkerProtocolC: FixedBodyURLProtocol, @unchecked Sendable {
    override class var body: String { "config-c" }
    override class func claims(_ url: URL) -> Bool { url.scheme == "data" && url.absoluteString.contains("courier-marker-c") }
}

private final class ConfigDataHijackProtocol: FixedBodyURLProtocol, @unchecked Sendable {
    override class var body: String { "config-hijack" }
    override class func claims(_ url: URL) -> Bool { url.scheme == "data" }
}

private final class ConfigFirstProtocol: FixedBodyURLProtocol, @unchecked Sendable {
    override class var body: String { "first" }
    override class func claims(_ url: URL) -> Bool { url.scheme == "courier-order" }
}

private final class ConfigSecondProtocol: FixedBodyURLProtocol, @unchecked Sendable {
    override class var body: String { "second" }
    override class func claims(_ url: URL) -> Bool { url.scheme == "courier-order" }
}

private final class RegisteredOlderProtocol: FixedBodyURLProtocol, @unchecked Sendable {
    override class var body: String { "older" }
    override class func claims(_ url: URL) -> Bool { url.scheme == "courier-registered-order" }
}

private final class RegisteredNewerProtocol: FixedBodyURLProtocol, @unchecked Sendable {
    override class var body: String { "newer" }
    override class func claims(_ url: URL) -> Bool { url.scheme == "courier-registered-order" }
}

/// Claims requests but never overrides startLoading.
private final class LazyProtocol: URLProtocol, @unchecked Sendable {
    override class func canInit(with request: URLRequest) -> Bool { request.url?.scheme == "courier-lazy" }
    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }
}

/// Its canonical form of a request carries an `X-Canonical` header; it answers with whether the
/// request it was given has it.
private final class CanonicalizingProtocol: URLProtocol, @unchecked Sendable {
    override class func canInit(with request: URLRequest) -> Bool { request.url?.scheme == "courier-canonical" }
    override class func canonicalRequest(for request: URLRequest) -> URLRequest {
        var canonical = request
        canonical.setValue("yes", forHTTPHeaderField: "X-Canonical")
        return canonical
    }
    override func startLoading() {
        guard let url = request.url else { return }
        let data = Data((request.value(forHTTPHeaderField: "X-Canonical") ?? "missing").utf8)
        client?.urlProtocol(self, didReceive: URLResponse(url: url, mimeType: "text/plain", expectedContentLength: data.count, textEncodingName: nil),
                            cacheStoragePolicy: .notAllowed)
        client?.urlProtocol(self, didLoad: data)
        client?.urlProtocolDidFinishLoading(self)
    }
    override func stopLoading() {}
}

/// Answers from its own cache: `cachedResponseIsValid`.
private final class CachedValidProtocol: URLProtocol, @unchecked Sendable {
    override class func canInit(with request: URLRequest) -> Bool { request.url?.scheme == "courier-cached" }
    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }
    override func startLoading() {
        guard let url = request.url else { return }
        let response = URLResponse(url: url, mimeType: "text/x-cached", expectedContentLength: 6, textEncodingName: "utf-8")
        client?.urlProtocol(self, cachedResponseIsValid: CachedURLResponse(response: response, data: Data("cached".utf8)))
    }
    override func stopLoading() {}
}

/// Answers with the `courier.tag` property of its request (set with `URLProtocol.setProperty`).
private final class PropertyReadingProtocol: URLProtocol, @unchecked Sendable {
    override class func canInit(with request: URLRequest) -> Bool { request.url?.scheme == "courier-property" }
    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }
    override func startLoading() {
        guard let url = request.url else { return }
        let tag = URLProtocol.property(forKey: "courier.tag", in: request) as? String ?? "untagged"
        let data = Data(tag.utf8)
        client?.urlProtocol(self, didReceive: URLResponse(url: url, mimeType: "text/plain", expectedContentLength: data.count, textEncodingName: nil),
                            cacheStoragePolicy: .notAllowed)
        client?.urlProtocol(self, didLoad: data)
        client?.urlProtocolDidFinishLoading(self)
    }
    override func stopLoading() {}
}

@Suite("Custom URLProtocol")
struct CustomProtocolTests {

    @Test("a download task served by an app's class (no flow control) gets every chunk in the file, in order")
    func downloadFromAnAppClassWritesEveryChunkInOrder() async throws {
        let session = session([ChunkedBodyProtocol.self])
        defer { session.finishTasksAndInvalidate() }
        let shot = OneShot<DownloadResult>()
        let task = session.downloadTask(with: URL(string: "courier-chunked://127.0.0.1/body")!) { location, response, error in
            let content = location.flatMap { try? Data(contentsOf: $0) }
            shot.fulfil(DownloadResult(location: location, response: response, error: error, contentDuringHandler: content))
        }
        task.resume()
        let result = try await shot.wait()
        #expect(result.error == nil && result.contentDuringHandler == ChunkedBodyProtocol.chunks.reduce(Data(), +))
    }

    private func session(_ classes: [AnyClass], delegate: (any URLSessionDelegate)? = nil) -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.protocolClasses = classes
        return URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    }

    private func text(_ result: DataResult) -> String? { result.data.map { String(decoding: $0, as: UTF8.self) } }

    @Test("a class in configuration.protocolClasses is driven like a built-in: task, client, request, delegate order")
    func configurationClass() async throws {
        let delegate = EventDelegate()
        let session = ControlledURLProtocol.session(delegate: delegate)
        defer { session.invalidateAndCancel() }
        let url = ControlledURLProtocol.makeURL()
        let task = session.dataTask(with: url)
        task.resume()
        let server = try await ControlledURLProtocol.waitForStart(of: url)
        #expect(server.task === task)
        #expect(server.client != nil)
        #expect(server.request.url == url)
        #expect(server.cachedResponse == nil)
        server.complete(with: Data("custom".utf8))
        #expect(await delegate.waitForCompletion(of: task))
        #expect(delegate.collapsedNames(for: task) == ["response", "data", "metrics", "complete"])
        #expect(delegate.body(of: task) == Data("custom".utf8))
        #expect((delegate.response(of: task) as? HTTPURLResponse)?.statusCode == 200)
        #expect(task.response === delegate.response(of: task))
    }

    @Test("URLProtocol.registerClass serves every session (shared too) until unregistered")
    func registeredClass() async throws {
        let url = URL(string: "courier-registered-scheme://host/x")!
        #expect(URLProtocol.registerClass(RegisteredSchemeProtocol.self))
        defer { URLProtocol.unregisterClass(RegisteredSchemeProtocol.self) }

        let session = URLSession(configuration: .default)
        defer { session.invalidateAndCancel() }
        #expect(text(try await session.loadData(url)) == "registered-scheme")
        #expect(text(try await URLSession.shared.loadData(url)) == "registered-scheme")

        URLProtocol.unregisterClass(RegisteredSchemeProtocol.self)
        let after = try await session.loadData(url)
        #expect(after.urlError?.code == .unsupportedURL)
    }

    @Test("registerClass refuses a class that is not a URLProtocol")
    func registerNonProtocol() {
        #expect(URLProtocol.registerClass(NSObject.self) == false)
        URLProtocol.unregisterClass(NSObject.self)
    }

    @Test("a configuration class claiming data: wins over the built-in handler")
    func configurationBeatsBuiltIn() async throws {
        let session = session([ConfigDataHijackProtocol.self])
        defer { session.invalidateAndCancel() }
        #expect(text(try await session.loadData(URL(string: "data:,original")!)) == "config-hijack")
        let plain = URLSession(configuration: .ephemeral)
        defer { plain.invalidateAndCancel() }
        #expect(text(try await plain.loadData(URL(string: "data:,original")!)) == "original")
    }

    @Test("a registered class wins over the built-in handler")
    func registeredBeatsBuiltIn() async throws {
        URLProtocol.registerClass(RegisteredMarkerProtocolB.self)
        defer { URLProtocol.unregisterClass(RegisteredMarkerProtocolB.self) }
        let session = URLSession(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }
        #expect(text(try await session.loadData(URL(string: "data:,courier-marker-b")!)) == "registered-b")
    }

    @Test("a configuration class wins over a registered class")
    func configurationBeatsRegistered() async throws {
        URLProtocol.registerClass(RegisteredMarkerProtocolC.self)
        defer { URLProtocol.unregisterClass(RegisteredMarkerProtocolC.self) }
        let url = URL(string: "data:,courier-marker-c")!
        let configured = session([ConfigMarkerProtocolC.self])
        defer { configured.invalidateAndCancel() }
        #expect(text(try await configured.loadData(url)) == "config-c")
        let plain = URLSession(configuration: .ephemeral)
        defer { plain.invalidateAndCancel() }
        #expect(text(try await plain.loadData(url)) == "registered-c")
    }

    @Test("configuration classes are asked in order; registered classes most recent first")
    func order() async throws {
        let ordered = session([ConfigFirstProtocol.self, ConfigSecondProtocol.self])
        defer { ordered.invalidateAndCancel() }
        #expect(text(try await ordered.loadData(URL(string: "courier-order://x")!)) == "first")

        URLProtocol.registerClass(RegisteredOlderProtocol.self)
        URLProtocol.registerClass(RegisteredNewerProtocol.self)
        defer {
            URLProtocol.unregisterClass(RegisteredNewerProtocol.self)
            URLProtocol.unregisterClass(RegisteredOlderProtocol.self)
        }
        let plain = URLSession(configuration: .ephemeral)
        defer { plain.invalidateAndCancel() }
        #expect(text(try await plain.loadData(URL(string: "courier-registered-order://x")!)) == "newer")
    }

    @Test("canInit(with: task) asks canInit(with: request) with the task's request")
    func canInitWithTask() {
        let session = URLSession(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }
        let task = session.dataTask(with: URL(string: "courier-order://x")!)
        #expect(ConfigFirstProtocol.canInit(with: task))
        #expect(!ConfigFirstProtocol.canInit(with: session.dataTask(with: URL(string: "data:,x")!)))
        #expect(!URLProtocol.canInit(with: URLRequest(url: URL(string: "data:,x")!)))
    }

    @Test("a protocol that does not implement startLoading fails the task with unsupportedURL")
    func baseStartLoading() async throws {
        let session = session([LazyProtocol.self])
        defer { session.invalidateAndCancel() }
        let url = URL(string: "courier-lazy://x")!
        let result = try await session.loadData(url)
        #expect(result.urlError?.code == .unsupportedURL)
        #expect(result.urlError?.failingURL == url)
    }

    @Test("an unknown scheme fails with unsupportedURL and failingURL set")
    func unknownScheme() async throws {
        let delegate = EventDelegate()
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        let url = URL(string: "courier-nobody-serves-this://host/path")!
        let task = session.dataTask(with: url)
        task.resume()
        #expect(await delegate.waitForCompletion(of: task))
        let error = try #require(delegate.error(of: task) as? URLError)
        #expect(error.code == .unsupportedURL)
        #expect(error.failingURL == url)
        // A task that fails before any load still has its metrics delivered, once, before completion.
        #expect(delegate.events(for: task).map(\.name) == ["metrics", "complete"])

        let result = try await session.loadData(url)
        #expect(result.urlError?.code == .unsupportedURL)
    }

    @Test("the protocol instance is given the class's canonical form of the request")
    func canonicalRequestIsUsed() async throws {
        let session = session([CanonicalizingProtocol.self])
        defer { session.invalidateAndCancel() }
        let request = URLRequest(url: URL(string: "courier-canonical://host/x")!)
        #expect(CanonicalizingProtocol.canonicalRequest(for: request).value(forHTTPHeaderField: "X-Canonical") == "yes")
        #expect(CanonicalizingProtocol.requestIsCacheEquivalent(request, to: CanonicalizingProtocol.canonicalRequest(for: request)))
        let result = try await session.loadData(request)
        #expect(result.error == nil)
        #expect(text(result) == "yes")
    }

    @Test("cachedResponseIsValid: the cached response and body become the task's")
    func cachedResponseIsValid() async throws {
        let delegate = EventDelegate()
        let session = session([CachedValidProtocol.self], delegate: delegate)
        defer { session.invalidateAndCancel() }
        let url = URL(string: "courier-cached://host/x")!
        let task = session.dataTask(with: url)
        task.resume()
        #expect(await delegate.waitForCompletion(of: task))
        #expect(delegate.error(of: task) == nil)
        #expect(delegate.body(of: task) == Data("cached".utf8))
        #expect(delegate.response(of: task)?.mimeType == "text/x-cached")
        #expect(delegate.collapsedNames(for: task) == ["response", "data", "metrics", "complete"])

        let result = try await session.loadData(url)
        #expect(text(result) == "cached")
    }

    @Test("property(forKey:in:), setProperty and removeProperty with NSMutableURLRequest")
    func properties() throws {
        let mutable = NSMutableURLRequest(url: URL(string: "courier-property://host/x")!)
        URLProtocol.setProperty("tagged", forKey: "courier.tag", in: mutable)
        URLProtocol.setProperty(42, forKey: "courier.number", in: mutable)
        URLProtocol.setProperty(Data([1, 2, 3]), forKey: "courier.data", in: mutable)

        let request = mutable as URLRequest
        #expect(URLProtocol.property(forKey: "courier.tag", in: request) as? String == "tagged")
        #expect(URLProtocol.property(forKey: "courier.number", in: request) as? Int == 42)
        #expect(URLProtocol.property(forKey: "courier.data", in: request) as? Data == Data([1, 2, 3]))
        #expect(URLProtocol.property(forKey: "courier.absent", in: request) == nil)

        URLProtocol.removeProperty(forKey: "courier.tag", in: mutable)
        #expect(URLProtocol.property(forKey: "courier.tag", in: mutable as URLRequest) == nil)
        #expect(URLProtocol.property(forKey: "courier.number", in: mutable as URLRequest) as? Int == 42)
        // The value taken before the removal is a copy and keeps its property.
        #expect(URLProtocol.property(forKey: "courier.tag", in: request) as? String == "tagged")
        // Copies of the mutable request carry the properties.
        let copy = try #require(mutable.mutableCopy() as? NSMutableURLRequest)
        #expect(URLProtocol.property(forKey: "courier.number", in: copy as URLRequest) as? Int == 42)
    }

    @Test("a property set on a request reaches the protocol that loads it")
    func propertyReachesProtocol() async throws {
        let session = session([PropertyReadingProtocol.self])
        defer { session.invalidateAndCancel() }
        let mutable = NSMutableURLRequest(url: URL(string: "courier-property://host/x")!)
        URLProtocol.setProperty("from-the-app", forKey: "courier.tag", in: mutable)
        #expect(text(try await session.loadData(mutable as URLRequest)) == "from-the-app")
        #expect(text(try await session.loadData(URL(string: "courier-property://host/y")!)) == "untagged")
    }
}
