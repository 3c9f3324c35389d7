import Foundation
import Testing
@testable import Courier

/// Stream tasks over plain TCP against ``TCPTestServer`` on 127.0.0.1: reads and their
/// minimum, maximum and end of stream, ordering, closes, timeouts, cancel, connect failures and
/// `captureStreams()`.
@Suite("Stream tasks over TCP")
struct StreamTaskTests {
    @Test func echoesWhatItWrites() async throws {
        let server = try TCPTestServer(.echo())
        defer { server.stop() }
        let session = StreamTest.session()
        defer { session.invalidateAndCancel() }
        let task = session.streamTask(withHostName: "127.0.0.1", port: server.port)
        task.resume()
        try await task.write(Data("hello".utf8), timeout: StreamTest.timeout)
        let echoed = try await StreamTest.read(task, count: 5)
        #expect(echoed == Data("hello".utf8))
        #expect(task.countOfBytesSent == 5 && task.countOfBytesReceived == 5 && task.state == .running)
    }

    @Test func aReadWaitsForItsMinimumAndStopsAtItsMaximum() async throws {
        let server = try TCPTestServer(.echo())
        defer { server.stop() }
        let session = StreamTest.session()
        defer { session.invalidateAndCancel() }
        let task = session.streamTask(withHostName: "localhost", port: server.port)
        task.resume()
        let read = Task { try await task.readData(ofMinLength: 6, maxLength: 8, timeout: StreamTest.timeout) }
        try await task.write(Data("abc".utf8), timeout: StreamTest.timeout)
        await settle(0.2)
        try await task.write(Data("defghijk".utf8), timeout: StreamTest.timeout)
        let (first, atEOF) = try await read.value
        let rest = try await StreamTest.read(task, count: 3)
        #expect(first == Data("abcdefgh".utf8) && !atEOF && rest == Data("ijk".utf8))
    }

    @Test func manyQueuedReadsAndWritesCompleteInOrder() async throws {
        let server = try TCPTestServer(.echo())
        defer { server.stop() }
        let session = StreamTest.session()
        defer { session.invalidateAndCancel() }
        let task = session.streamTask(withHostName: "127.0.0.1", port: server.port)
        let order = Locked<(writes: [Int], reads: [Data])>(([], []))
        let count = 200
        // Queued before the connection exists.
        for index in 0..<count {
            task.write(Data(String(format: "%04d", index).utf8), timeout: StreamTest.timeout) { error in
                if error == nil { order.withLock { $0.writes.append(index) } }
            }
            task.readData(ofMinLength: 4, maxLength: 4, timeout: StreamTest.timeout) { data, _, _ in
                order.withLock { $0.reads.append(data ?? Data()) }
            }
        }
        task.resume()
        #expect(await waitUntil { order.current.reads.count == count })
        let expected = (0..<count).map { Data(String(format: "%04d", $0).utf8) }
        #expect(order.current.writes == Array(0..<count) && order.current.reads == expected)
    }

    /// Apple's stream task may be used from any thread: writes from several threads, racing the
    /// `resume()` of another, all go out whole (each write's bytes together), and all come back.
    @Test func writesFromManyThreadsRacingTheResumeAllGoOut() async throws {
        let server = try TCPTestServer(.echo())
        defer { server.stop() }
        let session = StreamTest.session()
        defer { session.invalidateAndCancel() }
        let task = session.streamTask(withHostName: "127.0.0.1", port: server.port)
        let threads = 8, writes = 16
        DispatchQueue.concurrentPerform(iterations: threads + 1) { thread in
            guard thread > 0 else {
                task.resume()
                return
            }
            for index in 0..<writes {
                task.write(Data([UInt8(thread), UInt8(index)]), timeout: StreamTest.timeout) { _ in }
            }
        }
        let echoed = try await StreamTest.read(task, count: 2 * threads * writes)
        let pairs = stride(from: 0, to: echoed.count - 1, by: 2).map { [echoed[echoed.startIndex + $0], echoed[echoed.startIndex + $0 + 1]] }
        let expected = (1...threads).flatMap { thread in (0..<writes).map { [UInt8(thread), UInt8($0)] } }
        #expect(pairs.sorted { $0.lexicographicallyPrecedes($1) } == expected)
    }

    /// `cancel()` on one thread racing `resume()` on another ends every task with `cancelled`.
    @Test func cancelRacingResumeOnAnotherThreadEndsTheTask() async throws {
        let server = try TCPTestServer(.echo())
        defer { server.stop() }
        let delegate = StreamTestDelegate()
        let session = StreamTest.session(delegate)
        defer { session.invalidateAndCancel() }
        let tasks = (0..<20).map { _ in session.streamTask(withHostName: "127.0.0.1", port: server.port) }
        for task in tasks {
            DispatchQueue.concurrentPerform(iterations: 2) { $0 == 0 ? task.resume() : task.cancel() }
        }
        #expect(await waitUntil { delegate.events.count == tasks.count })
        #expect(delegate.events == Array(repeating: .completed(.cancelled), count: tasks.count))
    }

