import Foundation
import Testing
@testable import Courier
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// Large files, back-pressure, suspension.

extension LocalHandlerHeavyTests {
    @Suite("FileURLProtocol (large)")
    struct FileURLProtocolLargeTests {

        @Test func largeFileStreamsInChunks() async throws {
            let directory = try LocalTempDirectory()
            defer { directory.remove() }
            let size = 64 << 20
            let contents = try LocalTestSupport.randomBytes(size)
            let file = try directory.file("large.bin", contents)
            let recorder = LocalDataRecorder(keepBody: false, expected: contents)
            let session = LocalTestSupport.session(delegate: recorder)
            defer { session.finishTasksAndInvalidate() }
            session.dataTask(with: file).resume()
            #expect(await LocalTestSupport.eventually { recorder.completed })
            #expect(recorder.error == nil)
            #expect(recorder.received == size)
            #expect(recorder.mismatch == nil)
            let chunks = recorder.chunkSizes
            #expect(chunks.count >= 8, "\(chunks.count) chunks")
            #expect(chunks.allSatisfy { $0 > 0 && $0 <= 1 << 20 }, "largest chunk \(chunks.max() ?? 0)")
            #expect(recorder.response?.expectedContentLength == Int64(size))
        }

        /// A slow consumer (5 ms per chunk) of a 256 MiB file: the handler must wait for it rather
        /// than read the whole file into memory. Resident memory is measured from the moment the
        /// first 16 MiB have been delivered (so allocator warm-up does not count) to the end; without
        /// back-pressure it would grow by about 200 MiB.
        @Test func slowConsumerKeepsMemoryFlat() async throws {
            let directory = try LocalTempDirectory()
            defer { directory.remove() }
            let size = 256 << 20
            let file = try directory.sparseFile("huge.bin", size: size)
            let recorder = LocalDataRecorder(keepBody: false, delayPerChunk: 5_000)
            let session = LocalTestSupport.session(delegate: recorder)
            defer { session.finishTasksAndInvalidate() }
            let task = session.dataTask(with: file)
            task.resume()

            var baseline: Int?
            var peakResident = 0
            var peakPending = 0
            let clock = ContinuousClock()
            let deadline = clock.now.advanced(by: .seconds(10))
            while !recorder.completed && clock.now < deadline {
                let resident = LocalTestSupport.residentBytes() ?? 0
                if baseline == nil, recorder.received >= 16 << 20 { baseline = resident }
                if baseline != nil { peakResident = max(peakResident, resident) }
                peakPending = max(peakPending, task.pipeline?.bytesPending ?? 0)
                try await Task.sleep(for: .milliseconds(10))
            }
            if !recorder.completed { task.cancel() }
            #expect(recorder.completed, "transfer did not finish in 10 s (\(recorder.received) of \(size) bytes)")
            #expect(recorder.error == nil)
            #expect(recorder.received == size)
            let start = try #require(baseline)
            let growth = peakResident - start
            #expect(growth < 64 << 20, "resident memory grew by \(growth >> 20) MiB during the transfer")
            // The pipeline holds at most the high-water mark plus a chunk or two.
            #expect(peakPending <= URLSessionTask.highWaterBytes + 2 * FileURLProtocol.chunkSize,
                    "up to \(peakPending >> 20) MiB waited for delivery")
        }

        @Test func downloadOfALargeFile() async throws {
            let directory = try LocalTempDirectory()
            defer { directory.remove() }
            let size = 64 << 20
            let contents = try LocalTestSupport.randomBytes(size)
            let file = try directory.file("large.dat", contents)
            let recorder = LocalDownloadRecorder(expected: contents)
            let session = LocalTestSupport.session(delegate: recorder)
            defer { session.finishTasksAndInvalidate() }
            let task = session.downloadTask(with: file)
            task.resume()
            #expect(await LocalTestSupport.eventually { recorder.completed })
            #expect(recorder.error == nil)
            #expect(recorder.contentsMatched == true)
            #expect(recorder.existedAfterFinish == false, "the temporary file outlived didFinishDownloadingTo")
            let writes = recorder.writes
            #expect(!writes.isEmpty)
            #expect(writes.reduce(0) { $0 + $1.written } == Int64(size))
            #expect(writes.last?.total == Int64(size))
            #expect(writes.allSatisfy { $0.expected == Int64(size) && $0.written > 0 })
            var running: Int64 = 0
            for write in writes {
                running += write.written
                #expect(write.total == running)
            }
            #expect(task.countOfBytesReceived == Int64(size))
            #expect(task.response?.expectedContentLength == Int64(size))
        }

