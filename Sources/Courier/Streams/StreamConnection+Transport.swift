import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// The transport of a stream task: resolving, connecting, TLS, moving bytes, closing. All of it runs
// in `serviceSocket`, on the thread driving the session's curl loop with its drive lock held, so
// the socket and the TLS session are touched by one thread at a time and never block.
extension StreamConnection {
    /// What one non-blocking read or write did, over TCP or TLS.
    private enum Transfer {
        case bytes(Int)
        case wait
        case endOfStream
        case failed(URLError)
    }

    /// The most bytes one service reads before it lets the loop serve other sockets.
    private static let readChunk = 64 << 10
    private static let roundsPerService = 16

    func serviceSocket(on loop: CurlMultiLoop, readable: Bool, writable: Bool) {
        guard !transportClosed else { return }
        let (work, resolved): ([StreamTransportWork], Result<[StreamSocket.Address], URLError>?) = state.withLock { state in
            defer { state.resolved = nil }
            return (state.machine.takeTransportWork(), state.resolved)
        }
        for item in work {
            switch item {
            case .connect: beginResolving()
            case .shutdownRead: socket?.shutdown(Int32(SHUT_RD))
            case .shutdownWrite:
                tls?.shutdown()
                socket?.shutdown(Int32(SHUT_WR))
            case .beginTLS: beginTLS()
            case .capture(let buffered):
                capture(buffered: buffered, loop: loop)
                return
            case .close:
                closeTransport(loop: loop)
                return
            }
        }
        switch resolved {
        case .failure(let error)?:
            handle { $0.failed(error) }
        case .success(let found)?:
            addresses = found
            nextAddress = 0
            connectNext(loop: loop)
        case nil:
            break
        }
        if connecting, readable || writable { finishConnecting(loop: loop) }
        if handshaking { stepHandshake() }
        pump()
        updateInterest(loop: loop)
    }

    func loopDidStop() {
        handle { $0.failed(URLError(.networkConnectionLost, url: self.url, description: "The session was invalidated.")) }
        if closeOnce.claim() { socket?.close() }
    }

    // MARK: - Connecting

