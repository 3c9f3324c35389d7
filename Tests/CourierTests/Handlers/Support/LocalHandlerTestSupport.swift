import Foundation
import Testing
@testable import Courier
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The parent of the local-handler suites that move many megabytes or measure time or memory.
/// `.serialized` makes its nested suites (declared in extensions, one per test file) run one test at
/// a time, so a timing or resident-memory measurement is not disturbed by another heavy test.
@Suite(.serialized)
struct LocalHandlerHeavyTests {}

/// Helpers shared by the `data:` and `file:` handler tests. Namespaced so they cannot clash with
/// helpers other test files add to the module.
enum LocalTestSupport {
    /// The longest any test waits for anything.
    static let timeout: Duration = .seconds(10 * testTimeScale)

    struct TimedOut: Error, CustomStringConvertible {
        var what: String
        var description: String { "timed out waiting for \(what)" }
    }

    /// Runs `operation`, throwing ``TimedOut`` (and cancelling it) when it takes longer than `limit`.
    /// The operation runs in an unstructured task, so one that ignores cancellation (a hang, the very
    /// thing a test may be looking for) is abandoned instead of holding the test forever.
    static func withTimeout<T: Sendable>(_ limit: Duration = timeout, _ what: String = "the operation",
                                         _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        let work = ResultBox<Task<Void, Never>>()
        let timer = ResultBox<Task<Void, Never>>()
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let finish = FinishOnce(continuation)
            timer.set(Task {
                try? await Task.sleep(for: limit)
                if finish.resume(with: .failure(TimedOut(what: what))) { work.value?.cancel() }
            })
            work.set(Task {
                do { finish.resume(with: .success(try await operation())) } catch { finish.resume(with: .failure(error)) }
                timer.value?.cancel()
            })
        }
    }

    /// Polls `condition` every few milliseconds until it holds or `limit` passes; returns whether it
    /// held.
    @discardableResult
    static func eventually(timeout limit: Duration = timeout, _ condition: @Sendable () -> Bool) async -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: limit)
        while clock.now < deadline {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return condition()
    }

    /// A new serial-queue session with `delegate`.
    static func session(delegate: (any URLSessionDelegate)? = nil) -> URLSession {
        URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
    }

    /// Runs a completion-handler data task for `url`, bounded by ``timeout``.
    static func load(_ url: URL, in session: URLSession = URLSession(configuration: .ephemeral)) async throws
        -> (data: Data?, response: URLResponse?, error: (any Error)?) {
        let box = ResultBox<(Data?, URLResponse?, (any Error)?)>()
        let task = session.dataTask(with: url) { data, response, error in box.set((data, response, error)) }
        task.resume()
        guard await eventually(timeout: timeout, { box.value != nil }), let result = box.value else {
            task.cancel()
            throw TimedOut(what: "a data task for \(url.absoluteString.prefix(80))")
        }
        return result
    }

    /// The `URLError` a load of `url` fails with; records an issue when it succeeds instead.
    static func loadError(_ url: URL, sourceLocation: SourceLocation = #_sourceLocation) async throws -> URLError? {
        let (data, _, error) = try await load(url)
        guard let error else {
            Issue.record("\(url.absoluteString.prefix(80)) loaded \(data?.count ?? 0) bytes instead of failing",
                         sourceLocation: sourceLocation)
            return nil
        }
        guard let urlError = error as? URLError else {
            Issue.record("\(url.absoluteString.prefix(80)) failed with a non-URLError: \(error)", sourceLocation: sourceLocation)
            return nil
        }
        return urlError
    }

    /// `count` bytes from the kernel's random source (fast even for tens of megabytes).
    static func randomBytes(_ count: Int) throws -> Data {
        let handle = try #require(FileHandle(forReadingAtPath: "/dev/urandom"))
        defer { try? handle.close() }
        var data = Data()
        data.reserveCapacity(count)
        while data.count < count {
            let piece = try #require(try handle.read(upToCount: min(count - data.count, 8 << 20)))
            data.append(piece)
        }
        return data
    }

    /// `count` bytes made of one random block of 1 MiB + 4093 bytes repeated: quick to build for
    /// hundreds of megabytes, and since the period is not a multiple of the 1 MiB read size, a lost,
    /// repeated or reordered chunk still shows.
    static func repeatedRandomBytes(_ count: Int) throws -> Data {
        let block = try randomBytes(min(count, (1 << 20) + 4093))
        var data = Data()
        data.reserveCapacity(count)
        while data.count < count { data.append(block.prefix(count - data.count)) }
        return data
    }

    /// `count` random bytes of which about three quarters are unreserved ASCII (kept as they are
    /// by ``percentEncodeReserved(_:)``) and the rest arbitrary, so the encoded form is about 1.5×
    /// the size rather than 3× — keeps multi-megabyte URLs quick in debug builds.
    static func mostlyTextBytes(_ count: Int) throws -> Data {
        var data = try randomBytes(count)
        let unreserved = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~".utf8)
        unreserved.withUnsafeBufferPointer { table in
            data.withUnsafeMutableBytes { raw in
                for index in raw.indices where raw[index] & 0b11 != 0 {
                    raw[index] = table[Int(raw[index] >> 2) % table.count]
                }
            }
        }
        return data
    }

    /// Uppercase-hex `%XX` escapes for every byte of `data`.
    static func percentEncodeAll(_ data: Data) -> String {
        percentEncode(data, keepUnreserved: false)
    }

    /// `%XX` escapes for every byte that is not an RFC 3986 unreserved character.
    static func percentEncodeReserved(_ data: Data) -> String {
        percentEncode(data, keepUnreserved: true)
    }

    /// Written with raw buffers so that multi-megabyte payloads encode quickly in debug builds.
    private static func percentEncode(_ data: Data, keepUnreserved: Bool) -> String {
        var keep = [Bool](repeating: false, count: 256)
        if keepUnreserved {
            for byte in Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~".utf8) { keep[Int(byte)] = true }
        }
        let hex = Array("0123456789ABCDEF".utf8)
        return String(unsafeUninitializedCapacity: max(data.count * 3, 1)) { out in
            keep.withUnsafeBufferPointer { keep in
                hex.withUnsafeBufferPointer { hex in
                    data.withUnsafeBytes { raw in
                        var o = 0
                        for byte in raw {
                            if keep[Int(byte)] {
                                out[o] = byte
                                o += 1
                            } else {
                                out[o] = 0x25
                                out[o + 1] = hex[Int(byte >> 4)]
                                out[o + 2] = hex[Int(byte & 0xF)]
                                o += 3
                            }
                        }
                        return o
                    }
                }
            }
        }
    }

    /// This process's resident set size in bytes, from `/proc/self/status` (`VmRSS`).
    static func residentBytes() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let digits = line.dropFirst("VmRSS:".count).filter(\.isNumber)
            return Int(digits).map { $0 * 1024 }
        }
        return nil
    }

    /// Whether the tests run as root (who can read files whatever their mode).
    static var isRoot: Bool { getuid() == 0 }
}