        /// `totalBytesWritten` must always be the sum of the `bytesWritten` reported so far. A
        /// delegate that takes 2 ms per report makes reports run while the handler is writing.
        @Test func didWriteDataTotalsWithASlowDelegate() async throws {
            let directory = try LocalTempDirectory()
            defer { directory.remove() }
            let size = 32 << 20
            let contents = try LocalTestSupport.repeatedRandomBytes(size)
            let file = try directory.file("slow-reports.dat", contents)
            let recorder = LocalDownloadRecorder(expected: contents) { _, _ in usleep(2_000) }
            let session = LocalTestSupport.session(delegate: recorder)
            defer { session.finishTasksAndInvalidate() }
            session.downloadTask(with: file).resume()
            #expect(await LocalTestSupport.eventually { recorder.completed })
            #expect(recorder.error == nil)
            #expect(recorder.contentsMatched == true)
            var running: Int64 = 0
            var inconsistent: [String] = []
            for write in recorder.writes {
                running += write.written
                if write.total != running { inconsistent.append("total \(write.total) after \(running) written") }
            }
            #expect(inconsistent.isEmpty, "\(inconsistent.count) of \(recorder.writes.count) reports: \(inconsistent.prefix(3))")
            #expect(running == Int64(size))
        }

        @Test func suspendStopsDeliveryAndResumeCompletes() async throws {
            let directory = try LocalTempDirectory()
            defer { directory.remove() }
            let size = 48 << 20
            let contents = try LocalTestSupport.randomBytes(size)
            let file = try directory.file("pausable.bin", contents)
            let suspendedAt = ResultBox<Int>()
            // Suspend from inside the first delivery, on the delegate queue.
            let recorder = LocalDataRecorder(keepBody: false, expected: contents) { index, dataTask in
                if index == 0 {
                    dataTask.suspend()
                    suspendedAt.set(index + 1)
                }
            }
            let session = LocalTestSupport.session(delegate: recorder)
            defer { session.finishTasksAndInvalidate() }
            let task = session.dataTask(with: file)
            task.resume()
            #expect(await LocalTestSupport.eventually { suspendedAt.value != nil })
            #expect(task.state == .suspended)

            // While suspended nothing is delivered and the handler stops reading.
            try await Task.sleep(for: .milliseconds(250))
            let readWhileSuspended = task.countOfBytesReceived
            try await Task.sleep(for: .milliseconds(250))
            #expect(recorder.chunkCount == 1, "\(recorder.chunkCount) chunks arrived after suspend()")
            #expect(!recorder.completed)
            #expect(task.countOfBytesReceived == readWhileSuspended, "the handler kept reading while suspended")
            #expect(task.countOfBytesReceived < Int64(size))

            task.resume()
            #expect(await LocalTestSupport.eventually { recorder.completed })
            #expect(recorder.error == nil)
            #expect(recorder.received == size)
            #expect(recorder.mismatch == nil)
            #expect(task.state == .completed)
        }

