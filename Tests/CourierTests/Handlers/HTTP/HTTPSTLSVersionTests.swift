import Foundation
import Testing
@testable import Courier

/// `tlsMinimumSupportedProtocolVersion` / `tlsMaximumSupportedProtocolVersion` against servers that
/// speak only TLS 1.2 or only TLS 1.3 (``NginxTLSServer``). The version used is read from the
/// server's side (nginx's `$ssl_protocol` in `X-TLS-Protocol`).
@Suite("HTTPS TLS versions")
struct HTTPSTLSVersionTests {

    /// Loads `port`'s hello with the given bounds, accepting the test CA's certificate; returns the
    /// delegate and the task.
    private func load(_ server: NginxTLSServer, port: Int, minimum: tls_protocol_version_t? = nil,
                      maximum: tls_protocol_version_t? = nil) async throws -> (EventDelegate, URLSessionTask) {
        let delegate = EventDelegate(EventDelegate.Hooks(challenge: { _, challenge, answer in
            if let trust = challenge.protectionSpace.serverTrust {
                answer(.useCredential, URLCredential(trust: trust))
            } else {
                answer(.performDefaultHandling, nil)
            }
        }))
        let session = HTTPTest.session(delegate: delegate) { configuration in
            if let minimum { configuration.tlsMinimumSupportedProtocolVersion = minimum }
            if let maximum { configuration.tlsMaximumSupportedProtocolVersion = maximum }
        }
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: server.url(port))
        try await HTTPTest.run(task, delegate)
        return (delegate, task)
    }

    private func negotiated(_ delegate: EventDelegate, _ task: URLSessionTask,
                            sourceLocation: SourceLocation = #_sourceLocation) -> String? {
        #expect(delegate.error(of: task) == nil, "\(String(describing: delegate.error(of: task)))", sourceLocation: sourceLocation)
        #expect(delegate.body(of: task) == NginxServer.Files.helloContents, sourceLocation: sourceLocation)
        return (delegate.response(of: task) as? HTTPURLResponse)?.value(forHTTPHeaderField: "X-TLS-Protocol")
    }

    @Test func defaultsReachBothVersions() async throws {
        let configuration = URLSessionConfiguration.default
        #expect(configuration.tlsMinimumSupportedProtocolVersion == .TLSv12)
        #expect(configuration.tlsMaximumSupportedProtocolVersion == .TLSv13)
        let server = try await NginxTLSServer.shared()
        let (old, oldTask) = try await load(server, port: server.tls12Port)
        #expect(negotiated(old, oldTask) == "TLSv1.2")
        let (new, newTask) = try await load(server, port: server.tls13Port)
        #expect(negotiated(new, newTask) == "TLSv1.3")
        let (both, bothTask) = try await load(server, port: server.chainPort)
        #expect(negotiated(both, bothTask) == "TLSv1.3", "the newest version both sides speak")
    }

    @Test func minimumAboveWhatTheServerSpeaksFails() async throws {
        let server = try await NginxTLSServer.shared()
        let (delegate, task) = try await load(server, port: server.tls12Port, minimum: .TLSv13)
        let error = try HTTPTest.urlError(delegate.error(of: task))
        #expect(error.code == .secureConnectionFailed, "got \(error.code): \(error.localizedDescription)")
        #expect(HTTPTest.hasFailingURL(error, server.url(server.tls12Port)))
        #expect(delegate.response(of: task) == nil)
        #expect(!delegate.events(for: task).contains { $0.name == "challenge" }, "no handshake, no certificate to judge")
    }

    @Test func maximumBelowWhatTheServerSpeaksFails() async throws {
        let server = try await NginxTLSServer.shared()
        let (delegate, task) = try await load(server, port: server.tls13Port, maximum: .TLSv12)
        let error = try HTTPTest.urlError(delegate.error(of: task))
        #expect(error.code == .secureConnectionFailed, "got \(error.code): \(error.localizedDescription)")
        #expect(delegate.response(of: task) == nil)
    }

    @Test func matchingBoundsSucceed() async throws {
        let server = try await NginxTLSServer.shared()
        let (newOnly, newTask) = try await load(server, port: server.tls13Port, minimum: .TLSv13)
        #expect(negotiated(newOnly, newTask) == "TLSv1.3")
        let (oldOnly, oldTask) = try await load(server, port: server.tls12Port, minimum: .TLSv12, maximum: .TLSv12)
        #expect(negotiated(oldOnly, oldTask) == "TLSv1.2")
    }

    @Test func maximumPicksTheVersionWithAServerThatSpeaksBoth() async throws {
        let server = try await NginxTLSServer.shared()
        let (capped, cappedTask) = try await load(server, port: server.chainPort, maximum: .TLSv12)
        #expect(negotiated(capped, cappedTask) == "TLSv1.2")
        let (raised, raisedTask) = try await load(server, port: server.chainPort, minimum: .TLSv13)
        #expect(negotiated(raised, raisedTask) == "TLSv1.3")
    }
}
