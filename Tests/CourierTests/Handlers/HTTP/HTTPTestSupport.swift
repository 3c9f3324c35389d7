import Foundation
import Testing
@testable import Courier
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The parent of the HTTP suites that move 64 MiB bodies or measure memory and time. `.serialized`
/// makes its nested suites (declared in extensions, one per test file) run one test at a time, so a
/// resident-memory measurement is not disturbed by another heavy HTTP test.
@Suite(.serialized)
struct HTTPHeavyTests {}

/// Helpers shared by the http/https handler tests (namespaced so they cannot clash with helpers other
/// test files add to the module).
enum HTTPTest {
    /// The process's nginx (started on first use).
    static func nginx() async throws -> NginxServer { try await NginxServer.shared() }

    /// A new ephemeral session (its own cookie store, credential store and connections) without a
    /// response cache, so every load reaches the server — directly: an empty
    /// `connectionProxyDictionary` keeps proxies from the environment (`http_proxy`, `all_proxy`…)
    /// away from the test servers (`HTTPProxyTests` sets its own).
    static func session(delegate: (any URLSessionDelegate)? = nil,
                        configure: (URLSessionConfiguration) -> Void = { _ in }) -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.connectionProxyDictionary = [:]
        configure(configuration)
        return URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    }

    /// The response as an `HTTPURLResponse`.
    static func http(_ response: URLResponse?, sourceLocation: SourceLocation = #_sourceLocation) throws -> HTTPURLResponse {
        try #require(response as? HTTPURLResponse, "expected an HTTPURLResponse, got \(String(describing: response))",
                     sourceLocation: sourceLocation)
    }

    /// What the ``FaultServer`` echo (directly or behind nginx's `/echo`) saw.
    static func echoed(_ data: Data?, sourceLocation: SourceLocation = #_sourceLocation) throws -> EchoedRequest {
        try EchoedRequest(json: try #require(data, "no body", sourceLocation: sourceLocation))
    }

    /// The `URLError` of a completion, recording an issue when there is none.
    static func urlError(_ error: (any Error)?, sourceLocation: SourceLocation = #_sourceLocation) throws -> URLError {
        try #require(error as? URLError, "expected a URLError, got \(String(describing: error))", sourceLocation: sourceLocation)
    }

    /// The DER bytes of a PEM certificate file.
    static func derCertificate(fromPEM file: URL) throws -> Data {
        let text = try String(contentsOf: file, encoding: .utf8)
        let body = text.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        return try #require(Data(base64Encoded: body), "the PEM body is not base64")
    }

    /// A challenge answer that trusts the test nginx: server-trust challenges whose leaf certificate
    /// is nginx's get `URLCredential(trust:)`; every other challenge gets default handling.
    static func trustingNginx(_ server: NginxServer) throws
        -> @Sendable (URLSessionTask, URLAuthenticationChallenge, @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) -> Void {
        let expected = try derCertificate(fromPEM: server.certificatePEM)
        return { _, challenge, answer in
            guard challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodServerTrust,
                  let trust = challenge.protectionSpace.serverTrust else {
                answer(.performDefaultHandling, nil)
                return
            }
            if trust.certificates.first == expected {
                answer(.useCredential, URLCredential(trust: trust))
            } else {
                answer(.cancelAuthenticationChallenge, nil)
            }
        }
    }

    /// An ``EventDelegate`` that trusts the test nginx's certificate.
    static func trustingDelegate(_ server: NginxServer, _ hooks: EventDelegate.Hooks = EventDelegate.Hooks()) throws -> EventDelegate {
        var hooks = hooks
        let trust = try trustingNginx(server)
        let other = hooks.challenge
        hooks.challenge = { task, challenge, answer in
            if challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodServerTrust || other == nil {
                trust(task, challenge, answer)
            } else {
                other?(task, challenge, answer)
            }
        }
        return EventDelegate(hooks)
    }

    /// Runs a delegate-driven task to completion (bounded).
    static func run(_ task: URLSessionTask, _ delegate: EventDelegate, timeout: TimeInterval = 20,
                    sourceLocation: SourceLocation = #_sourceLocation) async throws {
        task.resume()
        guard await delegate.waitForCompletion(of: task, timeout: timeout) else {
            task.cancel()
            throw TestTimeout(what: "task \(task.taskIdentifier) for \(task.originalRequest?.url?.absoluteString ?? "?")")
        }
    }

    /// `count` random bytes.
    static func randomBytes(_ count: Int) throws -> Data {
        let handle = try #require(FileHandle(forReadingAtPath: "/dev/urandom"))
        defer { try? handle.close() }
        var data = Data()
        data.reserveCapacity(count)
        while data.count < count {
            data.append(try #require(try handle.read(upToCount: min(count - data.count, 8 << 20))))
        }
        return data
    }

    /// A fresh temporary directory.
    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("courier-http-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// ``StreamHash`` of a file, read in pieces.
    static func hashOfFile(_ url: URL) throws -> (count: Int, hash: UInt64) {
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        var hash = StreamHash()
        while let piece = try handle.read(upToCount: 4 << 20), !piece.isEmpty { hash.update(piece) }
        return (hash.count, hash.finalValue)
    }

    /// This process's resident set size in bytes (`VmRSS` in /proc/self/status).
    static func residentBytes() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return (Int(line.dropFirst(6).filter(\.isNumber)) ?? 0) * 1024
        }
        return 0
    }

    /// A host name under `.invalid` (RFC 6761) that fails to resolve without any packet leaving the
    /// machine: its first label is longer than DNS allows (63 bytes), so the resolver refuses to build
    /// a query at all instead of asking the configured name server.
    static let unresolvableHost = "courier-" + String(repeating: "x", count: 60) + ".invalid"

    /// A port on 127.0.0.1 where nothing listens (bound, read, and closed again).
    static func refusedPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw FaultServerError("socket() failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard ok else { throw FaultServerError("could not bind a port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Runs this test binary again with Swift Testing, only the tests matching `filter`, with extra
    /// environment variables; returns its exit status and output (bounded by `timeout`).
    static func runThisTestBinary(filter: String, environment: [String: String], timeout: TimeInterval) async throws -> (Int32, String) {
        let binary = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let outputFile = directory.appendingPathComponent("output.txt")
        try Data().write(to: outputFile)
        let output = try FileHandle(forWritingTo: outputFile)
        defer { try? output.close() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["--testing-library", "swift-testing", "--filter", filter]
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { try? await Task.sleep(nanoseconds: 20_000_000) }
        if process.isRunning {
            process.terminate()
            let grace = Date().addingTimeInterval(5)
            while process.isRunning, Date() < grace { try? await Task.sleep(nanoseconds: 20_000_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            throw TestTimeout(what: "the isolated test run (\(filter))")
        }
        let text = (try? String(contentsOf: outputFile, encoding: .utf8)) ?? ""
        return (process.terminationStatus, text)
    }

    /// Whether `error` carries `url` as its failing URL (both keys).
    static func hasFailingURL(_ error: URLError, _ url: URL) -> Bool {
        error.failingURL?.absoluteString == url.absoluteString
            && (error.userInfo[NSURLErrorFailingURLErrorKey] as? URL)?.absoluteString == url.absoluteString
    }
}

/// Compressed bodies for content-encoding tests, made by the tools Debian ships (`gzip`, `brotli`,
/// `zstd`) and by the zlib that libcurl itself links (`deflate`, i.e. the zlib format).
enum CompressedBody {
    /// `data` compressed with `encoding` ("gzip", "deflate", "br" or "zstd").
    static func make(_ data: Data, encoding: String) throws -> Data {
        switch encoding {
        case "gzip": return try NginxServer.runForData(tool("gzip"), ["-c", "-n"], input: data)
        case "br": return try NginxServer.runForData(tool("brotli"), ["-c"], input: data)
        case "zstd": return try NginxServer.runForData(tool("zstd"), ["-c", "-q"], input: data)
        case "deflate": return try zlibCompress(data)
        default: throw FaultServerError("no encoder for \(encoding)")
        }
    }

    private static func tool(_ name: String) throws -> String {
        guard let path = ["/usr/bin/\(name)", "/bin/\(name)", "/usr/local/bin/\(name)"]
            .first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw FaultServerError("\(name) is not installed: run scripts/setup")
        }
        return path
    }

    private typealias Compress2 = @convention(c) (UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt>?,
                                                  UnsafePointer<UInt8>?, UInt, Int32) -> Int32

    /// zlib's `compress2` (found at run time in libz.so.1, which libcurl depends on).
    private static func zlibCompress(_ data: Data) throws -> Data {
        guard let library = dlopen("libz.so.1", RTLD_NOW), let symbol = dlsym(library, "compress2") else {
            throw FaultServerError("libz.so.1 or compress2 not found")
        }
        let compress2 = unsafeBitCast(symbol, to: Compress2.self)
        var output = [UInt8](repeating: 0, count: data.count + data.count / 100 + 1024)
        var outputLength = UInt(output.count)
        let status = data.withUnsafeBytes { input in
            output.withUnsafeMutableBufferPointer { out in
                compress2(out.baseAddress, &outputLength, input.bindMemory(to: UInt8.self).baseAddress, UInt(data.count), 9)
            }
        }
        guard status == 0 else { throw FaultServerError("compress2 failed: \(status)") }
        return Data(output[0..<Int(outputLength)])
    }
}
