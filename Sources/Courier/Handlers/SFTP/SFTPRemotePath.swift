import Foundation

/// The path on the server an `sftp:` URL names.
///
/// As with curl and OpenSSH's `sftp`, the URL's path is absolute (`sftp://host/srv/data.bin` is
/// `/srv/data.bin`) except under `/~/`, which is relative to the user's home directory
/// (`sftp://host/~/notes.txt` is `notes.txt` in the directory the server starts the user in).
enum SFTPRemotePath {
    /// The server path for `url`, percent-decoded; `nil` when it cannot be sent (a NUL byte).
    static func path(of url: URL) -> String? {
        var path = url.path(percentEncoded: false)
        if path.isEmpty { path = "/" }
        guard !path.utf8.contains(0) else { return nil }
        if path == "/~" || path == "/~/" { return "." }
        if path.hasPrefix("/~/") { return String(path.dropFirst(3)) }
        return path
    }

    /// `name` inside the directory `directory` (as ``path(of:)`` returned it).
    static func child(_ name: String, of directory: String) -> String {
        if directory.hasSuffix("/") { return directory + name }
        return directory + "/" + name
    }
}