    @Test func closeWriteLetsThePeerSeeTheEndAndTheTaskCompletes() async throws {
        let server = try TCPTestServer(.echo())
        defer { server.stop() }
        let delegate = StreamTestDelegate()
        let session = StreamTest.session(delegate)
        defer { session.invalidateAndCancel() }
        let task = session.streamTask(withHostName: "127.0.0.1", port: server.port)
        task.resume()
        try await task.write(Data("last words".utf8), timeout: StreamTest.timeout)
        task.closeWrite()
        // The echo server closes at our end of stream, after echoing.
        let echoed = try await StreamTest.read(task, count: 100)
        #expect(await delegate.waitForCompletion())
        #expect(echoed == Data("last words".utf8))
        #expect(delegate.events == [.writeClosed, .readClosed, .completed(nil)] && task.state == .completed)
    }

    @Test func endOfStreamCompletesAShortReadWithAtEOF() async throws {
        let server = try TCPTestServer(.greet(Data("abc".utf8)))
        defer { server.stop() }
        let delegate = StreamTestDelegate()
        let session = StreamTest.session(delegate)
        defer { session.invalidateAndCancel() }
        let task = session.streamTask(withHostName: "127.0.0.1", port: server.port)
        task.resume()
        let (data, atEOF) = try await task.readData(ofMinLength: 10, maxLength: 10, timeout: StreamTest.timeout)
        #expect(data == Data("abc".utf8) && atEOF && delegate.events == [.readClosed])
    }

    @Test func aWriteAfterCloseWriteFails() async throws {
        let server = try TCPTestServer(.echo())
        defer { server.stop() }
        let session = StreamTest.session()
        defer { session.invalidateAndCancel() }
        let task = session.streamTask(withHostName: "127.0.0.1", port: server.port)
        task.resume()
        task.closeWrite()
        await #expect(throws: URLError.self) { try await task.write(Data("x".utf8), timeout: StreamTest.timeout) }
    }

