import Foundation
@testable import Courier

/// A custom protocol the test drives by hand: it does nothing when started, so a test can make it
/// respond, send data, finish, fail or redirect whenever it wants — or never (a server that hangs).
///
/// Put it in `configuration.protocolClasses`; give each task a URL from ``makeURL(_:)`` so tests
/// running in parallel find their own instance.
final class ControlledURLProtocol: URLProtocol, @unchecked Sendable {
    static let scheme = "courier-controlled"

    private static let started = Locked<[String: [ControlledURLProtocol]]>([:])
    private static let stopped = Locked<[String: Int]>([:])
    private static let startActions = Locked<[String: @Sendable (ControlledURLProtocol) -> Void]>([:])

    /// Runs `action` inside `startLoading()` of each instance loading `url`, for a test that must
    /// answer without waiting for the instance to be found.
    static func whenStarted(_ url: URL, _ action: @escaping @Sendable (ControlledURLProtocol) -> Void) {
        startActions.withLock { $0[url.absoluteString] = action }
    }

    /// A URL no other test uses.
    static func makeURL(_ name: String = "resource") -> URL {
        URL(string: "\(scheme)://test/\(UUID().uuidString)/\(name)")!
    }

    /// A session whose configuration lists this class (and `extra` classes after it).
    static func session(delegate: (any URLSessionDelegate)? = nil, queue: OperationQueue? = nil,
                        configure: (URLSessionConfiguration) -> Void = { _ in }) -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.protocolClasses = [ControlledURLProtocol.self]
        configure(configuration)
        return URLSession(configuration: configuration, delegate: delegate, delegateQueue: queue)
    }

    override class func canInit(with request: URLRequest) -> Bool { request.url?.scheme == scheme }
    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    private var key: String { request.url?.absoluteString ?? "" }

    override func startLoading() {
        let key = key
        Self.started.withLock { $0[key, default: []].append(self) }
        Self.startActions.current[key]?(self)
    }

    override func stopLoading() {
        let key = key
        Self.stopped.withLock { $0[key, default: 0] += 1 }
    }

    /// How many instances were started for `url`.
    static func startCount(_ url: URL) -> Int { started.current[url.absoluteString]?.count ?? 0 }

    /// How many times `stopLoading()` ran for `url`.
    static func stopCount(_ url: URL) -> Int { stopped.current[url.absoluteString] ?? 0 }

    /// Waits (bounded) for the `index`-th instance loading `url` to start.
    static func waitForStart(of url: URL, index: Int = 0, timeout: TimeInterval = testWaitLimit) async throws -> ControlledURLProtocol {
        let key = url.absoluteString
        await waitUntil(timeout: timeout) { (started.current[key]?.count ?? 0) > index }
        guard let list = started.current[key], list.count > index else { throw TestTimeout(what: "the protocol for \(key) to start") }
        return list[index]
    }

    // MARK: Driving the client

    /// Sends an HTTP response.
    func respond(status: Int = 200, headers: [String: String] = [:]) {
        guard let url = request.url, let response = HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers) else { return }
        client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
    }

    /// Sends a plain `URLResponse`.
    func respond(mimeType: String?, expectedLength: Int) {
        guard let url = request.url else { return }
        client?.urlProtocol(self, didReceive: URLResponse(url: url, mimeType: mimeType, expectedContentLength: expectedLength, textEncodingName: nil),
                            cacheStoragePolicy: .notAllowed)
    }

    /// Sends part of the body.
    func send(_ data: Data) { client?.urlProtocol(self, didLoad: data) }

    /// Finishes successfully.
    func finish() { client?.urlProtocolDidFinishLoading(self) }

    /// Fails.
    func fail(_ error: any Error) { client?.urlProtocol(self, didFailWithError: error) }

    /// Responds with `body` (and its length as Content-Length) and finishes.
    func complete(with body: Data, status: Int = 200) {
        respond(status: status, headers: ["Content-Length": "\(body.count)"])
        if !body.isEmpty { send(body) }
        finish()
    }
}
