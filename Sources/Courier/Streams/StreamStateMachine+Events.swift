import Foundation

// The events of a stream: the app's calls, the transport's reports and timers. Each returns what
// the connection must do; the machine's fields say what the transport does next.
extension StreamStateMachine {
    // MARK: - The app

    /// The task was resumed: connect (once). With `connectedWith` the socket is connected already
    /// (a data task's connection after an HTTP upgrade, `.becomeStream`), and those bytes, read
    /// past the response's head, come first.
    mutating func resume(connectedWith buffered: Data? = nil) -> [StreamAction] {
        guard phase == .idle else { return [] }
        if let buffered {
            phase = .open
            inbound = buffered
            return advance() + [.service]
        }
        phase = .connecting
        pendingTransportWork.append(.connect)
        return [.service]
    }

    /// The app queued a read of `minimum`...`maximum` bytes.
    mutating func read(id: Int, minimum: Int, maximum: Int) -> [StreamAction] {
        // A stream that ended after the peer's end of stream still reads as at its end.
        if phase == .ended(nil), peerClosed, !readClosed {
            return [.completeRead(id: id, data: Data(), atEOF: true, error: nil)]
        }
        if let refusal = refusal(reading: true) {
            return [.completeRead(id: id, data: nil, atEOF: false, error: refusal)]
        }
        let readAheadWasFull = phase == .open && !wantsToRead
        operations.append(.read(id: id, minimum: max(0, minimum), maximum: max(1, maximum, minimum)))
        let actions = advance()
        // A read left waiting needs the socket read; so does a read that emptied a full read-ahead
        // (the socket was out of the epoll set), or the peer's end of stream would be noticed only
        // when some later read waits.
        let waits = operations.contains { $0.id == id }
        return phase == .open && (waits || (readAheadWasFull && wantsToRead)) ? actions + [.service] : actions
    }

    /// The app queued a write.
    mutating func write(id: Int, data: Data) -> [StreamAction] {
        if let refusal = refusal(reading: false) {
            return [.completeWrite(id: id, error: refusal)]
        }
        operations.append(.write(id: id, data: data))
        // The transport writes it (or waits for the socket).
        return phase == .open ? advance() + [.service] : advance()
    }

    /// `closeRead()`: after the reads queued before it.
    mutating func closeRead() -> [StreamAction] {
        guard isUsable, !queued(.closeRead), !readClosed else { return [] }
        operations.append(.closeRead)
        return advance()
    }

    /// `closeWrite()`: after the writes queued before it.
    mutating func closeWrite() -> [StreamAction] {
        guard isUsable, !queued(.closeWrite), !writeClosed else { return [] }
        operations.append(.closeWrite)
        return advance()
    }

    /// `startSecureConnection()`: after everything queued before it. Once is enough.
    mutating func startTLS() -> [StreamAction] {
        guard isUsable, tls == .plain, !queued(.startTLS) else { return [] }
        operations.append(.startTLS)
        return advance()
    }

    /// `captureStreams()`: after everything queued before it.
    mutating func capture() -> [StreamAction] {
        guard isUsable, !queued(.capture) else { return [] }
        operations.append(.capture)
        return advance()
    }

    /// `cancel()`: every operation fails with `cancelled`, the socket closes.
    mutating func cancel() -> [StreamAction] {
        guard !isEnded else { return [] }
        cancelled = true
        return end(URLError(.cancelled, url: url, description: "The stream task was cancelled."), finishTask: false)
    }

    /// Read or write `id` timed out (its `timeout` passed): it fails with `timedOut` if still queued.
    mutating func timedOut(id: Int) -> [StreamAction] {
        guard let index = operations.firstIndex(where: { $0.id == id }) else { return [] }
        let error = URLError(.timedOut, url: url, description: "The stream operation timed out.")
        let wasHeadWrite = index == firstWriteIndex
        let operation = operations.remove(at: index)
        var actions: [StreamAction]
        if case .write = operation {
            // Bytes of it already written stay written: the stream goes on with the next write.
            if wasHeadWrite { writtenOfHead = 0 }
            actions = [.completeWrite(id: id, error: error)]
        } else {
            actions = [.completeRead(id: id, data: nil, atEOF: false, error: error)]
        }
        return actions + advance()
    }

    // MARK: - The transport

    /// The session's `timeoutIntervalForResource` passed since the task was resumed: as for any
    /// task, the whole task ends with `timedOut`.
    mutating func resourceTimedOut(after seconds: TimeInterval) -> [StreamAction] {
        guard !isEnded else { return [] }
        return end(URLError(.timedOut, url: url, description: "The stream task timed out after \(seconds) s (timeoutIntervalForResource)."),
                   finishTask: true)
    }

    /// Connecting took longer than the request timeout.
    mutating func connectTimedOut() -> [StreamAction] {
        guard phase == .connecting else { return [] }
        return end(URLError(.timedOut, url: url, description: "Connecting to the server timed out."), finishTask: true)
    }

    /// The socket is connected.
    mutating func connected() -> [StreamAction] {
        guard phase == .connecting else { return [] }
        phase = .open
        return advance() + [.service]
    }

    /// Bytes arrived (decrypted, once in TLS).
    mutating func received(_ bytes: Data) -> [StreamAction] {
        guard phase == .open, !bytes.isEmpty else { return [] }
        inbound.append(bytes)
        return advance()
    }

    /// The peer closed its side.
    mutating func receivedEOF() -> [StreamAction] {
        guard phase == .open, !peerClosed else { return [] }
        peerClosed = true
        var actions = advance()
        if !toldReadClosed {
            toldReadClosed = true
            actions.insert(.readClosed, at: 0)
        }
        return actions
    }

    /// `count` bytes of ``outbound`` went to the transport.
    mutating func wrote(_ count: Int) -> [StreamAction] {
        guard phase == .open, count > 0, let index = firstWriteIndex,
              case .write(let id, let data) = operations[index] else { return [] }
        writtenOfHead += count
        guard writtenOfHead >= data.count else { return [] }
        writtenOfHead = 0
        operations.remove(at: index)
        return [.completeWrite(id: id, error: nil)] + advance()
    }

    /// The TLS handshake finished and the server is trusted.
    mutating func tlsEstablished() -> [StreamAction] {
        guard phase == .open, tls == .handshaking else { return [] }
        tls = .secure
        if case .startTLS? = operations.first { operations.removeFirst() }
        return advance() + [.service]
    }

    /// The connection failed: everything fails with `error` and the task ends with it.
    mutating func failed(_ error: URLError) -> [StreamAction] {
        guard !isEnded else { return [] }
        return end(error, finishTask: true)
    }

    /// The connection's transport work was taken by its service.
    mutating func takeTransportWork() -> [StreamTransportWork] {
        defer { pendingTransportWork.removeAll() }
        return pendingTransportWork
    }
}
