import Foundation

/// The caps on one directory listing, shared by the handlers that stream listings from a server
/// (`ftp:`, `ftps:`, `sftp:`). A listing streams with back-pressure, so memory stays bounded however
/// long it is; the caps end a listing that never ends (a hostile or broken server) instead of letting
/// it run for ever.
///
/// - ``maximumEntries``: one million entries. Real directories that large exist but are rare, and
///   the body for them (about 100 bytes a line) is already around 100 MB.
/// - ``maximumBytes``: 128 MiB of listing bytes from the server (FTP's `LIST`/`MLSD` reply as sent)
///   or of listing body (SFTP, whose server sends binary records): room for a million entries of
///   about 130 bytes, so the entry cap normally comes first, but a server sending lines that are
///   skipped (not entries) is stopped too.
///
/// Crossing either fails the load with `dataLengthExceedsMaximum` and stops the transfer.
enum DirectoryListingLimits {
    /// The most entries one listing delivers.
    static let maximumEntries = 1_000_000
    /// The most bytes one listing reads from the server (FTP) or delivers (SFTP).
    static let maximumBytes = 128 << 20

    /// The caps as a value, for a handler to carry (``HandlerEnvironment/listingCaps``).
    static let standard = DirectoryListingCaps(maximumEntries: maximumEntries, maximumBytes: maximumBytes)

    /// The error for a listing that crossed a cap.
    static func exceeded(_ what: String, url: URL?) -> URLError {
        URLError(.dataLengthExceedsMaximum, url: url,
                 description: "The directory listing was stopped: it has more than \(what).")
    }

    /// The error for a listing with more than `maximum` entries.
    static func tooManyEntries(maximum: Int = maximumEntries, url: URL?) -> URLError {
        exceeded("\(maximum) entries", url: url)
    }

    /// The error for a listing longer than `maximum` bytes.
    static func tooManyBytes(maximum: Int = maximumBytes, url: URL?) -> URLError {
        exceeded("\(maximum) bytes", url: url)
    }
}

/// The caps one listing runs under: ``DirectoryListingLimits/standard`` in every session, lower in
/// tests (`URLSessionConfiguration.directoryListingCaps`, which is not public).
struct DirectoryListingCaps: Sendable, Equatable {
    /// The most entries the listing delivers.
    var maximumEntries: Int
    /// The most bytes the listing reads from the server (FTP) or delivers (SFTP).
    var maximumBytes: Int
}
