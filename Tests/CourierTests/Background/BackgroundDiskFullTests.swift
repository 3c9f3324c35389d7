import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import Courier

/// A full disk under the agent: its partial-download directory is a 1 MiB tmpfs the test mounts
/// (it runs as root), so a 4 MiB download cannot be written.
@Suite("Background full disk", .serialized, .enabled(if: SmallTmpfs.canMount, "mounting a tmpfs needs root (CAP_SYS_ADMIN)"))
struct BackgroundDiskFullTests {
    @Test("a download that fills the disk fails cleanly: cannotWriteToFile, no partial file left, and the agent keeps working")
    func fullDiskFailsTheTaskCleanly() async throws {
        let nginx = try await NginxServer.shared()
        let sandbox = try BackgroundSandbox()
        defer { sandbox.remove() }
        let mount = try sandbox.mountSmallDownloads()
        defer { mount.unmount() }

        let recorder = BackgroundRecorder()
        let session = URLSession(configuration: sandbox.configuration("full"), delegate: recorder, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        let big = session.downloadTask(with: nginx.url(NginxServer.Files.medium))
        big.resume()
        let failed = await waitUntil { recorder.state.current.completions[big.taskIdentifier] != nil }
        let error = recorder.state.current.completions[big.taskIdentifier] ?? nil
        let leftovers = sandbox.partialFiles
        let small = session.downloadTask(with: nginx.url(NginxServer.Files.hello))
        small.resume()
        await waitUntil { recorder.state.current.completions[small.taskIdentifier] != nil }
        let state = recorder.state.current
        #expect(failed && error?.code == .cannotWriteToFile && error?.localizedDescription.contains("No space left") == true
                && error?.downloadTaskResumeData == nil && leftovers.isEmpty && state.files[big.taskIdentifier] == nil
                && state.files[small.taskIdentifier]?.hash == StreamHash.of(NginxServer.Files.helloContents),
                "\(String(describing: error)), left: \(leftovers)")
    }
}

/// The agent checks a download's expected size against the free space of its `downloads/`: the
/// app's `countOfBytesClientExpectsToReceive` before the transfer starts (a download that does not
/// fit waits for space), the response's length at the first bytes (a download that cannot fit fails).
@Suite("Background free-space checks", .serialized, .enabled(if: SmallTmpfs.canMount, "mounting a tmpfs needs root (CAP_SYS_ADMIN)"))
struct BackgroundFreeSpaceTests {
    @Test("a download whose countOfBytesClientExpectsToReceive exceeds the free space waits, unrequested, until there is space, then finishes")
    func hintLargerThanFreeSpaceWaitsForSpace() async throws {
        let nginx = try await NginxServer.shared()
        let sandbox = try BackgroundSandbox()
        defer { sandbox.remove() }
        let mount = try sandbox.mountSmallDownloads()
        defer { mount.unmount() }

        let recorder = BackgroundRecorder()
        let session = URLSession(configuration: sandbox.configuration("hint"), delegate: recorder, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        // A unique query, to look for in nginx's access log: no request while the space is short.
        let marker = "hint-\(UUID().uuidString)"
        let task = session.downloadTask(with: nginx.url("\(NginxServer.Files.hello)?\(marker)"))
        task.countOfBytesClientExpectsToReceive = 8 << 20
        task.resume()
        await settle(3)
        let accessLog = nginx.prefix.appendingPathComponent("logs/access.log")
        let requestedWhileShort = ((try? String(contentsOf: accessLog, encoding: .utf8)) ?? "").contains(marker)
        let endedWhileShort = recorder.state.current.completions[task.taskIdentifier] != nil
        // The tmpfs goes: `downloads/` is on the (larger) file system beneath again.
        mount.unmount()
        await waitUntil { recorder.state.current.completions[task.taskIdentifier] != nil }
        let state = recorder.state.current
        #expect(!requestedWhileShort && !endedWhileShort
                && state.files[task.taskIdentifier]?.hash == StreamHash.of(NginxServer.Files.helloContents),
                "requested: \(requestedWhileShort), ended: \(endedWhileShort), \(String(describing: state.completions[task.taskIdentifier]))")
    }

    @Test("a download whose response length exceeds the free space ends at its first bytes with cannotWriteToFile, naming the shortfall")
    func responseLengthLargerThanFreeSpaceFails() async throws {
        let nginx = try await NginxServer.shared()
        let sandbox = try BackgroundSandbox()
        defer { sandbox.remove() }
        let mount = try sandbox.mountSmallDownloads()
        defer { mount.unmount() }

        let recorder = BackgroundRecorder()
        let session = URLSession(configuration: sandbox.configuration("length"), delegate: recorder, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        let task = session.downloadTask(with: nginx.url(NginxServer.Files.medium))
        task.resume()
        await waitUntil { recorder.state.current.completions[task.taskIdentifier] != nil }
        let error = recorder.state.current.completions[task.taskIdentifier] ?? nil
        // The agent's own message (not the file system's "No space left on device"): it stopped
        // the download before filling the disk.
        #expect(error?.code == .cannotWriteToFile && error?.localizedDescription.contains("No space left for the download: it needs") == true
                && sandbox.partialFiles.isEmpty, "\(String(describing: error)), left: \(sandbox.partialFiles)")
    }
}

/// A small tmpfs mounted for one test, unmounted (lazily, so a file still open does not stop
/// it) when the test ends.
struct SmallTmpfs {
    let path: String

    /// Mounts a tmpfs of `size` (mode 0700) on `path`.
    init(at path: String, size: String) throws {
        guard mount("tmpfs", path, "tmpfs", 0, "size=\(size),mode=0700") == 0 else {
            throw FaultServerError("cannot mount a tmpfs on \(path): \(String(cString: strerror(errno)))")
        }
        self.path = path
    }

    /// Unmounts it.
    func unmount() {
        umount2(path, Int32(MNT_DETACH))
    }

    /// Whether this process can mount a tmpfs (tried once on a directory of its own).
    static let canMount: Bool = {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-tmpfs-\(UUID().uuidString)").path
        guard mkdir(directory, 0o700) == 0 else { return false }
        defer { rmdir(directory) }
        guard let probe = try? SmallTmpfs(at: directory, size: "64k") else { return false }
        probe.unmount()
        return true
    }()
}

extension BackgroundSandbox {
    /// Puts a 1 MiB tmpfs under the agent's `downloads/` (made first, 0700 as the agent makes it).
    func mountSmallDownloads() throws -> SmallTmpfs {
        let downloads = directories.downloads
        try FileManager.default.createDirectory(at: downloads, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: directories.state.path)
        return try SmallTmpfs(at: downloads.path, size: "1m")
    }
}
