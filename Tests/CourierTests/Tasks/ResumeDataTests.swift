import Foundation
import Testing
@testable import Courier

@Suite("Download resume data with file:")
struct ResumeDataTests {

    /// Lets `task` run in windows of about 20 µs, each ended by `suspend()`, until some bytes
    /// reached the disk (the file: handler checks the task's state before every 1 MiB chunk, so a
    /// window lets about one chunk through). Runs on a thread of its own, not the Swift
    /// concurrency pool; returns the bytes written once the handler has stopped.
    private func stepUntilSomeBytes(_ task: URLSessionDownloadTask) async -> Int64 {
        let stepping = Locked(true)
        Thread.detachNewThread {
            let deadline = Date().addingTimeInterval(testWaitLimit)
            while task.countOfBytesReceived == 0 && Date() < deadline {
                task.resume()
                let windowEnd = DispatchTime.now().uptimeNanoseconds + 20_000
                while DispatchTime.now().uptimeNanoseconds < windowEnd {}
                task.suspend()
                usleep(300)
            }
            stepping.withLock { $0 = false }
        }
        await waitUntil { !stepping.current }
        // Let a chunk already being read land.
        await settle(0.1)
        return task.countOfBytesReceived
    }

    /// Downloads part of `file` (see ``stepUntilSomeBytes(_:)``), then, while the task is
    /// suspended, cancels it with `cancel(byProducingResumeData:)`. Returns the resume data, the
    /// completion error and the bytes written before the cancel.
    ///
    /// If a thread switch at the wrong moment let the whole file through, the attempt is repeated
    /// with a new task (at most three times).
    private func partialDownload(of file: URL, session: URLSession) async throws -> (Data?, URLError?, Int64) {
        let size = Int64(try Data(contentsOf: file).count)
        for _ in 0..<3 {
            let delegate = EventDelegate()
            let task = session.downloadTask(with: file)
            task.delegate = delegate
            let written = await stepUntilSomeBytes(task)
            if written == size { continue }
            #expect(written > 0)
            #expect(task.state == .suspended)

            let resume = OneShot<Data?>()
            task.cancel(byProducingResumeData: { resume.fulfil($0) })
            let data = try await resume.wait(timeout: testWaitLimit, "resume data")
            #expect(await delegate.waitForCompletion(of: task))
            #expect(!delegate.collapsedNames(for: task).contains("finishedDownload"))
            #expect(resume.callCount == 1)
            return (data, delegate.error(of: task) as? URLError, written)
        }
        Issue.record("three attempts to stop a download part-way let the whole file through")
        return (nil, nil, size)
    }

    @Test("cancel(byProducingResumeData:) from didWriteData gives resume data")
    func cancelFromDidWriteData() async throws {
        let content = TestFiles.bytes(count: 20 * 1024 * 1024, seed: 80)
        let file = try TestFiles.make(content)
        defer { TestFiles.remove(file) }
        let resume = OneShot<Data?>()
        let cancelled = Locked(false)
        var hooks = EventDelegate.Hooks()
        hooks.wrote = { task, _, _, _ in
            let first = cancelled.withLock { done -> Bool in
                defer { done = true }
                return !done
            }
            if first { task.cancel(byProducingResumeData: { resume.fulfil($0) }) }
        }
        let delegate = EventDelegate(hooks)
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        let task = session.downloadTask(with: file)
        task.resume()
        let data = try #require(try await resume.wait())
        #expect(await delegate.waitForCompletion(of: task))
        #expect((delegate.error(of: task) as? URLError)?.code == .cancelled)
        #expect(!delegate.collapsedNames(for: task).contains("finishedDownload"))

        let resumed = session.downloadTask(withResumeData: data)
        resumed.resume()
        #expect(await delegate.waitForCompletion(of: resumed))
        #expect(delegate.collapsedNames(for: resumed).first == "resumed")
        #expect(delegate.download(of: resumed)?.content == content)
    }

