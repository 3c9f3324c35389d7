import Foundation

/// Removes credentials from what Courier logs: the values of `Authorization`,
/// `Proxy-Authorization`, `Cookie` and `Set-Cookie` header lines, the password of an FTP `PASS`
/// command, and the password inside URLs (`Documentation/Security.md`).
///
/// Log records are redacted before they reach any `LogHandler`; only `courier --trace-secrets`
/// (through ``HandlerEnvironment/logsSecrets``) turns this off.
package enum LogRedaction {
    /// What stands in for a removed secret.
    package static let marker = "[redacted]"

    /// The header fields whose values are secrets.
    package static let secretFields: Set<String> = ["authorization", "proxy-authorization", "cookie", "set-cookie"]

    /// The header fields whose value starts with an authentication scheme that is kept
    /// (`Authorization: Basic [redacted]`).
    private static let schemeFields: Set<String> = ["authorization", "proxy-authorization"]

    /// `url` as text with its password (if it has one) replaced by ``marker``; the user name is
    /// kept (`sftp://alice:[redacted]@host/file`).
    package static func url(_ url: URL?) -> String {
        guard let url else { return "" }
        return url.password == nil ? url.absoluteString : userinfo(in: url.absoluteString)
    }

    /// One line sent or received (a header line, a status line, an FTP command or reply), with the
    /// value of a secret header field or the argument of `PASS` replaced by ``marker``.
    package static func line(_ line: String) -> String {
        if line.prefix(5).uppercased() == "PASS " { return "PASS " + marker }
        guard let colon = line.firstIndex(of: ":") else { return line }
        let name = line[..<colon]
        let lowered = name.lowercased()
        guard secretFields.contains(lowered) else { return line }
        let value = line[line.index(after: colon)...].drop { $0 == " " || $0 == "\t" }
        if schemeFields.contains(lowered), let space = value.firstIndex(of: " ") {
            return "\(name): \(value[..<space]) \(marker)"
        }
        return value.isEmpty ? line : "\(name): \(marker)"
    }

    /// `text` (a note from libcurl, which may quote a proxy URL; a request line) with the password
    /// of every `scheme://user:password@` in it replaced by ``marker``.
    package static func userinfo(in text: String) -> String {
        guard text.contains("@"), text.contains("://") else { return text }
        var result = ""
        var rest = Substring(text)
        while let separator = rest.range(of: "://") {
            result += rest[..<separator.upperBound]
            rest = rest[separator.upperBound...]
            let authorityEnd = rest.firstIndex { $0 == "/" || $0 == " " || $0 == "'" || $0 == "\"" || $0 == ">" } ?? rest.endIndex
            if let at = rest[..<authorityEnd].lastIndex(of: "@"), let colon = rest[..<at].firstIndex(of: ":") {
                result += rest[...colon] + marker
                rest = rest[at...]
            }
        }
        return result + rest
    }
}
