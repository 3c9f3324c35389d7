internal import CSSH2
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// libssh2's process-wide state: initialised once, on first use, before any session is made.
enum SSHLibrary {
    /// Whether `libssh2_init` succeeded (it runs once, the first time this is read).
    static let isInitialized: Bool = {
        _ = OpenSSLProcessState.isInitialized
        guard libssh2_init(0) == 0 else { return false }
        // Registered after libssh2 initialised OpenSSL, so it runs before OpenSSL's own exit
        // handler frees the crypto library's locks (exit handlers run in reverse order).
        atexit(sshLibraryExitHandler)
        return true
    }()

    /// Event loops call libssh2 only while holding this gate; the exit handler closes it for good,
    /// so no loop thread still running while the process exits touches libssh2 (and through it
    /// OpenSSL) after OpenSSL has cleaned up.
    static let exitGate = SSHExitGate()

    /// The version of the libssh2 the process runs with, such as `"1.10.0"`.
    static var version: String {
        libssh2_version(0).map { String(cString: $0) } ?? "unknown"
    }

    /// Whether this libssh2 can sign with RSA keys using SHA-2 (`rsa-sha2-256`/`-512`), which it
    /// learnt in 1.11.0. Older versions sign RSA only with SHA-1 (`ssh-rsa`), which OpenSSH 8.8 and
    /// later refuse by default.
    static var signsRSAWithSHA2: Bool {
        libssh2_version(0x010B00) != nil
    }
}

/// A read-write lock that can be closed once: ``enter()`` fails after ``close()``.
final class SSHExitGate: @unchecked Sendable {
    private let lock: UnsafeMutablePointer<pthread_rwlock_t>
    private var closed = false

    init() {
        lock = .allocate(capacity: 1)
        lock.initialize(to: pthread_rwlock_t())
        pthread_rwlock_init(lock, nil)
    }

    /// Enters (shared with other loops); `false` once the process is exiting.
    func enter() -> Bool {
        pthread_rwlock_rdlock(lock)
        if closed {
            pthread_rwlock_unlock(lock)
            return false
        }
        return true
    }

    /// Leaves after a successful ``enter()``.
    func leave() {
        pthread_rwlock_unlock(lock)
    }

    /// Waits for every loop to leave and closes the gate for good.
    func close() {
        pthread_rwlock_wrlock(lock)
        closed = true
        pthread_rwlock_unlock(lock)
    }
}

private func sshLibraryExitHandler() {
    SSHLibrary.exitGate.close()
}