    @Test("cancel(byProducingResumeData:) mid-way, then downloadTask(withResumeData:) resumes at the offset to an identical file")
    func resumes() async throws {
        let content = TestFiles.bytes(count: 20 * 1024 * 1024, seed: 81)
        let file = try TestFiles.make(content)
        defer { TestFiles.remove(file) }
        let session = URLSession(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }

        let (resumeData, error, writtenAtCancel) = try await partialDownload(of: file, session: session)
        let data = try #require(resumeData)
        #expect(writtenAtCancel > 0)
        #expect(error?.code == .cancelled)
        #expect(error?.failingURL == file)
        #expect(error?.downloadTaskResumeData == data)

        let delegate = EventDelegate()
        let resumed = session.downloadTask(withResumeData: data)
        resumed.delegate = delegate
        #expect(resumed.originalRequest?.url == file)
        resumed.resume()
        #expect(await delegate.waitForCompletion(of: resumed))
        #expect(delegate.error(of: resumed) == nil)
        // (Where metrics fall is checked by DownloadTaskTests.metricsAfterFinishedDownloading.)
        #expect(delegate.collapsedNames(for: resumed).filter { $0 != "metrics" } == ["resumed", "wrote", "finishedDownload", "complete"])
        guard case .resumed(_, let offset, let expected)? = delegate.events(for: resumed).first else {
            Issue.record("the first message is not didResumeAtOffset: \(delegate.events(for: resumed))")
            return
        }
        #expect(offset == writtenAtCancel)
        #expect(offset < Int64(content.count))
        #expect(expected == Int64(content.count))
        var sum = offset
        var lastTotal = offset
        for case .wrote(_, let bytes, let total, _) in delegate.events(for: resumed) {
            sum += bytes
            #expect(total >= lastTotal, "totalBytesWritten counts the resumed bytes too")
            lastTotal = total
        }
        #expect(sum == Int64(content.count))
        #expect(lastTotal == Int64(content.count))
        let observed = try #require(delegate.download(of: resumed))
        #expect(observed.content == content, "the resumed file is byte-identical")
        #expect(!FileManager.default.fileExists(atPath: observed.location.path))
    }

    @Test("resume data with a completion handler gives the whole file")
    func resumesWithCompletionHandler() async throws {
        let content = TestFiles.bytes(count: 20 * 1024 * 1024, seed: 82)
        let file = try TestFiles.make(content)
        defer { TestFiles.remove(file) }
        let session = URLSession(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }
        let data = try #require(try await partialDownload(of: file, session: session).0)

        let shot = OneShot<DownloadResult>()
        let task = session.downloadTask(withResumeData: data) { location, response, error in
            shot.fulfil(DownloadResult(location: location, response: response, error: error,
                                       contentDuringHandler: location.flatMap { try? Data(contentsOf: $0) }))
        }
        task.resume()
        let result = try await shot.wait()
        #expect(result.error == nil)
        #expect(result.contentDuringHandler == content)
    }

    @Test("a source file changed since the partial download restarts from zero and still gives the right file")
    func changedSourceRestarts() async throws {
        let original = TestFiles.bytes(count: 20 * 1024 * 1024, seed: 83)
        let file = try TestFiles.make(original)
        defer { TestFiles.remove(file) }
        let session = URLSession(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }
        let data = try #require(try await partialDownload(of: file, session: session).0)

        let changed = TestFiles.bytes(count: 20 * 1024 * 1024 + 77, seed: 84)
        try changed.write(to: file, options: .atomic)

        let delegate = EventDelegate()
        let task = session.downloadTask(withResumeData: data)
        task.delegate = delegate
        task.resume()
        #expect(await delegate.waitForCompletion(of: task))
        #expect(delegate.error(of: task) == nil)
        #expect(!delegate.collapsedNames(for: task).contains("resumed"))
        #expect(delegate.download(of: task)?.content == changed)
        let totals = delegate.events(for: task).compactMap { event -> Int64? in
            if case .wrote(_, _, let total, _) = event { return total }
            return nil
        }
        #expect(totals.last == Int64(changed.count))
    }

