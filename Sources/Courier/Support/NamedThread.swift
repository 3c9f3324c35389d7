import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Starts the long-lived threads Courier owns (event loops, body-stream pumps) under a name the
/// system shows (`/proc/self/task/*/comm`, `top -H`, gdb), which `Thread.name` alone does not set on
/// Linux. The thread names itself through `/proc/thread-self/comm` (`pthread_setname_np` is not
/// visible to Swift here); names longer than 15 bytes are cut, as the kernel keeps no more.
package enum NamedThread {
    /// Starts `body` on a new thread called `name`.
    package static func start(_ name: String, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread {
            nameCurrentThread(name)
            body()
        }
        thread.name = name
        thread.start()
    }

    /// Names the calling thread; a failure (no /proc) leaves the name as it was.
    private static func nameCurrentThread(_ name: String) {
        let descriptor = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    }
}
