import Foundation
internal import CourierPluginABI

/// The functions of a plugin's handler table, copied out of its descriptor. The library is never
/// closed, so they stay valid for the life of the process.
struct PluginHandlerFunctions: @unchecked Sendable {
    typealias Create = @convention(c) (UnsafePointer<courier_request>?, UnsafePointer<courier_client>?,
                                       UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer?
    typealias HandleFunction = @convention(c) (UnsafeMutableRawPointer?) -> Void

    let create: Create
    let start: HandleFunction
    let stop: HandleFunction
    let destroy: HandleFunction
    /// Optional in the ABI.
    let resumeProducing: HandleFunction?
}

/// What a plugin's entry function returned, read and checked field by field.
struct PluginDescriptor {
    var abiVersion: Int
    var name: String
    var version: String
    var schemes: [LoadedPlugin.Scheme]
    var functions: PluginHandlerFunctions

    /// Reads the descriptor at `pointer`. Fields are read only when the descriptor's ABI version is
    /// supported and its `struct_size` covers them.
    static func read(_ pointer: UnsafeRawPointer) -> Result<PluginDescriptor, PluginLoadError.Reason> {
        // abi_version is the first field in every ABI version: read it before anything else.
        let abiVersion = Int(pointer.load(as: UInt32.self))
        guard PluginABI.supportedVersions.contains(abiVersion) else {
            return .failure(.unsupportedABIVersion(found: abiVersion, supported: PluginABI.supportedVersions))
        }
        let sizeOffset = MemoryLayout<courier_plugin_descriptor>.offset(of: \.struct_size) ?? 4
        let structSize = Int(pointer.load(fromByteOffset: sizeOffset, as: UInt32.self))
        guard structSize >= MemoryLayout<courier_plugin_descriptor>.size else {
            return .failure(.invalidDescriptor("struct_size \(structSize) is smaller than ABI \(abiVersion)'s descriptor"))
        }
        let descriptor = pointer.assumingMemoryBound(to: courier_plugin_descriptor.self).pointee
        guard let name = PluginABI.string(descriptor.name), !name.isEmpty else {
            return .failure(.invalidDescriptor("no name"))
        }
        guard let version = PluginABI.string(descriptor.version), !version.isEmpty else {
            return .failure(.invalidDescriptor("no version"))
        }
        guard descriptor.scheme_count > 0, descriptor.scheme_count <= PluginManifest.maximumSchemes,
              let schemeArray = descriptor.schemes else {
            return .failure(.invalidDescriptor("scheme_count must be 1…\(PluginManifest.maximumSchemes) with a schemes array"))
        }
        var schemes: [LoadedPlugin.Scheme] = []
        for index in 0..<descriptor.scheme_count {
            let entry = schemeArray[index]
            guard let scheme = PluginABI.string(entry.name), PluginManifest.isValidScheme(scheme) else {
                return .failure(.invalidScheme(PluginABI.string(entry.name) ?? "(NULL)"))
            }
            let capabilities = PluginCapabilities(rawValue: entry.capabilities).intersection(.known)
            schemes.append(LoadedPlugin.Scheme(name: scheme, capabilities: capabilities))
        }
        guard let tablePointer = descriptor.handlers else { return .failure(.invalidDescriptor("no handler table")) }
        switch readFunctions(UnsafeRawPointer(tablePointer)) {
        case .failure(let reason):
            return .failure(reason)
        case .success(let functions):
            return .success(PluginDescriptor(abiVersion: abiVersion, name: name, version: version,
                                             schemes: schemes, functions: functions))
        }
    }

    /// The handler table's functions; create, start, stop and destroy are required.
    private static func readFunctions(_ table: UnsafeRawPointer) -> Result<PluginHandlerFunctions, PluginLoadError.Reason> {
        let size = Int(table.load(as: UInt32.self))
        let optionalOffset = MemoryLayout<courier_handler_table>.offset(of: \.resume_producing)
            ?? MemoryLayout<courier_handler_table>.size
        guard size >= optionalOffset else {
            return .failure(.invalidDescriptor("the handler table's struct_size \(size) is too small"))
        }
        // Read the required part field by field: the plugin's table may end before resume_producing.
        func field<T>(_ path: KeyPath<courier_handler_table, T>) -> T? {
            guard let offset = MemoryLayout<courier_handler_table>.offset(of: path),
                  offset + MemoryLayout<T>.size <= size else { return nil }
            return table.load(fromByteOffset: offset, as: T.self)
        }
        guard let create = field(\.create) ?? nil, let start = field(\.start) ?? nil,
              let stop = field(\.stop) ?? nil, let destroy = field(\.destroy) ?? nil else {
            return .failure(.invalidDescriptor("create, start, stop and destroy are required"))
        }
        let resume = field(\.resume_producing) ?? nil
        return .success(PluginHandlerFunctions(create: create, start: start, stop: stop, destroy: destroy,
                                               resumeProducing: resume))
    }

    /// How the descriptor disagrees with `manifest`, or nil when they agree.
    func disagreement(with manifest: PluginManifest) -> String? {
        var problems: [String] = []
        if name != manifest.name { problems.append("name \"\(name)\" ≠ manifest \"\(manifest.name)\"") }
        if version != manifest.version { problems.append("version \(version) ≠ manifest \(manifest.version)") }
        if abiVersion != manifest.abiVersion { problems.append("ABI version \(abiVersion) ≠ manifest \(manifest.abiVersion)") }
        let mine = Dictionary(schemes.map { ($0.name, $0.capabilities) }, uniquingKeysWith: { first, _ in first })
        let theirs = Dictionary(manifest.schemes.map { ($0.name, $0.capabilities) }, uniquingKeysWith: { first, _ in first })
        if mine.count != schemes.count { problems.append("a scheme is listed twice") }
        if mine != theirs {
            let describe = { (table: [String: PluginCapabilities]) in
                table.keys.sorted().map { "\($0) (\(table[$0] ?? []))" }.joined(separator: ", ")
            }
            problems.append("schemes [\(describe(mine))] ≠ manifest [\(describe(theirs))]")
        }
        return problems.isEmpty ? nil : problems.joined(separator: "; ")
    }
}
