import Foundation

/// A `zip:` URL, in the `jar:` convention: `zip:///path/to/archive.zip!/dir/entry.txt`.
///
/// The part before `!` is the archive's absolute path on this machine; the part after `!/` is the
/// entry's path inside it. With no `!`, or nothing after `!/`, the URL names the archive's root.
/// A path ending in `/` names a directory. Both parts are percent-decoded.
struct ZipURL: Equatable {
    /// The archive's path on this machine.
    var archivePath: String
    /// The entry's path inside the archive, without a leading `/` (empty for the root).
    var entryPath: String

    /// Whether the URL names a directory (the root, or a path ending in `/`).
    var namesDirectory: Bool { entryPath.isEmpty || entryPath.hasSuffix("/") }

    /// Parses `url`; nil when it is not a usable `zip:` URL.
    init?(_ url: URL) {
        guard url.scheme?.lowercased() == "zip" else { return nil }
        if let host = url.host, !host.isEmpty, host.lowercased() != "localhost" { return nil }
        // `URL.path` drops a trailing slash; read the percent-encoded path and decode it ourselves.
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return nil }
        let encoded = components.percentEncodedPath
        let archive: Substring
        let entry: Substring
        if let bang = encoded.firstIndex(of: "!") {
            archive = encoded[..<bang]
            var rest = encoded[encoded.index(after: bang)...]
            while rest.hasPrefix("/") { rest = rest.dropFirst() }
            entry = rest
        } else {
            archive = Substring(encoded)
            entry = ""
        }
        guard let archivePath = String(archive).removingPercentEncoding, archivePath.hasPrefix("/"),
              archivePath.count > 1, let entryPath = String(entry).removingPercentEncoding else { return nil }
        let parts = entryPath.split(separator: "/", omittingEmptySubsequences: false)
        guard !parts.contains("..") else { return nil }
        self.archivePath = archivePath
        self.entryPath = entryPath
    }
}
