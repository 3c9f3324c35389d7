import Foundation
internal import CourierPluginABI

/// The `URLProtocol` that serves every plugin scheme: it opens the plugin's library on first use,
/// creates a plugin handler through the C ABI and relays its reports (checked by a
/// ``PluginConnection``) to the task, so plugin schemes share the one task and delegate model.
///
/// Courier calls `startLoading`, `stopLoading` and `resumeProducing` on the instance's serial
/// handler queue, so the plugin's start, stop and resume_producing never overlap; destroy is
/// called once, from a global queue, when the instance is released.
///
/// A plugin's redirects are confined to its own schemes and http(s)
/// (``PluginLibrary/redirectConfinement``): the connection refuses other proposals, and the task
/// checks proposals and the delegate's answers with the confinement its ``ResolvedHandler`` carries.
final class PluginURLProtocol: BuiltInURLProtocol, @unchecked Sendable {
    /// What the bridge adds to every plugin scheme's declared capabilities: it pauses when the task
    /// cannot take more data and passes the wake-up on to the plugin (`resume_producing`).
    static let bridgeCapabilities: HandlerCapabilities = [.flowControl]

    /// A created plugin handler.
    private struct Handle: @unchecked Sendable {
        let functions: PluginHandlerFunctions
        let pointer: UnsafeMutableRawPointer
        let token: UInt
    }

    private let lock = Lock()
    private var handle: Handle?
    private var connection: PluginConnection?
    private var stopped = false

    override class func canInit(with request: URLRequest) -> Bool {
        guard let scheme = request.url?.scheme else { return false }
        return PluginLoader.shared.serves(scheme: scheme)
    }

    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    override func startLoading() {
        guard let url = request.url, let scheme = url.scheme?.lowercased() else {
            return fail(URLError(.badURL, url: request.url, description: "The request has no URL scheme."))
        }
        let opened: (PluginLibrary, PluginHandlerFunctions)
        switch PluginLoader.shared.open(scheme: scheme) {
        case nil:
            return fail(URLError(.unsupportedURL, url: url, description: "No plugin serves the URL scheme “\(scheme)”."))
        case .failure(let error)?:
            return fail(URLError(.unsupportedURL, url: url,
                                 description: "The plugin for the URL scheme “\(scheme)” could not be loaded: \(error.message).",
                                 underlying: error))
        case .success(let pair)?:
            opened = pair
        }
        let (library, functions) = opened
        let name = library.manifest.name
        let capabilities = library.capabilities(forScheme: scheme)
        let method = (request.httpMethod ?? "GET").uppercased()
        let needed: PluginCapabilities = method == "GET" || method == "HEAD" ? .read : .write
        guard capabilities.contains(needed) else {
            return fail(URLError(.unsupportedURL, url: url,
                                 description: "The plugin \(name) cannot \(needed == .read ? "read" : "write") “\(scheme)” URLs (\(method))."))
        }
        let connection = PluginConnection(owner: self, client: client, url: url, pluginName: name,
                                          capabilities: capabilities, redirectConfinement: library.redirectConfinement)
        let token = PluginClientTable.shared.register(connection)
        let resume = capabilities.contains(.resume) ? ResumeRequest.parameters(of: request) : nil
        let body = needed == .write ? PluginRequestBuffer.body(of: request) : nil
        guard let buffer = PluginRequestBuffer(request: request, url: url, body: body, resume: resume) else {
            PluginClientTable.shared.unregister(token)
            return fail(URLError(.cannotLoadFromNetwork, url: url, description: "Out of memory preparing the request."))
        }
        let context = UnsafeMutableRawPointer(bitPattern: token)
        let created = buffer.withRequest { functions.create($0, PluginClientTable.shared.pointer, context) }
        guard let created else {
            PluginClientTable.shared.unregister(token)
            return fail(URLError(.resourceUnavailable, url: url,
                                 description: "The plugin \(name) could not create a handler for the request."))
        }
        let started: Bool = lock.withLock {
            handle = Handle(functions: functions, pointer: created, token: token)
            self.connection = connection
            return !stopped
        }
        if started { functions.start(created) }
    }

    override func stopLoading() {
        let current: Handle? = lock.withLock {
            stopped = true
            connection?.end()
            return handle
        }
        if let current { current.functions.stop(current.pointer) }
    }

    override func resumeProducing() {
        let current: Handle? = lock.withLock { stopped ? nil : handle }
        if let current, let resume = current.functions.resumeProducing { resume(current.pointer) }
    }

    deinit {
        guard let current = handle else { return }
        // A load released without being stopped or ending (its task went away) is stopped first.
        let needsStop = !stopped && connection?.hasEnded == false
        connection?.end()
        PluginClientTable.shared.unregister(current.token)
        // Never from inside a client call (the last reference may be dropped in one): from a queue.
        DispatchQueue.global().async {
            if needsStop { current.functions.stop(current.pointer) }
            current.functions.destroy(current.pointer)
        }
    }

    private func fail(_ error: URLError) {
        client?.urlProtocol(self, didFailWithError: error)
    }
}
