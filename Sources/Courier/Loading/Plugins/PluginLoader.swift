import Foundation

/// The plugins of the process: which library serves which scheme, and every refusal so far.
///
/// ``shared`` is the loader the session's ``ProtocolResolver`` asks; creating it loads the
/// directories in `COURIER_PLUGIN_PATH`. Other instances exist only for tests.
final class PluginLoader: Sendable {
    /// The loader URL sessions use. Its first use loads `COURIER_PLUGIN_PATH`.
    static let shared: PluginLoader = {
        let loader = PluginLoader()
        for directory in PluginEnvironment.directories(ProcessInfo.processInfo.environment) {
            loader.load(directory: directory, options: [])
        }
        return loader
    }()

    private struct State {
        /// Lowercase scheme → the library serving it.
        var schemes: [String: PluginLibrary] = [:]
        /// Every accepted library, in the order accepted.
        var libraries: [PluginLibrary] = []
        /// Every refusal, in the order found.
        var failures: [PluginLoadError] = []
    }
    private let state = Locked(State())

    init() {}

    /// Loads every manifest (`*.json`) in `directory`; see ``CourierPlugins/load(directory:options:)``.
    @discardableResult
    func load(directory: URL, options: PluginLoadOptions) -> PluginLoadReport {
        let directory = directory.standardizedFileURL
        if let problem = PluginFileChecks.directoryProblem(directory) {
            return record(PluginLoadReport(loaded: [], failures: [PluginLoadError(file: directory, reason: problem)]))
        }
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        } catch {
            let reason = PluginLoadError.Reason.unreadableDirectory((error as NSError).localizedDescription)
            return record(PluginLoadReport(loaded: [], failures: [PluginLoadError(file: directory, reason: reason)]))
        }
        var loaded: [LoadedPlugin] = []
        var failures: [PluginLoadError] = []
        for name in names.sorted() where name.hasSuffix(".json") && !name.hasPrefix(".") {
            let manifestURL = directory.appendingPathComponent(name)
            switch accept(manifestURL: manifestURL, options: options) {
            case .success(let plugin): loaded.append(plugin)
            case .failure(let error): failures.append(error)
            }
        }
        return record(PluginLoadReport(loaded: loaded, failures: failures))
    }

    private func record(_ report: PluginLoadReport) -> PluginLoadReport {
        if !report.failures.isEmpty {
            state.withLock { $0.failures.append(contentsOf: report.failures) }
        }
        return report
    }

    /// Reads, checks and registers one manifest and its library.
    private func accept(manifestURL: URL, options: PluginLoadOptions) -> Result<LoadedPlugin, PluginLoadError> {
        let refuse = { (file: URL, reason: PluginLoadError.Reason) in
            Result<LoadedPlugin, PluginLoadError>.failure(PluginLoadError(file: file, reason: reason))
        }
        switch PluginFileChecks.fileCheck(manifestURL) {
        case .failure(.unreadable(let detail)): return refuse(manifestURL, .unreadableManifest(detail))
        case .failure(.notRegular): return refuse(manifestURL, .unreadableManifest("not a regular file"))
        case .failure(.insecure(let reason)): return refuse(manifestURL, reason)
        case .success: break
        }
        let data: Data
        do {
            let handle = try FileHandle(forReadingFrom: manifestURL)
            defer { try? handle.close() }
            data = try handle.read(upToCount: PluginManifest.maximumSize + 1) ?? Data()
        } catch {
            return refuse(manifestURL, .unreadableManifest((error as NSError).localizedDescription))
        }
        guard data.count <= PluginManifest.maximumSize else {
            return refuse(manifestURL, .invalidManifest("larger than \(PluginManifest.maximumSize) bytes"))
        }
        let manifest: PluginManifest
        switch PluginManifest.decode(data) {
        case .success(let decoded): manifest = decoded
        case .failure(let reason): return refuse(manifestURL, reason)
        }
        if !options.contains(.allowBuiltInSchemes),
           let reserved = manifest.schemes.first(where: { BuiltInScheme.names.contains($0.name) }) {
            return refuse(manifestURL, .builtInScheme(reserved.name))
        }
        let libraryURL = manifestURL.deletingLastPathComponent().appendingPathComponent(manifest.library)
        let identity: PluginFileChecks.Identity
        switch PluginFileChecks.fileCheck(libraryURL) {
        case .failure(.unreadable): return refuse(manifestURL, .missingLibrary(manifest.library))
        case .failure(.notRegular): return refuse(libraryURL, .notASharedLibrary("not a regular file"))
        case .failure(.insecure(let reason)): return refuse(libraryURL, reason)
        case .success(let found): identity = found
        }
        guard PluginFileChecks.looksLikeSharedLibrary(libraryURL) else {
            return refuse(libraryURL, .notASharedLibrary("the file is not an ELF shared object"))
        }
        if let problem = PluginSwiftRuntimeCheck.problem(with: libraryURL) {
            return refuse(libraryURL, .cannotOpenLibrary(problem))
        }
        let candidate = PluginLibrary(manifest: manifest, manifestURL: manifestURL, libraryURL: libraryURL, identity: identity)
        let registered: Result<PluginLibrary, PluginLoadError> = state.withLock { state in
            if let existing = state.libraries.first(where: { $0.identity == identity }) {
                // The same library again (same file, or a link to it): harmless, nothing changes.
                return .success(existing)
            }
            for scheme in manifest.schemes {
                if let owner = state.schemes[scheme.name] {
                    return .failure(PluginLoadError(file: manifestURL, reason: .duplicateScheme(
                        scheme.name, servedBy: "\(owner.manifest.name) (\(owner.manifestURL.path))")))
                }
            }
            for scheme in manifest.schemes { state.schemes[scheme.name] = candidate }
            state.libraries.append(candidate)
            return .success(candidate)
        }
        switch registered {
        case .failure(let error):
            return .failure(error)
        case .success(let library):
            if options.contains(.openLibrariesNow), case .failure(let error) = library.open() {
                withdraw(library)
                return .failure(error)
            }
            return .success(library.summary)
        }
    }

    /// Stops serving `library`'s schemes after its library failed to open.
    private func withdraw(_ library: PluginLibrary) {
        state.withLock { state in
            for (scheme, owner) in state.schemes where owner === library { state.schemes[scheme] = nil }
            state.libraries.removeAll { $0 === library }
        }
    }

    /// Whether a plugin serves `scheme`.
    func serves(scheme: String) -> Bool {
        let key = scheme.lowercased()
        return state.withLock { $0.schemes[key] != nil }
    }

    /// The library serving `scheme`, or nil.
    func library(forScheme scheme: String) -> PluginLibrary? {
        let key = scheme.lowercased()
        return state.withLock { $0.schemes[key] }
    }

    /// Opens the library serving `scheme`. When it cannot be opened, its schemes are withdrawn
    /// (later requests fall through to the built-in handlers) and the error is recorded.
    func open(scheme: String) -> Result<(PluginLibrary, PluginHandlerFunctions), PluginLoadError>? {
        guard let library = library(forScheme: scheme) else { return nil }
        switch library.open() {
        case .success(let functions):
            return .success((library, functions))
        case .failure(let error):
            let first: Bool = state.withLock { state in
                guard state.libraries.contains(where: { $0 === library }) else { return false }
                state.failures.append(error)
                return true
            }
            if first { withdraw(library) }
            return .failure(error)
        }
    }

    /// Every plugin accepted so far and still serving.
    var loaded: [LoadedPlugin] { state.withLock { $0.libraries.map(\.summary) } }

    /// Every refusal so far: from loading directories and from opening libraries.
    var failures: [PluginLoadError] { state.withLock { $0.failures } }
}
