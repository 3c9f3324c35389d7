import Foundation

/// A fresh plugin directory (mode 0755) for one test: libraries copied in with mode 0755,
/// manifests with 0644. Removed by ``remove()``.
struct PluginDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("courier-plugins-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        try setMode(0o755, of: url)
    }

    func file(_ name: String) -> URL { url.appendingPathComponent(name) }

    /// Copies the library at `source` in as `name` (its own name by default).
    @discardableResult
    func addLibrary(_ source: URL, as name: String? = nil) throws -> URL {
        let target = file(name ?? source.lastPathComponent)
        try FileManager.default.copyItem(at: source, to: target)
        try setMode(0o755, of: target)
        return target
    }

    /// Copies the manifest at `source` in as `name`.
    @discardableResult
    func addManifest(_ source: URL, as name: String) throws -> URL {
        let target = file(name)
        try FileManager.default.copyItem(at: source, to: target)
        try setMode(0o644, of: target)
        return target
    }

    /// Writes a manifest with these fields (`schemes` as name → capability names).
    @discardableResult
    func writeManifest(_ name: String, plugin: String, version: String = "1.0.0", abiVersion: Int = 1,
                       library: String, schemes: [(String, [String])]) throws -> URL {
        let schemeList = schemes.map { scheme, capabilities in
            ["name": scheme, "capabilities": capabilities] as [String: Any]
        }
        let object: [String: Any] = ["name": plugin, "version": version, "abiVersion": abiVersion,
                                     "library": library, "schemes": schemeList]
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        return try writeFile(name, data)
    }

    /// Writes `data` as the file `name` with mode 0644.
    @discardableResult
    func writeFile(_ name: String, _ data: Data) throws -> URL {
        let target = file(name)
        try data.write(to: target)
        try setMode(0o644, of: target)
        return target
    }

    func setMode(_ mode: Int, of target: URL) throws {
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: target.path)
    }

    func remove() { try? FileManager.default.removeItem(at: url) }
}
