import Foundation

/// The URL schemes a handler's redirects may lead to, and who the handler is for error messages.
///
/// The task refuses a redirect a handler with a confinement reports — the request it proposes and
/// the request the delegate answers `willPerformHTTPRedirection` with alike — whose scheme is not
/// permitted: the task fails with `URLError.unsupportedURL` naming the refused URL, and nothing is
/// loaded from it. The confinement comes with the ``ResolvedHandler``: a built-in scheme's row
/// (``SchemeRow/redirectSchemes``: http and https for the http handler) or a plugin's manifest
/// (``PluginLibrary/redirectConfinement``: a plugin is third-party code loaded from a directory).
/// `URLProtocol` subclasses an app registers have none, and may redirect to any scheme, as Apple's
/// loading system lets them.
struct RedirectConfinement: Sendable {
    /// The lowercase schemes a redirect may lead to.
    let permittedSchemes: Set<String>
    /// Who reports the redirects, as the subject of a sentence ("The plugin gopher").
    let reporter: String

    /// Why a redirect to `target` must not be followed — `unsupportedURL` with `target` as the
    /// failing URL — or `nil` when it may be.
    func refusal(of target: URL?) -> URLError? {
        if let scheme = target?.scheme?.lowercased(), permittedSchemes.contains(scheme) { return nil }
        let named = target?.scheme.map { "“\($0.lowercased())”" } ?? "(no scheme)"
        let allowed = permittedSchemes.sorted().joined(separator: ", ")
        return URLError(.unsupportedURL, url: target,
                        description: "\(reporter) redirected to the URL scheme \(named), which it may not redirect to (only \(allowed)); the redirect is not followed.")
    }
}
