import Courier
import Foundation
#if canImport(Glibc)
import Glibc
#endif

// The transfers: Courier's own URLSession (one per identifier, with its settings) carries each
// task out, so every scheme Courier serves works, and its resume data continues a download after
// a suspension, a transient failure or a crash of the agent. Decisions are taken under the lock
// (``AgentEffects``); Courier is called after it is released (``perform(_:)``).
extension Agent {
    /// The errors after which a transfer is tried again (from its resume data) rather than failed:
    /// the network is away or the server unreachable. Background tasks wait for it, retrying with a
    /// growing delay, until their resource timeout ends them.
    static let transientErrors: Set<URLError.Code> = [
        .networkConnectionLost, .notConnectedToInternet, .cannotConnectToHost, .timedOut, .dnsLookupFailed, .cannotFindHost,
        .internationalRoamingOff, .dataNotAllowed,
    ]

    /// Failures whose partial file is removed rather than kept for the app's resume data: the
    /// disk refused it (keeping it would keep the disk full).
    static let discardingErrors: Set<URLError.Code> = [.cannotWriteToFile, .cannotCreateFile]

    /// Starts waiting tasks while there are free transfer slots: oldest first, discretionary
    /// sessions' tasks after the others (the smaller by the app's byte-count hints first), at most
    /// `httpMaximumConnectionsPerHost` transfers per identifier and host. A download whose
    /// `countOfBytesClientExpectsToReceive` does not fit in the free space waits
    /// (``AgentDiskSpace``). The tasks become `running`; the transfers are made by ``perform(_:)``.
    func scheduleLocked(_ state: inout AgentState) -> AgentEffects {
        var effects = AgentEffects()
        let running = state.tasks.values.filter { if case .running = $0.lifecycle.phase { return true } else { return false } }
        var free = options.maximumTransfers - running.count
        guard free > 0 else { return effects }
        var perHost: [String: Int] = [:]
        for entry in running { perHost[Self.hostKey(entry.row), default: 0] += 1 }
        let now = Date()
        let ready = state.tasks.values
            .filter { $0.lifecycle.phase == .waiting && ($0.notBefore ?? .distantPast) <= now }
            .map { (discretionary: settingsLocked(&state, $0.row.key.session).isDiscretionary, row: $0.row) }
            .map { (rank: $0.discretionary ? 1 : 0, size: $0.discretionary ? Self.expectedSize($0.row) : 0, row: $0.row) }
            .sorted { ($0.rank, $0.size, $0.row.created, $0.row.key) < ($1.rank, $1.size, $1.row.created, $1.row.key) }
            .map(\.row)
        for row in ready where free > 0 {
            // The hint is a best guess: a download it says does not fit waits (checked again at
            // every tick) until space is free or its resource timeout ends it.
            if row.kind == .download, row.clientExpectsToReceive > 0,
               AgentDiskSpace.shortage(needed: row.clientExpectsToReceive - (row.resumeData == nil ? 0 : row.counts.received),
                                       in: directories.downloads, url: row.request.url) != nil {
                continue
            }
            let settings = settingsLocked(&state, row.key.session)
            let host = Self.hostKey(row)
            guard perHost[host, default: 0] < max(1, settings.maximumConnectionsPerHost),
                  var entry = state.tasks[row.key], let generation = entry.lifecycle.start() else { continue }
            entry.row.phase = .running
            entry.checkpointTime = now
            entry.notBefore = nil
            let asks = row.earliestBeginDate != nil && !entry.delayAsked
            entry.delayAsked = true
            entry.spaceChecked = false
            state.tasks[row.key] = entry
            try? state.store.setPhase(row.key, .running)
            effects.starts.append(AgentStartOrder(key: row.key, generation: generation, kind: row.kind,
                                                  request: row.request.urlRequest(secrets: entry.secrets),
                                                  resumeData: row.resumeData, uploadFile: row.uploadFile, settings: settings,
                                                  asksBeforeStart: asks))
            perHost[host, default: 0] += 1
            free -= 1
        }
        return effects
    }

