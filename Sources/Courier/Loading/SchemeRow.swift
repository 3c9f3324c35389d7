import Foundation

/// One row of the table of built-in schemes (``SchemeTable``): a scheme, the handler class serving
/// it, and what that handler can do.
///
/// The rows are assembled in `Handlers/BuiltInHandlers.swift` (the one place that sees both the
/// schemes and the handler classes); everything else — the loader, the plugin loader's reserved
/// schemes, the task's questions about a handler — reads them.
struct SchemeRow: @unchecked Sendable {
    /// The scheme.
    let scheme: BuiltInScheme
    /// The handler class. A class object is immutable metadata, safe to share between threads.
    let handler: BuiltInURLProtocol.Type
    /// What the handler can do and how the task drives it.
    let capabilities: HandlerCapabilities
    /// Where a redirect may lead when this row's handler reports it, or when anyone proposes a
    /// redirect to this row's scheme: the delegate's answer to such a redirect must have one of these
    /// schemes too (see ``SchemeTable/refusal(ofAnswer:toProposed:)``). Empty: the handler never
    /// redirects, and a redirect to the scheme may be answered with any request.
    let redirectSchemes: Set<BuiltInScheme>
    /// Where the row's handler may redirect, as the task checks it; `nil` when it does not redirect.
    /// Made once with the row: every load the row serves carries it.
    let redirectConfinement: RedirectConfinement?

    /// A row for `scheme`, served by `handler` with `capabilities`, whose redirects may lead to
    /// `redirectSchemes` (none: it does not redirect).
    init(_ scheme: BuiltInScheme, _ handler: BuiltInURLProtocol.Type, _ capabilities: HandlerCapabilities,
         redirectsTo redirectSchemes: Set<BuiltInScheme> = []) {
        self.scheme = scheme
        self.handler = handler
        self.capabilities = capabilities
        self.redirectSchemes = redirectSchemes
        redirectConfinement = redirectSchemes.isEmpty ? nil
            : RedirectConfinement(permittedSchemes: Set(redirectSchemes.map(\.rawValue)),
                                  reporter: "The \(scheme.rawValue) handler")
    }
}
