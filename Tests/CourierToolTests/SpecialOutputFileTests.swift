import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

@testable import CourierTool

/// `-o`, `-C` and `-c` on a file that is not a regular one — a named pipe here, as `/dev/null` or
/// `/dev/stdout` would be — write through it and leave it what it was; a rename over it would put a
/// regular file in its place (as `courier -o /dev/null` once did to the machine's /dev/null).
@Suite("courier writing to devices and pipes")
struct SpecialOutputFileTests {
    /// A named pipe in a fresh directory, held open for reading and writing by the test so that the
    /// tool's open never blocks and what it writes waits in the pipe's buffer.
    private struct Pipe {
        let directory: TemporaryDirectory
        let path: String
        let fd: Int32

        init() throws {
            directory = try TemporaryDirectory()
            path = directory.file("pipe").path
            try #require(mkfifo(path, 0o600) == 0, "mkfifo: \(String(cString: strerror(errno)))")
            fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)
            try #require(fd >= 0)
        }

        /// What is waiting in the pipe (it is written before the tool exits, so nothing is awaited).
        func drain() -> Data {
            var data = Data()
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = read(fd, &buffer, buffer.count)
                if count <= 0 { break }
                data.append(contentsOf: buffer[0..<count])
            }
            return data
        }

        /// Whether the path is still a named pipe.
        var isStillAPipe: Bool {
            var info = stat()
            return lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFIFO
        }

        func remove() {
            close(fd)
            directory.remove()
        }
    }

    @Test func outputIntoAPipeIsWrittenThroughIt() async throws {
        let pipe = try Pipe()
        defer { pipe.remove() }
        let run = try await CourierBinary.run(["-o", pipe.path, "data:,through%20the%20pipe"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(pipe.drain() == Data("through the pipe".utf8))
        #expect(pipe.isStillAPipe)
    }

    @Test func continueAtIntoAPipeIsWrittenThroughIt() async throws {
        let pipe = try Pipe()
        defer { pipe.remove() }
        let run = try await CourierBinary.run(["-C", "-", "-o", pipe.path, "data:,resumed"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(pipe.drain() == Data("resumed".utf8))
        #expect(pipe.isStillAPipe)
    }

    @Test func aCookieJarThatIsAPipeIsWrittenThroughIt() async throws {
        let server = try FaultServer(routes: [
            "/set": .respond(.ok(Data("set\n".utf8), headers: [("Set-Cookie", "flavour=oatmeal; Path=/; Max-Age=3600")])),
        ])
        defer { server.stop() }
        let pipe = try Pipe()
        defer { pipe.remove() }
        let run = try await CourierBinary.run(["-c", pipe.path, server.url("/set").absoluteString])
        #expect(run.status == 0, "\(run.stderr)")
        let jar = String(decoding: pipe.drain(), as: UTF8.self)
        #expect(jar.contains("\tflavour\toatmeal"), "\(jar)")
        #expect(pipe.isStillAPipe)
    }
}
