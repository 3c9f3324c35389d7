import Foundation
import Testing
@testable import Courier

/// Resumable HTTP downloads: `cancel(byProducingResumeData:)`, then a download from the resume data
/// asks for the rest with `Range` and `If-Range`, reports `didResumeAtOffset` and ends with the
/// whole file; a server that ignores the range (or whose resource changed) restarts the download.
@Suite("HTTP resumable downloads")
struct HTTPResumeTests {
    static let size = 1 << 20
    static let firstPart = 256 << 10

    /// How the scripted server answers a request for the rest.
    enum RangeBehaviour: Sendable { case honour, ignore, changed }

    /// A server for `/file` (ETag "v1") that sends the first ``firstPart`` bytes and then waits; a
    /// request with `Range` gets the rest as `behaviour` says. `failFirst` resets the connection
    /// after the first part instead of waiting.
    private func resumableServer(body: Data, changed: Data, behaviour: RangeBehaviour, failFirst: Bool = false) throws -> FaultServer {
        let tag = "\"v1\""
        return try FaultServer(routes: [
            "/file": .custom { request, writer in
                if let range = request.header("Range"), range.hasPrefix("bytes="),
                   let start = Int(range.dropFirst(6).split(separator: "-").first ?? "") {
                    switch behaviour {
                    case .honour where request.header("If-Range") == tag:
                        writer.send(.ok(body.subdata(in: start..<body.count), status: 206, reason: "Partial Content", headers: [
                            ("ETag", tag), ("Content-Range", "bytes \(start)-\(body.count - 1)/\(body.count)"),
                            ("Content-Type", "application/octet-stream"),
                        ]))
                    case .changed:
                        writer.send(.ok(changed, headers: [("ETag", "\"v2\""), ("Content-Type", "application/octet-stream")]))
                    default:
                        writer.send(.ok(body, headers: [("ETag", tag), ("Content-Type", "application/octet-stream")]))
                    }
                    return true
                }
                writer.writeHead(status: 200, headers: [("Content-Length", "\(body.count)"), ("ETag", tag),
                                                        ("Content-Type", "application/octet-stream"), ("Accept-Ranges", "bytes")])
                writer.write(body.prefix(Self.firstPart))
                if failFirst {
                    writer.pause(0.2)
                    writer.resetOnClose()
                } else {
                    writer.pause(15)
                }
                return false
            },
        ])
    }

    /// Runs a download of `url` whose delegate (from ``cancellingDelegate(after:resumeData:)``)
    /// cancels it with resume data part-way.
    private func partialDownload(_ url: URL, session: URLSession, delegate: EventDelegate) async throws -> URLSessionDownloadTask {
        let task = session.downloadTask(with: url)
        try await HTTPTest.run(task, delegate)
        return task
    }

    /// A delegate that cancels its download with resume data once `threshold` bytes are written.
    private func cancellingDelegate(after threshold: Int, resumeData: OneShot<Data?>) -> EventDelegate {
        let cancelled = Locked(false)
        return EventDelegate(EventDelegate.Hooks(wrote: { task, _, total, _ in
            guard total >= Int64(threshold), !cancelled.withLock({ let was = $0; $0 = true; return was }) else { return }
            task.cancel(byProducingResumeData: { data in resumeData.fulfil(data) })
        }))
    }

    @Test func cancelWithResumeDataThenResume() async throws {
        let body = try HTTPTest.randomBytes(Self.size)
        let server = try resumableServer(body: body, changed: Data(), behaviour: .honour)
        defer { server.stop() }
        let resumeData = OneShot<Data?>()
        let delegate = cancellingDelegate(after: Self.firstPart, resumeData: resumeData)
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }

