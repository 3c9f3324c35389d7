import Foundation

/// A thread-safe store of credentials, grouped by protection space and keyed by user.
///
/// Credentials with `.none` persistence (and the deprecated synchronizable kind) are never kept.
/// Each protection space can also have a default credential, which is what sessions try first.
/// Every change posts `NSNotification.Name.NSURLCredentialStorageChanged` on
/// `NotificationCenter.default` with the storage as the object.
///
/// `shared` keeps its `.permanent` credentials in a file only its owner can read (see `shared`);
/// `.forSession` credentials, and every credential of any other storage, live in memory for the
/// life of the process.
open class URLCredentialStorage: NSObject, @unchecked Sendable {

    private struct State {
        var credentials: [URLProtectionSpace: [String: URLCredential]] = [:]
        var defaults: [URLProtectionSpace: URLCredential] = [:]
        /// Whether the file (if any) has been read.
        var loaded: Bool
    }

    private let state: Locked<State>

    /// Writes the credentials file; `nil` for a storage that lives in memory only.
    private let writer: StoreFileWriter?

    private static let sharedStorage = URLCredentialStorage(fileURL: CourierDataDirectory.credentialsFile)

    /// The process-wide credential storage used by sessions unless their configuration names
    /// another.
    ///
    /// Its `.permanent` credentials, and the default credentials that are `.permanent`, survive
    /// the process: they are kept in `Credentials.json` in Courier's data directory —
    /// `$COURIER_DATA_HOME` when that variable is an absolute path, else `$XDG_DATA_HOME/Courier`,
    /// else `~/.local/share/Courier`. The directory is created with mode 0700 and the file with
    /// mode 0600, written atomically on every change; passwords are stored as they are, protected
    /// by those modes. A file that is not the user's own, or that its group or others may read or
    /// write, is not read: the storage starts empty and its next write replaces the file. A
    /// damaged file is ignored the same way. `.forSession` credentials are never written.
    open class var shared: URLCredentialStorage { sharedStorage }

    /// Creates an empty credential storage that lives in memory only.
    override public init() {
        state = Locked(State(loaded: true))
        writer = nil
        super.init()
    }

    /// Creates a credential storage that keeps its `.permanent` credentials in `fileURL`.
    ///
    /// The file is read on first use, with the checks described on `shared`; every change to a
    /// `.permanent` credential rewrites it atomically before the changing call returns.
    ///
    /// - Parameter fileURL: The credentials file.
    init(fileURL: URL) {
        state = Locked(State(loaded: false))
        writer = StoreFileWriter(file: StoreFile(url: fileURL, ownerOnly: true),
                                 delay: HTTPCookieStorage.defaultWriteDelay)
        super.init()
    }

    /// The file this storage persists to, or `nil` for a memory-only storage.
    var fileURL: URL? { writer?.file.url }

    /// Writes any pending change to the credentials file before returning (changes are written
    /// as they happen, so this only matters after a damaged file was found). Must not be called
    /// while holding the storage's lock.
    func flush() {
        writer?.flush()
    }

    /// Runs `body` on the locked state, reading the credentials file first if that has not
    /// happened.
    private func withState<Value: Sendable>(_ body: (inout State) -> Value) -> Value {
        state.withLock { state in
            loadIfNeeded(&state)
            return body(&state)
        }
    }

    /// Reads the credentials file into the locked state (once). Nothing read from the file is
    /// ever logged.
    private func loadIfNeeded(_ state: inout State) {
        guard !state.loaded else { return }
        state.loaded = true
        guard let writer else { return }
        switch writer.file.read() {
        case .missing, .refused:
            // A refused file is left alone until the storage has something to write.
            return
        case .contents(let data):
            if let contents = CredentialStoreFile.decode(data) {
                state.credentials = contents.credentials
                state.defaults = contents.defaults
                return
            }
        case .unreadable:
            break
        }
        // Damaged: start empty and replace it.
        writer.setNeedsWrite { [self] in persistentSnapshot() }
    }

