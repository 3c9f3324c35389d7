import Foundation

/// The `Cache-Control` directives (RFC 9111 §5.2) of a request or a response that Courier's private
/// cache acts on.
///
/// Directive names are case-insensitive; values may be tokens or quoted strings (commas inside
/// quotes do not split). An argument that is not a valid number of seconds makes a `max-age`
/// count as 0 (stale), as RFC 9111 §4.2.1 asks; other unknown directives are ignored. A request
/// without `Cache-Control` but with `Pragma: no-cache` counts as `no-cache` (RFC 9111 §5.4).
struct HTTPCacheControl: Equatable, Sendable {
    /// `no-store`: the response (or any response to this request) must not be stored.
    var noStore = false
    /// `no-cache`: a stored response must be validated with the origin before each use.
    var noCache = false
    /// `must-revalidate` (or `proxy-revalidate`, which a private cache may treat alike): once
    /// stale, the response must not be used without validation.
    var mustRevalidate = false
    /// `max-age`: in a response, its freshness lifetime; in a request, the oldest response the
    /// client accepts.
    var maxAge: TimeInterval?
    /// `s-maxage`: a shared cache's lifetime. Parsed but ignored: Courier's cache is private.
    var sharedMaxAge: TimeInterval?
    /// `max-stale` in a request: how long past its lifetime a response may be used
    /// (`.infinity` when no value is given).
    var maxStale: TimeInterval?
    /// `min-fresh` in a request: the response must stay fresh at least this much longer.
    var minFresh: TimeInterval?
    /// `immutable` (RFC 8246): the response will not change while fresh.
    var immutable = false
    /// `public`: any cache may store the response, also one answering an authorized request.
    var isPublic = false
    /// `private` (with or without field names): the response is for one user only.
    var isPrivate = false

    /// Directives with every value absent.
    init() {}

    /// Parses the comma-separated directives of one (possibly comma-joined) header value.
    init(_ value: String?) {
        guard let value else { return }
        for (name, argument) in Self.directives(in: value) {
            switch name {
            case "no-store": noStore = true
            case "no-cache": noCache = true
            case "must-revalidate", "proxy-revalidate": mustRevalidate = true
            case "max-age": maxAge = Self.seconds(argument) ?? 0
            case "s-maxage": sharedMaxAge = Self.seconds(argument) ?? 0
            case "max-stale": maxStale = argument.map { Self.seconds($0) ?? 0 } ?? .infinity
            case "min-fresh": minFresh = Self.seconds(argument) ?? 0
            case "immutable": immutable = true
            case "public": isPublic = true
            case "private": isPrivate = true
            default: break
            }
        }
    }

    /// The directives of a response's `Cache-Control`.
    init(response: HTTPURLResponse) {
        self.init(response.value(forHTTPHeaderField: "Cache-Control"))
    }

    /// The directives of a request's `Cache-Control`, or `no-cache` from `Pragma: no-cache` when
    /// there is no `Cache-Control`.
    init(request: URLRequest) {
        if let value = request.value(forHTTPHeaderField: "Cache-Control") {
            self.init(value)
        } else {
            self.init()
            if let pragma = request.value(forHTTPHeaderField: "Pragma"),
               Self.directives(in: pragma).contains(where: { $0.name == "no-cache" }) {
                noCache = true
            }
        }
    }

    /// Splits a header value into lowercased directive names and their unquoted arguments.
    static func directives(in value: String) -> [(name: String, argument: String?)] {
        if let simple = asciiDirectives(in: value) { return simple }
        var result: [(String, String?)] = []
        var current = ""
        var inQuotes = false
        var escaped = false
        var pieces: [String] = []
        for character in value {
            if escaped {
                current.append(character)
                escaped = false
            } else if inQuotes && character == "\\" {
                current.append(character)
                escaped = true
            } else if character == "\"" {
                current.append(character)
                inQuotes.toggle()
            } else if character == "," && !inQuotes {
                pieces.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        pieces.append(current)
        for piece in pieces {
            let parts = piece.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = parts.first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
            guard !name.isEmpty else { continue }
            let argument = parts.count > 1 ? unquoted(parts[1].trimmingCharacters(in: .whitespaces)) : nil
            result.append((name, argument))
        }
        return result
    }

    /// `directives(in:)` on the bytes of an ASCII value without quotes (the usual `no-store` or
    /// `max-age=60, public`); `nil` for any other value.
    private static func asciiDirectives(in value: String) -> [(name: String, argument: String?)]? {
        var value = value
        return value.withUTF8 { bytes -> [(name: String, argument: String?)]? in
            for byte in bytes where byte >= 0x80 || byte == UInt8(ascii: "\"") { return nil }
            let all = UnsafeRawBufferPointer(bytes)
            func trimmed(_ lower: Int, _ upper: Int) -> UnsafeRawBufferPointer {
                var lower = lower
                var upper = upper
                while lower < upper, all[lower] == 0x20 || all[lower] == 0x09 { lower += 1 }
                while upper > lower, all[upper - 1] == 0x20 || all[upper - 1] == 0x09 { upper -= 1 }
                return UnsafeRawBufferPointer(rebasing: all[lower..<upper])
            }
            var result: [(name: String, argument: String?)] = []
            var start = 0
            while start <= all.count {
                var end = start
                while end < all.count, all[end] != UInt8(ascii: ",") { end += 1 }
                var equals = start
                while equals < end, all[equals] != UInt8(ascii: "=") { equals += 1 }
                let name = trimmed(start, equals)
                if !name.isEmpty, let key = HTTPHeaderFields.key(forASCII: name) {
                    let argument = equals < end ? String(decoding: trimmed(equals + 1, end), as: UTF8.self) : nil
                    result.append((key, argument))
                }
                start = end + 1
            }
            return result
        }
    }

    /// A quoted string's content with escapes removed; other text unchanged.
    private static func unquoted(_ text: String) -> String {
        guard text.count >= 2, text.hasPrefix("\""), text.hasSuffix("\"") else { return text }
        var result = ""
        var escaped = false
        for character in text.dropFirst().dropLast() {
            if escaped {
                result.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else {
                result.append(character)
            }
        }
        return result
    }

    /// A delta-seconds argument (RFC 9111 §1.2.2): digits only; values too large to represent
    /// become 2^31 seconds. `nil` when absent or not digits.
    static func seconds(_ argument: String?) -> TimeInterval? {
        guard let argument, !argument.isEmpty, argument.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        guard let value = Int(argument), value <= Int(Int32.max) else { return 2_147_483_648 }
        return TimeInterval(value)
    }
}
