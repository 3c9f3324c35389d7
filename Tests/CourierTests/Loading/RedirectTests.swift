import Foundation
import Testing
@testable import Courier

/// Redirects by path, as a server would:
/// - `/hops/N` redirects (302) to `/hops/N-1`; `/hops/0` answers `arrived:<path>:<hops property>`;
/// - `/loop/N` always redirects to `/loop/N+1`;
/// - `/to?target=<url>` redirects to `target`.
/// Each redirect request carries the `courier.hops` protocol property (how many redirects so far),
/// set with `URLProtocol.setProperty` on an `NSMutableURLRequest`.
private final class RedirectingProtocol: URLProtocol, @unchecked Sendable {
    static let scheme = "courier-redirect"

    override class func canInit(with request: URLRequest) -> Bool { request.url?.scheme == scheme }
    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    override func startLoading() {
        guard let url = request.url, let components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return }
        let parts = components.path.split(separator: "/").map(String.init)
        let hops = URLProtocol.property(forKey: "courier.hops", in: request) as? Int ?? 0
        var target: URL?
        if parts.count == 2, parts[0] == "hops", let n = Int(parts[1]), n > 0 {
            target = sibling(of: components, path: "/hops/\(n - 1)")
        } else if parts.count == 2, parts[0] == "loop", let n = Int(parts[1]) {
            target = sibling(of: components, path: "/loop/\(n + 1)")
        } else if parts == ["to"], let value = components.queryItems?.first(where: { $0.name == "target" })?.value {
            target = URL(string: value)
        }
        if let target {
            let next = NSMutableURLRequest(url: target)
            URLProtocol.setProperty(hops + 1, forKey: "courier.hops", in: next)
            let response = HTTPURLResponse(url: url, statusCode: 302, httpVersion: "HTTP/1.1",
                                           headerFields: ["Location": target.absoluteString, "Content-Length": "0"])!
            client?.urlProtocol(self, wasRedirectedTo: next as URLRequest, redirectResponse: response)
            return
        }
        let body = Data("arrived:\(components.path):\(hops)".utf8)
        let response = HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: ["Content-Length": "\(body.count)"])!
        client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
        client?.urlProtocol(self, didLoad: body)
        client?.urlProtocolDidFinishLoading(self)
    }

    override func stopLoading() {}

    private func sibling(of components: URLComponents, path: String) -> URL? {
        var copy = components
        copy.path = path
        copy.query = nil
        return copy.url
    }

    static func url(_ path: String) -> URL { URL(string: "\(scheme)://\(UUID().uuidString.lowercased())\(path)")! }
}

@Suite("Redirects from a custom protocol")
struct RedirectTests {