/// A fresh directory under the temporary directory, removed by ``remove()``.
struct LocalTempDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("courier-local-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// Writes `data` to `name` inside the directory and returns the file's URL.
    func file(_ name: String, _ data: Data) throws -> URL {
        let file = url.appendingPathComponent(name, isDirectory: false)
        try data.write(to: file)
        return file
    }

    /// A sparse file of `size` zero bytes (created instantly, reads like a real file).
    func sparseFile(_ name: String, size: Int) throws -> URL {
        let file = url.appendingPathComponent(name, isDirectory: false)
        let fd = open(file.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard fd >= 0 else { throw CocoaError(.fileWriteUnknown) }
        defer { close(fd) }
        guard ftruncate(fd, off_t(size)) == 0 else { throw CocoaError(.fileWriteUnknown) }
        return file
    }

    func remove() {
        _ = try? FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: url.path)
        if let contents = try? FileManager.default.contentsOfDirectory(atPath: url.path) {
            for name in contents {
                _ = try? FileManager.default.setAttributes([.posixPermissions: 0o600],
                                                           ofItemAtPath: url.appendingPathComponent(name).path)
            }
        }
        try? FileManager.default.removeItem(at: url)
    }
}

/// Resumes a continuation exactly once, whoever comes first.
final class FinishOnce<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<T, any Error>?

    init(_ continuation: CheckedContinuation<T, any Error>) { self.continuation = continuation }

    /// Resumes with `result` unless already resumed; returns whether this call did it.
    @discardableResult
    func resume(with result: Result<T, any Error>) -> Bool {
        lock.lock()
        let pending = continuation
        continuation = nil
        lock.unlock()
        pending?.resume(with: result)
        return pending != nil
    }
}