    @Test("garbage resume data fails the task with cannotDecodeRawData, without crashing", arguments: [
        Data(), Data("garbage".utf8), Data(repeating: 0xAB, count: 1000),
        Data(#"{"format":"courier.download-resume","version":1}"#.utf8),
    ])
    func garbage(_ resumeData: Data) async throws {
        let delegate = EventDelegate()
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        let task = session.downloadTask(withResumeData: resumeData)
        task.resume()
        #expect(await delegate.waitForCompletion(of: task))
        #expect((delegate.error(of: task) as? URLError)?.code == .cannotDecodeRawData)
        #expect((task.error as? URLError)?.code == .cannotDecodeRawData)
        #expect(!delegate.collapsedNames(for: task).contains("finishedDownload"))

        let shot = OneShot<DownloadResult>()
        session.downloadTask(withResumeData: resumeData) { location, response, error in
            shot.fulfil(DownloadResult(location: location, response: response, error: error))
        }.resume()
        let result = try await shot.wait()
        #expect(result.urlError?.code == .cannotDecodeRawData)
        #expect(result.location == nil)
    }

    @Test("cancel(byProducingResumeData:) before any byte, or after completion, hands back nil")
    func noResumeData() async throws {
        let session = ControlledURLProtocol.session()
        defer { session.invalidateAndCancel() }
        let url = ControlledURLProtocol.makeURL()
        let task = session.downloadTask(with: url)
        task.resume()
        _ = try await ControlledURLProtocol.waitForStart(of: url)
        let early = OneShot<Data?>()
        task.cancel(byProducingResumeData: { early.fulfil($0) })
        #expect(try await early.wait() == nil)
        #expect(await waitUntil { task.state == .completed })

        let done = OneShot<Data?>()
        task.cancel(byProducingResumeData: { done.fulfil($0) })
        #expect(try await done.wait() == nil)

        let neverStarted = session.downloadTask(with: url)
        let idle = OneShot<Data?>()
        neverStarted.cancel(byProducingResumeData: { idle.fulfil($0) })
        #expect(try await idle.wait() == nil)
    }

    /// Where forged resume data points, and how the test lays the file system out for it.
    enum ForgedPath: String, CaseIterable, Sendable {
        /// The victim file itself, outside the download directory and not named like a download.
        case outsideTheDirectory
        /// A file with a download's name, but in a subdirectory.
        case inASubdirectory
        /// A download's name reached through `sub/..`: the same directory, not the same spelling.
        case throughDotDot
        /// A symbolic link with a download's name in the download directory, pointing at the victim.
        case symbolicLink
        /// A second hard link to the victim with a download's name in the download directory.
        case hardLink
        /// A directory with a download's name.
        case directory
    }

    /// A name of Courier's download-file pattern that no download uses.
    private static func downloadFileName() -> String {
        let letters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        return DownloadFile.namePrefix + String((0..<6).map { _ in letters.randomElement() ?? "A" }) + DownloadFile.nameSuffix
    }

    private static func resumeData(url: URL, path: String, bytesReceived: Int64) throws -> Data {
        let resume = DownloadResumeData(url: url, originalURL: url, bytesReceived: bytesReceived,
                                        expectedTotalBytes: -1, partialFilePath: path, validator: nil)
        return try #require(resume.encoded())
    }

    /// Runs a download task resumed from `data` to completion and returns its error.
    private static func resumeError(_ data: Data) async throws -> URLError? {
        let delegate = EventDelegate()
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        let task = session.downloadTask(withResumeData: data)
        task.resume()
        #expect(await delegate.waitForCompletion(of: task))
        #expect(!delegate.collapsedNames(for: task).contains("finishedDownload"))
        #expect(!delegate.collapsedNames(for: task).contains("resumed"))
        return delegate.error(of: task) as? URLError
    }

    @Test("resume data whose partial file is not a download file Courier made fails with cannotOpenFile and leaves the file alone",
          arguments: ForgedPath.allCases)
    func forgedPartialFileIsNotTouched(_ forged: ForgedPath) async throws {
        let source = try TestFiles.make(TestFiles.bytes(count: 300_000, seed: 85))
        defer { TestFiles.remove(source) }
        let victimContent = Data("the victim's own bytes, which resuming must not change\n".utf8)
        let victim = try TestFiles.make(victimContent, name: "victim.txt")
        defer { TestFiles.remove(victim) }
        let temporary = FileManager.default.temporaryDirectory.path
        let name = Self.downloadFileName()
        var created: [String] = []
        defer { for path in created.reversed() { try? FileManager.default.removeItem(atPath: path) } }
        let path: String
        var watched = victim.path
        switch forged {
        case .outsideTheDirectory:
            path = victim.path
        case .inASubdirectory:
            path = victim.deletingLastPathComponent().appendingPathComponent(name).path
            try victimContent.write(to: URL(fileURLWithPath: path))
            watched = path
        case .throughDotDot:
            let sub = "\(temporary)/\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: sub, withIntermediateDirectories: false)
            created.append(sub)
            let real = "\(temporary)/\(name)"
            try victimContent.write(to: URL(fileURLWithPath: real))
            created.append(real)
            path = "\(sub)/../\(name)"
            watched = real
        case .symbolicLink:
            path = "\(temporary)/\(name)"
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: victim.path)
            created.append(path)
        case .hardLink:
            path = "\(temporary)/\(name)"
            try FileManager.default.linkItem(atPath: victim.path, toPath: path)
            created.append(path)
        case .directory:
            path = "\(temporary)/\(name)"
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            created.append(path)
            watched = victim.path
        }

        let error = try await Self.resumeError(try Self.resumeData(url: source, path: path, bytesReceived: 10))
        #expect(error?.code == .cannotOpenFile)
        #expect(error?.failingURL == source)
        #expect(FileManager.default.fileExists(atPath: path), "the forged path is not removed")
        #expect(FileManager.default.contents(atPath: watched) == victimContent, "the file is neither truncated nor written")
        #expect(FileManager.default.contents(atPath: victim.path) == victimContent)
    }

