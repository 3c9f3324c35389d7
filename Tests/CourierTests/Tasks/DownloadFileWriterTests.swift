import Foundation
import Testing
@testable import Courier

/// A download file's writer queue on its own: order, the count back-pressure weighs, waiting, and a
/// failed write. No session, no server.
@Suite("Download file writer")
struct DownloadFileWriterTests {
    /// Chunks of distinct bytes, so a reordering would show in the file.
    static let chunks: [Data] = (0..<64).map { Data(repeating: UInt8($0), count: 4096 + $0) }

    @Test func queuedChunksReachTheFileInTheOrderTheyWereHandedOver() throws {
        let file = try DownloadFile.create(for: nil)
        defer { file.remove() }
        for chunk in Self.chunks { file.append(chunk, for: nil) { _ in } }
        file.waitForWrites()
        let written = try Data(contentsOf: file.url)
        #expect(written == Self.chunks.reduce(Data(), +))
    }

    @Test func bytesQueuedFallsToZeroOnceTheWritesAreDone() throws {
        let file = try DownloadFile.create(for: nil)
        defer { file.remove() }
        let total = Self.chunks.reduce(0) { $0 + $1.count }
        for chunk in Self.chunks { file.append(chunk, for: nil) { _ in } }
        #expect(file.bytesAccepted == Int64(total))
        file.waitForWrites()
        #expect(file.bytesQueued == 0 && file.bytesWritten == Int64(total))
    }

    @Test func eachWriteReportsSuccessAfterItsBytesAreCounted() throws {
        let file = try DownloadFile.create(for: nil)
        defer { file.remove() }
        let counts = Locked<[Int64]>([])
        for chunk in Self.chunks.prefix(8) {
            file.append(chunk, for: nil) { failure in
                counts.withLock { $0.append(failure == nil ? file.bytesWritten : -1) }
            }
        }
        file.waitForWrites()
        let expected = Self.chunks.prefix(8).reduce(into: [Int64]()) { sums, chunk in
            sums.append((sums.last ?? 0) + Int64(chunk.count))
        }
        #expect(counts.withLock { $0 } == expected)
    }

    @Test func aWriteAfterTheFileWasClosedFailsAndTheFailureSticks() throws {
        let file = try DownloadFile.create(for: nil)
        file.remove()
        let failures = Locked<[URLError.Code?]>([])
        for chunk in Self.chunks.prefix(2) {
            file.append(chunk, for: URL(string: "http://127.0.0.1/x")) { failure in
                failures.withLock { $0.append(failure?.code) }
            }
        }
        file.waitForWrites()
        #expect(failures.withLock { $0 } == [.cannotWriteToFile, .cannotWriteToFile] && file.writeFailure?.code == .cannotWriteToFile)
    }

    @Test func truncatingAfterQueuedWritesEmptiesTheFile() throws {
        let file = try DownloadFile.create(for: nil)
        defer { file.remove() }
        for chunk in Self.chunks.prefix(4) { file.append(chunk, for: nil) { _ in } }
        file.truncate()
        file.append(Self.chunks[9], for: nil) { _ in }
        file.waitForWrites()
        #expect(try Data(contentsOf: file.url) == Self.chunks[9])
    }
}
