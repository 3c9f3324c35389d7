import Foundation

/// Why Courier refused one plugin file: the file, and the reason.
///
/// A refused plugin serves nothing; the other plugins of the same directory are unaffected.
/// Errors found when a directory is loaded are returned in its ``PluginLoadReport``; errors found
/// later, when a library is first opened, fail the task that needed it (a `URLError` with this
/// error as its underlying error) and are listed in ``CourierPlugins/failures``.
public struct PluginLoadError: Error, Sendable, Hashable, CustomStringConvertible, LocalizedError {
    /// What was wrong.
    public enum Reason: Error, Sendable, Hashable {
        /// The directory cannot be listed, or is not a directory.
        case unreadableDirectory(String)
        /// The manifest cannot be read.
        case unreadableManifest(String)
        /// The manifest is not valid JSON of the expected shape, or a field is out of range.
        case invalidManifest(String)
        /// The library the manifest names is not there.
        case missingLibrary(String)
        /// The library file is not a shared library.
        case notASharedLibrary(String)
        /// The dynamic loader refused the library (a missing dependency, a wrong architecture…).
        case cannotOpenLibrary(String)
        /// The library does not export `courier_plugin_entry`.
        case missingEntrySymbol
        /// The manifest or the descriptor asks for an ABI version this host does not support.
        case unsupportedABIVersion(found: Int, supported: ClosedRange<Int>)
        /// The descriptor the entry function returned is malformed.
        case invalidDescriptor(String)
        /// A scheme name is not a valid URL scheme.
        case invalidScheme(String)
        /// A scheme is already served by another plugin (named in the second value).
        case duplicateScheme(String, servedBy: String)
        /// A scheme is one of Courier's built-in schemes, which plugins may not take over unless
        /// the host passes ``PluginLoadOptions/allowBuiltInSchemes``.
        case builtInScheme(String)
        /// The file or its directory is writable by others than its owner, or owned by another user.
        case insecurePermissions(String)
        /// The library's descriptor and its manifest disagree.
        case manifestMismatch(String)
    }

    /// The file that was refused: a manifest, a library or a directory.
    public let file: URL
    /// Why.
    public let reason: Reason

    /// An error for `file`.
    public init(file: URL, reason: Reason) {
        self.file = file
        self.reason = reason
    }

    /// The reason in words.
    public var message: String {
        switch reason {
        case .unreadableDirectory(let detail): return "cannot read the plugin directory: \(detail)"
        case .unreadableManifest(let detail): return "cannot read the manifest: \(detail)"
        case .invalidManifest(let detail): return "invalid manifest: \(detail)"
        case .missingLibrary(let name): return "the library \(name) named by the manifest does not exist"
        case .notASharedLibrary(let detail): return "not a shared library: \(detail)"
        case .cannotOpenLibrary(let detail): return "cannot open the library: \(detail)"
        case .missingEntrySymbol: return "the library does not export courier_plugin_entry"
        case .unsupportedABIVersion(let found, let supported):
            let range = supported.lowerBound == supported.upperBound ? "\(supported.lowerBound)"
                : "\(supported.lowerBound)–\(supported.upperBound)"
            return "unsupported plugin ABI version \(found) (this host supports \(range))"
        case .invalidDescriptor(let detail): return "invalid plugin descriptor: \(detail)"
        case .invalidScheme(let scheme): return "invalid scheme name \"\(scheme)\""
        case .duplicateScheme(let scheme, let owner): return "the scheme \(scheme) is already served by \(owner)"
        case .builtInScheme(let scheme):
            return "the scheme \(scheme) is built into Courier; plugins may take it over only when the host allows it"
        case .insecurePermissions(let detail): return "refused, insecure permissions: \(detail)"
        case .manifestMismatch(let detail): return "the library does not match its manifest: \(detail)"
        }
    }

    /// `<file>: <reason>`.
    public var description: String { "\(file.path): \(message)" }

    /// Same as ``description``.
    public var errorDescription: String? { description }
}
