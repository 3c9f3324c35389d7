#if USE_FOUNDATION_NETWORKING
import FoundationNetworking
#else
import Courier
#endif
import Foundation

// A program written against FoundationNetworking that uses stream tasks as far as
// FoundationNetworking declares them: the stream delegate (all four messages), a data delegate
// that hears `didBecome streamTask`, and `URLSessionStreamTask` as a task type (FoundationNetworking
// declares no methods of its own on it, nor `streamTask(withHostName:port:)`). It must type-check
// unchanged against Courier; `scripts/check-source-compatibility` compiles it both ways and never
// runs it.

/// Logs what stream tasks tell it.
final class StreamObserver: NSObject, URLSessionStreamDelegate, URLSessionDataDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var log: [String] = []

    private func record(_ line: String) {
        lock.lock()
        log.append(line)
        lock.unlock()
    }

    func urlSession(_ session: URLSession, readClosedFor streamTask: URLSessionStreamTask) {
        record("read closed \(streamTask.taskIdentifier)")
    }

    func urlSession(_ session: URLSession, writeClosedFor streamTask: URLSessionStreamTask) {
        record("write closed \(streamTask.taskIdentifier)")
    }

    func urlSession(_ session: URLSession, betterRouteDiscoveredFor streamTask: URLSessionStreamTask) {
        record("better route")
    }

    func urlSession(_ session: URLSession, streamTask: URLSessionStreamTask, didBecome inputStream: InputStream,
                    outputStream: OutputStream) {
        inputStream.open()
        outputStream.open()
        let greeting = Array("hello".utf8)
        _ = greeting.withUnsafeBufferPointer { buffer in
            buffer.baseAddress.map { outputStream.write($0, maxLength: buffer.count) } ?? 0
        }
        outputStream.close()
        inputStream.close()
        record("became streams")
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didBecome streamTask: URLSessionStreamTask) {
        record("data task \(dataTask.taskIdentifier) became stream task \(streamTask.taskIdentifier)")
        streamTask.resume()
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        if task is URLSessionStreamTask {
            record("stream task done: \(String(describing: error))")
        }
    }
}

/// Treats stream tasks like any task.
func describe(_ tasks: [URLSessionTask]) -> [String] {
    tasks.map { task in
        if let stream = task as? URLSessionStreamTask {
            return "stream \(stream.taskIdentifier) \(stream.state == .running ? "running" : "idle") \(stream.countOfBytesReceived)"
        }
        return "task \(task.taskIdentifier)"
    }
}

/// A subclass, as a test double would be.
final class RecordedStreamTask: URLSessionStreamTask, @unchecked Sendable {
    override func cancel() {
        super.cancel()
    }
}

@main
struct StreamProgram {
    static func main() {
        let observer = StreamObserver()
        let session = URLSession(configuration: .ephemeral, delegate: observer, delegateQueue: nil)
        let stream: URLSessionStreamTask = RecordedStreamTask()
        stream.delegate = observer
        stream.cancel()
        print(describe([stream]))
        session.getAllTasks { tasks in print(describe(tasks)) }
        session.invalidateAndCancel()
    }
}
