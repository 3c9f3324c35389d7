import Foundation

// `.becomeStream`: a data task answered with an HTTP upgrade becomes a stream task over the same
// connection (`urlSession(_:dataTask:didBecome streamTask:)`).
extension URLSessionTask {
    /// Asks the running handler for its connection (only Courier's http handler can give one: an
    /// `http:` upgrade answered `101`); body chunks stay held meanwhile. Once it comes, the data task
    /// ends without a completion, a stream task starts on the connection with the held chunks and
    /// the bytes the handler read past the head first, and the delegate hears `didBecome
    /// streamTask` before anything of the stream task. Otherwise the data task fails with the
    /// handler's reason (`unsupportedURL` for https, HTTP/2, or a response that is no upgrade).
    func becomeStream(after response: URLResponse) {
        // Also when the load ended while the delegate decided: the handler still knows whether its
        // connection could have been had (https never), so the reason does not depend on timing.
        let operations = lock.withLock { core.machine.loadAwaitingDisposition?.operations }
        guard let operations else {
            failBecomingStream(URLError(.unsupportedURL, url: response.url ?? currentRequest?.url, description:
                "Only an http: request upgraded with 101 Switching Protocols (on a connection still open) can become a stream task in Courier."))
            return
        }
        operations.handOverConnection(after: response) { [self] result in
            switch result {
            case .failure(let error):
                failBecomingStream(error)
            case .success(let connection):
                adoptStream(connection, response: response)
            }
        }
    }

    /// The handler handed `connection` over: end this task silently and start its stream task.
    private func adoptStream(_ connection: HandedOverConnection, response: URLResponse) {
        guard let session, let dataTask = self as? URLSessionDataTask else {
            _ = close(connection.descriptor)
            return
        }
        // Made (and registered) outside this task's lock, as `.becomeDownload`'s successor is.
        let streamTask = session.makeSuccessorStreamTask(for: response.url ?? currentRequest?.url, adopting: connection.descriptor)
        enum Outcome { case refused, handedOver(held: [Data], stop: ActiveLoad?, schedule: Bool) }
        let outcome: Outcome = lock.withLock {
            guard let (held, stop) = core.machine.becameStream() else { return .refused }
            // The delegate hears of the stream task first; only then does the stream task start.
            let final: @Sendable () -> Void = { [self] in
                sendToDelegate(.becameStream, as: (any URLSessionDataDelegate).self) {
                    $0.urlSession(session, dataTask: dataTask, didBecome: streamTask)
                }
                lock.withLock { core.delegate = nil }
                streamTask.resume()
                session.taskDidComplete(self)
            }
            return .handedOver(held: held, stop: stop, schedule: core.events.replaceAll(withFinal: final, paused: false))
        }
        guard case .handedOver(let held, let stop, let schedule) = outcome else {
            // Cancelled meanwhile: the stream task, never started, ends and closes the socket.
            streamTask.cancel()
            return
        }
        streamTask.connection?.startWith(held.reduce(Data(), +) + connection.buffered)
        stop?.stop()
        if schedule { scheduleDrain() }
    }

    /// Fails the task with `error`, also when its load had ended already and a successful
    /// completion waits behind the disposition (it is replaced).
    private func failBecomingStream(_ error: URLError) {
        let replaced: Bool? = lock.withLock {
            guard core.machine.streamRefusedAfterEnd() else { return nil }
            let final: @Sendable () -> Void = { [self] in deliverCompletion(error: error, keepFile: false) }
            return core.events.replaceAll(withFinal: final, paused: core.machine.isDeliveryPaused)
        }
        guard let replaced else {
            complete(error: error, generation: nil)
            return
        }
        if replaced { scheduleDrain() }
    }
}
