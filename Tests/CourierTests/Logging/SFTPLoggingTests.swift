import Foundation
import Logging
import Testing
@testable import Courier

/// What an SSH connection logs at `debug`: its address, the negotiated methods, the host key and
/// the authentication, as wire-trace notes (`courier -v` shows them); never the password.
extension SFTPTests {
    @Suite("SFTP logging")
    struct LoggingTests {
        @Test func theConnectionNotesNegotiationHostKeyAndAuthentication() async throws {
            let server = try await SFTPTest.server()
            let store = RecordingLogHandler.Store()
            let session = SFTPTest.session(server) { $0.logger = store.logger(level: .debug) }
            defer { session.finishTasksAndInvalidate() }
            let url = server.url(SSHServer.Files.hello, password: true)
            let result = try await session.loadData(url)
            #expect(result.data == SSHServer.Files.helloContents)
            let notes = store.wireLines(.info)
            #expect(notes.contains { $0.hasPrefix("Connected to \(SSHServer.user)@") }, "\(notes)")
            #expect(notes.contains { $0.hasPrefix("SSH handshake: kex ") && $0.contains("cipher client->server ") }, "\(notes)")
            #expect(notes.contains { $0.hasPrefix("Server host key: ") && $0.contains("SHA256:") }, "\(notes)")
            #expect(notes.contains { $0.hasPrefix("Authentication methods offered: ") }, "\(notes)")
            #expect(notes.contains("Authenticated as \(SSHServer.user)@[127.0.0.1]:\(server.port) with password"), "\(notes)")
            let encoded = url.password(percentEncoded: true) ?? server.password
            #expect(!store.all.contains { record in
                [server.password, encoded].contains { secret in
                    record.message.contains(secret) || record.metadata.values.contains { $0.contains(secret) }
                }
            })
        }
    }
}
