import Foundation

/// A plugin's manifest: the JSON file beside its library that lets Courier know the plugin's
/// schemes without opening the library.
///
/// ```json
/// {
///   "name": "gopher",
///   "version": "1.0.0",
///   "abiVersion": 1,
///   "library": "libCourierGopher.so",
///   "schemes": [ { "name": "gopher", "capabilities": ["read", "list"] } ]
/// }
/// ```
struct PluginManifest: Sendable, Equatable {
    var name: String
    var version: String
    var abiVersion: Int
    /// The library's file name, in the manifest's directory.
    var library: String
    var schemes: [LoadedPlugin.Scheme]

    /// Manifests larger than this are refused unread.
    static let maximumSize = 64 * 1024
    /// The most schemes one plugin may serve.
    static let maximumSchemes = 64

    /// The JSON shape, before validation.
    private struct Document: Decodable {
        struct Scheme: Decodable {
            var name: String
            var capabilities: [String]
        }
        var name: String
        var version: String
        var abiVersion: Int
        var library: String
        var schemes: [Scheme]
    }

    /// Decodes and validates a manifest. The reason is an invalid-manifest, unsupported-ABI or
    /// invalid-scheme one.
    static func decode(_ data: Data) -> Result<PluginManifest, PluginLoadError.Reason> {
        let document: Document
        do {
            document = try JSONDecoder().decode(Document.self, from: data)
        } catch let error as DecodingError {
            return .failure(.invalidManifest(describe(error)))
        } catch {
            return .failure(.invalidManifest("\(error)"))
        }
        if let problem = textProblem(document.name, field: "name") { return .failure(.invalidManifest(problem)) }
        if let problem = textProblem(document.version, field: "version") { return .failure(.invalidManifest(problem)) }
        guard PluginABI.supportedVersions.contains(document.abiVersion) else {
            return .failure(.unsupportedABIVersion(found: document.abiVersion, supported: PluginABI.supportedVersions))
        }
        let library = document.library
        guard !library.isEmpty, library != ".", library != "..", !library.contains("/"),
              !library.contains("\0"), library.utf8.count <= 255 else {
            return .failure(.invalidManifest("\"library\" must be a file name in the manifest's directory"))
        }
        guard !document.schemes.isEmpty else { return .failure(.invalidManifest("\"schemes\" is empty")) }
        guard document.schemes.count <= maximumSchemes else {
            return .failure(.invalidManifest("more than \(maximumSchemes) schemes"))
        }
        var schemes: [LoadedPlugin.Scheme] = []
        for entry in document.schemes {
            guard isValidScheme(entry.name) else { return .failure(.invalidScheme(entry.name)) }
            guard !schemes.contains(where: { $0.name == entry.name }) else {
                return .failure(.invalidManifest("the scheme \(entry.name) is listed twice"))
            }
            guard let capabilities = PluginCapabilities(names: entry.capabilities) else {
                let known = PluginCapabilities.names.map(\.name).joined(separator: ", ")
                return .failure(.invalidManifest("unknown capability for \(entry.name) (known: \(known))"))
            }
            guard !capabilities.intersection([.read, .write]).isEmpty else {
                return .failure(.invalidManifest("the scheme \(entry.name) needs \"read\" or \"write\""))
            }
            schemes.append(LoadedPlugin.Scheme(name: entry.name, capabilities: capabilities))
        }
        return .success(PluginManifest(name: document.name, version: document.version,
                                       abiVersion: document.abiVersion, library: library, schemes: schemes))
    }

    /// Whether `scheme` is a lowercase URL scheme (RFC 3986: a letter, then letters, digits, `+`,
    /// `-`, `.`), at most 64 characters.
    static func isValidScheme(_ scheme: String) -> Bool {
        let bytes = Array(scheme.utf8)
        guard let first = bytes.first, bytes.count <= 64, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first) else {
            return false
        }
        return bytes.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
        }
    }

    /// Why `text` is not an acceptable name or version, or nil.
    private static func textProblem(_ text: String, field: String) -> String? {
        if text.isEmpty { return "\"\(field)\" is empty" }
        if text.utf8.count > 128 { return "\"\(field)\" is longer than 128 bytes" }
        if text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            return "\"\(field)\" contains control characters"
        }
        return nil
    }

    private static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let keys = context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }
            return keys.isEmpty ? "" : " at \(keys.joined(separator: "."))"
        }
        switch error {
        case .keyNotFound(let key, let context): return "missing \"\(key.stringValue)\"\(path(context))"
        case .typeMismatch(_, let context): return "wrong type\(path(context))"
        case .valueNotFound(_, let context): return "missing value\(path(context))"
        case .dataCorrupted(let context): return "not valid JSON\(path(context))"
        @unknown default: return "\(error)"
        }
    }
}
