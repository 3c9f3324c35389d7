import Courier
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A transfer made under the agent's lock, to be resumed after it is released.
struct StartOrder: @unchecked Sendable {
    // `@unchecked Sendable`: URLSessionTask is Sendable (`@unchecked`, Apple's interface).
    let task: URLSessionTask
}

// The transfers: Courier's own URLSession (one per identifier, with its settings) carries each
// task out, so every scheme Courier serves works, and its resume data continues a download after
// a suspension, a transient failure or a crash of the agent.
extension Agent {
    /// The errors after which a transfer is tried again (from its resume data) rather than failed.
    static let transientErrors: Set<URLError.Code> = [
        .networkConnectionLost, .notConnectedToInternet, .cannotConnectToHost, .timedOut, .dnsLookupFailed, .cannotFindHost,
    ]

    /// Starts waiting tasks while there are free transfer slots; returns the transfers to resume.
    func scheduleLocked(_ state: inout AgentState) -> [StartOrder] {
        let running = state.tasks.values.filter { if case .running = $0.lifecycle.phase { return true } else { return false } }.count
        var free = options.maximumTransfers - running
        guard free > 0 else { return [] }
        let now = Date()
        let ready = state.tasks.values
            .filter { $0.lifecycle.phase == .waiting && ($0.notBefore ?? .distantPast) <= now }
            .sorted { ($0.row.created, $0.row.key) < ($1.row.created, $1.row.key) }
            .map(\.row.key)
        var orders: [StartOrder] = []
        for key in ready where free > 0 {
            guard var entry = state.tasks[key], let generation = entry.lifecycle.start() else { continue }
            guard let transfer = makeTransfer(&state, entry) else {
                state.tasks[key] = entry
                let error = AgentErrorRecord(code: .badURL, message: "The task's request cannot be made again.", url: entry.row.request.url)
                try? completeLocked(&state, key, AgentCompletion(file: nil, error: error, response: nil, counts: entry.row.counts, body: nil))
                continue
            }
            entry.transfer = transfer
            entry.row.phase = .running
            entry.checkpointTime = now
            entry.notBefore = nil
            state.tasks[key] = entry
            state.transfers[ObjectIdentifier(transfer)] = (key, generation)
            try? state.store.setPhase(key, .running)
            orders.append(StartOrder(task: transfer))
            free -= 1
        }
        return orders
    }

    /// Resumes transfers made under the lock.
    func startTransfers(_ orders: [StartOrder]) {
        for order in orders { order.task.resume() }
    }

    private func makeTransfer(_ state: inout AgentState, _ entry: AgentTaskEntry) -> URLSessionTask? {
        let session = transferSession(&state, entry.row.key.session)
        switch entry.row.kind {
        case .download:
            if let resumeData = entry.row.resumeData {
                return session.downloadTask(withResumeData: resumeData)
            }
            guard let request = entry.row.request.urlRequest(secrets: entry.secrets) else { return nil }
            return session.downloadTask(with: request)
        case .upload:
            guard let request = entry.row.request.urlRequest(secrets: entry.secrets), let file = entry.row.uploadFile else { return nil }
            return session.uploadTask(with: request, fromFile: URL(fileURLWithPath: file))
        }
    }

    private func transferSession(_ state: inout AgentState, _ identifier: String) -> URLSession {
        if let session = state.sessions[identifier] { return session }
        let settings = (try? state.store.settings(of: identifier)) ?? AgentSessionSettings()
        let configuration = URLSessionConfiguration.default
        configuration.timeoutIntervalForRequest = settings.requestTimeout
        configuration.timeoutIntervalForResource = settings.resourceTimeout
        configuration.httpMaximumConnectionsPerHost = settings.maximumConnectionsPerHost
        configuration.waitsForConnectivity = true
        if !settings.additionalHeaders.isEmpty { configuration.httpAdditionalHeaders = settings.additionalHeaders }
        let session = URLSession(configuration: configuration, delegate: transferDelegate, delegateQueue: nil)
        state.sessions[identifier] = session
        return session
    }

    /// Cancels a suspended download's transfer, keeping its resume data for the resumption.
    func stopKeepingResumeData(_ transfer: URLSessionTask, _ key: AgentTaskKey) {
        guard let download = transfer as? URLSessionDownloadTask else {
            transfer.cancel()
            return
        }
        download.cancel { [self] data in
            state.withLock { state in
                guard let data, state.tasks[key]?.lifecycle.phase == .suspended else { return }
                state.tasks[key]?.row.resumeData = data
                if let counts = state.tasks[key]?.row.counts { try? state.store.saveCheckpoint(key, resumeData: data, counts: counts) }
            }
        }
    }

    // MARK: Reports of the transfers (on the transfer sessions' delegate queues)

    /// Bytes reached a download's file: counters, a checkpoint every 4 MiB or 2 s, and progress
    /// to a connected client.
    func transferWrote(_ transfer: URLSessionTask, written: Int64, total: Int64, expected: Int64) {
        state.withLock { state in
            guard let (key, _) = state.transfers[ObjectIdentifier(transfer)], var entry = state.tasks[key] else { return }
            entry.row.counts.received = total
            entry.row.counts.expectedToReceive = expected
            let now = Date()
            if total - entry.checkpointBytes >= options.checkpointBytes || now.timeIntervalSince(entry.checkpointTime) >= options.checkpointInterval,
               let data = (transfer as? URLSessionDownloadTask)?.checkpointResumeData() {
                entry.row.resumeData = data
                entry.checkpointBytes = total
                entry.checkpointTime = now
                try? state.store.saveCheckpoint(key, resumeData: data, counts: entry.row.counts)
            }
            state.tasks[key] = entry
            sendLocked(state, key.session, AgentEvent(sequence: 0, taskID: key.taskID,
                                                      kind: .progress(written: written, total: total, expected: expected)))
        }
    }

