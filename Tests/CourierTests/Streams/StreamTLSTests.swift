import Foundation
import Testing
@testable import Courier

/// Stream tasks over TLS against `stream_tls_server.py` (``StreamTLSServer``): TLS from the
/// start, STARTTLS in the middle of a plain-text exchange, and the server-trust challenge.
@Suite("Stream tasks over TLS")
struct StreamTLSTests {
    @Test func tlsFromTheStartEchoes() async throws {
        let server = try await StreamTLSServer.shared(.tlsEcho)
        let session = StreamTest.trustingSession(server.pki)
        defer { session.invalidateAndCancel() }
        let task = session.streamTask(withHostName: "127.0.0.1", port: server.port)
        task.startSecureConnection()
        task.resume()
        try await task.write(Data("secret".utf8), timeout: StreamTest.timeout)
        #expect(try await StreamTest.read(task, count: 6) == Data("secret".utf8))
    }

    @Test func startTLSInTheMiddleOfAPlainTextExchange() async throws {
        let server = try await StreamTLSServer.shared(.startTLS)
        let session = StreamTest.trustingSession(server.pki)
        defer { session.invalidateAndCancel() }
        let task = session.streamTask(withHostName: "localhost", port: server.port)
        task.resume()
        let greeting = try await StreamTest.read(task, count: 11)
        try await task.write(Data("STARTTLS\r\n".utf8), timeout: StreamTest.timeout)
        let answer = try await StreamTest.read(task, count: 14)
        task.startSecureConnection()
        try await task.write(Data("over tls".utf8), timeout: StreamTest.timeout)
        let echoed = try await StreamTest.read(task, count: 8)
        #expect(greeting == Data("220 ready\r\n".utf8) && answer == Data("220 go ahead\r\n".utf8) && echoed == Data("over tls".utf8))
    }

    @Test func anUntrustedCertificateIsRefusedByDefault() async throws {
        let server = try await StreamTLSServer.shared(.tlsEcho)
        let delegate = StreamTestDelegate()
        let session = StreamTest.session(delegate)
        defer { session.invalidateAndCancel() }
        let task = session.streamTask(withHostName: "127.0.0.1", port: server.port)
        task.startSecureConnection()
        task.resume()
        let error = await #expect(throws: URLError.self) {
            try await task.write(Data("secret".utf8), timeout: StreamTest.timeout)
        }
        #expect(await delegate.waitForCompletion())
        #expect(error?.code == .serverCertificateHasUnknownRoot
                && delegate.events == [.challenge, .completed(.serverCertificateHasUnknownRoot)])
    }

    @Test func anUntrustedCertificateIsAcceptedByTheChallengeAnswer() async throws {
        let server = try await StreamTLSServer.shared(.tlsEcho)
        let delegate = StreamTestDelegate(trustAnswer: StreamTest.acceptTrust)
        let session = StreamTest.session(delegate)
        defer { session.invalidateAndCancel() }
        let task = session.streamTask(withHostName: "127.0.0.1", port: server.port)
        task.startSecureConnection()
        task.resume()
        try await task.write(Data("secret".utf8), timeout: StreamTest.timeout)
        let echoed = try await StreamTest.read(task, count: 6)
        #expect(echoed == Data("secret".utf8) && delegate.events == [.challenge])
    }

    @Test func aCertificateForAnotherHostIsRefused() async throws {
        // Issued by the trusted CA, for other.example only.
        let server = try await StreamTLSServer.shared(.wrongHostEcho)
        let delegate = StreamTestDelegate()
        let session = StreamTest.trustingSession(server.pki, delegate)
        defer { session.invalidateAndCancel() }
        let task = session.streamTask(withHostName: "127.0.0.1", port: server.port)
        task.startSecureConnection()
        task.resume()
        #expect(await delegate.waitForCompletion())
        #expect(delegate.events.first == .challenge && delegate.events.last == .completed(.serverCertificateUntrusted))
    }
}
