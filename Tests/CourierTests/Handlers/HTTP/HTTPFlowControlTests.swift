import Foundation
import Testing
@testable import Courier

/// While Courier itself holds an http transfer back — paused because the consumer is behind, or
/// waiting for the delegate's response disposition — the idle timeout does not run; a server that
/// goes silent still times out.
@Suite("HTTP idle clock while held back")
struct HTTPIdleClockTests {
    /// A body larger than the task's back-pressure limit (8 MiB), so the handler pauses.
    static let bodySize = 20 << 20

    @Test func slowResponseDecisionDoesNotTimeOut() async throws {
        let body = try HTTPTest.randomBytes(Self.bodySize)
        let server = try FaultServer(routes: ["/big": .respond(.ok(body))])
        defer { server.stop() }
        let delegate = EventDelegate(EventDelegate.Hooks(response: { _, _, decide in
            DispatchQueue.global().asyncAfter(deadline: .now() + 2) { decide(.allow) }
        }))
        let session = HTTPTest.session(delegate: delegate) { $0.timeoutIntervalForRequest = 0.5 }
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: server.url("/big"))
        let started = Date()
        try await HTTPTest.run(task, delegate, timeout: 30)
        #expect(delegate.error(of: task) == nil, "\(String(describing: delegate.error(of: task)))")
        // Compared by length and hash: a failed `==` on 20 MiB would make the test library diff them.
        let received = delegate.body(of: task)
        #expect(received.count == body.count)
        #expect(StreamHash.of(received) == StreamHash.of(body))
        #expect(Date().timeIntervalSince(started) >= 2)
    }

    @Test func slowDataDelegateDoesNotTimeOut() async throws {
        let body = try HTTPTest.randomBytes(Self.bodySize)
        let server = try FaultServer(routes: ["/big": .respond(.ok(body))])
        defer { server.stop() }
        let slowed = Locked(false)
        let delegate = EventDelegate(EventDelegate.Hooks(data: { _, _ in
            // The first piece takes 2 s: the handler fills the task's buffer and pauses meanwhile.
            let first: Bool = slowed.withLock { done in
                defer { done = true }
                return !done
            }
            if first { usleep(2_000_000) }
        }))
        let session = HTTPTest.session(delegate: delegate) { $0.timeoutIntervalForRequest = 0.5 }
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: server.url("/big"))
        try await HTTPTest.run(task, delegate, timeout: 30)
        #expect(delegate.error(of: task) == nil, "\(String(describing: delegate.error(of: task)))")
        // Compared by length and hash: a failed `==` on 20 MiB would make the test library diff them.
        let received = delegate.body(of: task)
        #expect(received.count == body.count)
        #expect(StreamHash.of(received) == StreamHash.of(body))
    }

    @Test func silentServerTimesOutOnceTheDelegateDecided() async throws {
        let server = try FaultServer(routes: ["/stall": .custom { _, writer in
            writer.writeHead(status: 200, headers: [("Content-Length", "100000")])
            writer.write(Data(repeating: 1, count: 1000))
            writer.pause(15)
            return false
        }])
        defer { server.stop() }
        let delegate = EventDelegate(EventDelegate.Hooks(response: { _, _, decide in
            DispatchQueue.global().asyncAfter(deadline: .now() + 1) { decide(.allow) }
        }))
        let session = HTTPTest.session(delegate: delegate) { $0.timeoutIntervalForRequest = 0.5 }
        defer { session.finishTasksAndInvalidate() }
        let url = server.url("/stall")
        let task = session.dataTask(with: url)
        let started = Date()
        try await HTTPTest.run(task, delegate, timeout: 20)
        let elapsed = Date().timeIntervalSince(started)
        let error = try HTTPTest.urlError(delegate.error(of: task))
        #expect(error.code == .timedOut, "got \(error.code)")
        #expect(HTTPTest.hasFailingURL(error, url))
        // The second the delegate took does not count; the silence after it does.
        #expect(elapsed >= 1.4 && elapsed < 8, "timed out after \(elapsed) s")
    }
}

extension HTTPHeavyTests {
    /// Suspending and resuming a streaming task in a tight loop: every pause the handler takes is
    /// woken again (a wake-up landing just as the handler pauses is not lost).
    @Suite("HTTP pause and wake-up")
    struct PauseWakeUp {
        @Test(arguments: 1...5)
        func rapidSuspendResumeDeliversEveryByte(run: Int) async throws {
            let server = try await HTTPTest.nginx()
            let recorder = StreamingRecorder()
            // A lost wake-up would leave the transfer paused: the short idle timeout turns that into
            // a timedOut failure instead of a hang.
            let session = HTTPTest.session(delegate: recorder) { $0.timeoutIntervalForRequest = 5 }
            defer { session.finishTasksAndInvalidate() }
            let task = session.dataTask(with: server.url(NginxServer.Files.big))
            let stop = Locked(false)
            let cycles = Locked(0)
            let togglerDone = Locked(false)
            let toggler = Thread {
                defer { togglerDone.withLock { $0 = true } }
                var random = SystemRandomNumberGenerator()
                while !stop.current {
                    task.suspend()
                    usleep(UInt32.random(in: 0...100, using: &random))
                    task.resume()
                    usleep(UInt32.random(in: 0...100, using: &random))
                    cycles.withLock { $0 += 1 }
                }
            }
            task.resume()
            toggler.start()
            let done = await recorder.waitForCompletion(timeout: 120)
            stop.withLock { $0 = true }
            #expect(await waitUntil(timeout: 5) { togglerDone.current })
            task.resume()
            if !done { task.cancel() }
            #expect(done, "run \(run) did not finish in 120 s")
            #expect(recorder.error == nil, "run \(run): \(String(describing: recorder.error))")
            #expect(recorder.received == NginxServer.Files.bigSize)
            #expect(recorder.bodyHash == server.bigHash)
            #expect(cycles.current >= 20, "only \(cycles.current) suspend/resume cycles")
        }
    }
}
