import Foundation
import Testing
@testable import Courier

/// Uploads to the standard server: from Data, a file and a stream, with `didSendBodyData`; missing
/// directories created only when the request asks; a read-only login refused.
@Suite("FTP uploads", .serialized)
struct FTPUploadTests {
    private func uploadURL(_ server: FTPTestServer, _ name: String) -> URL {
        server.url("/upload/\(name)", user: FTPTestServer.user, password: FTPTestServer.password)
    }

    private func stored(_ server: FTPTestServer, _ path: String) -> Data? {
        try? Data(contentsOf: server.root.appendingPathComponent(path))
    }

    @Test func fromDataWithProgress() async throws {
        let server = try await FTPTest.servers()
        let delegate = EventDelegate()
        let session = FTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let name = "data-\(UUID().uuidString).bin"
        let body = Data((0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let task = session.uploadTask(with: URLRequest(url: uploadURL(server, name)), from: body)
        task.resume()
        #expect(await delegate.waitForCompletion(of: task, timeout: 30))
        #expect(delegate.error(of: task) == nil)
        #expect(stored(server, "upload/\(name)") == body)
        let sent = delegate.events(for: task).compactMap { event -> (Int64, Int64)? in
            if case .sentBody(_, let total, let expected) = event { return (total, expected) }
            return nil
        }
        #expect(!sent.isEmpty)
        #expect(sent.last?.0 == Int64(body.count))
        #expect(sent.allSatisfy { $0.1 == Int64(body.count) })
        #expect(task.countOfBytesSent == Int64(body.count))
        let response = try #require(task.response)
        #expect(!(response is HTTPURLResponse))
    }

    @Test func fromFileAndAsync() async throws {
        let server = try await FTPTest.servers()
        let session = FTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        let name = "file-\(UUID().uuidString).txt"
        let source = FileManager.default.temporaryDirectory.appendingPathComponent(name)
        try Data("uploaded from a file\n".utf8).write(to: source)
        defer { try? FileManager.default.removeItem(at: source) }
        _ = try await withTimeout(20) {
            try await session.upload(for: URLRequest(url: uploadURL(server, name)), fromFile: source)
        }
        #expect(stored(server, "upload/\(name)") == Data("uploaded from a file\n".utf8))
    }

    @Test func fromStream() async throws {
        let server = try await FTPTest.servers()
        let body = Data(repeating: 0x5A, count: 300_000)
        let delegate = EventDelegate(EventDelegate.Hooks(bodyStream: { _ in InputStream(data: body) }))
        let session = FTPTest.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let name = "stream-\(UUID().uuidString).bin"
        let task = session.uploadTask(withStreamedRequest: URLRequest(url: uploadURL(server, name)))
        task.resume()
        #expect(await delegate.waitForCompletion(of: task, timeout: 30))
        #expect(delegate.error(of: task) == nil)
        #expect(stored(server, "upload/\(name)") == body)
    }

    @Test func missingDirectoriesAreCreatedOnlyWhenAsked() async throws {
        let server = try await FTPTest.servers()
        let session = FTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        let directory = "new-\(UUID().uuidString)"
        let plain = URLRequest(url: uploadURL(server, "\(directory)/deeper/file.txt"))
        let refused = try await withTimeout(20) { () -> DataResult in
            let shot = OneShot<DataResult>()
            session.uploadTask(with: plain, from: Data("x".utf8)) { data, response, error in
                shot.fulfil(DataResult(data: data, response: response, error: error))
            }.resume()
            return try await shot.wait()
        }
        let error = try FTPTest.urlError(refused.error)
        // CWD into the missing directory is refused ("550 No such file or directory."): the file
        // cannot be created.
        #expect(error.code == .cannotCreateFile, "\(error)")
        #expect(stored(server, "upload/\(directory)/deeper/file.txt") == nil)

        var creating = plain
        creating.ftpCreatesMissingDirectories = true
        let request = creating
        _ = try await withTimeout(20) { try await session.upload(for: request, from: Data("made\n".utf8)) }
        #expect(stored(server, "upload/\(directory)/deeper/file.txt") == Data("made\n".utf8))
    }

    @Test func anonymousUploadIsRefused() async throws {
        let server = try await FTPTest.servers()
        let session = FTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        let name = "anonymous-\(UUID().uuidString).txt"
        let url = server.url("/upload/\(name)")
        let error = await #expect(throws: URLError.self) {
            _ = try await withTimeout(20) { try await session.upload(for: URLRequest(url: url), from: Data("no".utf8)) }
        }
        // pyftpdlib refuses STOR with "550 Not enough privileges.": a reply about permissions, which
        // FTPErrorMapping reports as noPermissionsToReadFile (a missing directory is cannotCreateFile).
        #expect(error?.code == .noPermissionsToReadFile, "\(String(describing: error))")
        #expect(stored(server, "upload/\(name)") == nil)
    }
}
