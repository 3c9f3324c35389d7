// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Courier",
    platforms: [.macOS(.v13)],
    products: [
        .library(name: "Courier", targets: ["Courier"]),
        .executable(name: "courier", targets: ["CourierTool"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        // libcurl, the engine of the http, https and ftp handlers (apt: libcurl4-openssl-dev).
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        // The URL Loading System: API model, loader, task engine, session, built-in handlers.
        .target(
            name: "Courier",
            dependencies: ["CCurl"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // The `courier` command-line tool.
        .executableTarget(
            name: "CourierTool",
            dependencies: [
                "Courier",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // Runs the built `courier` binary as a subprocess; `@testable import CourierTool` for its pieces.
        .testTarget(
            name: "CourierToolTests",
            dependencies: ["CourierTool"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .testTarget(
            name: "CourierTests",
            dependencies: ["Courier"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)
