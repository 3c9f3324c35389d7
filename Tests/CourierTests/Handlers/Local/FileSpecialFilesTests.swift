import Foundation
import Testing
@testable import Courier
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `file:` URLs that name something other than a regular file: devices are refused before they are
/// opened, and a FIFO is read as it is written and ends by the request timeout when nobody writes.
@Suite("FileURLProtocol special files")
struct FileSpecialFilesTests {

    @Test(arguments: ["/dev/zero", "/dev/urandom", "/dev/null"])
    func characterDevicesAreRefused(path: String) async throws {
        let url = URL(fileURLWithPath: path)
        let error = try #require(try await LocalTestSupport.loadError(url))
        #expect(error.code == .cannotOpenFile)
        #expect(error.failingURL == url)
        #expect(error.localizedDescription.contains("device"))
    }

    @Test func aSymbolicLinkToADeviceIsRefused() async throws {
        let directory = try LocalTempDirectory()
        defer { directory.remove() }
        let link = directory.url.appendingPathComponent("zeros")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "/dev/zero")
        let error = try #require(try await LocalTestSupport.loadError(link))
        #expect(error.code == .cannotOpenFile)
    }

    @Test func aDownloadOfADeviceIsRefusedAndLeavesNoFile() async throws {
        let session = URLSession(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }
        let box = ResultBox<(URL?, (any Error)?)>()
        session.downloadTask(with: URL(fileURLWithPath: "/dev/zero")) { location, _, error in
            box.set((location, error))
        }.resume()
        #expect(await LocalTestSupport.eventually { box.value != nil })
        let (location, error) = try #require(box.value)
        #expect(location == nil)
        #expect((error as? URLError)?.code == .cannotOpenFile)
    }

    @Test func aFIFOWithoutAWriterEndsByTheRequestTimeout() async throws {
        let directory = try LocalTempDirectory()
        defer { directory.remove() }
        let fifo = try makeFIFO(in: directory)
        var request = URLRequest(url: fifo)
        request.timeoutInterval = 1
        let started = ContinuousClock.now
        let (_, _, error) = try await load(request)
        let elapsed = ContinuousClock.now - started
        #expect((error as? URLError)?.code == .timedOut)
        #expect(elapsed >= .milliseconds(900))
        #expect(elapsed < .seconds(5))
        // No thread is left waiting in open() for a writer that never comes (the kernel names that
        // wait `wait_for_partner`). Opening the FIFO here to look would end such a wait: so look.
        let released = await LocalTestSupport.eventually(timeout: .seconds(3)) {
            !Self.threadWaitChannels().contains("wait_for_partner")
        }
        #expect(released)
    }

    @Test func aFIFOIsReadUntilItsWriterCloses() async throws {
        let directory = try LocalTempDirectory()
        defer { directory.remove() }
        let fifo = try makeFIFO(in: directory)
        let parts = ["first part, ", "second part"]
        let writer = Thread {
            // Opening for writing waits for the reader, so the load is under way by then.
            let fd = open(fifo.path, O_WRONLY | O_CLOEXEC)
            guard fd >= 0 else { return }
            for part in parts {
                _ = part.withCString { write(fd, $0, strlen($0)) }
                usleep(200_000)
            }
            close(fd)
        }
        writer.start()
        var request = URLRequest(url: fifo)
        request.timeoutInterval = 5
        let (data, response, error) = try await load(request)
        #expect(error == nil)
        #expect(data.map { String(decoding: $0, as: UTF8.self) } == parts.joined())
        #expect(response?.expectedContentLength == -1)
    }

    // MARK: - Helpers

    /// Where each thread of this process waits in the kernel (`/proc/self/task/*/wchan`).
    private static func threadWaitChannels() -> [String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.compactMap { try? String(contentsOfFile: "/proc/self/task/\($0)/wchan", encoding: .utf8) }
    }

    private func makeFIFO(in directory: LocalTempDirectory) throws -> URL {
        let fifo = directory.url.appendingPathComponent("pipe")
        try #require(mkfifo(fifo.path, 0o600) == 0)
        return fifo
    }

    private func load(_ request: URLRequest) async throws -> (Data?, URLResponse?, (any Error)?) {
        let session = URLSession(configuration: .ephemeral)
        defer { session.finishTasksAndInvalidate() }
        let box = ResultBox<(Data?, URLResponse?, (any Error)?)>()
        let task = session.dataTask(with: request) { data, response, error in box.set((data, response, error)) }
        task.resume()
        guard await LocalTestSupport.eventually(timeout: .seconds(10), { box.value != nil }), let result = box.value else {
            task.cancel()
            throw LocalTestSupport.TimedOut(what: "a data task for \(request.url?.path ?? "?")")
        }
        return result
    }
}