        /// A file smaller than the back-pressure high-water mark is read to its end at once; a task
        /// suspended after that must still deliver everything and complete when resumed.
        @Test func resumeAfterSuspendingAFinishedReadCompletes() async throws {
            let directory = try LocalTempDirectory()
            defer { directory.remove() }
            let size = 4 << 20
            let contents = try LocalTestSupport.randomBytes(size)
            let file = try directory.file("small.bin", contents)
            let suspended = ResultBox<Bool>()
            let recorder = LocalDataRecorder(keepBody: false, expected: contents) { index, dataTask in
                if index == 0 {
                    usleep(100_000) // the handler reads the remaining 3 MiB and reports its end meanwhile
                    dataTask.suspend()
                    suspended.set(true)
                }
            }
            let session = LocalTestSupport.session(delegate: recorder)
            defer { session.invalidateAndCancel() }
            let task = session.dataTask(with: file)
            task.resume()
            #expect(await LocalTestSupport.eventually { suspended.value != nil })
            try await Task.sleep(for: .milliseconds(100))
            #expect(task.state == .suspended)
            #expect(recorder.chunkCount == 1)
            task.resume()
            #expect(await LocalTestSupport.eventually(timeout: .seconds(5)) { recorder.completed },
                    "resume() did not restart delivery: the task is stuck in state \(task.state) after \(recorder.received) bytes")
            #expect(recorder.error == nil)
            #expect(recorder.received == size)
            #expect(recorder.mismatch == nil)
        }

        @Test func cancelMidTransferStopsDelivery() async throws {
            let directory = try LocalTempDirectory()
            defer { directory.remove() }
            let size = 48 << 20
            let file = try directory.sparseFile("cancelled.bin", size: size)
            let recorder = LocalDataRecorder(keepBody: false) { index, dataTask in
                if index == 1 { dataTask.cancel() }
            }
            let session = LocalTestSupport.session(delegate: recorder)
            defer { session.finishTasksAndInvalidate() }
            let task = session.dataTask(with: file)
            task.resume()
            #expect(await LocalTestSupport.eventually { recorder.completed })
            let error = try #require(recorder.error as? URLError)
            #expect(error.code == .cancelled)
            #expect(error.failingURL == file)
            #expect(recorder.chunkCount == 2, "\(recorder.chunkCount) chunks arrived; none may follow cancel()")
            #expect(task.state == .completed)
            // The handler stops reading too.
            let read = task.countOfBytesReceived
            try await Task.sleep(for: .milliseconds(100))
            #expect(task.countOfBytesReceived == read)
            #expect(read < Int64(size))
        }

        @Test func suspendFromOutsideAndResume() async throws {
            let directory = try LocalTempDirectory()
            defer { directory.remove() }
            let size = 48 << 20
            let contents = try LocalTestSupport.randomBytes(size)
            let file = try directory.file("pausable2.bin", contents)
            // A slowish consumer so the transfer is still running when the test suspends it.
            let recorder = LocalDataRecorder(keepBody: false, expected: contents, delayPerChunk: 2_000)
            let session = LocalTestSupport.session(delegate: recorder)
            defer { session.finishTasksAndInvalidate() }
            let task = session.dataTask(with: file)
            task.resume()
            #expect(await LocalTestSupport.eventually { recorder.chunkCount >= 2 })
            task.suspend()
            #expect(task.state == .suspended)
            // At most the delivery already running when suspend() was called can still finish.
            try await Task.sleep(for: .milliseconds(50))
            let chunksAfterSuspend = recorder.chunkCount
            try await Task.sleep(for: .milliseconds(300))
            #expect(recorder.chunkCount == chunksAfterSuspend)
            #expect(!recorder.completed)
            task.resume()
            #expect(await LocalTestSupport.eventually { recorder.completed })
            #expect(recorder.error == nil)
            #expect(recorder.received == size)
            #expect(recorder.mismatch == nil)
        }

        /// The handler writes a download as fast as the disk takes it (there is no consumer to wait
        /// for), so the file is large enough that it is still being read when the first progress
        /// report suspends the task.
        @Test func suspendedDownloadStopsWriting() async throws {
            let directory = try LocalTempDirectory()
            defer { directory.remove() }
            let size = 128 << 20
            let contents = try LocalTestSupport.repeatedRandomBytes(size)
            let file = try directory.file("pausable.dat", contents)
            let suspended = ResultBox<Bool>()
            let recorder = LocalDownloadRecorder(expected: contents) { _, downloadTask in
                if suspended.value == nil {
                    downloadTask.suspend()
                    suspended.set(true)
                }
            }
            let session = LocalTestSupport.session(delegate: recorder)
            defer { session.finishTasksAndInvalidate() }
            let task = session.downloadTask(with: file)
            task.resume()
            #expect(await LocalTestSupport.eventually { suspended.value != nil })
            #expect(task.state == .suspended)
            try await Task.sleep(for: .milliseconds(250))
            let written = task.countOfBytesReceived
            let reports = recorder.writes.count
            try await Task.sleep(for: .milliseconds(250))
            #expect(task.countOfBytesReceived == written, "the handler kept writing while suspended")
            #expect(recorder.writes.count == reports, "didWriteData arrived while suspended")
            #expect(written < Int64(size))
            #expect(!recorder.completed)
            task.resume()
            #expect(await LocalTestSupport.eventually { recorder.completed })
            #expect(recorder.error == nil)
            #expect(recorder.contentsMatched == true)
            #expect(recorder.writes.reduce(0) { $0 + $1.written } == Int64(size))
            #expect(recorder.existedAfterFinish == false)
        }

        /// Cancelling a file download with resume data and resuming it gives the whole file, the
        /// second task continuing where the first stopped.
        @Test func cancelWithResumeDataAndResume() async throws {
            let directory = try LocalTempDirectory()
            defer { directory.remove() }
            let size = 32 << 20
            let contents = try LocalTestSupport.randomBytes(size)
            let file = try directory.file("resumable.dat", contents)
            // Cancel at the first progress report. A loaded machine may let the handler write the
            // whole file before that report runs (the cancel then comes too late and the download
            // succeeds), so allow a few attempts.
            var resumeData: Data?
            for _ in 0..<3 where resumeData == nil {
                let resumeBox = ResultBox<Data?>()
                let cancelled = ResultBox<Bool>()
                let first = LocalDownloadRecorder(expected: contents) { _, downloadTask in
                    if cancelled.value == nil {
                        cancelled.set(true)
                        downloadTask.cancel { data in resumeBox.set(data) }
                    }
                }
                let session1 = LocalTestSupport.session(delegate: first)
                defer { session1.finishTasksAndInvalidate() }
                session1.downloadTask(with: file).resume()
                #expect(await LocalTestSupport.eventually { first.completed })
                guard let error = first.error else { continue } // finished before the cancel
                #expect((error as? URLError)?.code == .cancelled)
                #expect(await LocalTestSupport.eventually { resumeBox.value != nil })
                let produced = resumeBox.value ?? nil
                #expect(produced != nil, "no resume data for a cancelled file download")
                #expect((error as? URLError)?.downloadTaskResumeData == produced)
                resumeData = produced
            }
            let resume = try #require(resumeData)

            let second = LocalDownloadRecorder(expected: contents)
            let session2 = LocalTestSupport.session(delegate: second)
            defer { session2.finishTasksAndInvalidate() }
            session2.downloadTask(withResumeData: resume).resume()
            #expect(await LocalTestSupport.eventually { second.completed })
            #expect(second.error == nil)
            #expect(second.contentsMatched == true)
            let offset = try #require(second.resumedAt)
            // Under load the whole file can be written before the cancel lands: then the resume
            // data holds all of it and the resumed task has nothing left to write.
            #expect(offset > 0 && offset <= Int64(size))
            if offset < Int64(size) { #expect(second.writes.last?.total == Int64(size)) }
        }

        /// `bytes(from:)` suspends the task while more than 4 MiB are unread and resumes it once the
        /// reader catches up. Here the handler has read the whole 6 MiB file (and reported its end)
        /// before the buffer suspends the task — the delegate queue is held for 200 ms to make sure
        /// of it — and the reader must still get every line.
        @Test func asyncLinesOfAFileLargerThanTheBytesBuffer() async throws {
            let directory = try LocalTempDirectory()
            defer { directory.remove() }
            let line = String(repeating: "x", count: 63)
            let count = (6 << 20) / 64
            let text = Data(String(repeating: line + "\n", count: count).utf8)
            let file = try directory.file("six-mebibytes.txt", text)
            let queue = OperationQueue()
            queue.maxConcurrentOperationCount = 1
            queue.isSuspended = true
            let session = URLSession(configuration: .ephemeral, delegate: nil, delegateQueue: queue)
            defer { session.invalidateAndCancel() }
            let (lines, ok) = try await LocalTestSupport.withTimeout(LocalTestSupport.timeout, "all lines of a 6 MiB file") { () -> (Int, Bool) in
                Task {
                    try? await Task.sleep(for: .milliseconds(200))
                    queue.isSuspended = false
                }
                let (bytes, _) = try await session.bytes(from: file)
                // A reader that starts late: everything is buffered (and the task suspended) first.
                try await Task.sleep(for: .milliseconds(200))
                var lines = 0
                var ok = true
                for try await read in bytes.lines {
                    lines += 1
                    if read != line { ok = false }
                }
                return (lines, ok)
            }
            #expect(lines == count)
            #expect(ok)
        }

        /// A line end split across two 1 MiB chunks is still one line end.
        @Test func asyncLinesAcrossChunkBoundaries() async throws {
            let directory = try LocalTempDirectory()
            defer { directory.remove() }
            let chunk = FileURLProtocol.chunkSize
            var text = Data(repeating: UInt8(ascii: "a"), count: chunk - 1)
            text.append(contentsOf: Array("\r\nsecond\r".utf8))
            text.append(Data(repeating: UInt8(ascii: "b"), count: chunk - text.count % chunk))
            text.append(contentsOf: Array("\nthird".utf8))
            let file = try directory.file("boundaries.txt", text)
            let lines = try await LocalTestSupport.withTimeout { () -> [String] in
                let (bytes, _) = try await URLSession(configuration: .ephemeral).bytes(from: file)
                var lines: [String] = []
                for try await line in bytes.lines { lines.append(line) }
                return lines
            }
            #expect(lines.count == 4, "\(lines.map { $0.prefix(10) })")
            #expect(lines.first?.count == chunk - 1)
            #expect(lines.dropFirst().first == "second")
            #expect(lines.dropFirst(2).first?.allSatisfy { $0 == "b" } == true)
            #expect(lines.last == "third")
        }
    }
}
