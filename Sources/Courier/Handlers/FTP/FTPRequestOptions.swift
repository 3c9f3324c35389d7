import Foundation

/// Per-request FTP settings. Apple's `URLRequest` has none, so Courier keeps them as protocol
/// properties (the mechanism of `URLProtocol.setProperty(_:forKey:in:)`): they travel with copies of
/// the request, and the keys in ``FTPRequestOptionKey`` set them on an `NSMutableURLRequest` too.
extension URLRequest {
    /// Use active mode (the server connects back to this machine, `EPRT`/`PORT`) instead of passive
    /// mode (`EPSV`, then `PASV`). Default `false`.
    public var ftpUsesActiveMode: Bool {
        get { protocolProperty(forKey: FTPRequestOptionKey.activeMode) as? Bool ?? false }
        set { setProtocolProperty(newValue, forKey: FTPRequestOptionKey.activeMode) }
    }

    /// For an upload, create the directories of the target path that do not exist (`MKD`) before
    /// storing the file. Default `false`: an upload into a missing directory fails.
    public var ftpCreatesMissingDirectories: Bool {
        get { protocolProperty(forKey: FTPRequestOptionKey.createMissingDirectories) as? Bool ?? false }
        set { setProtocolProperty(newValue, forKey: FTPRequestOptionKey.createMissingDirectories) }
    }

    /// For an `ftp://` URL, require explicit TLS (`AUTH TLS`) for the control and data connections:
    /// the load fails rather than send a password or data in the clear. `ftps://` URLs always use
    /// implicit TLS. Default `false`.
    public var ftpRequiresTLS: Bool {
        get { protocolProperty(forKey: FTPRequestOptionKey.requireTLS) as? Bool ?? false }
        set { setProtocolProperty(newValue, forKey: FTPRequestOptionKey.requireTLS) }
    }
}

/// The protocol-property keys behind the FTP settings of ``URLRequest``, for
/// `URLProtocol.setProperty(true, forKey:in:)` on an `NSMutableURLRequest`.
public enum FTPRequestOptionKey {
    /// ``URLRequest/ftpUsesActiveMode`` (a `Bool`).
    public static let activeMode = "Courier.FTP.ActiveMode"
    /// ``URLRequest/ftpCreatesMissingDirectories`` (a `Bool`).
    public static let createMissingDirectories = "Courier.FTP.CreateMissingDirectories"
    /// ``URLRequest/ftpRequiresTLS`` (a `Bool`).
    public static let requireTLS = "Courier.FTP.RequireTLS"
}
