import Foundation

/// A URL scheme Courier serves with a handler of its own.
///
/// The handlers live in `Handlers/`, which `Loading/` must not see; the names of their schemes live
/// here, where both the scheme table and the plugin loader see them. A built-in handler declares its
/// schemes with these cases (``SchemeHandler/schemes``), so a scheme cannot enter
/// ``BuiltInHandlers`` without being a case here — and every case is reserved from plugins
/// (``names``) unless the host grants it.
enum BuiltInScheme: String, CaseIterable, Sendable {
    case data, file, http, https, ftp, ftps, sftp

    /// Every built-in scheme's name: the schemes a plugin may serve only with
    /// ``PluginLoadOptions/allowBuiltInSchemes``.
    static let names: Set<String> = Set(allCases.map(\.rawValue))
}
