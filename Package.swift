// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "Reel",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "reel", targets: ["reel"]),
        .library(name: "ReelCore", targets: ["ReelCore"]),
        .library(name: "ReelLoading", targets: ["ReelLoading"]),
        .library(name: "ReelMedia", targets: ["ReelMedia"]),
        .library(name: "ReelTestSupport", targets: ["ReelTestSupport"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
    ],
    targets: [
        // C libraries, each behind one bridge module.
        .systemLibrary(
            name: "CFFmpeg",
            path: "Sources/CFFmpeg",
            pkgConfig: "libavformat",
            providers: [.apt([
                "libavformat-dev", "libavcodec-dev", "libavutil-dev",
                "libswscale-dev", "libswresample-dev", "libavfilter-dev",
            ])]
        ),
        .systemLibrary(
            name: "CSDL2",
            path: "Sources/CSDL2",
            pkgConfig: "SDL2_ttf",
            providers: [.apt(["libsdl2-dev", "libsdl2-ttf-dev"])]
        ),

        // Pure core: time, ranges, clocks, the loader protocol, state machines.
        .target(name: "ReelCore"),

        // Loaders: files now; HTTP, the range cache and the preloader next.
        .target(
            name: "ReelLoading",
            dependencies: [
                "ReelCore",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // FFmpeg behind one bridge: AVIO, demux, decode, conversion, the player.
        .target(
            name: "ReelMedia",
            dependencies: [
                "ReelCore", "CFFmpeg",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // Fakes, contract suites and fixtures for tests (and for anyone embedding Reel).
        .target(
            name: "ReelTestSupport",
            dependencies: ["ReelCore", "ReelMedia"]
        ),

        // The command line: wiring only.
        .executableTarget(
            name: "reel",
            dependencies: [
                "ReelCore",
                "ReelLoading",
                "ReelMedia",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        .testTarget(
            name: "ReelCoreTests",
            dependencies: [
                "ReelCore",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(
            name: "ReelTestSupportTests",
            dependencies: ["ReelCore", "ReelLoading", "ReelTestSupport"]
        ),
        .testTarget(
            name: "ReelMediaTests",
            dependencies: ["ReelCore", "ReelMedia", "ReelLoading", "ReelTestSupport"]
        ),
        .testTarget(
            name: "SystemLibraryTests",
            dependencies: ["CFFmpeg", "CSDL2"]
        ),
    ]
)