    /// The bytes a task expects to move by the app's hints, for ordering; unknown sorts last.
    private static func expectedSize(_ row: AgentTaskRow) -> Int64 {
        guard row.clientExpectsToReceive >= 0 || row.clientExpectsToSend >= 0 else { return .max }
        return max(0, row.clientExpectsToReceive) + max(0, row.clientExpectsToSend)
    }

    /// The identifier and host a task's transfers count against for `httpMaximumConnectionsPerHost`.
    private static func hostKey(_ row: AgentTaskRow) -> String {
        let url = URL(string: row.request.url)
        return "\(row.key.session)\n\(url?.scheme ?? "")://\(url?.host ?? ""):\(url?.port ?? 0)"
    }

    /// The settings of `session` (its latest `hello`), cached.
    func settingsLocked(_ state: inout AgentState, _ session: String) -> AgentSessionSettings {
        if let settings = state.settings[session] { return settings }
        let settings = (try? state.store.settings(of: session)) ?? AgentSessionSettings()
        state.settings[session] = settings
        return settings
    }

    /// Carries out what was decided under the lock, with the lock released.
    func perform(_ effects: AgentEffects) {
        for (reply, answer) in effects.answers { reply.deliver(answer) }
        for task in effects.cancels { task.cancel() }
        for (task, key) in effects.suspends { stopKeepingResumeData(task, key) }
        for (task, key, error) in effects.endings {
            task.cancel { [self] data in perform(endedKeepingResumeData(key, error, resumeData: data)) }
        }
        for path in effects.removals { unlink(path) }
        var follow = AgentEffects()
        for order in effects.starts { follow.merge(start(order)) }
        if !follow.isEmpty { perform(follow) }
    }

    /// Makes and resumes one transfer, unless its task was stopped meanwhile. A delayed task's
    /// first transfer waits for the connected app's `willBeginDelayedRequest` (``askBeforeStart(_:_:)``).
    func start(_ order: AgentStartOrder) -> AgentEffects {
        let session = transferSession(order.key.session, order.settings)
        let transfer: URLSessionTask?
        switch order.kind {
        case .download:
            if let resumeData = order.resumeData {
                transfer = session.downloadTask(withResumeData: resumeData)
            } else {
                transfer = order.request.map { session.downloadTask(with: $0) }
            }
        case .upload:
            transfer = order.request.flatMap { request in
                order.uploadFile.map { session.uploadTask(with: request, fromFile: URL(fileURLWithPath: $0)) }
            }
        }
        let (current, effects): (Bool, AgentEffects) = state.withLock { state in
            guard var entry = state.tasks[order.key], entry.lifecycle.phase == .running(generation: order.generation) else {
                return (false, AgentEffects())
            }
            guard let transfer else {
                _ = entry.lifecycle.transferEnded(generation: order.generation, transient: false)
                state.tasks[order.key] = entry
                let error = AgentErrorRecord(code: .badURL, message: "The task's request cannot be made again.", url: entry.row.request.url)
                try? completeLocked(&state, order.key, AgentCompletion(file: nil, error: error, response: nil, counts: entry.row.counts, body: nil))
                return (false, scheduleLocked(&state))
            }
            entry.transfer = transfer
            state.tasks[order.key] = entry
            state.transfers[ObjectIdentifier(transfer)] = (order.key, order.generation)
            return (true, AgentEffects())
        }
        if current {
            if let transfer, order.asksBeforeStart, askBeforeStart(transfer, order) { return effects }
            transfer?.resume()
        } else {
            transfer?.cancel()
        }
        return effects
    }

