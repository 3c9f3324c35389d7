import Foundation

/// What a handler can do, and what the task layer may therefore ask of it: one row of the scheme
/// table (``SchemeRow``) declares them for a built-in scheme, a plugin's manifest for a plugin scheme,
/// and a `URLProtocol` subclass an app registers has none.
///
/// The first four are what a scheme offers (the same four a plugin manifest names,
/// ``PluginCapabilities``); the others are how Courier drives a handler of its own
/// (``BuiltInURLProtocol``). The task never finds a capability by looking at the handler's class: it
/// reads this set from the ``ResolvedHandler`` the loader gave it.
struct HandlerCapabilities: OptionSet, Sendable, Hashable {
    let rawValue: UInt32

    /// Fetching a resource (`GET`, `HEAD`).
    static let read = HandlerCapabilities(rawValue: 1 << 0)
    /// Storing a request body: uploads, methods other than `GET` and `HEAD`.
    static let write = HandlerCapabilities(rawValue: 1 << 1)
    /// Answering a directory-like URL with a listing (``URLDirectoryListing``).
    static let list = HandlerCapabilities(rawValue: 1 << 2)
    /// Continuing a download at the offset and validator of resume data (``ResumeRequest``).
    /// Resume data whose URL no such handler serves is refused.
    static let resume = HandlerCapabilities(rawValue: 1 << 3)
    /// Pauses while ``BuiltInHandlerClient/canAcceptMoreData`` is `false`; the task wakes it with
    /// ``BuiltInURLProtocol/resumeProducing()``.
    static let flowControl = HandlerCapabilities(rawValue: 1 << 4)
    /// Guards its own state: `startLoading()`, `stopLoading()` and `resumeProducing()` may be called
    /// from any thread at any time, so the task calls them directly on the thread that decides (the
    /// one resuming, cancelling or receiving the last report) and makes no serial queue for it.
    static let concurrentStartStop = HandlerCapabilities(rawValue: 1 << 5)
    /// After reporting a redirect it keeps the redirect response and its body, and delivers them as
    /// the final result when the delegate refuses the redirect
    /// (``BuiltInURLProtocol/deliverRefusedRedirect()``), as Apple returns the 3xx with its body.
    /// Without it the task stops the handler at once and finishes with the bare redirect response.
    static let deliversRefusedRedirect = HandlerCapabilities(rawValue: 1 << 6)
    /// Its loads may send credentials the request does not show (stored cookies), so it names the
    /// scope (``URLCacheScope``) its responses are cached under
    /// (``BuiltInURLProtocol/cacheScope(for:environment:)``).
    static let cacheScoping = HandlerCapabilities(rawValue: 1 << 7)
    /// Responses of this scheme are cached: the task looks its requests up in the session's
    /// `URLCache` and hands the handler what it found. Other schemes skip the lookup.
    static let cachesResponses = HandlerCapabilities(rawValue: 1 << 8)

    /// The capabilities a plugin declared in its manifest for one of its schemes.
    init(plugin declared: PluginCapabilities) {
        var capabilities: HandlerCapabilities = []
        if declared.contains(.read) { capabilities.insert(.read) }
        if declared.contains(.write) { capabilities.insert(.write) }
        if declared.contains(.list) { capabilities.insert(.list) }
        if declared.contains(.resume) { capabilities.insert(.resume) }
        self = capabilities
    }

    init(rawValue: UInt32) { self.rawValue = rawValue }
}