    /// Rewrites the credentials file now when a change touched a `.permanent` credential.
    private func persist(ifAnyIsPermanent credentials: URLCredential?...) {
        guard let writer, credentials.contains(where: { $0?.persistence == .permanent }) else { return }
        writer.writeNow { [self] in persistentSnapshot() }
    }

    /// The credentials file's contents for the current state.
    private func persistentSnapshot() -> Data? {
        let (credentials, defaults) = withState { ($0.credentials, $0.defaults) }
        return CredentialStoreFile.encode(credentials: credentials, defaults: defaults)
    }

    /// The credentials stored for a protection space, keyed by user name.
    ///
    /// - Parameter space: The protection space.
    /// - Returns: The credentials, or `nil` when none are stored.
    open func credentials(for space: URLProtectionSpace) -> [String: URLCredential]? {
        withState { $0.credentials[space] }
    }

    /// Every stored credential, grouped by protection space and keyed by user name.
    open var allCredentials: [URLProtectionSpace: [String: URLCredential]] {
        withState { $0.credentials }
    }

    /// Stores a credential for a protection space, replacing one with the same user. The first
    /// credential stored for a space that has no default credential becomes its default, as in
    /// Apple's implementation and FoundationNetworking.
    ///
    /// Credentials whose persistence is `.none` (or synchronizable, which Linux cannot honour)
    /// are ignored, as in Apple's implementation.
    ///
    /// - Parameters:
    ///   - credential: The credential to store.
    ///   - space: The protection space it applies to.
    open func set(_ credential: URLCredential, for space: URLProtectionSpace) {
        guard Self.isStorable(credential) else { return }
        let (changed, previous) = withState { state in
            let (stored, previous) = Self.store(credential, for: space, in: &state)
            guard state.defaults[space] == nil else { return (stored, previous) }
            state.defaults[space] = credential
            return (true, previous)
        }
        if changed {
            persist(ifAnyIsPermanent: credential, previous)
            postChangeNotification()
        }
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
        let (removed, removedDefault) = withState { state -> (URLCredential?, URLCredential?) in
            var removed: URLCredential?
            var removedDefault: URLCredential?
            if var forSpace = state.credentials[space], let credential = forSpace.removeValue(forKey: user) {
                state.credentials[space] = forSpace.isEmpty ? nil : forSpace
                removed = credential
            }
            if let defaultCredential = state.defaults[space], (defaultCredential.user ?? "") == user {
                state.defaults[space] = nil
                removedDefault = defaultCredential
            }
            return (removed, removedDefault)
        }
        if removed != nil || removedDefault != nil {
            persist(ifAnyIsPermanent: removed, removedDefault)
            postChangeNotification()
        }
    }

    /// The default credential of a protection space, if one was set.
    ///
    /// - Parameter space: The protection space.
    open func defaultCredential(for space: URLProtectionSpace) -> URLCredential? {
        withState { $0.defaults[space] }
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
        let (changed, replaced, previousDefault) = withState { state -> (Bool, URLCredential?, URLCredential?) in
            let (stored, replaced) = Self.store(credential, for: space, in: &state)
            let previousDefault = state.defaults.updateValue(credential, forKey: space)
            return (stored || previousDefault != credential, replaced, previousDefault)
        }
        if changed {
            persist(ifAnyIsPermanent: credential, replaced, previousDefault)
            postChangeNotification()
        }
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

    /// Puts a credential into the locked state; returns whether anything changed and the
    /// credential it replaced, if any.
    private static func store(_ credential: URLCredential, for space: URLProtectionSpace,
                              in state: inout State) -> (changed: Bool, replaced: URLCredential?) {
        let user = credential.user ?? ""
        var forSpace = state.credentials[space] ?? [:]
        let previous = forSpace.updateValue(credential, forKey: user)
        state.credentials[space] = forSpace
        return (previous != credential, previous)
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