    /// The transfer session of `identifier` for `settings`: made the first time, and again when
    /// the app came back with other settings (the old one finishes its transfers).
    private func transferSession(_ identifier: String, _ settings: AgentSessionSettings) -> URLSession {
        if let cached = transferSessions.withLock({ $0[identifier] }), cached.settings == settings { return cached.session }
        let configuration = URLSessionConfiguration.default
        configuration.timeoutIntervalForRequest = settings.requestTimeout
        // The agent counts the resource timeout from the task's creation (Agent+Housekeeping):
        // an attempt's own limit is later, so it never ends a task first.
        configuration.timeoutIntervalForResource = settings.resourceTimeout + 60
        configuration.httpMaximumConnectionsPerHost = settings.maximumConnectionsPerHost
        configuration.waitsForConnectivity = true
        if !settings.additionalHeaders.isEmpty { configuration.httpAdditionalHeaders = settings.additionalHeaders }
        let made = URLSession(configuration: configuration, delegate: transferDelegate, delegateQueue: nil)
        let (session, extra): (URLSession, URLSession?) = transferSessions.withLock { sessions in
            if let existing = sessions[identifier] {
                if existing.settings == settings { return (existing.session, made) }
                sessions[identifier] = (made, settings)
                return (made, existing.session)
            }
            sessions[identifier] = (made, settings)
            return (made, nil)
        }
        extra?.finishTasksAndInvalidate()
        return session
    }

    /// Cancels a suspended download's transfer, keeping its resume data for the resumption.
    private func stopKeepingResumeData(_ transfer: URLSessionTask, _ key: AgentTaskKey) {
        guard let download = transfer as? URLSessionDownloadTask else {
            transfer.cancel()
            return
        }
        download.cancel { [self] data in
            let orphan: String? = state.withLock { state in
                guard let data else { return nil }
                guard state.tasks[key]?.lifecycle.phase == .suspended else {
                    // Cancelled (or ended) meanwhile: nothing will resume from this file.
                    return URLSessionDownloadTask.partialFilePath(ofResumeData: data)
                }
                state.tasks[key]?.row.resumeData = data
                if let counts = state.tasks[key]?.row.counts { try? state.store.saveCheckpoint(key, resumeData: data, counts: counts) }
                return nil
            }
            if let orphan { unlink(orphan) }
        }
    }

    // MARK: Reports of the transfers (on the transfer sessions' delegate queues)

