import Foundation

/// A URL scheme Courier serves with a handler of its own: the key of the scheme table.
///
/// The handlers live in `Handlers/`, which `Loading/` must not see; the names of their schemes live
/// here, where both the scheme table and the plugin loader see them. `BuiltInHandlers` builds the
/// table with one ``SchemeRow`` per case, from an exhaustive `switch`, so the table's schemes and
/// the schemes reserved from plugins (``names``, unless the host grants them) are the same set by
/// construction: adding a case without a row does not compile.
enum BuiltInScheme: String, CaseIterable, Sendable {
    case data, file, http, https, ftp, ftps, sftp, ws, wss

    /// Every built-in scheme's name: the schemes a plugin may serve only with
    /// ``PluginLoadOptions/allowBuiltInSchemes``.
    static let names: Set<String> = Set(allCases.map(\.rawValue))
}
