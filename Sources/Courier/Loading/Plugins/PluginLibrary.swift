import Foundation
internal import CourierPluginABI
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One accepted plugin: its manifest, its files, and its library once opened.
///
/// The library is opened the first time ``open()`` is called — normally when one of its schemes is
/// first used — and never closed, since handler threads of the plugin may outlive any request.
final class PluginLibrary: Sendable {
    let manifest: PluginManifest
    let manifestURL: URL
    let libraryURL: URL
    let identity: PluginFileChecks.Identity

    private enum State: Sendable {
        case closed
        case open(PluginHandlerFunctions)
        case failed(PluginLoadError)
    }
    private let state = Locked<State>(.closed)

    init(manifest: PluginManifest, manifestURL: URL, libraryURL: URL, identity: PluginFileChecks.Identity) {
        self.manifest = manifest
        self.manifestURL = manifestURL
        self.libraryURL = libraryURL
        self.identity = identity
    }

    /// The plugin as reported to the app.
    var summary: LoadedPlugin {
        LoadedPlugin(name: manifest.name, version: manifest.version, schemes: manifest.schemes,
                     libraryURL: libraryURL, manifestURL: manifestURL)
    }

    /// The capabilities the plugin declared for `scheme` (lowercase).
    func capabilities(forScheme scheme: String) -> PluginCapabilities {
        manifest.schemes.first { $0.name == scheme }?.capabilities ?? []
    }

    /// The library's handler functions, opening the library on first call. A failure is
    /// remembered: the library is not tried again.
    func open() -> Result<PluginHandlerFunctions, PluginLoadError> {
        state.withLock { state in
            switch state {
            case .open(let functions): return .success(functions)
            case .failed(let error): return .failure(error)
            case .closed:
                let result = openLibrary()
                switch result {
                case .success(let functions): state = .open(functions)
                case .failure(let error): state = .failed(error)
                }
                return result
            }
        }
    }

    /// Whether the library has been opened successfully.
    var isOpen: Bool {
        state.withLock { if case .open = $0 { return true } else { return false } }
    }

    private func openLibrary() -> Result<PluginHandlerFunctions, PluginLoadError> {
        let fail = { (reason: PluginLoadError.Reason) in
            Result<PluginHandlerFunctions, PluginLoadError>.failure(PluginLoadError(file: self.libraryURL, reason: reason))
        }
        // The files may have changed since the manifest was read: check them again right before
        // running any of the plugin's code.
        switch PluginFileChecks.fileCheck(libraryURL) {
        case .failure(.unreadable): return fail(.missingLibrary(libraryURL.lastPathComponent))
        case .failure(.notRegular): return fail(.notASharedLibrary("not a regular file"))
        case .failure(.insecure(let reason)): return fail(reason)
        case .success(let current) where current != identity:
            return fail(.cannotOpenLibrary("the file was replaced after its manifest was loaded"))
        case .success:
            break
        }
        if let problem = PluginFileChecks.directoryProblem(libraryURL.deletingLastPathComponent()) {
            return fail(problem)
        }
        guard PluginFileChecks.looksLikeSharedLibrary(libraryURL) else {
            return fail(.notASharedLibrary("the file is not an ELF shared object"))
        }
        if let problem = PluginSwiftRuntimeCheck.problem(with: libraryURL) {
            return fail(.cannotOpenLibrary(problem))
        }
        // RTLD_LOCAL: each plugin's symbols stay its own, so two plugins that link the same static
        // code (two Swift plugins with the plugin kit) do not bind to each other's copies.
        _ = dlerror()
        guard let handle = dlopen(libraryURL.path, RTLD_NOW | RTLD_LOCAL) else {
            let message = dlerror().map { String(cString: $0) } ?? "dlopen failed"
            return fail(.cannotOpenLibrary(message))
        }
        guard let symbol = dlsym(handle, PluginABI.entrySymbol) else { return fail(.missingEntrySymbol) }
        typealias Entry = @convention(c) () -> UnsafeRawPointer?
        let entry = unsafeBitCast(symbol, to: Entry.self)
        guard let pointer = entry() else { return fail(.invalidDescriptor("the entry function returned NULL")) }
        switch PluginDescriptor.read(pointer) {
        case .failure(let reason):
            return fail(reason)
        case .success(let descriptor):
            if let disagreement = descriptor.disagreement(with: manifest) {
                return fail(.manifestMismatch(disagreement))
            }
            return .success(descriptor.functions)
        }
    }
}
