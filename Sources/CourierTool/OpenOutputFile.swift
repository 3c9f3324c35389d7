import Courier
import Foundation

/// An output file's open handle, shared by the file sinks: written under a lock, and taken once to
/// be closed (after which writes fail with `EBADF`).
final class OpenOutputFile: Sendable {
    private let handle: Locked<FileHandle?>

    /// Owns `fd` (closed with the handle).
    init(_ fd: Int32) {
        handle = Locked(FileHandle(fileDescriptor: fd, closeOnDealloc: true))
    }

    /// Writes `data`; errors name `path`.
    func write(_ data: Data, path: String) throws {
        try handle.withLock { handle in
            guard let handle else { throw OutputError(operation: .write, path: path, errno: EBADF) }
            do {
                try handle.write(contentsOf: data)
            } catch {
                throw OutputError(operation: .write, path: path, underlying: error)
            }
        }
    }

    /// The handle, once: later calls (and writes) find none.
    func take() -> FileHandle? {
        handle.withLock { handle -> FileHandle? in
            defer { handle = nil }
            return handle
        }
    }
}
