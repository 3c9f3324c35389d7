import CCurl
import Foundation
import Testing
@testable import Courier

/// A `Range: bytes=N-` header on an ftp request starts the body at byte N of the file with `REST`
/// (what `courier -C -` sends), without the resume data's check that the file is unchanged; other
/// ranges and starts past the end fail with `unsupportedURL`.
@Suite("FTP range start")
struct FTPRangeStartTests {
    private func request(_ url: URL, range: String) -> URLRequest {
        var request = URLRequest(url: url)
        request.setValue(range, forHTTPHeaderField: "Range")
        return request
    }

    @Test func theBodyStartsAtTheOffset() async throws {
        let server = try await FTPTest.servers()
        let session = FTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        let whole = try server.contents(of: FTPTestServer.Files.medium)
        let start = 1_000_003
        let result = try await session.loadData(request(server.url(FTPTestServer.Files.medium), range: "bytes=\(start)-"))
        #expect(result.error == nil)
        #expect(result.data == whole.suffix(from: start))
        #expect(result.response?.expectedContentLength == Int64(whole.count - start))
    }

    @Test func aStartAtTheEndGivesAnEmptyBody() async throws {
        let server = try await FTPTest.servers()
        let session = FTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        let size = FTPTestServer.Files.helloContents.count
        let result = try await session.loadData(request(server.url(FTPTestServer.Files.hello), range: "bytes=\(size)-"))
        #expect(result.error == nil)
        #expect(result.data == Data())
    }

    @Test func aStartPastTheEndFails() async throws {
        let server = try await FTPTest.servers()
        let session = FTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        let size = FTPTestServer.Files.helloContents.count
        let url = server.url(FTPTestServer.Files.hello)
        let result = try await session.loadData(request(url, range: "bytes=\(size + 1)-"))
        let error = try FTPTest.urlError(result.error)
        #expect(error.code == .unsupportedURL)
        #expect(error.failingURL == url)
        #expect(error.localizedDescription.contains("past the end of the file (\(size) bytes)"), "\(error)")
    }

    @Test func aRangeThatIsNotAStartOffsetFails() async throws {
        let server = try await FTPTest.servers()
        let session = FTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        let url = server.url(FTPTestServer.Files.hello)
        for range in ["bytes=0-3", "bytes=-5", "bytes=1-,5-", "lines=3-"] {
            let result = try await session.loadData(request(url, range: range))
            let error = try FTPTest.urlError(result.error)
            #expect(error.code == .unsupportedURL, "\(range)")
            #expect(error.failingURL == url, "\(range)")
            #expect(result.data == nil, "\(range)")
        }
    }

    @Test func decidingAfterTheProbe() {
        let url = URL(string: "ftp://127.0.0.1/file")
        var facts = FTPTransferOutcome.Facts(result: CURLE_OK, operation: .probe, url: url)
        facts.rangeStart = 10
        facts.remoteSize = 10
        guard case .downloadFromRangeStart(10) = FTPTransferOutcome.decide(facts) else {
            Issue.record("a start at the end downloads from there"); return
        }
        facts.remoteSize = nil
        guard case .downloadFromRangeStart(10) = FTPTransferOutcome.decide(facts) else {
            Issue.record("an unknown size still downloads from the start"); return
        }
        facts.remoteSize = 9
        guard case .fail(let error) = FTPTransferOutcome.decide(facts) else {
            Issue.record("a start past the end fails"); return
        }
        #expect(error.code == .unsupportedURL)
        // A server that cannot seek does not make a range start over from byte zero.
        var refused = FTPTransferOutcome.Facts(result: CURLE_BAD_DOWNLOAD_RESUME, operation: .download(offset: 10), url: url)
        refused.rangeStart = 10
        if case .downloadFromStart = FTPTransferOutcome.decide(refused) {
            Issue.record("a refused range start must fail, not restart from zero")
        }
    }
}
