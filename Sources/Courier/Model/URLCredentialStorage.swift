import Foundation
import Synchronization

/// A thread-safe, in-memory store of credentials, grouped by protection space and keyed by user.
///
/// Credentials with `.none` persistence (and the deprecated synchronizable kind) are never kept.
/// Each protection space can also have a default credential, which is what sessions try first.
/// Every change posts `NSNotification.Name.NSURLCredentialStorageChanged` on
/// `NotificationCenter.default` with the storage as the object.
open class URLCredentialStorage: NSObject, @unchecked Sendable {

    private struct State {
        var credentials: [URLProtectionSpace: [String: URLCredential]] = [:]
        var defaults: [URLProtectionSpace: URLCredential] = [:]
    }

    private let state = Mutex(State())

    private static let sharedStorage = URLCredentialStorage()

    /// The process-wide credential storage used by sessions unless their configuration names
    /// another. It lives in memory only.
    open class var shared: URLCredentialStorage { sharedStorage }

    /// Creates an empty credential storage.
    override public init() {
        super.init()
    }

    /// The credentials stored for a protection space, keyed by user name.
    ///
    /// - Parameter space: The protection space.
    /// - Returns: The credentials, or `nil` when none are stored.
    open func credentials(for space: URLProtectionSpace) -> [String: URLCredential]? {
        state.withLock { $0.credentials[space] }
    }

    /// Every stored credential, grouped by protection space and keyed by user name.
    open var allCredentials: [URLProtectionSpace: [String: URLCredential]] {
        state.withLock { $0.credentials }
    }

    /// Stores a credential for a protection space, replacing one with the same user.
    ///
    /// Credentials whose persistence is `.none` (or synchronizable, which Linux cannot honour)
    /// are ignored, as in Apple's implementation.
    ///
    /// - Parameters:
    ///   - credential: The credential to store.
    ///   - space: The protection space it applies to.
    open func set(_ credential: URLCredential, for space: URLProtectionSpace) {
        guard Self.isStorable(credential) else { return }
        let changed = state.withLock { Self.store(credential, for: space, in: &$0) }
        if changed { postChangeNotification() }
    }

    /// Removes the credential stored for the same user in a protection space.
    ///
    /// - Parameters:
    ///   - credential: The credential to remove; only its user name is used.
    ///   - space: The protection space it was stored for.
    open func remove(_ credential: URLCredential, for space: URLProtectionSpace) {
        remove(credential, for: space, options: nil)
    }

    /// Removes the credential stored for the same user in a protection space, and clears the
    /// space's default credential if it belongs to that user.
    ///
    /// Courier never stores synchronizable credentials, so the
    /// `NSURLCredentialStorageRemoveSynchronizableCredentials` option has nothing to act on and
    /// `options` is otherwise ignored.
    ///
    /// - Parameters:
    ///   - credential: The credential to remove; only its user name is used.
    ///   - space: The protection space it was stored for.
    ///   - options: Removal options.
    open func remove(_ credential: URLCredential, for space: URLProtectionSpace, options: [String: AnyObject]? = [:]) {
        let user = credential.user ?? ""
        let changed = state.withLock { state -> Bool in
            var changed = false
            if var forSpace = state.credentials[space], forSpace.removeValue(forKey: user) != nil {
                state.credentials[space] = forSpace.isEmpty ? nil : forSpace
                changed = true
            }
            if let defaultCredential = state.defaults[space], (defaultCredential.user ?? "") == user {
                state.defaults[space] = nil
                changed = true
            }
            return changed
        }
        if changed { postChangeNotification() }
    }

    /// The default credential of a protection space, if one was set.
    ///
    /// - Parameter space: The protection space.
    open func defaultCredential(for space: URLProtectionSpace) -> URLCredential? {
        state.withLock { $0.defaults[space] }
    }

    /// Makes a credential the default for a protection space and stores it there too.
    ///
    /// Credentials that `set(_:for:)` would ignore are ignored here as well.
    ///
    /// - Parameters:
    ///   - credential: The credential to use by default.
    ///   - space: The protection space.
    open func setDefaultCredential(_ credential: URLCredential, for space: URLProtectionSpace) {
        guard Self.isStorable(credential) else { return }
        let changed = state.withLock { state -> Bool in
            let stored = Self.store(credential, for: space, in: &state)
            let previous = state.defaults.updateValue(credential, forKey: space)
            return stored || previous != credential
        }
        if changed { postChangeNotification() }
    }

    // MARK: - Internal

    /// Whether a credential's persistence lets a storage keep it.
    private static func isStorable(_ credential: URLCredential) -> Bool {
        switch credential.persistence {
        case .forSession, .permanent:
            return true
        default:
            // `.none`, and the deprecated synchronizable persistence that Linux cannot honour.
            return false
        }
    }

    /// Puts a credential into the locked state; returns whether anything changed.
    private static func store(_ credential: URLCredential, for space: URLProtectionSpace, in state: inout State) -> Bool {
        let user = credential.user ?? ""
        var forSpace = state.credentials[space] ?? [:]
        let previous = forSpace.updateValue(credential, forKey: user)
        state.credentials[space] = forSpace
        return previous != credential
    }

    /// Posts the credentials-changed notification; always called without the lock held.
    private func postChangeNotification() {
        NotificationCenter.default.post(name: .NSURLCredentialStorageChanged, object: self)
    }
}

extension NSNotification.Name {

    /// Posted by a `URLCredentialStorage` (the notification's object) whenever its credentials
    /// or default credentials change.
    public static let NSURLCredentialStorageChanged = NSNotification.Name(rawValue: "NSURLCredentialStorageChangedNotification")
}
