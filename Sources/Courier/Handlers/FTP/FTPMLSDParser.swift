import Foundation

/// Parses the lines of an `MLSD` listing (RFC 3659 §7): `fact=value;fact=value; name`.
///
/// Fact names and the `type` values are case-insensitive; the name follows the first space and
/// may itself contain spaces and semicolons. Facts used:
/// - `type`: `file`, `dir`, `cdir` and `pdir` (the listed directory and its parent, skipped),
///   `OS.unix=slink[:target]` or `OS.unix=symlink` (a symbolic link); anything else is `.other`;
/// - `size`, or `sizd` (the size of a directory) when there is no `size`;
/// - `modify`: `YYYYMMDDHHMMSS[.fraction]`, in UTC;
/// - `UNIX.mode`: the permission bits in octal (`0755`); without it permissions are unknown.
enum FTPMLSDParser {

    /// The entry one line describes, or `nil` when the line describes none (or `.`, `..`, the
    /// listed directory or its parent).
    static func entry(fromLine line: String) -> URLDirectoryEntry? {
        let scalars = line.unicodeScalars
        guard let space = scalars.firstIndex(of: " ") else { return nil }
        let name = String(scalars[scalars.index(after: space)...])
        guard FTPListingParser.isAcceptableName(name) else { return nil }

        // Facts without "=" are ignored, but there must be a well-formed one, unless there are none
        // at all: otherwise this is not an MLSD line (a LIST line such as "total 12", say).
        let factText = String(scalars[..<space])
        var facts: [String: Substring] = [:]
        for fact in factText.split(separator: ";") {
            guard let equals = fact.firstIndex(of: "=") else { continue }
            facts[fact[..<equals].lowercased()] = fact[fact.index(after: equals)...]
        }
        guard factText.isEmpty || !facts.isEmpty else { return nil }

        var type = URLDirectoryEntry.EntryType.other
        var destination: String?
        if let value = facts["type"] {
            switch value.lowercased() {
            case "file": type = .file
            case "dir": type = .directory
            case "cdir", "pdir": return nil
            case let lowered where lowered.hasPrefix("os.unix=slink") || lowered.hasPrefix("os.unix=symlink"):
                type = .symbolicLink
                if let colon = value.firstIndex(of: ":") {
                    let target = value[value.index(after: colon)...]
                    destination = target.isEmpty ? nil : String(target)
                }
            default: type = .other
            }
        }

        return URLDirectoryEntry(
            name: name,
            type: type,
            size: size(facts["size"]) ?? size(facts["sizd"]),
            modificationDate: facts["modify"].flatMap(date),
            permissions: facts["unix.mode"].flatMap { UInt32($0, radix: 8) }.map { UInt16($0 & 0o7777) },
            symbolicLinkDestination: destination)
    }

    private static func size(_ value: Substring?) -> Int64? {
        guard let value, let size = Int64(value), size >= 0 else { return nil }
        return size
    }

    /// A `time-val` (RFC 3659 §2.3): `YYYYMMDDHHMMSS[.fraction]`, in UTC.
    static func date(_ value: Substring) -> Date? {
        let bytes = Array(value.utf8)
        guard bytes.count >= 14, bytes[..<14].allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        func number(_ range: Range<Int>) -> Int {
            bytes[range].reduce(0) { $0 * 10 + Int($1 - 0x30) }
        }
        var fraction = 0.0
        if bytes.count > 14 {
            let digits = bytes[15...]
            guard bytes[14] == UInt8(ascii: "."), !digits.isEmpty, digits.count <= 9,
                  digits.allSatisfy({ (0x30...0x39).contains($0) }),
                  let value = Double("0." + String(decoding: digits, as: UTF8.self)) else { return nil }
            fraction = value
        }
        return FTPListingParser.utcDate(year: number(0..<4), month: number(4..<6), day: number(6..<8),
                                        hour: number(8..<10), minute: number(10..<12),
                                        second: Double(number(12..<14)) + fraction)
    }
}
