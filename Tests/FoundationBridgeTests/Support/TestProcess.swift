import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Why a test's setup (a server, a plugin) could not be made.
struct TestSetupError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}

/// Child processes and temporary files for the bridge tests' setup.
enum TestProcess {
    /// Runs `tool` and waits for it (at most `timeout` seconds); throws when it fails. Returns its
    /// standard output.
    @discardableResult
    static func run(_ tool: String, _ arguments: [String], timeout: TimeInterval = 60) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { usleep(10_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            throw TestSetupError("\(tool) did not finish within \(Int(timeout)) s")
        }
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        guard process.terminationStatus == 0 else {
            let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            throw TestSetupError("\(tool) \(arguments.joined(separator: " ")) exited with \(process.terminationStatus): \(message)")
        }
        return text
    }

    /// The path of the first of `names` found on `PATH` or in the system directories.
    static func tool(_ names: [String]) throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let directories = path.split(separator: ":").map(String.init) + ["/usr/bin", "/usr/sbin", "/bin", "/sbin"]
        for name in names {
            for directory in directories where FileManager.default.isExecutableFile(atPath: "\(directory)/\(name)") {
                return "\(directory)/\(name)"
            }
        }
        throw TestSetupError("none of \(names.joined(separator: ", ")) is installed (scripts/setup installs them)")
    }

    /// Starts `arguments` in the background, tied to this process: a shell waits on a pipe this
    /// process holds open and kills the child (SIGKILL) when the pipe closes, which the kernel does
    /// when this process ends, however it ends. Standard output and error go to `log`.
    static func startTied(_ arguments: [String], log: URL) throws {
        guard FileManager.default.createFile(atPath: log.path, contents: nil) else { throw TestSetupError("cannot create \(log.path)") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "\"$@\" & child=$!; read _ignored; kill -9 $child", "sh"] + arguments
        let lifeline = Pipe()
        process.standardInput = lifeline
        let logHandle = try FileHandle(forWritingTo: log)
        process.standardOutput = logHandle
        process.standardError = logHandle
        try process.run()
        lifelines.withLock { $0.append(lifeline.fileHandleForWriting) }
    }

    /// The write ends of the pipes ``startTied(_:log:)``'s shells wait on, kept open until exit.
    private static let lifelines = Mutex<[FileHandle]>([])

    /// Removes `url` when the test process exits normally.
    static func removeAtExit(_ url: URL) {
        let first = removals.withLock { list -> Bool in
            list.append(url.path)
            return list.count == 1
        }
        if first {
            atexit {
                for path in TestProcess.removals.withLock({ $0 }) { try? FileManager.default.removeItem(atPath: path) }
            }
        }
    }

    private static let removals = Mutex<[String]>([])

    /// Whether something accepts TCP connections on 127.0.0.1:`port`.
    static func canConnect(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    /// A port that was free on 127.0.0.1 a moment ago.
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestSetupError("socket() failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw TestSetupError("could not find a free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
