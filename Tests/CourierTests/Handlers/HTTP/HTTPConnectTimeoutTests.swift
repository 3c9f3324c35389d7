import Foundation
import Testing
@testable import Courier
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A request's timeout counts while the connection is still being made: a server whose accept queue
/// is full never completes the TCP handshake, and one that never accepts never answers the TLS
/// handshake; the task must still end by its timeout.
@Suite("HTTP connect timeout")
struct HTTPConnectTimeoutTests {

    @Test(arguments: [("http", true), ("https", true), ("ftp", true), ("https", false), ("ftps", false)])
    func aListenerThatNeverAcceptsEndsByTheRequestTimeout(scheme: String, queueFull: Bool) async throws {
        let listener = try NeverAcceptingListener(fill: queueFull)
        defer { listener.close() }
        let session = HTTPTest.session()
        defer { session.invalidateAndCancel() }
        var request = URLRequest(url: URL(string: "\(scheme)://127.0.0.1:\(listener.port)/never")!)
        request.timeoutInterval = 1
        let started = ContinuousClock.now
        let result = try await session.loadData(request, timeout: 15)
        let elapsed = ContinuousClock.now - started
        let error = try HTTPTest.urlError(result.error)
        #expect(error.code == .timedOut)
        #expect(elapsed < .seconds(4), "took \(elapsed)")
    }

    @Test func aNeverAcceptingListenerEndsByTheConfigurationsRequestTimeout() async throws {
        let listener = try NeverAcceptingListener(fill: true)
        defer { listener.close() }
        let session = HTTPTest.session { $0.timeoutIntervalForRequest = 1 }
        defer { session.invalidateAndCancel() }
        let started = ContinuousClock.now
        let result = try await session.loadData(URL(string: "http://127.0.0.1:\(listener.port)/never")!, timeout: 15)
        let elapsed = ContinuousClock.now - started
        #expect(try HTTPTest.urlError(result.error).code == .timedOut)
        #expect(elapsed < .seconds(4), "took \(elapsed)")
    }
}

/// A socket on 127.0.0.1 that listens and never accepts. With `fill`, its smallest backlog is
/// filled by connections of its own until one more connect stalls in the TCP handshake; without,
/// the kernel completes a client's handshake and nobody ever reads what it sends.
final class NeverAcceptingListener: @unchecked Sendable {
    let port: Int
    private var descriptors: [Int32] = []

    init(fill: Bool) throws {
        let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard server >= 0 else { throw FaultServerError("socket failed") }
        descriptors.append(server)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(server, $0, length) == 0 && listen(server, fill ? 0 : 16) == 0 && getsockname(server, $0, &length) == 0
            }
        }
        guard bound else { Glibc.close(server); throw FaultServerError("could not listen on 127.0.0.1") }
        port = Int(UInt16(bigEndian: address.sin_port))
        guard fill else { return }
        // Fill the queue: connect without waiting until a connect no longer completes at once.
        for _ in 0..<16 {
            let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            guard client >= 0 else { break }
            descriptors.append(client)
            let result = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, length) }
            }
            guard result != 0, errno == EINPROGRESS else { continue }
            var entry = pollfd(fd: client, events: Int16(POLLOUT), revents: 0)
            if poll(&entry, 1, 200) == 0 { return } // this one stalls: the queue is full
        }
        close()
        throw FaultServerError("the accept queue did not fill")
    }

    func close() {
        for descriptor in descriptors { Glibc.close(descriptor) }
        descriptors = []
    }
}
