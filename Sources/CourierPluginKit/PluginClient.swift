import Foundation
internal import CourierPluginABI

/// What a plugin handler reports to — the host's `courier_client` in Swift, shaped like
/// `URLProtocolClient`. It may be called from any thread.
///
/// After ``didFinishLoading()``, ``didFail(_:message:)`` or ``wasRedirected(to:response:)`` the
/// host ignores further calls.
public final class PluginClient: @unchecked Sendable {
    // Immutable after init; the host's table lives for the whole process.
    private let table: UnsafePointer<courier_client>
    private let context: UnsafeMutableRawPointer?
    private let tableSize: Int

    init(table: UnsafePointer<courier_client>, context: UnsafeMutableRawPointer?) {
        self.table = table
        self.context = context
        tableSize = Int(UnsafeRawPointer(table).load(as: UInt32.self))
    }

    /// A function of the host's table, or nil when the host's table is too old to have it.
    private func function<T>(_ path: KeyPath<courier_client, T?>) -> T? {
        guard let offset = MemoryLayout<courier_client>.offset(of: path),
              offset + MemoryLayout<T?>.size <= tableSize else { return nil }
        return table.pointee[keyPath: path]
    }

    /// Reports the response; call once, before any data.
    public func didReceive(_ response: PluginResponse) {
        guard let report = function(\.received_response) else { return }
        PluginStrings.withResponse(response) { report(context, $0) }
    }

    /// Reports some of the body.
    public func didLoad(_ data: Data) {
        guard !data.isEmpty, let report = function(\.received_data) else { return }
        data.withUnsafeBytes { buffer in
            report(context, buffer.bindMemory(to: UInt8.self).baseAddress, buffer.count)
        }
    }

    /// Reports a redirect to `url`; this load ends and the host starts a new one if the delegate
    /// agrees. The host follows it only to this plugin's own schemes, `http` and `https`; any other
    /// scheme fails the task with `unsupportedURL`. `Authorization`, `Cookie` and
    /// `Proxy-Authorization` do not go with it to another origin (scheme, host, port).
    public func wasRedirected(to url: URL, response: PluginResponse? = nil) {
        guard let report = function(\.redirected) else { return }
        url.absoluteString.withCString { location in
            if let response {
                PluginStrings.withResponse(response) { report(context, location, $0) }
            } else {
                report(context, location, nil)
            }
        }
    }

    /// Reports that the load finished.
    public func didFinishLoading() {
        function(\.finished)?(context)
    }

    /// Reports that the load failed with a `URLError` code and a message for people.
    public func didFail(_ code: URLError.Code, message: String) {
        guard let report = function(\.failed) else { return }
        message.withCString { report(context, Int32(clamping: code.rawValue), $0) }
    }

    /// Reports that the load failed: a `URLError` keeps its code, other errors become `.unknown`.
    public func didFail(with error: any Error) {
        if let urlError = error as? URLError {
            didFail(urlError.code, message: urlError.localizedDescription)
        } else {
            didFail(.unknown, message: "\(error)")
        }
    }

    /// Whether the consumer wants more data now. When false, stop producing until the handler's
    /// ``PluginHandler/resumeProducing()`` is called.
    public var canAcceptMoreData: Bool {
        guard let ask = function(\.can_accept_more_data) else { return true }
        return ask(context) != 0
    }

    /// The body delivered from now on continues at `offset` of `expectedTotalBytes` (-1 unknown).
    /// Call before ``didReceive(_:)`` when honouring ``PluginRequest/resumeOffset``.
    public func didResume(atOffset offset: Int64, expectedTotalBytes: Int64) {
        function(\.resumed)?(context, offset, expectedTotalBytes)
    }

    /// A string that changes when the resource changes, kept in resume data and passed back as
    /// ``PluginRequest/resumeValidator``.
    public func setResumeValidator(_ validator: String) {
        guard let report = function(\.set_resume_validator) else { return }
        validator.withCString { report(context, $0) }
    }

    /// Upload progress.
    public func didSendBodyData(_ bytesSent: Int64, totalBytesSent: Int64, totalBytesExpectedToSend: Int64) {
        function(\.sent_body_data)?(context, bytesSent, totalBytesSent, totalBytesExpectedToSend)
    }
}
