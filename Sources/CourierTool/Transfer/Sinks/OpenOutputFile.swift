import Courier
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An output file's open descriptor, shared by the file sinks: written with `write(2)` straight from
/// each chunk's bytes (no handle object, no copy), under a lock, and closed once (after which writes
/// fail with `EBADF`).
///
/// The lock is uncontended while a body flows (the delegate queue writes one chunk at a time); it
/// keeps a late chunk from being written into a descriptor that a stopped fetch has closed and the
/// process may already have reused.
final class OpenOutputFile: Sendable {
    private struct State {
        /// The descriptor, or -1 once closed.
        var fd: Int32
        /// Bytes written through ``write(_:path:)``.
        var written: Int64 = 0
    }

    private let state: Locked<State>

    /// Owns `fd` (closed by ``close(path:)``, or when this object goes away).
    init(_ fd: Int32) {
        state = Locked(State(fd: fd))
    }

    deinit {
        let fd = state.withLock { $0.fd }
        if fd >= 0 { _ = Glibc.close(fd) }
    }

    /// The bytes written so far.
    var bytesWritten: Int64 { state.withLock { $0.written } }

    /// Writes all of `data`; errors name `path`.
    func write(_ data: Data, path: String) throws(OutputError) {
        let failure: Int32? = state.withLock { state in
            guard state.fd >= 0 else { return EBADF }
            let fd = state.fd
            let failure = data.withUnsafeBytes { raw -> Int32? in
                guard var next = raw.baseAddress else { return nil }
                var left = raw.count
                while left > 0 {
                    let written = Glibc.write(fd, next, left)
                    if written < 0 {
                        if errno == EINTR { continue }
                        return errno
                    }
                    next += written
                    left -= written
                }
                return nil
            }
            if failure == nil { state.written += Int64(data.count) }
            return failure
        }
        if let failure { throw OutputError(operation: .write, path: path, errno: failure) }
    }

    /// The file system (`st_dev`) the open file is on, or nil once closed.
    var device: dev_t? {
        state.withLock { state -> dev_t? in
            var info = stat()
            guard state.fd >= 0, fstat(state.fd, &info) == 0 else { return nil }
            return info.st_dev
        }
    }

    /// Closes the descriptor, once; returns whether this call closed it (later calls do nothing and
    /// return false). A failing `close(2)` (a write the file system reports late) is an error
    /// naming `path`.
    @discardableResult
    func close(path: String) throws(OutputError) -> Bool {
        let fd = state.withLock { state -> Int32 in
            defer { state.fd = -1 }
            return state.fd
        }
        guard fd >= 0 else { return false }
        if Glibc.close(fd) != 0, errno != EINTR {
            throw OutputError(operation: .write, path: path, errno: errno)
        }
        return true
    }
}
