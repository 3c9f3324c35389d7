// swift-tools-version:6.1
// The WebSocket benchmark (Benchmarks/websocket-part.sh): one echo server and one small client per
// library, each measuring the same three things against that server (see
// Sources/WSBenchSupport/BenchOptions.swift). A package of its own, so that Courier itself never
// depends on swift-nio: the server and the two peers (vapor/websocket-kit and
// hummingbird-project/swift-websocket) are built on it, Courier's client is not.
import PackageDescription

let swift6: [SwiftSetting] = [.swiftLanguageMode(.v6)]

let package = Package(
    name: "CourierWebSocketBenchmarks",
    products: [
        .executable(name: "ws-bench-server", targets: ["WSBenchServer"]),
        .executable(name: "ws-bench-courier", targets: ["WSBenchCourier"]),
        .executable(name: "ws-bench-websocketkit", targets: ["WSBenchWebSocketKit"]),
        .executable(name: "ws-bench-hummingbird", targets: ["WSBenchHummingbird"]),
    ],
    dependencies: [
        // Courier, this repository (the name lets `"Courier"` below find its library).
        .package(name: "Courier", path: "../.."),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.0"),
        .package(url: "https://github.com/vapor/websocket-kit.git", from: "2.16.0"),
        .package(url: "https://github.com/hummingbird-project/swift-websocket.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
    ],
    targets: [
        // What every client shares: options, clocks, peak RSS, the output lines.
        .target(name: "WSBenchSupport", swiftSettings: swift6),
        // The echo server: swift-nio's WebSocket codec on one event-loop thread.
        .executableTarget(
            name: "WSBenchServer",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ],
            swiftSettings: swift6
        ),
        .executableTarget(
            name: "WSBenchCourier",
            dependencies: ["WSBenchSupport", .product(name: "Courier", package: "Courier")],
            swiftSettings: swift6
        ),
        .executableTarget(
            name: "WSBenchWebSocketKit",
            dependencies: [
                "WSBenchSupport",
                .product(name: "WebSocketKit", package: "websocket-kit"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swift6
        ),
        .executableTarget(
            name: "WSBenchHummingbird",
            dependencies: [
                "WSBenchSupport",
                .product(name: "WSClient", package: "swift-websocket"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swift6
        ),
    ]
)