/// A value set once from any thread and read from any other.
final class ResultBox<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value?

    var value: Value? {
        lock.lock(); defer { lock.unlock() }
        return stored
    }

    func set(_ value: Value) {
        lock.lock(); defer { lock.unlock() }
        if stored == nil { stored = value }
    }
}

/// Records what a data task's delegate receives. Thread-safe; the delegate queue is serial anyway.
final class LocalDataRecorder: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var _response: URLResponse?
    private var _chunkSizes: [Int] = []
    private var _body = Data()
    private var _completed = false
    private var _error: (any Error)?
    private var _mismatch: String?
    private var _received = 0

    /// Keep the body (`false` counts bytes only, for very large transfers).
    let keepBody: Bool
    /// When set, each chunk is compared with these bytes at the same offset.
    let expected: Data?
    /// Sleep this long in every `didReceive data` (a slow consumer).
    let delayPerChunk: useconds_t
    /// Called (on the delegate queue) after each chunk is recorded, with the chunk's index.
    let onChunk: (@Sendable (_ index: Int, _ dataTask: URLSessionDataTask) -> Void)?

    /// Called (on the delegate queue) when the response arrives, before the task is allowed to
    /// continue.
    let onResponse: (@Sendable (_ dataTask: URLSessionDataTask) -> Void)?

    init(keepBody: Bool = true, expected: Data? = nil, delayPerChunk: useconds_t = 0,
         onChunk: (@Sendable (_ index: Int, _ dataTask: URLSessionDataTask) -> Void)? = nil,
         onResponse: (@Sendable (_ dataTask: URLSessionDataTask) -> Void)? = nil) {
        self.keepBody = keepBody
        self.expected = expected
        self.delayPerChunk = delayPerChunk
        self.onResponse = onResponse
        self.onChunk = onChunk
    }

    var response: URLResponse? { lock.lock(); defer { lock.unlock() }; return _response }
    var chunkSizes: [Int] { lock.lock(); defer { lock.unlock() }; return _chunkSizes }
    var chunkCount: Int { lock.lock(); defer { lock.unlock() }; return _chunkSizes.count }
    var body: Data { lock.lock(); defer { lock.unlock() }; return _body }
    var received: Int { lock.lock(); defer { lock.unlock() }; return _received }
    var completed: Bool { lock.lock(); defer { lock.unlock() }; return _completed }
    var error: (any Error)? { lock.lock(); defer { lock.unlock() }; return _error }
    var mismatch: String? { lock.lock(); defer { lock.unlock() }; return _mismatch }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        lock.lock()
        _response = response
        lock.unlock()
        onResponse?(dataTask)
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        if delayPerChunk > 0 { usleep(delayPerChunk) }
        lock.lock()
        let offset = _received
        let index = _chunkSizes.count
        _chunkSizes.append(data.count)
        _received += data.count
        if keepBody { _body.append(data) }
        if _mismatch == nil, let expected {
            if offset + data.count > expected.count {
                _mismatch = "chunk \(index) at offset \(offset) runs past the expected \(expected.count) bytes"
            } else if expected[expected.startIndex + offset ..< expected.startIndex + offset + data.count] != data {
                _mismatch = "chunk \(index) at offset \(offset) (\(data.count) bytes) differs from the file"
            }
        }
        lock.unlock()
        onChunk?(index, dataTask)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        lock.lock()
        _error = error
        _completed = true
        lock.unlock()
    }
}
