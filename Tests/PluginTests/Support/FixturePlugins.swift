import Foundation
import Testing

/// The deliberately broken and test-only plugins in `Tests/PluginFixtures/<Name>/` (one C file each,
/// built against `courier_plugin.h` alone). They are not products of the package — nobody should be
/// able to depend on a broken plugin — so the tests compile each one themselves, once per test
/// process, with the system's C compiler (`CC`, or the first of `clang`, `cc`, `gcc` on `PATH`; the
/// Swift toolchain ships clang) into a private temporary directory.
enum FixturePlugins {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var built: [String: Result<URL, BuildError>] = [:]

    struct BuildError: Error, CustomStringConvertible {
        var description: String
    }

    /// The directory the fixtures are compiled into: a fresh one (0700) in the temporary directory.
    private static let outputDirectory: Result<URL, BuildError> = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("courier-fixture-plugins-\(UUID().uuidString)")
        do {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
            return .success(url)
        } catch {
            return .failure(BuildError(description: "cannot create \(url.path): \(error)"))
        }
    }()

    /// The compiled library of fixture `name` (the folder under `Tests/PluginFixtures/`), named
    /// `libCourierTestPlugin<name>.so`; compiled on first use.
    static func library(_ name: String) throws -> URL {
        lock.lock()
        defer { lock.unlock() }
        if let known = built[name] { return try known.get() }
        let result = Result { try compile(name) }.mapError { $0 as? BuildError ?? BuildError(description: "\($0)") }
        built[name] = result
        return try result.get()
    }

    private static func compile(_ name: String) throws -> URL {
        let output = try outputDirectory.get().appendingPathComponent("libCourierTestPlugin\(name).so")
        let root = PluginProducts.repositoryRoot
        let source = root.appendingPathComponent("Tests/PluginFixtures/\(name)")
        let files = try FileManager.default.contentsOfDirectory(atPath: source.path).filter { $0.hasSuffix(".c") }.sorted()
        guard !files.isEmpty else { throw BuildError(description: "no C source in \(source.path)") }
        let compiler = try cCompiler()
        let process = Process()
        process.executableURL = compiler
        process.arguments = ["-shared", "-fPIC", "-O1", "-std=c11", "-Wall",
                             "-I", root.appendingPathComponent("Sources/CourierPluginABI/include").path,
                             "-I", source.appendingPathComponent("include").path,
                             "-o", output.path] + files.map { source.appendingPathComponent($0).path }
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw BuildError(description: "\(compiler.path) failed for \(name): \(String(decoding: message, as: UTF8.self))")
        }
        return output
    }

    /// `CC`, or the first C compiler on `PATH`.
    private static func cCompiler() throws -> URL {
        let environment = ProcessInfo.processInfo.environment
        if let cc = environment["CC"], !cc.isEmpty, cc.hasPrefix("/") { return URL(fileURLWithPath: cc) }
        let directories = (environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").map(String.init)
        for name in ["clang", "cc", "gcc"] {
            for directory in directories {
                let candidate = URL(fileURLWithPath: directory).appendingPathComponent(name)
                if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            }
        }
        throw BuildError(description: "no C compiler (clang, cc or gcc) on PATH to build the fixture plugins")
    }
}
