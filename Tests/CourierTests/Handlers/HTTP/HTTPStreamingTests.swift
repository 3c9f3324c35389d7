import Foundation
import Testing
@testable import Courier

/// A data delegate for large bodies: hashes what arrives instead of keeping it, can be slow, samples
/// the process's resident memory, and lets a test act on the task from inside `didReceive data`.
final class StreamingRecorder: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private struct State {
        var hash = StreamHash()
        var chunks = 0
        var peakResident = 0
        var completed = false
        var error: (any Error)?
        var response: URLResponse?
        var dataAfterCompletion = 0
        var maxBacklog = 0
    }

    private let state = Locked(State())
    /// Microseconds each `didReceive data` sleeps.
    let delayPerChunk: useconds_t
    /// Called on the delegate queue after each chunk, with the bytes received so far.
    let onData: (@Sendable (URLSessionDataTask, Int) -> Void)?

    init(delayPerChunk: useconds_t = 0, onData: (@Sendable (URLSessionDataTask, Int) -> Void)? = nil) {
        self.delayPerChunk = delayPerChunk
        self.onData = onData
    }

    var received: Int { state.current.hash.count }
    var bodyHash: UInt64 { state.current.hash.finalValue }
    var chunks: Int { state.current.chunks }
    var peakResident: Int { state.current.peakResident }
    var completed: Bool { state.current.completed }
    var error: (any Error)? { state.current.error }
    var response: URLResponse? { state.current.response }
    var dataAfterCompletion: Int { state.current.dataAfterCompletion }
    /// The most body bytes the task had taken from the handler but not yet delivered here.
    var maxBacklog: Int { state.current.maxBacklog }

    func waitForCompletion(timeout: TimeInterval) async -> Bool {
        await waitUntil(timeout: timeout) { self.completed }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        state.withLock { $0.response = response }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        if delayPerChunk > 0 { usleep(delayPerChunk) }
        let read = Int(dataTask.countOfBytesReceived)
        let total: Int = state.withLock { s in
            if s.completed { s.dataAfterCompletion += 1 }
            s.maxBacklog = max(s.maxBacklog, read - s.hash.count - data.count)
            s.hash.update(data)
            s.chunks += 1
            if s.chunks % 64 == 1 { s.peakResident = max(s.peakResident, HTTPTest.residentBytes()) }
            return s.hash.count
        }
        onData?(dataTask, total)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        state.withLock {
            $0.error = error
            $0.completed = true
        }
    }
}

/// Bodies delivered as they arrive: small pieces reach the delegate one by one.
@Suite("HTTP streaming")
struct HTTPStreamingTests {
    @Test func slowBodyArrivesInPieces() async throws {
        let body = Data((0..<24).map { UInt8($0) })
        let server = try FaultServer(routes: ["/drip": .drip(body: body, interval: 0.05)])
        defer { server.stop() }
        let delegate = EventDelegate()
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: server.url("/drip"))
        try await HTTPTest.run(task, delegate)
        #expect(delegate.error(of: task) == nil)
        #expect(delegate.body(of: task) == body)
        let pieces = delegate.events(for: task).filter { $0.name == "data" }.count
        #expect(pieces >= 6, "the body came in \(pieces) pieces")
    }

    @Test func chunkedPiecesArriveBeforeTheEnd() async throws {
        let pieces = (0..<5).map { Data("piece \($0)\n".utf8) }
        let server = try FaultServer(routes: ["/chunks": .chunked(pieces: pieces, delay: 0.2, headers: [])])
        defer { server.stop() }
        let firstPieceAt = Locked<Date?>(nil)
        let delegate = EventDelegate(EventDelegate.Hooks(data: { _, _ in
            firstPieceAt.withLock { if $0 == nil { $0 = Date() } }
        }))
        let session = HTTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: server.url("/chunks"))
        try await HTTPTest.run(task, delegate)
        let finished = Date()
        #expect(delegate.error(of: task) == nil)
        #expect(delegate.body(of: task) == pieces.reduce(Data(), +))
        let first = try #require(firstPieceAt.current)
        #expect(finished.timeIntervalSince(first) > 0.5, "the first piece was delivered before the last was sent")
    }
}

extension HTTPHeavyTests {
    /// 64 MiB bodies through slow and suspended consumers: memory stays bounded, delivery pauses,
    /// cancellation stops the transfer.
    @Suite("HTTP back-pressure")
    struct BackPressure {
        /// Resident memory is process-wide and other suites run in parallel, so the measurement runs
        /// in a test process of its own that runs only this test.
        static let isolatedEnvironmentKey = "COURIER_HTTP_ISOLATED_MEMORY_TEST"

