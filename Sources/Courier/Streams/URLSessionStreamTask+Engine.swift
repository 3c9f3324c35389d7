import Foundation

// How a stream task takes part in the task engine: it starts without a handler (the state machine
// goes to loading with no load), its connection's deliveries go through the task's event queue,
// and its completion first completes what the connection still holds.
extension URLSessionStreamTask {
    /// Called once, on the first `resume()`: connect.
    func beginStream() {
        guard lock.withLock({ core.machine.servingWithoutHandler() }) else { return }
        connection?.start()
    }

    /// Runs `step` on the delegate queue in order with the task's other messages; once the task's
    /// completion is queued, as an operation of its own (the completion also runs what it finds).
    func enqueueStreamDelivery(_ step: @escaping @Sendable () -> Void) {
        let (accepted, schedule): (Bool, Bool) = lock.withLock {
            guard core.machine.acceptsSteps else { return (false, false) }
            return (true, core.events.append(.immediate(step, bytes: 0), paused: core.machine.isDeliveryPaused))
        }
        if schedule { scheduleDrain() }
        if !accepted { session?.delegateQueue.addOperation(step) }
    }

    /// Bytes read (handed to reads) and written (handed to the socket), for the task's counters.
    func countStreamBytes(received: Int, sent: Int) {
        lock.withLock {
            core.bytesReceived += Int64(received)
            core.bytesSent += Int64(sent)
        }
    }

    /// The task's completion is about to be delivered: see ``StreamConnection/taskCompleting(error:)``.
    func streamWillComplete(error: (any Error)?) -> Bool {
        connection?.taskCompleting(error: error) ?? false
    }

    /// `readClosedFor`, on the delegate queue.
    func tellReadClosed() {
        guard let session else { return }
        sendToDelegate(.readClosed, as: (any URLSessionStreamDelegate).self) { $0.urlSession(session, readClosedFor: self) }
    }

    /// `writeClosedFor`, on the delegate queue.
    func tellWriteClosed() {
        guard let session else { return }
        sendToDelegate(.writeClosed, as: (any URLSessionStreamDelegate).self) { $0.urlSession(session, writeClosedFor: self) }
    }

    /// `didBecome inputStream:outputStream:`, on the delegate queue.
    func tellBecameStreams(input: InputStream, output: OutputStream) {
        guard let session else { return }
        sendToDelegate(.becameStreams, as: (any URLSessionStreamDelegate).self) {
            $0.urlSession(session, streamTask: self, didBecome: input, outputStream: output)
        }
    }
}