    /// Resolves the host off the loop (getaddrinfo blocks) and bounds the connect by the session's
    /// `timeoutIntervalForRequest`.
    private func beginResolving() {
        let (host, port, url) = (self.host, self.port, self.url)
        DispatchQueue.global().async { [weak self] in
            let result = StreamSocket.resolve(host: host, port: port, url: url)
            guard let self else { return }
            let loop = state.withLock { state in
                state.resolved = result
                return state.loop
            }
            loop?.service(self)
        }
        let timeout = requestTimeout
        guard timeout > 0, timeout.isFinite else { return }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [weak self] in
            self?.handle { $0.connectTimedOut() }
        }
    }

    /// Tries the next address; with none left, the stream fails with the last error.
    private func connectNext(loop: CurlMultiLoop) {
        while nextAddress < addresses.count {
            let address = addresses[nextAddress]
            nextAddress += 1
            switch StreamSocket.connect(to: address) {
            case .opened(let opened, let connected):
                socket = opened
                if connected {
                    handle { $0.connected() }
                } else {
                    connecting = true
                }
                return
            case .failed(let code):
                lastConnectFailure = code
            }
        }
        handle { $0.failed(StreamSocket.error(for: lastConnectFailure, connecting: true, url: self.url)) }
    }

    /// The socket became ready while connecting: connected, or on to the next address.
    private func finishConnecting(loop: CurlMultiLoop) {
        guard let socket else { return }
        let result = socket.connectResult()
        if result == 0 {
            connecting = false
            handle { $0.connected() }
            return
        }
        guard result != EINPROGRESS, result != EALREADY else { return }
        lastConnectFailure = result
        watching = nil
        loop.unwatch(socket.descriptor) { socket.close() }
        self.socket = nil
        connecting = false
        connectNext(loop: loop)
    }

    // MARK: - TLS

    private func beginTLS() {
        guard let socket else { return }
        do {
            tls = try StreamTLS(descriptor: socket.descriptor, host: host, versions: environment.tlsVersions,
                                anchors: environment.tlsTrustAnchors)
            handshaking = true
        } catch {
            handle { $0.failed(URLError(error.code, url: self.url, description: error.localizedDescription)) }
        }
    }

    private func stepHandshake() {
        guard let tls else { return }
        switch tls.handshake() {
        case .bytes:
            handshaking = false
            handshakeWants = (false, false)
            decideTrust(tls)
        case .wantRead:
            handshakeWants = (true, false)
        case .wantWrite:
            handshakeWants = (false, true)
        case .endOfStream:
            handshaking = false
            handle { $0.failed(URLError(.secureConnectionFailed, url: self.url,
                                        description: "The server closed the connection during the TLS handshake.")) }
        case .failed(let reason):
            handshaking = false
            handle { $0.failed(URLError(.secureConnectionFailed, url: self.url, description: "The TLS handshake failed: \(reason).")) }
        }
    }

    /// After the handshake: a trusted server (or one the session accepted before) goes on at
    /// once; another raises a server-trust challenge, and no byte moves until it is answered.
    private func decideTrust(_ tls: StreamTLS) {
        guard let reason = tls.verification() else {
            handle { $0.tlsEstablished() }
            return
        }
        let chain = tls.peerChain()
        let leafKey = chain.first.flatMap { DERSubjectPublicKeyInfo.extract(fromCertificate: $0) }
        if let leafKey, let url, TLSAcceptedServers.shared(in: environment)?.server(for: url)?.publicKey == leafKey {
            handle { $0.tlsEstablished() }
            return
        }
        let error = URLError(TLSServerTrust.errorCode(forVerificationFailure: reason), url: url,
                             description: "The certificate of “\(host)” is not trusted: \(reason).")
        StreamTrustChallenge.present(for: self, chain: chain, leafKey: leafKey, reason: reason, error: error)
    }

    // MARK: - Moving bytes

    /// Writes what the machine has to write and reads while it wants bytes, each until the socket
    /// would block (or for a bounded number of rounds).
    private func pump() {
        guard let socket, !connecting, !handshaking else { return }
        for _ in 0..<Self.roundsPerService {
            guard let outbound = state.withLock({ $0.machine.outbound }), !outbound.isEmpty else { break }
            let result: Transfer = outbound.withUnsafeBytes { bytes in
                if let tls { return transfer(tls.write(bytes)) }
                return transfer(socket.write(bytes), reading: false)
            }
            guard case .bytes(let count) = result else {
                if case .failed(let error) = result { handle { $0.failed(error) } }
                break
            }
            handle { $0.wrote(count) }
        }
        var buffer = [UInt8](repeating: 0, count: Self.readChunk)
        for _ in 0..<Self.roundsPerService {
            guard state.withLock({ $0.machine.wantsToRead }) else { break }
            let result: Transfer = buffer.withUnsafeMutableBytes { raw in
                guard let base = raw.baseAddress else { return .wait }
                if let tls { return transfer(tls.read(into: base, count: raw.count)) }
                return transfer(socket.read(into: base, count: raw.count), reading: true)
            }
            switch result {
            case .bytes(let count):
                let data = Data(buffer[0..<count])
                handle { $0.received(data) }
            case .wait:
                return
            case .endOfStream:
                handle { $0.receivedEOF() }
                return
            case .failed(let error):
                handle { $0.failed(error) }
                return
            }
        }
    }

    private func transfer(_ outcome: StreamSocket.Outcome, reading: Bool) -> Transfer {
        switch outcome {
        case .bytes(let count): .bytes(count)
        case .wouldBlock: .wait
        case .endOfStream: .endOfStream
        case .failed(let code): .failed(StreamSocket.error(for: code, connecting: false, url: url))
        }
    }

    private func transfer(_ outcome: StreamTLS.Outcome) -> Transfer {
        switch outcome {
        case .bytes(let count): .bytes(count)
        case .wantRead, .wantWrite: .wait
        case .endOfStream: .endOfStream
        case .failed(let reason):
            .failed(URLError(.secureConnectionFailed, url: url, description: "The TLS connection failed: \(reason)."))
        }
    }

    // MARK: - Readiness and the end

    /// Watches the socket for what the connection waits for (nothing: it stays this connection's
    /// but leaves the epoll set, so a hung-up socket nobody reads does not wake the loop again and
    /// again). `watching` is what was last asked, so an unchanged interest costs no command.
    private func updateInterest(loop: CurlMultiLoop) {
        guard let socket, !transportClosed else { return }
        let wanted: (read: Bool, write: Bool)
        if connecting {
            wanted = (false, true)
        } else if handshaking {
            wanted = handshakeWants
        } else {
            wanted = state.withLock { ($0.machine.wantsToRead, $0.machine.outbound != nil) }
        }
        guard watching.map({ $0 != wanted }) ?? true else { return }
        loop.watch(socket.descriptor, for: self, readable: wanted.read, writable: wanted.write)
        watching = wanted
    }

    private func closeTransport(loop: CurlMultiLoop) {
        transportClosed = true
        guard let socket else { return }
        tls = nil
        self.socket = nil
        watching = nil
        // Closed once the loop has forgotten the descriptor (unless `loopDidStop` closed it).
        guard closeOnce.claim() else { return }
        loop.unwatch(socket.descriptor) { socket.close() }
    }

    /// `captureStreams()`: the socket, its TLS session and the bytes read ahead go to a pair of
    /// streams; once the loop has forgotten the socket the delegate gets them, and the task ends.
    private func capture(buffered: Data, loop: CurlMultiLoop) {
        transportClosed = true
        guard let socket, closeOnce.claim() else { return }
        let channel = StreamCapturedChannel(socket: socket, tls: tls, buffered: buffered)
        self.socket = nil
        tls = nil
        watching = nil
        loop.unwatch(socket.descriptor) { [weak self] in self?.deliverCaptured(channel) }
    }

    /// Hands the captured `channel` to the delegate as a pair of streams, and ends the task.
    private func deliverCaptured(_ channel: StreamCapturedChannel) {
        let streams = UncheckedSendable((StreamCapturedInputStream(channel: channel), StreamCapturedOutputStream(channel: channel)))
        let deliver: Bool = state.withLock { state in
            let wasEmpty = state.outbox.isEmpty
            state.captured = true
            state.outbox.append { [weak self] in self?.task?.tellBecameStreams(input: streams.value.0, output: streams.value.1) }
            return wasEmpty
        }
        if deliver { scheduleDelivery() }
        task?.complete(error: nil, generation: nil)
    }
}
