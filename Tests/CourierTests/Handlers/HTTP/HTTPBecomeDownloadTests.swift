import Foundation
import Testing
@testable import Courier

/// `.becomeDownload` on the http handler: a data task's load continues as a download task whose file
/// holds the whole body, against nginx (HTTP/1.1 and HTTP/2).
@Suite("HTTP .becomeDownload")
struct HTTPBecomeDownloadTests {
    private func becomeDownload(_ url: URL, _ server: NginxServer) async throws {
        let became = Locked<URLSessionDownloadTask?>(nil)
        var hooks = EventDelegate.Hooks()
        hooks.response = { _, _, completion in completion(.becomeDownload) }
        hooks.becameDownload = { _, download in became.withLock { $0 = download } }
        let delegate = try HTTPTest.trustingDelegate(server, hooks)
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }

        let dataTask = session.dataTask(with: url)
        dataTask.resume()
        #expect(await waitUntil(timeout: 20) { became.withLock { $0 } != nil })
        let download = try #require(became.withLock { $0 })
        guard await delegate.waitForCompletion(of: download, timeout: 20) else {
            download.cancel()
            throw TestTimeout(what: "the download task \(url) became")
        }
        #expect(delegate.error(of: download) == nil)
        let file = try #require(delegate.download(of: download))
        #expect(file.existedDuringCall)
        #expect(file.content == (try server.contents(of: NginxServer.Files.medium)))
        #expect(!FileManager.default.fileExists(atPath: file.location.path), "the temporary file outlived the call")
        // The data task hands its load over: no body and no completion of its own.
        #expect(delegate.body(of: dataTask).isEmpty)
        #expect(delegate.error(of: dataTask) == nil)
        #expect(download.taskIdentifier != dataTask.taskIdentifier)
        #expect(download.state == .completed)
        #expect(dataTask.state == .completed)
        #expect((download.response as? HTTPURLResponse)?.statusCode == 200)
        #expect(download.countOfBytesReceived == Int64(NginxServer.Files.mediumSize))
    }

    @Test func overHTTP11() async throws {
        let server = try await HTTPTest.nginx()
        try await becomeDownload(server.url(NginxServer.Files.medium), server)
    }

    @Test func overHTTP2() async throws {
        let server = try await HTTPTest.nginx()
        try await becomeDownload(server.httpsURL(NginxServer.Files.medium), server)
    }
}