    /// An upload sent body bytes.
    func transferSent(_ transfer: URLSessionTask, total: Int64, expected: Int64) {
        state.withLock { state in
            guard let (key, _) = state.transfers[ObjectIdentifier(transfer)] else { return }
            state.tasks[key]?.row.counts.sent = total
            state.tasks[key]?.row.counts.expectedToSend = expected
        }
    }

    /// An upload's response body arrived (kept up to ``AgentCompletion/maximumBody``).
    func transferReceived(_ transfer: URLSessionTask, _ data: Data) {
        state.withLock { state in
            guard let (key, _) = state.transfers[ObjectIdentifier(transfer)], var entry = state.tasks[key] else { return }
            let room = AgentCompletion.maximumBody - entry.body.count
            if room > 0 { entry.body.append(data.prefix(room)) }
            entry.row.counts.received += Int64(data.count)
            state.tasks[key] = entry
        }
    }

    /// A download finished: its file is moved into `finished/` before this returns (Courier
    /// removes it afterwards).
    func transferFinished(_ transfer: URLSessionTask, at location: URL) {
        state.withLock { state in
            guard let (key, _) = state.transfers[ObjectIdentifier(transfer)] else { return }
            _ = PrivateDirectory.prepare(directories.finished, strict: true)
            let kept = directories.finished.appendingPathComponent("\(AgentFileNames.safe(key.session))-\(key.taskID).download").path
            unlink(kept)
            if rename(location.path, kept) == 0 || (try? FileManager.default.copyItem(atPath: location.path, toPath: kept)) != nil {
                state.tasks[key]?.finishedFile = kept
            }
        }
    }

    /// A transfer ended: the task completes, or waits to try again after a transient failure.
    func transferEnded(_ transfer: URLSessionTask, error: (any Error)?) {
        let orders: [StartOrder] = state.withLock { state in
            let identity = ObjectIdentifier(transfer)
            guard let (key, generation) = state.transfers.removeValue(forKey: identity), var entry = state.tasks[key] else { return [] }
            let urlError = error as? URLError
            let stale = entry.row.resumeData != nil && (urlError?.code == .cannotOpenFile || urlError?.code == .cannotDecodeRawData)
            let transient = stale || urlError.map { Self.transientErrors.contains($0.code) } ?? false
            entry.transfer = nil
            if let response = transfer.response { entry.row.response = AgentResponseRecord(response) }
            switch entry.lifecycle.transferEnded(generation: generation, transient: transient) {
            case .ignore:
                state.tasks[key] = entry
            case .retry(let delay):
                if stale {
                    entry.row.resumeData = nil
                    entry.notBefore = nil
                } else {
                    if let data = urlError?.downloadTaskResumeData { entry.row.resumeData = data }
                    entry.notBefore = Date().addingTimeInterval(delay)
                }
                entry.row.phase = .waiting
                state.tasks[key] = entry
                try? state.store.saveCheckpoint(key, resumeData: entry.row.resumeData, counts: entry.row.counts)
                try? state.store.setPhase(key, .waiting)
            case .complete:
                state.tasks[key] = entry
                let file = error == nil && entry.row.kind == .download ? entry.finishedFile : nil
                var failure = error.map { AgentErrorRecord($0, url: URL(string: entry.row.request.url)) }
                if error == nil, entry.row.kind == .download, file == nil {
                    failure = AgentErrorRecord(code: .cannotCreateFile, message: "The finished download could not be kept.",
                                               url: entry.row.request.url)
                }
                var counts = entry.row.counts
                counts.received = max(counts.received, transfer.countOfBytesReceived)
                counts.sent = max(counts.sent, transfer.countOfBytesSent)
                let completion = AgentCompletion(file: file, error: failure, response: entry.row.response, counts: counts,
                                                 body: entry.row.kind == .upload && !entry.body.isEmpty ? entry.body : nil)
                try? completeLocked(&state, key, completion)
                if entry.row.kind == .upload, let body = entry.row.uploadFile { unlink(body) }
            }
            return scheduleLocked(&state)
        }
        startTransfers(orders)
    }

    // MARK: Housekeeping

    /// Starts tasks whose time came; `true` when the agent has been idle (no client, nothing to
    /// run) for the idle timeout and should exit.
    func tick() -> Bool {
        let (orders, idle): ([StartOrder], Bool) = state.withLock { state in
            let orders = scheduleLocked(&state)
            let busy = !state.clients.isEmpty || state.tasks.values.contains {
                switch $0.lifecycle.phase {
                case .waiting, .running: return true
                case .suspended, .completed: return false
                }
            }
            if busy { state.lastBusy = Date() }
            return (orders, !busy && Date().timeIntervalSince(state.lastBusy) >= options.idleExit)
        }
        startTransfers(orders)
        return idle
    }
}

/// The delegate of the agent's transfer sessions: forwards each report to the agent.
final class AgentTransferDelegate: NSObject, URLSessionDownloadDelegate, URLSessionDataDelegate, @unchecked Sendable {
    // `@unchecked Sendable`: `agent` is set once, before any transfer starts.
    weak var agent: Agent?

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        agent?.transferFinished(downloadTask, at: location)
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
                    totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64) {
        agent?.transferWrote(downloadTask, written: bytesWritten, total: totalBytesWritten, expected: totalBytesExpectedToWrite)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
                    totalBytesExpectedToSend: Int64) {
        agent?.transferSent(task, total: totalBytesSent, expected: totalBytesExpectedToSend)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        agent?.transferReceived(dataTask, data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        agent?.transferEnded(task, error: error)
    }
}