    @Test func closeReadFailsLaterReadsAndTellsTheDelegate() async throws {
        let server = try TCPTestServer(.echo())
        defer { server.stop() }
        let delegate = StreamTestDelegate()
        let session = StreamTest.session(delegate)
        defer { session.invalidateAndCancel() }
        let task = session.streamTask(withHostName: "127.0.0.1", port: server.port)
        task.resume()
        task.closeRead()
        let error = await #expect(throws: URLError.self) {
            try await task.readData(ofMinLength: 1, maxLength: 1, timeout: StreamTest.timeout)
        }
        // The close takes effect once connected.
        #expect(await waitUntil { delegate.events == [.readClosed] })
        #expect(error?.code == .networkConnectionLost)
    }

    @Test func aReadTimesOutWhenNothingArrives() async throws {
        let server = try TCPTestServer(.stall)
        defer { server.stop() }
        let session = StreamTest.session()
        defer { session.invalidateAndCancel() }
        let task = session.streamTask(withHostName: "127.0.0.1", port: server.port)
        task.resume()
        let started = Date()
        let error = await #expect(throws: URLError.self) {
            try await task.readData(ofMinLength: 1, maxLength: 10, timeout: 0.3)
        }
        #expect(error?.code == .timedOut && Date().timeIntervalSince(started) < 5)
    }

    @Test func aWriteTimesOutWhenThePeerDoesNotRead() async throws {
        let server = try TCPTestServer(.stall)
        defer { server.stop() }
        let session = StreamTest.session()
        defer { session.invalidateAndCancel() }
        let task = session.streamTask(withHostName: "127.0.0.1", port: server.port)
        task.resume()
        // Far more than the socket buffers of both ends hold.
        let error = await #expect(throws: URLError.self) {
            try await task.write(Data(count: 64 << 20), timeout: 0.5)
        }
        #expect(error?.code == .timedOut)
    }

    @Test func cancelFailsPendingReadsAndWritesThenCompletesTheTask() async throws {
        let server = try TCPTestServer(.stall)
        defer { server.stop() }
        let delegate = StreamTestDelegate()
        let session = StreamTest.session(delegate)
        defer { session.invalidateAndCancel() }
        let task = session.streamTask(withHostName: "127.0.0.1", port: server.port)
        let outcomes = Locked<[String]>([])
        task.readData(ofMinLength: 1, maxLength: 1, timeout: StreamTest.timeout) { _, _, error in
            outcomes.withLock { $0.append("read \((error as? URLError)?.code.rawValue ?? 0)") }
        }
        task.write(Data(count: 64 << 20), timeout: StreamTest.timeout) { error in
            outcomes.withLock { $0.append("write \((error as? URLError)?.code.rawValue ?? 0)") }
        }
        task.resume()
        await settle(0.2)
        task.cancel()
        #expect(await delegate.waitForCompletion())
        let cancelled = URLError.Code.cancelled.rawValue
        #expect(Set(outcomes.current) == ["read \(cancelled)", "write \(cancelled)"] && delegate.events == [.completed(.cancelled)])
    }

    @Test func aRefusedConnectionFailsWithCannotConnectToHost() async throws {
        let port = try HTTPTest.refusedPort()
        let delegate = StreamTestDelegate()
        let session = StreamTest.session(delegate)
        defer { session.invalidateAndCancel() }
        let task = session.streamTask(withHostName: "127.0.0.1", port: port)
        task.resume()
        let error = await #expect(throws: URLError.self) {
            try await task.readData(ofMinLength: 1, maxLength: 1, timeout: StreamTest.timeout)
        }
        #expect(await delegate.waitForCompletion())
        #expect(error?.code == .cannotConnectToHost && delegate.events == [.completed(.cannotConnectToHost)])
    }

    @Test func anUnknownHostFailsWithCannotFindHost() async throws {
        let delegate = StreamTestDelegate()
        let session = StreamTest.session(delegate)
        defer { session.invalidateAndCancel() }
        let task = session.streamTask(withHostName: HTTPTest.unresolvableHost, port: 80)
        task.resume()
        #expect(await delegate.waitForCompletion())
        #expect(delegate.events == [.completed(.cannotFindHost)])
    }

    @Test func captureStreamsHandsOverTheConnectionWithTheBytesReadAhead() async throws {
        let server = try TCPTestServer(.echo(greeting: Data("hi\n".utf8)))
        defer { server.stop() }
        let delegate = StreamTestDelegate()
        let session = StreamTest.session(delegate)
        defer { session.invalidateAndCancel() }
        let task = session.streamTask(withHostName: "127.0.0.1", port: server.port)
        task.resume()
        try await task.write(Data("ping".utf8), timeout: StreamTest.timeout)
        #expect(await waitUntil { task.countOfBytesSent == 4 })
        await settle(0.2)
        task.captureStreams()
        #expect(await waitUntil { delegate.streams != nil })
        let (input, output) = try #require(delegate.streams)
        let received: Data = await Task.detached {
            input.open()
            output.open()
            let more = Array("pong".utf8)
            _ = more.withUnsafeBufferPointer { output.write($0.baseAddress!, maxLength: $0.count) }
            var collected = Data()
            var buffer = [UInt8](repeating: 0, count: 64)
            while collected.count < 11 {
                let count = input.read(&buffer, maxLength: buffer.count)
                if count <= 0 { break }
                collected.append(contentsOf: buffer[0..<count])
            }
            input.close()
            output.close()
            return collected
        }.value
        await settle(0.2)
        #expect(received == Data("hi\npingpong".utf8) && delegate.events == [.streams] && task.state == .completed)
    }

    @Test func theResourceTimeoutEndsTheWholeTask() async throws {
        let server = try TCPTestServer(.stall)
        defer { server.stop() }
        let delegate = StreamTestDelegate()
        let session = StreamTest.session(delegate) { $0.timeoutIntervalForResource = 1 }
        defer { session.invalidateAndCancel() }
        let task = session.streamTask(withHostName: "127.0.0.1", port: server.port)
        task.resume()
        // No per-read timeout: only the session's resource timeout can end this read.
        let error = await #expect(throws: URLError.self) {
            _ = try await task.readData(ofMinLength: 1, maxLength: 10, timeout: 0)
        }
        #expect(await delegate.waitForCompletion())
        #expect(error?.code == .timedOut && delegate.events == [.completed(.timedOut)])
    }

    @Test func thePeersEndIsNoticedAfterReadsEmptiedAFullReadAhead() async throws {
        let limit = StreamStateMachine.readAheadLimit
        let server = try TCPTestServer(.greet(Data(repeating: 0x61, count: limit + 1000)))
        defer { server.stop() }
        let delegate = StreamTestDelegate()
        let session = StreamTest.session(delegate)
        defer { session.invalidateAndCancel() }
        let task = session.streamTask(withHostName: "127.0.0.1", port: server.port)
        task.resume()
        let connection = try #require(task.connection)
        // The read-ahead fills up and the socket is left alone; this read empties it at once.
        #expect(await waitUntil { connection.state.withLock { $0.machine.inbound.count } >= limit })
        let (first, atEOF) = try await task.readData(ofMinLength: limit, maxLength: limit, timeout: StreamTest.timeout)
        // With no read queued, the rest and the end of stream must still be read and reported.
        #expect(await waitUntil { delegate.events.contains(.readClosed) })
        #expect(first?.count == limit && !atEOF && connection.state.withLock { $0.machine.inbound.count } == 1000)
    }
}
