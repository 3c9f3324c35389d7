import Foundation

extension PluginLibrary {
    /// Where a redirect this plugin reports may lead: to the schemes the plugin itself serves (all of
    /// them, so a plugin may move a request between its own schemes) and to `http` and `https`.
    ///
    /// Never to `file:`, `data:`, `ftp(s):` or `sftp:` (unless the host granted the plugin that
    /// scheme), never to another plugin's scheme and never to a scheme an app registered a
    /// `URLProtocol` for: a plugin is third-party code loaded from a directory, and a redirect must not
    /// let it read what the app never asked it to read (a `file:` URL's contents returned as the body
    /// of a plugin URL) or hand the request's header fields to other code.
    var redirectConfinement: RedirectConfinement {
        RedirectConfinement(permittedSchemes: Set(manifest.schemes.map(\.name)).union(["http", "https"]),
                            reporter: "The plugin \(manifest.name)")
    }
}