    /// Bytes reached a download's file: counters, a checkpoint every 4 MiB or 2 s, and progress
    /// to a connected client. The checkpoint's resume data is taken with the lock released. At the
    /// first report the response's length is checked against the free space: a download that
    /// cannot fit ends at once (``AgentDiskSpace``).
    func transferWrote(_ transfer: URLSessionTask, written: Int64, total: Int64, expected: Int64) {
        let (due, effects): (AgentTaskKey?, AgentEffects) = state.withLock { state in
            guard let (key, _) = state.transfers[ObjectIdentifier(transfer)], var entry = state.tasks[key] else { return (nil, AgentEffects()) }
            if !entry.spaceChecked {
                entry.spaceChecked = true
                state.tasks[key] = entry
                if expected > 0, let shortage = AgentDiskSpace.shortage(needed: expected - total, in: directories.downloads,
                                                                         url: entry.row.request.url) {
                    var effects = (try? endLocked(&state, key, shortage)) ?? AgentEffects()
                    effects.merge(scheduleLocked(&state))
                    return (nil, effects)
                }
            }
            entry.row.counts.received = total
            entry.row.counts.expectedToReceive = expected
            let now = Date()
            let due = total - entry.checkpointBytes >= options.checkpointBytes
                || now.timeIntervalSince(entry.checkpointTime) >= options.checkpointInterval
            if due {
                entry.checkpointBytes = total
                entry.checkpointTime = now
            }
            state.tasks[key] = entry
            sendLocked(state, key.session, AgentEvent(sequence: 0, taskID: key.taskID,
                                                      kind: .progress(written: written, total: total, expected: expected)))
            return (due ? key : nil, AgentEffects())
        }
        if !effects.isEmpty { perform(effects) }
        guard let key = due, let data = (transfer as? URLSessionDownloadTask)?.checkpointResumeData() else { return }
        state.withLock { state in
            guard state.transfers[ObjectIdentifier(transfer)]?.key == key, var entry = state.tasks[key] else { return }
            entry.row.resumeData = data
            state.tasks[key] = entry
            try? state.store.saveCheckpoint(key, resumeData: data, counts: entry.row.counts)
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
        // Read from Courier's task before the lock is taken.
        let response = transfer.response.map(AgentResponseRecord.init)
        let received = transfer.countOfBytesReceived
        let sent = transfer.countOfBytesSent
        let effects: AgentEffects = state.withLock { state in
            guard let (key, generation) = state.transfers.removeValue(forKey: ObjectIdentifier(transfer)),
                  var entry = state.tasks[key] else { return AgentEffects() }
            var effects = AgentEffects()
            let urlError = error as? URLError
            let stale = entry.row.resumeData != nil && (urlError?.code == .cannotOpenFile || urlError?.code == .cannotDecodeRawData)
            let transient = stale || urlError.map { Self.transientErrors.contains($0.code) } ?? false
            entry.transfer = nil
            if let response { entry.row.response = response }
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
                counts.received = max(counts.received, received)
                counts.sent = max(counts.sent, sent)
                let resumeData = entry.row.kind == .download ? keepOrDiscardPartial(&state, urlError, &effects) : nil
                let completion = AgentCompletion(file: file, error: failure, response: entry.row.response, counts: counts,
                                                 body: entry.row.kind == .upload && !entry.body.isEmpty ? entry.body : nil,
                                                 resumeData: resumeData)
                try? completeLocked(&state, key, completion)
                if entry.row.kind == .upload, let body = entry.row.uploadFile { effects.removals.append(body) }
            }
            effects.merge(scheduleLocked(&state))
            return effects
        }
        perform(effects)
    }

    /// A running download stopped at its resource timeout or by `cancel(byProducingResumeData:)`:
    /// it completes with `error` and the resume data of what it had (its partial file is kept, as
    /// for any failed download).
    private func endedKeepingResumeData(_ key: AgentTaskKey, _ error: AgentErrorRecord, resumeData: Data?) -> AgentEffects {
        state.withLock { state in
            guard let entry = state.tasks[key], entry.row.phase != .completed else { return AgentEffects() }
            var kept: Data?
            if let resumeData, let partial = URLSessionDownloadTask.partialFilePath(ofResumeData: resumeData) {
                if (try? state.store.keepPartial(AgentPartialFiles.name(of: partial),
                                                 until: Date().addingTimeInterval(options.partialRetention))) != nil {
                    kept = resumeData
                } else {
                    unlink(partial)
                }
            }
            try? completeLocked(&state, key, AgentCompletion(file: nil, error: error, response: entry.row.response,
                                                             counts: entry.row.counts, body: nil, resumeData: kept))
            return scheduleLocked(&state)
        }
    }

    /// A failed download's partial file: kept for the app's resume data (returned) for
    /// ``AgentOptions/partialRetention``, or removed when the disk refused it (at once, before the
    /// completion reaches the app).
    private func keepOrDiscardPartial(_ state: inout AgentState, _ failure: URLError?, _ effects: inout AgentEffects) -> Data? {
        guard let failure, let data = failure.downloadTaskResumeData,
              let partial = URLSessionDownloadTask.partialFilePath(ofResumeData: data) else { return nil }
        if Self.discardingErrors.contains(failure.code) {
            unlink(partial)
            return nil
        }
        do {
            try state.store.keepPartial(AgentPartialFiles.name(of: partial), until: Date().addingTimeInterval(options.partialRetention))
            return data
        } catch {
            effects.removals.append(partial)
            return nil
        }
    }
}
