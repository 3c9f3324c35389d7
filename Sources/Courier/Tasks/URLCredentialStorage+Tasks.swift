import Foundation

/// The task-taking variants of `URLCredentialStorage`'s methods.
///
/// Apple's storage may partition credentials by the task asking for them; Courier's storage is
/// one store per `URLCredentialStorage` object, so each variant acts on the same credentials as
/// its task-less counterpart. The completion handlers are called before the method returns.
extension URLCredentialStorage {

    /// Passes the credentials stored for `protectionSpace`, keyed by user name (or `nil` when there
    /// are none), to `completionHandler`.
    ///
    /// - Parameters:
    ///   - protectionSpace: The protection space.
    ///   - task: The task that needs the credentials.
    ///   - completionHandler: Called once, before this method returns.
    public func getCredentials(for protectionSpace: URLProtectionSpace, task: URLSessionTask, completionHandler: ([String: URLCredential]?) -> Void) {
        completionHandler(credentials(for: protectionSpace))
    }

    /// Stores a credential for a protection space on behalf of a task; the same as
    /// `set(_:for:)`.
    ///
    /// - Parameters:
    ///   - credential: The credential to store.
    ///   - protectionSpace: The protection space it applies to.
    ///   - task: The task the credential was obtained for.
    public func set(_ credential: URLCredential, for protectionSpace: URLProtectionSpace, task: URLSessionTask) {
        set(credential, for: protectionSpace)
    }

    /// Removes a credential on behalf of a task; the same as `remove(_:for:options:)`.
    ///
    /// - Parameters:
    ///   - credential: The credential to remove; only its user name is used.
    ///   - protectionSpace: The protection space it was stored for.
    ///   - options: Removal options.
    ///   - task: The task on whose behalf the credential is removed.
    public func remove(_ credential: URLCredential, for protectionSpace: URLProtectionSpace, options: [String: AnyObject]? = [:], task: URLSessionTask) {
        remove(credential, for: protectionSpace, options: options)
    }

    /// Passes the default credential of `space` (or `nil`) to `completionHandler`.
    ///
    /// - Parameters:
    ///   - space: The protection space.
    ///   - task: The task that needs the credential.
    ///   - completionHandler: Called once, before this method returns.
    public func getDefaultCredential(for space: URLProtectionSpace, task: URLSessionTask, completionHandler: (URLCredential?) -> Void) {
        completionHandler(defaultCredential(for: space))
    }

    /// Makes a credential the default for a protection space on behalf of a task; the same as
    /// `setDefaultCredential(_:for:)`.
    ///
    /// - Parameters:
    ///   - credential: The credential to use by default.
    ///   - protectionSpace: The protection space.
    ///   - task: The task the credential was obtained for.
    public func setDefaultCredential(_ credential: URLCredential, for protectionSpace: URLProtectionSpace, task: URLSessionTask) {
        setDefaultCredential(credential, for: protectionSpace)
    }
}
