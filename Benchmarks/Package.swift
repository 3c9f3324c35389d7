// swift-tools-version:6.0
// Courier's benchmark: one set of source files (Sources/Shared/) built twice, once against
// Courier and once against FoundationNetworking, so both are measured by the same code.
// A package of its own so that the main build and tests stay lean; run it with `Benchmarks/run.sh`.
import PackageDescription

let package = Package(
    name: "CourierBenchmarks",
    products: [
        .executable(name: "bench-courier", targets: ["BenchCourier"]),
        .executable(name: "bench-foundation", targets: ["BenchFoundation"]),
    ],
    dependencies: [
        // The parent package (Courier). The name lets `dependencies: ["Courier"]` below find its
        // library whatever the checkout's folder is called.
        .package(name: "Courier", path: ".."),
    ],
    targets: [
        // Sources/BenchCourier/*.swift are relative symlinks to ../Shared/*.swift.
        .executableTarget(
            name: "BenchCourier",
            dependencies: ["Courier"],
            path: "Sources/BenchCourier",
            swiftSettings: [
                .define("USE_COURIER"),
                .swiftLanguageMode(.v6),
            ]
        ),
        // Sources/BenchFoundation/*.swift are the same symlinks; without USE_COURIER the files
        // import FoundationNetworking.
        .executableTarget(
            name: "BenchFoundation",
            path: "Sources/BenchFoundation",
            swiftSettings: [
                .swiftLanguageMode(.v6),
            ]
        ),
    ]
)