    @Test("resume data for a scheme that cannot resume fails with cannotDecodeRawData and leaves the partial file alone",
          arguments: ["data:,hello", "courier-unknown://host/file"])
    func schemeThatCannotResume(_ address: String) async throws {
        let url = try #require(URL(string: address))
        let path = "\(FileManager.default.temporaryDirectory.path)/\(Self.downloadFileName())"
        let content = Data("a partial download\n".utf8)
        try content.write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let error = try await Self.resumeError(try Self.resumeData(url: url, path: path, bytesReceived: 5))
        #expect(error?.code == .cannotDecodeRawData)
        #expect(error?.failingURL == url)
        #expect(FileManager.default.contents(atPath: path) == content)
    }

    /// Resumes well-formed resume data made damaged by `validator` or `fields` (what would go into
    /// the request head) and checks the task fails with cannotDecodeRawData, sends nothing and
    /// leaves the partial file alone.
    private static func expectDamagedRequestHead(validator: String?, fields: [String: String]?) async throws {
        let server = try FaultServer(fallback: .respond(.ok(Data("whole body".utf8))))
        defer { server.stop() }
        let path = "\(FileManager.default.temporaryDirectory.path)/\(downloadFileName())"
        let content = Data("whole".utf8)
        try content.write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let url = server.url("/file")
        let resume = DownloadResumeData(url: url, originalURL: url, bytesReceived: 5, expectedTotalBytes: 10,
                                        partialFilePath: path, validator: validator, headerFields: fields)
        let error = try await resumeError(try #require(resume.encoded()))
        #expect(error?.code == .cannotDecodeRawData)
        #expect(error?.failingURL == url)
        #expect(server.requests.isEmpty)
        #expect(FileManager.default.contents(atPath: path) == content)
    }

    @Test("resume data whose validator holds a line break fails with cannotDecodeRawData; nothing is sent")
    func validatorWithALineBreak() async throws {
        try await Self.expectDamagedRequestHead(validator: "\"tag\"\r\nX-Injected: yes", fields: nil)
    }

    @Test("resume data whose kept header field holds a line break fails with cannotDecodeRawData; nothing is sent",
          arguments: [["X-Client": "a\r\nX-Injected: yes"], ["X-Bad\nName": "value"], ["": "empty name"]])
    func headerFieldWithALineBreak(_ fields: [String: String]) async throws {
        try await Self.expectDamagedRequestHead(validator: nil, fields: fields)
    }

    @Test("a partial file in the download directory with Courier's name, made by this user, is taken (without a validator the download starts over in it)")
    func wellFormedPartialFileIsTaken() async throws {
        let content = TestFiles.bytes(count: 300_000, seed: 86)
        let source = try TestFiles.make(content)
        defer { TestFiles.remove(source) }
        let path = "\(FileManager.default.temporaryDirectory.path)/\(Self.downloadFileName())"
        try content.prefix(1000).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let delegate = EventDelegate()
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        let task = session.downloadTask(withResumeData: try Self.resumeData(url: source, path: path, bytesReceived: 1000))
        task.resume()
        #expect(await delegate.waitForCompletion(of: task))
        #expect(delegate.error(of: task) == nil)
        #expect(delegate.download(of: task)?.content == content)
        #expect(!FileManager.default.fileExists(atPath: path), "the delivered file is removed afterwards")
    }
}
