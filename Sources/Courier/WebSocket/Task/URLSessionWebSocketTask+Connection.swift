import Foundation

// The task's side of the connection: the handler hands it over, the transport reports bytes and
// its end, and the actions of ``WebSocketTaskState`` are carried out here, with no lock held.
extension URLSessionWebSocketTask: WebSocketTransportOwner, WebSocketTransportDelegate {
    func webSocketHandler(_ handler: URLProtocol, didOpen transport: WebSocketTransport,
                          selectedProtocol: String?, initialBytes: Data) {
        let current: Bool = lock.withLock {
            guard core.machine.currentLoad?.instance === handler else { return false }
            // An open connection may be silent for as long as both sides like: no idle timeout.
            core.requestTimeout = 0
            return true
        }
        guard current, let opener = handler as? WebSocketURLProtocol else {
            transport.abort()
            return
        }
        link.withLock {
            $0.transport = transport
            $0.handler = opener
        }
        transport.setDelegate(self)
        perform(webSocket.withLock { $0.opened(selectedProtocol: selectedProtocol, initialBytes: initialBytes) })
    }

    func transport(_ transport: WebSocketTransport, didReceive bytes: UnsafeRawBufferPointer) {
        perform(webSocket.withLock { $0.receivedBytes(bytes) })
    }

    func transport(_ transport: WebSocketTransport, didCloseWith error: URLError?) {
        perform(webSocket.withLock { $0.transportClosed() })
    }

    /// Carries `actions` out in order. Call with no lock held.
    func perform(_ actions: [WebSocketTaskState.Action]) {
        guard !actions.isEmpty else { return }
        let transport = link.withLock { $0.transport }
        for action in actions {
            switch action {
            case .write(let bytes, let written):
                guard let transport else {
                    if let written { run(written, URLError(.networkConnectionLost, url: originalRequest?.url)) }
                    continue
                }
                var reported: (@Sendable (URLError?) -> Void)?
                if let written {
                    let callbacks = self.callbacks
                    if written.direct {
                        reported = { @Sendable error in written.body(error) }
                    } else {
                        reported = { @Sendable error in callbacks.post { written.body(error) } }
                    }
                }
                transport.write(bytes, written: reported)
            case .receive(let handler, let result):
                run(handler, result)
            case .complete(let handler, let error):
                run(handler, error)
            case .setReading(let enabled, let order):
                transport?.setReading(enabled, order: order)
            case .closeTransport:
                transport?.close()
            case .armCloseTimer:
                DispatchQueue.global().asyncAfter(deadline: .now() + Self.closeHandshakeTimeout) { [weak self] in
                    guard let self else { return }
                    perform(webSocket.withLock { $0.closeTimedOut() })
                }
            case .opened(let selected):
                reportOpened(selectedProtocol: selected)
            case .finished(let end):
                finish(end)
            }
        }
    }

    /// Runs a completion handler where it belongs (``WebSocketCallback``).
    private func run<Value>(_ callback: WebSocketCallback<Value>, _ value: Value) {
        if callback.direct {
            callback.body(value)
        } else {
            callbacks.post { callback.body(value) }
        }
    }

    private func reportOpened(selectedProtocol: String?) {
        guard let session else { return }
        enqueue { [self] in
            sendToDelegate(.webSocketOpened, as: (any URLSessionWebSocketDelegate).self) {
                $0.urlSession(session, webSocketTask: self, didOpenWithProtocol: selectedProtocol)
            }
        }
    }

    /// The connection ended: `didCloseWith` for a close handshake, then the task completes through
    /// the handler that opened it (as the end of its load).
    private func finish(_ end: WebSocketConnectionEnd) {
        let handler = link.withLock { $0.handler }
        switch end {
        case .closed:
            if let session {
                let code = end.closeCode
                let reason = end.closeReason
                enqueue { [self] in
                    sendToDelegate(.webSocketClosed, as: (any URLSessionWebSocketDelegate).self) {
                        $0.urlSession(session, webSocketTask: self, didCloseWith: code, reason: reason)
                    }
                }
            }
            handler?.connectionEnded(error: nil)
        case .failed(let failure):
            handler?.connectionEnded(error: failure.urlError(url: currentRequest?.url ?? originalRequest?.url))
        }
    }
}
