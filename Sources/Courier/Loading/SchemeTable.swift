import Foundation

/// The table of built-in schemes: for each lowercase scheme, its ``SchemeRow`` — the handler class
/// and its capabilities. The loader (``ProtocolResolver``), the task's questions about a handler and
/// the rule for answers to redirects are read from it; the plugin loader reserves its schemes
/// (``BuiltInScheme/names``, which are the table's schemes because `BuiltInHandlers` makes one row per
/// case).
struct SchemeTable: Sendable {
    private var rows: [String: SchemeRow] = [:]

    /// A table holding each row under its scheme; a later row for the same scheme wins.
    init(_ rows: [SchemeRow]) {
        for row in rows { self.rows[row.scheme.rawValue] = row }
    }

    /// The row for `scheme`, compared without case.
    func row(forScheme scheme: String) -> SchemeRow? {
        if let exact = rows[scheme] { return exact }
        return rows[scheme.lowercased()]
    }

    /// The row whose handler is `type` (for a built-in class that is also in a configuration's
    /// `protocolClasses` or registered), preferring the row for `scheme`.
    func row(handledBy type: URLProtocol.Type, scheme: String?) -> SchemeRow? {
        if let scheme, let row = row(forScheme: scheme), row.handler == type { return row }
        return rows.values.sorted { $0.scheme.rawValue < $1.scheme.rawValue }.first { $0.handler == type }
    }

    /// The handler class for `scheme`, compared without case.
    func handler(forScheme scheme: String) -> URLProtocol.Type? {
        row(forScheme: scheme)?.handler
    }

    /// Every scheme in the table, sorted.
    var schemes: [String] { rows.keys.sorted() }

    /// Every row, sorted by scheme.
    var allRows: [SchemeRow] { schemes.compactMap { rows[$0] } }

    /// Why `answer` — the request the delegate answered a redirect to `proposed` with — must not be
    /// loaded, or `nil`. A redirect to a scheme whose row confines its redirects
    /// (``SchemeRow/redirectSchemes``: an http or https redirect stays on http and https, whoever
    /// proposed it) may only be answered with a request of one of those schemes: a `file:`, `ftp:` or
    /// other request in its place fails the task with `unsupportedURL` (FoundationNetworking fails it
    /// the same way, as libcurl refuses the scheme) and is never loaded.
    func refusal(ofAnswer answer: URLRequest, toProposed proposed: URLRequest) -> URLError? {
        guard let proposedScheme = proposed.url?.scheme, let row = row(forScheme: proposedScheme),
              !row.redirectSchemes.isEmpty else { return nil }
        if let scheme = answer.url?.scheme?.lowercased(), let named = BuiltInScheme(rawValue: scheme),
           row.redirectSchemes.contains(named) { return nil }
        let allowed = row.redirectSchemes.map(\.rawValue).sorted().joined(separator: " or ")
        return URLError(.unsupportedURL, url: answer.url ?? proposed.url,
                        description: "The redirect was answered with a request that is not \(allowed); it is not followed.")
    }
}
