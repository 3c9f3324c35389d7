import Foundation
internal import CourierPluginABI

/// One plugin handler's link to its task: it receives the plugin's client calls, checks them and
/// passes them on to the ``URLProtocolClient``.
///
/// It enforces the contract the plugin may break: nothing after the end (finished, failed,
/// redirected, or stopped by the host), a response at most once and before any data, valid
/// pointers, known error codes and status codes. A broken call before the end fails the load with
/// `URLError.badServerResponse`; after the end it is ignored.
final class PluginConnection: @unchecked Sendable {
    private let lock = Lock()
    private weak var owner: URLProtocol?
    private let client: (any URLProtocolClient)?
    /// The request's URL: the failing URL of errors, and the URL of responses without one.
    let url: URL
    let pluginName: String
    let capabilities: PluginCapabilities
    /// Where the plugin's redirects may lead.
    let redirectConfinement: RedirectConfinement
    private var responded = false
    private var ended = false

    init(owner: URLProtocol, client: (any URLProtocolClient)?, url: URL, pluginName: String,
         capabilities: PluginCapabilities, redirectConfinement: RedirectConfinement) {
        self.owner = owner
        self.client = client
        self.url = url
        self.pluginName = pluginName
        self.capabilities = capabilities
        self.redirectConfinement = redirectConfinement
    }

    /// The host stopped the load: ignore the plugin from now on.
    func end() {
        lock.withLock { ended = true }
    }

    /// Whether the load has ended.
    var hasEnded: Bool { lock.withLock { ended } }

    /// The protocol instance and client to report to, or nil once the load has ended; `ending`
    /// ends it.
    private func target(ending: Bool = false) -> (URLProtocol, any URLProtocolClient)? {
        lock.withLock {
            guard !ended, let owner, let client else { return nil }
            if ending { ended = true }
            return (owner, client)
        }
    }

    /// Reports a default response first when the plugin sends data or finishes without one.
    /// Returns false when the load has ended.
    private func ensureResponse() -> Bool {
        let (needed, target): (Bool, (URLProtocol, any URLProtocolClient)?) = lock.withLock {
            guard !ended, let owner, let client else { return (false, nil) }
            defer { responded = true }
            return (!responded, (owner, client))
        }
        guard let (owner, client) = target else { return false }
        if needed {
            let response = URLResponse(url: url, mimeType: nil, expectedContentLength: -1, textEncodingName: nil)
            client.urlProtocol(owner, didReceive: response, cacheStoragePolicy: .notAllowed)
        }
        return true
    }

    /// Ends the load with a failure caused by the plugin breaking the contract.
    private func violation(_ what: String) {
        fail(URLError(.badServerResponse, url: url, description: "The plugin \(pluginName) \(what)."))
    }

    private func fail(_ error: URLError) {
        guard let (owner, client) = target(ending: true) else { return }
        client.urlProtocol(owner, didFailWithError: error)
    }

    // MARK: The client functions

    func receivedResponse(_ pointer: UnsafePointer<courier_response>?) {
        guard let pointer else { return violation("reported a NULL response") }
        let alreadyResponded: Bool? = lock.withLock { ended ? nil : responded }
        guard let alreadyResponded else { return }
        guard !alreadyResponded else { return violation("reported a second response") }
        switch PluginResponseDecoding.response(pointer, requestURL: url) {
        case .failure(let problem):
            violation(problem.message)
        case .success(let response):
            let target: (URLProtocol, any URLProtocolClient)? = lock.withLock {
                guard !ended, !responded, let owner, let client else { return nil }
                responded = true
                return (owner, client)
            }
            guard let (owner, client) = target else { return }
            client.urlProtocol(owner, didReceive: response, cacheStoragePolicy: .notAllowed)
        }
    }

    func receivedData(_ bytes: UnsafePointer<UInt8>?, length: Int) {
        guard length > 0 else { return }
        guard let bytes else { return violation("reported data at a NULL pointer") }
        guard ensureResponse() else { return }
        let data = Data(bytes: bytes, count: length)
        guard let (owner, client) = target() else { return }
        client.urlProtocol(owner, didLoad: data)
    }

    func redirected(to location: UnsafePointer<CChar>?, response: UnsafePointer<courier_response>?) {
        guard !hasEnded else { return }
        guard let text = PluginABI.string(location), let next = URL(string: text), next.scheme != nil else {
            return fail(URLError(.redirectToNonExistentLocation, url: url,
                                 description: "The plugin \(pluginName) redirected to an invalid URL."))
        }
        var redirectResponse = URLResponse(url: url, mimeType: nil, expectedContentLength: -1, textEncodingName: nil)
        if let response {
            switch PluginResponseDecoding.response(response, requestURL: url) {
            case .success(let decoded): redirectResponse = decoded
            case .failure(let problem): return violation(problem.message)
            }
        }
        // Only to the plugin's own schemes and http(s); refused before anything is loaded.
        if let refusal = redirectConfinement.refusal(of: next) { return fail(refusal) }
        guard let (owner, client) = target(ending: true) else { return }
        client.urlProtocol(owner, wasRedirectedTo: URLOrigin.redirecting(owner.request, to: next),
                           redirectResponse: redirectResponse)
    }

    func finished() {
        guard ensureResponse(), let (owner, client) = target(ending: true) else { return }
        client.urlProtocolDidFinishLoading(owner)
    }

    func failed(code raw: Int32, message: UnsafePointer<CChar>?) {
        let (code, known) = PluginErrorCodes.code(raw)
        var text = PluginABI.string(message).flatMap { $0.isEmpty ? nil : $0 } ?? URLError.defaultDescription(for: code)
        if !known { text += " (the plugin \(pluginName) reported the unknown error code \(raw))" }
        fail(URLError(code, url: url, description: text))
    }

    func canAcceptMoreData() -> Bool {
        guard let (_, client) = target() else { return false }
        return (client as? BuiltInHandlerClient)?.canAcceptMoreData ?? true
    }

    func resumed(atOffset offset: Int64, expectedTotal: Int64) {
        guard capabilities.contains(.resume), offset >= 0, expectedTotal >= -1,
              let (_, client) = target() else { return }
        (client as? BuiltInHandlerClient)?.didResume(atOffset: offset, expectedTotalBytes: expectedTotal)
    }

    func setResumeValidator(_ validator: UnsafePointer<CChar>?) {
        guard capabilities.contains(.resume), let text = PluginABI.string(validator), !text.isEmpty,
              let (_, client) = target() else { return }
        (client as? BuiltInHandlerClient)?.setResumeValidator(text)
    }

    func sentBodyData(_ sent: Int64, total: Int64, expected: Int64) {
        guard sent >= 0, total >= sent, expected >= -1, let (_, client) = target() else { return }
        (client as? BuiltInHandlerClient)?.didSendBodyData(sent, totalBytesSent: total, totalBytesExpectedToSend: expected)
    }
}