    private func session(delegate: (any URLSessionDelegate)? = nil) -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.protocolClasses = [RedirectingProtocol.self]
        return URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    }

    private func text(_ data: Data?) -> String? { data.map { String(decoding: $0, as: UTF8.self) } }

    @Test("without a delegate redirects are followed; currentRequest is the last, originalRequest the first")
    func followedByDefault() async throws {
        let session = session()
        defer { session.invalidateAndCancel() }
        let start = RedirectingProtocol.url("/hops/3")
        let shot = OneShot<DataResult>()
        let task = session.dataTask(with: start) { data, response, error in
            shot.fulfil(DataResult(data: data, response: response, error: error))
        }
        task.resume()
        let result = try await shot.wait()
        #expect(result.error == nil)
        #expect(text(result.data) == "arrived:/hops/0:3")
        #expect(result.response?.url?.path == "/hops/0")
        #expect(task.originalRequest?.url == start)
        #expect(task.currentRequest?.url?.path == "/hops/0")
        #expect(task.currentRequest?.url?.host == start.host)
    }

    @Test("the delegate sees each 302 HTTPURLResponse and the proposed request, in order before the response")
    func delegateSeesEachRedirect() async throws {
        let delegate = EventDelegate()
        let session = session(delegate: delegate)
        defer { session.invalidateAndCancel() }
        let start = RedirectingProtocol.url("/hops/2")
        let task = session.dataTask(with: start)
        task.resume()
        #expect(await delegate.waitForCompletion(of: task))
        #expect(delegate.collapsedNames(for: task) == ["redirect", "response", "data", "metrics", "complete"])
        let redirects = delegate.events(for: task).compactMap { event -> (Int, String?)? in
            if case .redirect(_, let status, let to) = event { return (status, to) }
            return nil
        }
        #expect(redirects.map(\.0) == [302, 302])
        #expect(redirects.map { $0.1.flatMap(URL.init(string:))?.path } == ["/hops/1", "/hops/0"])
        let responses = delegate.redirectResponses(of: task)
        #expect(responses.map { $0.url?.path } == ["/hops/2", "/hops/1"])
        #expect(responses.first?.value(forHTTPHeaderField: "Location")?.hasSuffix("/hops/1") == true)
        #expect(text(delegate.body(of: task)) == "arrived:/hops/0:2")
        let metrics = try #require(delegate.metrics(of: task))
        #expect(metrics.redirectCount == 2)
        #expect(metrics.transactionMetrics.count == 3)
    }

    @Test("a protocol property set on the redirect request reaches the delegate and the next load")
    func propertyTravels() async throws {
        let seen = Locked<[Int?]>([])
        var hooks = EventDelegate.Hooks()
        hooks.redirect = { _, _, request, completion in
            seen.withLock { $0.append(URLProtocol.property(forKey: "courier.hops", in: request) as? Int) }
            completion(request)
        }
        let delegate = EventDelegate(hooks)
        let session = session(delegate: delegate)
        defer { session.invalidateAndCancel() }
        let task = session.dataTask(with: RedirectingProtocol.url("/hops/2"))
        task.resume()
        #expect(await delegate.waitForCompletion(of: task))
        #expect(seen.current == [1, 2])
        #expect(text(delegate.body(of: task)) == "arrived:/hops/0:2")
    }

    @Test("a redirect to another scheme is loaded by that scheme's handler")
    func redirectToDataURL() async throws {
        let session = session()
        defer { session.invalidateAndCancel() }
        let target = "data:,data-target"
        var components = URLComponents(url: RedirectingProtocol.url("/to"), resolvingAgainstBaseURL: false)!
        components.queryItems = [URLQueryItem(name: "target", value: target)]
        let result = try await session.loadData(components.url!)
        #expect(result.error == nil)
        #expect(text(result.data) == "data-target")
        #expect(result.response?.url == URL(string: target))
    }

    @Test("the delegate may change the request it follows")
    func delegateChangesRequest() async throws {
        var hooks = EventDelegate.Hooks()
        hooks.redirect = { _, _, _, completion in completion(URLRequest(url: URL(string: "data:,changed")!)) }
        let delegate = EventDelegate(hooks)
        let session = session(delegate: delegate)
        defer { session.invalidateAndCancel() }
        let task = session.dataTask(with: RedirectingProtocol.url("/hops/5"))
        task.resume()
        #expect(await delegate.waitForCompletion(of: task))
        #expect(delegate.error(of: task) == nil)
        #expect(text(delegate.body(of: task)) == "changed")
        #expect(task.currentRequest?.url == URL(string: "data:,changed"))
        #expect(delegate.events(for: task).filter { $0.name == "redirect" }.count == 1)
    }

    @Test("refusing with nil: the 302 becomes the final response, no error")
    func refuse() async throws {
        var hooks = EventDelegate.Hooks()
        hooks.redirect = { _, _, _, completion in completion(nil) }
        let delegate = EventDelegate(hooks)
        let session = session(delegate: delegate)
        defer { session.invalidateAndCancel() }
        let start = RedirectingProtocol.url("/hops/1")
        let task = session.dataTask(with: start)
        task.resume()
        #expect(await delegate.waitForCompletion(of: task))
        #expect(delegate.error(of: task) == nil)
        #expect(delegate.collapsedNames(for: task) == ["redirect", "response", "metrics", "complete"])
        let response = try #require(delegate.response(of: task) as? HTTPURLResponse)
        #expect(response.statusCode == 302)
        #expect(response.url == start)
        #expect((task.response as? HTTPURLResponse)?.statusCode == 302)

        // The same with a completion handler: the session delegate still decides redirects.
        let shot = OneShot<DataResult>()
        let handled = session.dataTask(with: RedirectingProtocol.url("/hops/1")) { data, response, error in
            shot.fulfil(DataResult(data: data, response: response, error: error))
        }
        handled.resume()
        let result = try await shot.wait()
        #expect(result.error == nil)
        #expect((result.response as? HTTPURLResponse)?.statusCode == 302)
        // A successful load hands the handler data, empty here (the 302 has no body), never nil.
        #expect(result.data == Data())
    }

    @Test("16 redirects are followed; more fail with httpTooManyRedirects")
    func tooMany() async throws {
        let session = session()
        defer { session.invalidateAndCancel() }
        let sixteen = try await session.loadData(RedirectingProtocol.url("/hops/16"))
        #expect(sixteen.error == nil)
        #expect(text(sixteen.data) == "arrived:/hops/0:16")

        let seventeen = try await session.loadData(RedirectingProtocol.url("/hops/17"))
        #expect(seventeen.urlError?.code == .httpTooManyRedirects)
        #expect(seventeen.urlError?.failingURL != nil)

        let delegate = EventDelegate()
        let observed = self.session(delegate: delegate)
        defer { observed.invalidateAndCancel() }
        let task = observed.dataTask(with: RedirectingProtocol.url("/loop/0"))
        task.resume()
        #expect(await delegate.waitForCompletion(of: task))
        #expect((delegate.error(of: task) as? URLError)?.code == .httpTooManyRedirects)
        #expect(delegate.events(for: task).filter { $0.name == "redirect" }.count <= 16)
        #expect(!delegate.collapsedNames(for: task).contains("response"))
    }
}
