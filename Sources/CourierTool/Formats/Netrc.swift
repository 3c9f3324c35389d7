import Foundation

/// A `.netrc` file (`-n/--netrc`, `--netrc-file`), read as curl reads it: `machine NAME`, `login`,
/// `password` and `default` tokens separated by white space or newlines, double-quoted tokens with
/// `\"` and `\\` escapes, and `macdef` bodies (up to an empty line) skipped.
struct Netrc: Sendable, Equatable {
    /// One `machine` (or `default`, with a nil machine) entry.
    struct Entry: Sendable, Equatable {
        var machine: String?
        var login: String?
        var password: String?
    }

    var entries: [Entry] = []

    /// Parses the text of a netrc file.
    init(text: String) {
        var tokens = Self.tokens(of: text)[...]
        var current: Entry?
        func close() {
            if let current { entries.append(current) }
            current = nil
        }
        while let token = tokens.popFirst() {
            switch token {
            case "machine":
                close()
                current = Entry(machine: tokens.popFirst())
            case "default":
                close()
                current = Entry(machine: nil)
            case "login":
                current?.login = tokens.popFirst()
            case "password":
                current?.password = tokens.popFirst()
            case "account":
                _ = tokens.popFirst()
            default:
                break
            }
        }
        close()
    }

    /// The login for `host`: its `machine` entry, else `default`; only entries with a login count,
    /// and a missing password is empty. With `user`, only an entry for that user.
    func login(for host: String, user: String? = nil) -> Login? {
        let wanted = entries.filter { $0.login != nil && (user == nil || $0.login == user) }
        let entry = wanted.first { $0.machine?.caseInsensitiveCompare(host) == .orderedSame }
            ?? wanted.first { $0.machine == nil }
        guard let entry, let login = entry.login else { return nil }
        return Login(user: login, password: entry.password ?? "")
    }

    /// The file `-n` reads: `$NETRC` when set, else `~/.netrc`.
    static var defaultPath: String {
        if let path = ProcessInfo.processInfo.environment["NETRC"], !path.isEmpty { return path }
        let home = ProcessInfo.processInfo.environment["HOME"] ?? NSHomeDirectory()
        return URL(fileURLWithPath: home).appendingPathComponent(".netrc").path
    }

    /// Reads the netrc file at `path`; a missing file is an empty one when `required` is false (`-n`),
    /// an error otherwise (`--netrc-file`).
    static func load(path: String, required: Bool) throws(ToolFailure) -> Netrc {
        guard let data = FileManager.default.contents(atPath: path) else {
            if !required, !FileManager.default.fileExists(atPath: path) { return Netrc(text: "") }
            throw ToolFailure(.fileDoesNotExist, "cannot read netrc file \(path)", url: URL(fileURLWithPath: path), exit: .usage)
        }
        return Netrc(text: String(decoding: data, as: UTF8.self))
    }

    /// The file's tokens, with `macdef` bodies dropped.
    private static func tokens(of text: String) -> [String] {
        var tokens: [String] = []
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)[...]
        while let line = lines.popFirst() {
            let lineTokens = Self.tokens(ofLine: String(line))
            if let index = lineTokens.firstIndex(of: "macdef") {
                tokens += lineTokens[..<index]
                // The macro body runs to the first empty line.
                while let body = lines.popFirst(), !body.trimmingCharacters(in: .whitespaces).isEmpty {}
                continue
            }
            tokens += lineTokens
        }
        return tokens
    }

    private static func tokens(ofLine line: String) -> [String] {
        var tokens: [String] = []
        var current = ""
        var inQuotes = false
        var escaped = false
        var hasToken = false
        for character in line {
            if inQuotes {
                if escaped {
                    current.append(character)
                    escaped = false
                } else if character == "\\" {
                    escaped = true
                } else if character == "\"" {
                    inQuotes = false
                } else {
                    current.append(character)
                }
            } else if character == "\"" {
                inQuotes = true
                hasToken = true
            } else if character == "#" && !hasToken {
                break
            } else if character.isWhitespace {
                if hasToken { tokens.append(current) }
                current = ""
                hasToken = false
            } else {
                current.append(character)
                hasToken = true
            }
        }
        if hasToken { tokens.append(current) }
        return tokens
    }
}
