// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Courier",
        products: [
        .library(name: "Courier", targets: ["Courier"]),
        .executable(name: "courier", targets: ["CourierTool"]),
        // The per-user transfer agent of background sessions (Documentation/Background.md). An app
        // that uses background sessions ships it beside its own executable (or on PATH).
        .executable(name: "courier-agent", targets: ["CourierAgent"]),
        // Handler plugins: the C contract (courier_plugin.h) and the Swift kit for plugin authors.
        .library(name: "CourierPluginABI", targets: ["CourierPluginABI"]),
        .library(name: "CourierPluginKit", targets: ["CourierPluginKit"]),
        // Serves sftp, file and plugin URLs to FoundationNetworking's URLSession through Courier.
        .library(name: "CourierFoundationBridge", targets: ["CourierFoundationBridge"]),
        // The example plugins, loaded at run time from a directory (see Documentation/Plugins.md).
        .library(name: "CourierGopher", type: .dynamic, targets: ["CourierGopher"]),
        .library(name: "CourierZip", type: .dynamic, targets: ["CourierZip"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/weichsel/ZIPFoundation", from: "0.9.20"),
        // Logging (Documentation/Observability.md). 1.11 is the first with `LogHandler.log(event:)`,
        // which the tool's `-v` handler implements.
        .package(url: "https://github.com/apple/swift-log", from: "1.11.0"),
    ],
    targets: [
        // libcurl, the engine of the http, https and ftp handlers (apt: libcurl4-openssl-dev).
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        // libssh2, the engine of the sftp handler (apt: libssh2-1-dev).
        .systemLibrary(
            name: "CSSH2",
            pkgConfig: "libssh2",
            providers: [.apt(["libssh2-1-dev"])]
        ),
        // SQLite, the transfer agent's durable store (apt: libsqlite3-dev).
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // OpenSSL, the TLS of stream tasks over Courier's own sockets (apt: libssl-dev).
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
        ),
        // GSS-API for the WebSocket handshake's Negotiate (SPNEGO) token, loaded at run time from MIT
        // Kerberos' libgssapi_krb5.so.2 (which libcurl loads too): no Kerberos package is needed to
        // build Courier.
        .target(name: "CGSSAPI", path: "Sources/CGSSAPI"),
        // The URL Loading System: API model, loader, task engine, session, built-in handlers.
        .target(
            name: "Courier",
            dependencies: ["CCurl", "CSSH2", "COpenSSL", "CGSSAPI", "CourierPluginABI", .product(name: "Logging", package: "swift-log")],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // The plugin ABI: the C header every plugin and the host are built against.
        .target(name: "CourierPluginABI"),
        // Helps write a plugin in Swift; a plugin links it, never Courier itself.
        .target(
            name: "CourierPluginKit",
            dependencies: ["CourierPluginABI"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // A FoundationNetworking URLProtocol that loads the schemes FoundationNetworking lacks through
        // Courier (Documentation/FoundationBridge.md).
        .target(
            name: "CourierFoundationBridge",
            dependencies: ["Courier"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // gopher:// in C, against courier_plugin.h alone.
        .target(name: "CourierGopher", dependencies: ["CourierPluginABI"], path: "Plugins/Gopher/Sources"),
        // zip: in Swift, with the plugin kit and ZIPFoundation.
        .target(
            name: "CourierZip",
            dependencies: ["CourierPluginKit", .product(name: "ZIPFoundation", package: "ZIPFoundation")],
            path: "Plugins/Zip/Sources",
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // The background sessions' transfer agent: its socket server, SQLite store and transfers
        // (run through Courier's own URLSession). Used by `courier-agent` and `courier agent`.
        .target(
            name: "CourierAgentCore",
            dependencies: ["Courier", "CSQLite"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // `courier-agent`: the transfer agent as a small executable of its own.
        .executableTarget(
            name: "CourierAgent",
            dependencies: ["CourierAgentCore"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // The `courier` command-line tool.
        .executableTarget(
            name: "CourierTool",
            dependencies: [
                "Courier",
                "CourierAgentCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                // Writes the archive the embedded self-check's zip: URLs read.
                .product(name: "ZIPFoundation", package: "ZIPFoundation"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // libFuzzer harnesses for the parsers that read hostile input, one executable that runs the
        // harness COURIER_FUZZ_TARGET names. `scripts/fuzz` builds it with `-sanitize=fuzzer,address
        // -D COURIER_FUZZ`; without that define it is a stub that says how to build it.
        .executableTarget(
            name: "CourierFuzz",
            dependencies: ["Courier"],
            path: "Tests/Fuzz/Harnesses",
            // `@_extern(c)` declares libFuzzer's driver, which the fuzz build links.
            swiftSettings: [.swiftLanguageMode(.v6), .enableExperimentalFeature("Extern")]
        ),
        // The code examples of README.md and Documentation/*.md, each file holding its block verbatim
        // (Examples/README.md). Executables, not products: `swift build` builds them beside `courier`,
        // and CourierExampleTests runs them and checks that they print what the documentation says.
        .executableTarget(name: "HelloData", dependencies: ["Courier"], path: "Examples/HelloData",
                          swiftSettings: [.swiftLanguageMode(.v6)]),
        .executableTarget(name: "ListDirectory", dependencies: ["Courier"], path: "Examples/ListDirectory",
                          swiftSettings: [.swiftLanguageMode(.v6)]),
        .executableTarget(name: "StreamFile", dependencies: ["Courier"], path: "Examples/StreamFile",
                          swiftSettings: [.swiftLanguageMode(.v6)]),
        .executableTarget(name: "LoadPlugins", dependencies: ["Courier"], path: "Examples/LoadPlugins",
                          swiftSettings: [.swiftLanguageMode(.v6)]),
        .executableTarget(name: "BridgeFile", dependencies: ["CourierFoundationBridge"], path: "Examples/BridgeFile",
                          swiftSettings: [.swiftLanguageMode(.v6)]),
        // Plugins.md's Swift plugin: compiled here against the kit alone; the check links it into a
        // shared library and loads it with `courier --plugins`.
        .target(name: "HelloPlugin", dependencies: ["CourierPluginKit"], path: "Examples/HelloPlugin",
                swiftSettings: [.swiftLanguageMode(.v6)]),
        // Checks that the documentation's code blocks are the examples above and run as shown.
        .testTarget(
            name: "CourierExampleTests",
            path: "Tests/ExampleTests",
            // The archive the plugin examples read (`~/site.zip`).
            exclude: ["Fixtures"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // Runs the built `courier` binary as a subprocess; `@testable import CourierTool` for its pieces.
        // Its SharedServers/ are symbolic links to CourierTests' test servers (one copy of each).
        .testTarget(
            name: "CourierToolTests",
            dependencies: ["CourierTool"],
            exclude: ["SharedServers/ftp_server.py", "SharedServers/websocket_server.py"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // glibc's heap statistics for the tests (mallinfo2, not in Swift's Glibc module).
        .systemLibrary(name: "CMallocInfo", path: "Tests/CMallocInfo"),
        .testTarget(
            name: "CourierTests",
            dependencies: ["Courier", "CourierAgentCore", "CMallocInfo", .product(name: "Logging", package: "swift-log")],
            // Test servers the tests start as processes (found through #filePath, not bundled).
            exclude: ["TestServers/ftp_server.py", "TestServers/websocket_server.py", "TestServers/stream_tls_server.py",
                      "TestServers/negotiate_server.py", "TestServers/ntlm_server.py", "TestServers/auth_server_support.py",
                      "WebSocket/gssapi_declarations_check.c"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // Loads the plugins above from a directory, as an app would: they are not linked in. The kit
        // is linked only to check that its listing encoder writes what Courier's does.
        .testTarget(
            name: "CourierPluginTests",
            dependencies: ["Courier", "CourierPluginKit"],
            path: "Tests/PluginTests",
            // Fixtures: plugin manifests. The broken and test-only plugins in Tests/PluginFixtures are
            // not targets: the tests compile them (Support/FixturePlugins.swift).
            exclude: ["Fixtures"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // FoundationNetworking's own URLSession loading sftp, file and plugin URLs through the bridge,
        // against a real sshd and a plugin the tests compile (Fixtures/, not a target).
        .testTarget(
            name: "FoundationBridgeTests",
            dependencies: ["CourierFoundationBridge", "Courier"],
            exclude: ["Fixtures"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)

// DocC (`scripts/docs`): swift-docc-plugin is declared only when COURIER_DOCS=1, so neither a package
// that depends on Courier nor this package's own build and tests fetch or resolve it.
if Context.environment["COURIER_DOCS"] == "1" {
    package.dependencies.append(.package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"))
}
