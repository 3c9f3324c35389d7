import Foundation
import Testing
@testable import Courier

/// A `Range: bytes=N-` header on an sftp request starts the body at byte N of the file (what
/// `courier -C -` sends); other ranges and starts past the end fail with `unsupportedURL`.
extension SFTPTests {
    @Suite("SFTP range start")
    struct RangeStartTests {
        private func request(_ server: SSHServer, _ file: String, range: String) -> URLRequest {
            var request = URLRequest(url: server.url(file, password: true))
            request.setValue(range, forHTTPHeaderField: "Range")
            return request
        }

        @Test func theBodyStartsAtTheOffset() async throws {
            let server = try await SFTPTest.server()
            let session = SFTPTest.session(server)
            defer { session.finishTasksAndInvalidate() }
            let whole = try server.contents(of: SSHServer.Files.medium)
            let start = 300_001
            let result = try await session.loadData(request(server, SSHServer.Files.medium, range: "bytes=\(start)-"), timeout: 30)
            #expect(result.error == nil)
            #expect(result.data == whole.suffix(from: start))
            #expect(result.response?.expectedContentLength == Int64(whole.count - start))
        }

        @Test func aStartAtTheEndGivesAnEmptyBody() async throws {
            let server = try await SFTPTest.server()
            let session = SFTPTest.session(server)
            defer { session.finishTasksAndInvalidate() }
            let size = SSHServer.Files.helloContents.count
            let result = try await session.loadData(request(server, SSHServer.Files.hello, range: "bytes=\(size)-"), timeout: 30)
            #expect(result.error == nil)
            #expect(result.data == Data())
        }

        @Test func aStartPastTheEndFails() async throws {
            let server = try await SFTPTest.server()
            let session = SFTPTest.session(server)
            defer { session.finishTasksAndInvalidate() }
            let size = SSHServer.Files.helloContents.count
            let result = try await session.loadData(request(server, SSHServer.Files.hello, range: "bytes=\(size + 1)-"), timeout: 30)
            let error = try SFTPTest.urlError(result.error)
            #expect(error.code == .unsupportedURL)
            #expect(error.localizedDescription.contains("past the end of the file (\(size) bytes)"), "\(error)")
        }

        @Test func aRangeThatIsNotAStartOffsetFails() async throws {
            let server = try await SFTPTest.server()
            let session = SFTPTest.session(server)
            defer { session.finishTasksAndInvalidate() }
            for range in ["bytes=0-3", "bytes=-5", "bytes=1-,5-", "lines=3-"] {
                let sent = request(server, SSHServer.Files.hello, range: range)
                let result = try await session.loadData(sent, timeout: 30)
                let error = try SFTPTest.urlError(result.error)
                #expect(error.code == .unsupportedURL, "\(range)")
                #expect(error.failingURL == sent.url, "\(range)")
                #expect(result.data == nil, "\(range)")
            }
        }
    }
}
