import Foundation
@testable import Courier

/// A custom protocol that answers every request with what it received: the body (read from
/// `request.httpBody` or `request.httpBodyStream`) becomes the response body, and the response's
/// headers report the method (`X-Method`), where the body came from (`X-Body-Source`: data, stream
/// or none) and each request header as `X-Echo-<name>`.
final class EchoURLProtocol: URLProtocol, @unchecked Sendable {
    static let scheme = "courier-echo"

    /// A URL for this protocol.
    static func makeURL(_ path: String = "echo") -> URL {
        URL(string: "\(scheme)://test/\(UUID().uuidString)/\(path)")!
    }

    /// A session whose configuration lists this class.
    static func session(delegate: (any URLSessionDelegate)? = nil, configure: (URLSessionConfiguration) -> Void = { _ in }) -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.protocolClasses = [EchoURLProtocol.self]
        configure(configuration)
        return URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    }

    override class func canInit(with request: URLRequest) -> Bool { request.url?.scheme == scheme }
    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    override func startLoading() {
        guard let url = request.url else { return }
        var source = "none"
        var body = Data()
        if let data = request.httpBody {
            source = "data"
            body = data
        } else if let stream = request.httpBodyStream {
            source = "stream"
            body = Self.readAll(stream)
        }
        var headers = ["X-Method": request.httpMethod ?? "", "X-Body-Source": source, "Content-Length": "\(body.count)"]
        for (name, value) in request.allHTTPHeaderFields ?? [:] { headers["X-Echo-\(name)"] = value }
        guard let response = HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: headers) else { return }
        client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
        // Deliver in a few pieces, as a network would.
        var offset = 0
        while offset < body.count {
            let end = min(offset + 64 * 1024, body.count)
            client?.urlProtocol(self, didLoad: body.subdata(in: offset..<end))
            offset = end
        }
        client?.urlProtocolDidFinishLoading(self)
    }

    override func stopLoading() {}

    static func readAll(_ stream: InputStream) -> Data {
        stream.open()
        defer { stream.close() }
        var result = Data()
        var buffer = [UInt8](repeating: 0, count: 32 * 1024)
        while true {
            let count = stream.read(&buffer, maxLength: buffer.count)
            if count <= 0 { break }
            result.append(buffer, count: count)
        }
        return result
    }
}
