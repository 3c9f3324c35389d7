import Foundation

/// The Public Suffix List (publicsuffix.org): the domains under which anyone can register names
/// (`com`, `co.uk`, `github.io`, …). A cookie may not name one of them as its `Domain`, or a site
/// could set cookies for every other site below it (RFC 6265 section 5.3, step 5).
///
/// The list is read once, on first use, from the copy Debian's `publicsuffix` package installs (the
/// one libpsl and libcurl use). Where there is none, only the list's default rule applies: a name
/// of one label (`com`, `localhost`) is a public suffix.
struct PublicSuffixList: Sendable {
    /// Where the list is looked for, in order.
    static let searchPaths = [
        "/usr/share/publicsuffix/public_suffix_list.dat",
        "/usr/share/publicsuffix/effective_tld_names.dat",
    ]

    /// The list of this system, read on first use.
    static let system = PublicSuffixList(contentsOfFirstOf: searchPaths)

    private let rules: Set<String>
    /// Rules `*.X`, by `X`.
    private let wildcards: Set<String>
    /// Rules `!X`, by `X`.
    private let exceptions: Set<String>

    /// Whether a list was read (otherwise only the default rule applies).
    var isLoaded: Bool { !rules.isEmpty }

    /// The list in `text` (the publicsuffix.org format: one rule a line, `//` comments).
    init(text: String) {
        var rules = Set<String>()
        var wildcards = Set<String>()
        var exceptions = Set<String>()
        for line in text.split(whereSeparator: \.isNewline) {
            // A rule is the line's first word; the rest of the line is ignored.
            guard let rule = line.split(whereSeparator: \.isWhitespace).first, !rule.hasPrefix("//") else { continue }
            let name = rule.lowercased()
            if name.hasPrefix("!") {
                exceptions.insert(String(name.dropFirst()))
            } else if name.hasPrefix("*.") {
                wildcards.insert(String(name.dropFirst(2)))
            } else {
                rules.insert(name)
            }
        }
        self.rules = rules
        self.wildcards = wildcards
        self.exceptions = exceptions
    }

    /// The first list of `paths` that can be read, or an empty list.
    init(contentsOfFirstOf paths: [String]) {
        let text = paths.lazy.compactMap { try? String(contentsOfFile: $0, encoding: .utf8) }.first
        self.init(text: text ?? "")
    }

    /// Whether `domain` (without a leading dot; compared without regard to case) is a public suffix.
    func isPublicSuffix(_ domain: String) -> Bool {
        var name = domain.lowercased()
        if name.hasSuffix(".") { name.removeLast() }
        guard !name.isEmpty else { return true }
        if exceptions.contains(name) { return false }
        if rules.contains(name) { return true }
        guard let dot = name.firstIndex(of: ".") else {
            // The list's default rule "*": every top-level name is a public suffix.
            return true
        }
        return wildcards.contains(String(name[name.index(after: dot)...]))
    }
}
