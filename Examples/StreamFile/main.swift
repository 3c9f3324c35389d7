// README.md, the one-line migration and streaming with a delegate. CourierExampleTests checks that the
// README shows this code verbatim and that it prints the file it streams.
import Foundation
import Courier            // was: import FoundationNetworking

final class Printer: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    let finished = DispatchSemaphore(value: 0)
    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        FileHandle.standardOutput.write(data)   // each chunk as it arrives
    }
    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        if let error { print("failed:", error) }
        finished.signal()
    }
}
let printer = Printer()
let session = URLSession(configuration: .default, delegate: printer, delegateQueue: nil)
session.dataTask(with: URL(fileURLWithPath: "/etc/hostname")).resume()
if printer.finished.wait(timeout: .now() + 30) == .timedOut { print("gave up after 30 s") }
session.finishTasksAndInvalidate()