        let first = try await partialDownload(server.url("/file"), session: session, delegate: delegate)
        let data = try #require(try await resumeData.wait(timeout: 10, "resume data; the task ended with \(String(describing: delegate.error(of: first))), events \(delegate.collapsedNames(for: first))"),
                                "cancel(byProducingResumeData:) gave no resume data")
        let error = try HTTPTest.urlError(delegate.error(of: first))
        #expect(error.code == .cancelled)
        #expect(error.downloadTaskResumeData == data)

        let second = session.downloadTask(withResumeData: data)
        try await HTTPTest.run(second, delegate)
        #expect(delegate.error(of: second) == nil)
        let resumed = delegate.events(for: second).compactMap { event -> (Int64, Int64)? in
            if case .resumed(_, let offset, let expected) = event { return (offset, expected) }
            return nil
        }
        #expect(resumed.count == 1)
        #expect(resumed.first?.0 == Int64(Self.firstPart))
        #expect(resumed.first?.1 == Int64(Self.size))
        #expect(delegate.collapsedNames(for: second).first == "resumed")
        #expect(delegate.download(of: second)?.content == body)

        let requests = server.requests(for: "/file")
        #expect(requests.count == 2)
        #expect(requests.last?.header("Range") == "bytes=\(Self.firstPart)-")
        #expect(requests.last?.header("If-Range") == "\"v1\"")
    }

    @Test func serverIgnoringTheRangeRestartsTheDownload() async throws {
        let body = try HTTPTest.randomBytes(Self.size)
        let server = try resumableServer(body: body, changed: Data(), behaviour: .ignore)
        defer { server.stop() }
        let resumeData = OneShot<Data?>()
        let delegate = cancellingDelegate(after: Self.firstPart, resumeData: resumeData)
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        _ = try await partialDownload(server.url("/file"), session: session, delegate: delegate)
        let data = try #require(try await resumeData.wait(timeout: 10), "cancel(byProducingResumeData:) gave no resume data")

        let second = session.downloadTask(withResumeData: data)
        try await HTTPTest.run(second, delegate)
        #expect(delegate.error(of: second) == nil)
        #expect(!delegate.events(for: second).contains { $0.name == "resumed" })
        #expect(delegate.download(of: second)?.content == body, "the download started over, not spliced")
    }

    @Test func changedResourceRestartsWithTheNewContent() async throws {
        let body = try HTTPTest.randomBytes(Self.size)
        let changed = try HTTPTest.randomBytes(Self.size / 2)
        let server = try resumableServer(body: body, changed: changed, behaviour: .changed)
        defer { server.stop() }
        let resumeData = OneShot<Data?>()
        let delegate = cancellingDelegate(after: Self.firstPart, resumeData: resumeData)
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        _ = try await partialDownload(server.url("/file"), session: session, delegate: delegate)
        let data = try #require(try await resumeData.wait(timeout: 10), "cancel(byProducingResumeData:) gave no resume data")

        let second = session.downloadTask(withResumeData: data)
        try await HTTPTest.run(second, delegate)
        #expect(delegate.error(of: second) == nil)
        #expect(delegate.download(of: second)?.content == changed)
    }

    @Test func failedDownloadCarriesResumeData() async throws {
        let body = try HTTPTest.randomBytes(Self.size)
        let server = try resumableServer(body: body, changed: Data(), behaviour: .honour, failFirst: true)
        defer { server.stop() }
        let delegate = EventDelegate()
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let first = session.downloadTask(with: server.url("/file"))
        try await HTTPTest.run(first, delegate)
        let error = try HTTPTest.urlError(delegate.error(of: first))
        #expect(error.code == .networkConnectionLost)
        let data = try #require(error.downloadTaskResumeData, "a failed download offers resume data")

        let second = session.downloadTask(withResumeData: data)
        try await HTTPTest.run(second, delegate)
        #expect(delegate.error(of: second) == nil)
        #expect(delegate.events(for: second).contains { $0 == .resumed(task: second.taskIdentifier, offset: Int64(Self.firstPart), expected: Int64(Self.size)) })
        #expect(delegate.download(of: second)?.content == body)
    }

    @Test func resumeAgainstNginx() async throws {
        let server = try await HTTPTest.nginx()
        let resumeData = OneShot<Data?>()
        let delegate = cancellingDelegate(after: 512 << 10, resumeData: resumeData)
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        // 4 MiB at 4 MiB/s: cancelled after a fraction, then the rest.
        let url = server.url("/slow" + NginxServer.Files.medium)
        _ = try await partialDownload(url, session: session, delegate: delegate)
        let data = try #require(try await resumeData.wait(timeout: 10), "cancel(byProducingResumeData:) gave no resume data")

        let second = session.downloadTask(withResumeData: data)
        try await HTTPTest.run(second, delegate, timeout: 30)
        #expect(delegate.error(of: second) == nil)
        let offset = delegate.events(for: second).compactMap { event -> Int64? in
            if case .resumed(_, let offset, _) = event { return offset }
            return nil
        }.first
        #expect((offset ?? 0) >= 512 << 10)
        #expect(delegate.download(of: second)?.content == (try server.contents(of: NginxServer.Files.medium)))
    }

    @Test func asyncDownloadResumeFrom() async throws {
        let body = try HTTPTest.randomBytes(Self.size)
        let server = try resumableServer(body: body, changed: Data(), behaviour: .honour)
        defer { server.stop() }
        let resumeData = OneShot<Data?>()
        let delegate = cancellingDelegate(after: Self.firstPart, resumeData: resumeData)
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        _ = try await partialDownload(server.url("/file"), session: session, delegate: delegate)
        let data = try #require(try await resumeData.wait(timeout: 10), "cancel(byProducingResumeData:) gave no resume data")
        let (location, response) = try await withTimeout(20) { try await session.download(resumeFrom: data) }
        defer { try? FileManager.default.removeItem(at: location) }
        #expect(try HTTPTest.http(response).statusCode == 206)
        #expect(try Data(contentsOf: location) == body)
    }

    /// A content-encoded body is stored decoded, so a byte offset into the file says nothing about
    /// the encoded representation a `Range` counts in: such a download offers no resume data, even
    /// with a strong ETag (and the partial file is not kept).
    @Test func contentEncodedDownloadGivesNoResumeData() async throws {
        let body = try HTTPTest.randomBytes(Self.size)
        let encoded = try CompressedBody.make(body, encoding: "gzip")
        let server = try FaultServer(routes: [
            "/encoded": .custom { _, writer in
                writer.writeHead(status: 200, headers: [("Content-Length", "\(encoded.count)"), ("ETag", "\"v1\""),
                                                        ("Content-Encoding", "gzip"), ("Accept-Ranges", "bytes"),
                                                        ("Content-Type", "application/octet-stream")])
                writer.write(encoded.prefix(Self.firstPart))
                writer.pause(15)
                return false
            },
        ])
        defer { server.stop() }
        let resumeData = OneShot<Data?>()
        let delegate = cancellingDelegate(after: 64 << 10, resumeData: resumeData)
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }

        let task = try await partialDownload(server.url("/encoded"), session: session, delegate: delegate)
        let data = try await resumeData.wait(timeout: 10, "the cancellation's answer; events \(delegate.collapsedNames(for: task))")
        #expect(data == nil)
        let error = try HTTPTest.urlError(delegate.error(of: task))
        #expect(error.code == .cancelled)
        #expect(error.downloadTaskResumeData == nil)
    }

    /// The rest is asked for as the start was: the request's own header fields (credentials, the
    /// app's fields) and timeout come back in the resumed request, `Range`/`If-Range` are Courier's.
    @Test func resumedRequestKeepsTheHeaderFields() async throws {
        let body = try HTTPTest.randomBytes(Self.size)
        let server = try resumableServer(body: body, changed: Data(), behaviour: .honour)
        defer { server.stop() }
        let resumeData = OneShot<Data?>()
        let delegate = cancellingDelegate(after: Self.firstPart, resumeData: resumeData)
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }

        var request = URLRequest(url: server.url("/file"), timeoutInterval: 42)
        request.setValue("Bearer resume-token", forHTTPHeaderField: "Authorization")
        request.setValue("courier-tests", forHTTPHeaderField: "X-Client")
        let first = session.downloadTask(with: request)
        try await HTTPTest.run(first, delegate)
        let data = try #require(try await resumeData.wait(timeout: 10, "resume data"), "no resume data")

        let second = session.downloadTask(withResumeData: data)
        #expect(second.originalRequest?.value(forHTTPHeaderField: "X-Client") == "courier-tests")
        #expect(second.originalRequest?.timeoutInterval == 42)
        try await HTTPTest.run(second, delegate)
        #expect(delegate.error(of: second) == nil)
        #expect(delegate.download(of: second)?.content == body)
        let requests = server.requests(for: "/file")
        #expect(requests.count == 2)
        let resumed = try #require(requests.last)
        #expect(resumed.header("Authorization") == "Bearer resume-token")
        #expect(resumed.header("X-Client") == "courier-tests")
        #expect(resumed.header("Range") == "bytes=\(Self.firstPart)-")
        #expect(resumed.headers.filter { $0.name.lowercased() == "range" }.count == 1)
    }
}