        @Test func slowDelegateKeepsMemoryBounded() async throws {
            guard ProcessInfo.processInfo.environment[Self.isolatedEnvironmentKey] != nil else {
                let (status, output) = try await HTTPTest.runThisTestBinary(filter: "slowDelegateKeepsMemoryBounded",
                                                                      environment: [Self.isolatedEnvironmentKey: "1"], timeout: 90)
                #expect(status == 0, "the isolated run failed:\n\(output.suffix(3000))")
                #expect(output.contains("slowDelegateKeepsMemoryBounded() passed"), "\(output.suffix(3000))")
                return
            }
            let server = try await HTTPTest.nginx()
            let recorder = StreamingRecorder(delayPerChunk: 300)
            let session = HTTPTest.session(delegate: recorder)
            defer { session.finishTasksAndInvalidate() }
            let baseline = HTTPTest.residentBytes()
            let task = session.dataTask(with: server.url(NginxServer.Files.big))
            task.resume()
            let done = await recorder.waitForCompletion(timeout: 90)
            if !done { task.cancel() }
            #expect(done)
            #expect(recorder.error == nil)
            #expect(recorder.received == NginxServer.Files.bigSize)
            #expect(recorder.bodyHash == server.bigHash)
            let growth = recorder.peakResident - baseline
            #expect(growth < 64 << 20, "resident memory grew by \(growth >> 20) MiB for a 64 MiB body")
            // What the task holds for the slow delegate stays near the 8 MiB high-water mark.
            #expect(recorder.maxBacklog < 16 << 20, "\(recorder.maxBacklog >> 20) MiB were waiting for the delegate")
        }

        @Test func suspendStopsDeliveryAndResumeCompletes() async throws {
            let server = try await HTTPTest.nginx()
            let suspendedAt = Locked<Int?>(nil)
            let recorder = StreamingRecorder { task, total in
                guard total >= 1 << 20 else { return }
                let first: Bool = suspendedAt.withLock {
                    if $0 != nil { return false }
                    $0 = total
                    return true
                }
                if first { task.suspend() }
            }
            let session = HTTPTest.session(delegate: recorder)
            defer { session.finishTasksAndInvalidate() }
            let task = session.dataTask(with: server.url(NginxServer.Files.big))
            task.resume()
            #expect(await waitUntil(timeout: 20) { suspendedAt.current != nil })
            #expect(task.state == .suspended)
            await settle(0.3)
            let before = recorder.received
            await settle(0.7)
            let after = recorder.received
            #expect(before == after, "\(after - before) bytes were delivered to a suspended task")
            // The handler paused too: it did not read the whole body into memory meanwhile.
            #expect(task.countOfBytesReceived < Int64(NginxServer.Files.bigSize / 2),
                    "\(task.countOfBytesReceived) bytes read while suspended")
            #expect(!recorder.completed)

            task.resume()
            let done = await recorder.waitForCompletion(timeout: 60)
            if !done { task.cancel() }
            #expect(done)
            #expect(recorder.error == nil)
            #expect(recorder.received == NginxServer.Files.bigSize)
            #expect(recorder.bodyHash == server.bigHash)
        }

        @Test func cancelMidTransfer() async throws {
            let server = try await HTTPTest.nginx()
            let recorder = StreamingRecorder { task, total in
                if total >= 256 << 10 { task.cancel() }
            }
            let session = HTTPTest.session(delegate: recorder)
            defer { session.finishTasksAndInvalidate() }
            let url = server.url("/slow" + NginxServer.Files.big)
            let task = session.dataTask(with: url)
            let started = Date()
            task.resume()
            let done = await recorder.waitForCompletion(timeout: 20)
            if !done { task.cancel() }
            #expect(done)
            #expect(Date().timeIntervalSince(started) < 10)
            let error = try HTTPTest.urlError(recorder.error)
            #expect(error.code == .cancelled)
            #expect(HTTPTest.hasFailingURL(error, url))
            #expect(recorder.received < NginxServer.Files.bigSize)
            await settle(0.3)
            #expect(recorder.dataAfterCompletion == 0)
            #expect(task.state == .completed)
        }

        @Test func large64MiBDownloadTask() async throws {
            let server = try await HTTPTest.nginx()
            let hashed = Locked<(Int, UInt64)?>(nil)
            let finishing = EventDelegate.Hooks(finishedDownload: { _, location in
                hashed.withLock { $0 = try? HTTPTest.hashOfFile(location) }
            }, readDownloads: false)
            let hooked = EventDelegate(finishing)
            let session = HTTPTest.session(delegate: hooked)
            defer { session.finishTasksAndInvalidate() }
            let task = session.downloadTask(with: server.url(NginxServer.Files.big))
            try await HTTPTest.run(task, hooked, timeout: 60)
            #expect(hooked.error(of: task) == nil)
            let (count, hash) = try #require(hashed.current)
            #expect(count == NginxServer.Files.bigSize)
            #expect(hash == server.bigHash)
        }
    }
}
