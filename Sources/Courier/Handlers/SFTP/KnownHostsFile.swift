import Foundation

/// An OpenSSH known-hosts file, parsed the way `ssh` reads it (`sshd(8)`, "SSH_KNOWN_HOSTS FILE
/// FORMAT"): one entry per line, `[@marker] hosts keytype base64-key [comment]`.
///
/// `hosts` is kept as written — comma-separated patterns (`*`, `?`, `!`) or one hashed name
/// (`|1|salt|hash`) — and matched by ``KnownHostsHostMatcher``. Blank lines, comments and lines that
/// cannot be parsed (an unknown marker, a bad key, the old RSA1 format) are skipped without
/// affecting the others, as OpenSSH does; `@revoked` and `@cert-authority` lines are kept with
/// their marker so that they are never mistaken for the host's own keys.
struct KnownHostsFile: Sendable {
    /// What a line's leading `@` word says about its key.
    enum Marker: Sendable, Equatable {
        /// No marker: a host key of the hosts.
        case none
        /// `@revoked`: the key must never be trusted for the hosts.
        case revoked
        /// `@cert-authority`: a CA that signs host certificates (not a host key; Courier does not
        /// accept host certificates).
        case certificateAuthority
    }

    /// One parsed line.
    struct Entry: Sendable, Equatable {
        var marker: Marker
        /// The host field as written: patterns separated by commas, or a hashed name.
        var hosts: String
        /// The key type field (`ssh-ed25519`, `ecdsa-sha2-nistp256`, `ssh-rsa`, …).
        var keyType: String
        /// The public key blob (SSH wire format), decoded from base64.
        var key: Data
        /// The line number, from 1.
        var line: Int
    }

    /// Where the file is.
    let url: URL
    /// The lines that hold an entry, in file order.
    let entries: [Entry]

    /// Parses `contents` as the file at `url`.
    init(url: URL, contents: Data) {
        self.url = url
        var entries: [Entry] = []
        var number = 0
        for line in contents.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            number += 1
            if let entry = Self.entry(String(decoding: line, as: UTF8.self), line: number) {
                entries.append(entry)
            }
        }
        self.entries = entries
    }

    /// The file at `url`; `nil` when it cannot be read (usually: it does not exist).
    static func read(_ url: URL) -> KnownHostsFile? {
        // Through FileHandle, not Data(contentsOf:), which in swift-foundation 6.3 leaks a 4 KiB
        // buffer each time it reads an empty file; an empty known-hosts file is common, and is read
        // on every connection.
        guard let handle = try? FileHandle(forReadingFrom: url) else { return nil }
        defer { try? handle.close() }
        // readToEnd() is nil for an empty file, and throws when the file cannot be read (a directory).
        let contents: Data?
        do { contents = try handle.readToEnd() } catch { return nil }
        return KnownHostsFile(url: url, contents: contents ?? Data())
    }

    /// The line OpenSSH would write for `key` (a blob of type `keyType`) of the host `name`
    /// (`host`, or `[host]:port` off port 22): `name keytype base64`, with a newline.
    static func line(name: String, keyType: String, key: Data) -> String {
        "\(name) \(keyType) \(key.base64EncodedString())\n"
    }

    /// The entry a line holds, if any.
    private static func entry(_ text: String, line: Int) -> Entry? {
        var fields = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" })[...]
        guard let first = fields.first, !first.hasPrefix("#") else { return nil }
        var marker = Marker.none
        if first.hasPrefix("@") {
            switch first {
            case "@revoked": marker = .revoked
            case "@cert-authority": marker = .certificateAuthority
            default: return nil
            }
            fields = fields.dropFirst()
        }
        guard fields.count >= 3 else { return nil }
        let hosts = String(fields[fields.startIndex])
        let keyType = String(fields[fields.startIndex + 1])
        guard let key = Data(base64Encoded: String(fields[fields.startIndex + 2])),
              SSHHostKey.typeName(in: key) == keyType else { return nil }
        return Entry(marker: marker, hosts: hosts, keyType: keyType, key: key, line: line)
    }
}
