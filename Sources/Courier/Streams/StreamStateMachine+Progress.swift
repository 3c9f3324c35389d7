import Foundation

// How queued operations make progress: which may run now, what the transport does next, and how
// the stream ends.
extension StreamStateMachine {
    /// Whether the stream has ended.
    var isEnded: Bool {
        if case .ended = phase { return true }
        return false
    }

    /// Whether the transport should read the socket now: the stream is open (not mid-handshake),
    /// the read side is open and fewer than ``readAheadLimit`` bytes wait.
    var wantsToRead: Bool {
        phase == .open && tls != .handshaking && !peerClosed && !readClosed && inbound.count < Self.readAheadLimit
    }

    /// The bytes the transport should write next: the rest of the first write, unless a barrier
    /// (TLS, capture) comes before it or the stream is not open.
    var outbound: Data? {
        guard phase == .open, tls != .handshaking, let index = firstWriteIndex,
              case .write(_, let data) = operations[index] else { return nil }
        return data.dropFirst(writtenOfHead)
    }

    /// The index of the first write, when no barrier comes before it.
    var firstWriteIndex: Int? {
        for (index, operation) in operations.enumerated() {
            switch operation {
            case .write: return index
            case .startTLS, .capture: return nil
            case .read, .closeRead, .closeWrite: continue
            }
        }
        return nil
    }

    /// Whether a stream operation could still be queued (not ended, not being captured).
    var isUsable: Bool { !isEnded && !queued(.capture) }

    /// Whether `operation` is queued.
    func queued(_ operation: Operation) -> Bool { operations.contains(operation) }

    /// Why a read (`reading`) or a write cannot be queued now, or `nil`.
    func refusal(reading: Bool) -> URLError? {
        if case .ended(let error) = phase {
            return error ?? URLError(.networkConnectionLost, url: url, description: "The stream is closed.")
        }
        if queued(.capture) {
            return URLError(.networkConnectionLost, url: url, description: "The stream's streams were captured.")
        }
        if reading, readClosed || queued(.closeRead) {
            return URLError(.networkConnectionLost, url: url, description: "The stream's read side was closed.")
        }
        if !reading, writeClosed || queued(.closeWrite) {
            return URLError(.networkConnectionLost, url: url, description: "The stream's write side was closed.")
        }
        return nil
    }

    /// Runs every queued operation that may run now, in order: reads that the bytes read ahead (or
    /// EOF) satisfy, closes and barriers whose predecessors are done.
    mutating func advance() -> [StreamAction] {
        guard phase == .open, tls != .handshaking else { return [] }
        var actions: [StreamAction] = []
        var readBlocked = false
        var writeBlocked = false
        var index = 0
        while index < operations.count {
            switch operations[index] {
            case .read(let id, let minimum, let maximum):
                if !readBlocked, let (data, atEOF) = takeRead(minimum: minimum, maximum: maximum) {
                    operations.remove(at: index)
                    actions.append(.completeRead(id: id, data: data, atEOF: atEOF, error: nil))
                    continue
                }
                readBlocked = true
            case .write:
                writeBlocked = true
            case .closeRead:
                if !readBlocked {
                    operations.remove(at: index)
                    readClosed = true
                    inbound = Data()
                    pendingTransportWork.append(.shutdownRead)
                    actions.append(.service)
                    if !toldReadClosed {
                        toldReadClosed = true
                        actions.append(.readClosed)
                    }
                    continue
                }
                readBlocked = true
            case .closeWrite:
                if !writeBlocked {
                    operations.remove(at: index)
                    writeClosed = true
                    pendingTransportWork.append(.shutdownWrite)
                    actions.append(.service)
                    if !toldWriteClosed {
                        toldWriteClosed = true
                        actions.append(.writeClosed)
                    }
                    continue
                }
                writeBlocked = true
            case .startTLS:
                if !readBlocked, !writeBlocked {
                    // Plain-text bytes read ahead of the upgrade are dropped, never passed off as
                    // protected (the STARTTLS injection attack).
                    tls = .handshaking
                    inbound = Data()
                    pendingTransportWork.append(.beginTLS)
                    return actions + [.service]
                }
                return actions
            case .capture:
                if !readBlocked, !writeBlocked {
                    operations.remove(at: index)
                    pendingTransportWork.append(.capture(buffered: inbound))
                    inbound = Data()
                    let refused = URLError(.networkConnectionLost, url: url, description: "The stream's streams were captured.")
                    actions += failAll(refused)
                    phase = .ended(nil)
                    return actions + [.service]
                }
                return actions
            }
            index += 1
        }
        return actions + endIfDone()
    }

    /// The bytes a read of `minimum`...`maximum` takes now, and whether the stream is then at its
    /// end; `nil` when it must wait.
    private mutating func takeRead(minimum: Int, maximum: Int) -> (Data, Bool)? {
        guard inbound.count >= max(minimum, 1) || minimum == 0 || peerClosed else { return nil }
        let count = min(inbound.count, maximum)
        let data = Data(inbound.prefix(count))
        inbound = inbound.count == count ? Data() : Data(inbound.dropFirst(count))
        return (data, peerClosed && inbound.isEmpty)
    }

    /// Ends the stream when nothing can happen on it any more: the write side closed, the read side
    /// closed (or at EOF with nothing left to read) and nothing queued.
    mutating func endIfDone() -> [StreamAction] {
        guard phase == .open, writeClosed, readClosed || (peerClosed && inbound.isEmpty), operations.isEmpty else { return [] }
        return end(nil, finishTask: true)
    }

    /// Fails every queued operation with `error`, closes the transport, and (`finishTask`) ends the task.
    mutating func end(_ error: URLError?, finishTask: Bool) -> [StreamAction] {
        let refused = error ?? URLError(.networkConnectionLost, url: url, description: "The stream is closed.")
        var actions = failAll(refused)
        phase = .ended(error)
        inbound = Data()
        pendingTransportWork.append(.close)
        actions.append(.service)
        if finishTask { actions.append(.finish(error)) }
        return actions
    }

    /// Fails and removes every queued operation.
    private mutating func failAll(_ error: URLError) -> [StreamAction] {
        var actions: [StreamAction] = []
        for operation in operations {
            switch operation {
            case .read(let id, _, _): actions.append(.completeRead(id: id, data: nil, atEOF: false, error: error))
            case .write(let id, _): actions.append(.completeWrite(id: id, error: error))
            case .closeRead, .closeWrite, .startTLS, .capture: break
            }
        }
        operations.removeAll()
        writtenOfHead = 0
        return actions
    }
}

extension StreamStateMachine.Operation {
    /// The id of a read or write; `nil` for the others.
    var id: Int? {
        switch self {
        case .read(let id, _, _), .write(let id, _): id
        case .closeRead, .closeWrite, .startTLS, .capture: nil
        }
    }
}
