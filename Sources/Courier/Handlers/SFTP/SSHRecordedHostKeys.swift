import Foundation

/// What the known-hosts files say about one server (by its known-hosts name, `host` or
/// `[host]:port`): the host keys recorded for it and the keys revoked for it, each with the file
/// and line it came from. `@cert-authority` lines are not host keys and are left out.
struct SSHRecordedHostKeys: Sendable {
    /// One recorded or revoked key.
    struct Record: Sendable, Equatable {
        var keyType: String
        var key: Data
        var file: URL
        var line: Int

        /// `path:line`, for messages.
        var location: String { "\(file.path):\(line)" }
    }

    /// The host keys recorded for the server (lines without a marker), in file order.
    private(set) var keys: [Record] = []
    /// The keys `@revoked` lines list for the server.
    private(set) var revoked: [Record] = []

    /// Reads `files` (those that cannot be read are skipped) for the server `name`.
    init(name: String, files: [URL]) {
        self.init(name: name, parsed: files.compactMap(KnownHostsFile.read))
    }

    /// Looks the server `name` up in parsed files.
    init(name: String, parsed files: [KnownHostsFile]) {
        let matcher = KnownHostsHostMatcher()
        for file in files {
            for entry in file.entries where entry.marker != .certificateAuthority {
                guard matcher.matches(entry.hosts, name: name) else { continue }
                let record = Record(keyType: entry.keyType, key: entry.key, file: file.url, line: entry.line)
                if entry.marker == .revoked { revoked.append(record) } else { keys.append(record) }
            }
        }
    }

    /// The key types recorded for the server, each once, in file order.
    var keyTypes: [String] {
        var seen: [String] = []
        for record in keys where !seen.contains(record.keyType) { seen.append(record.keyType) }
        return seen
    }
}
