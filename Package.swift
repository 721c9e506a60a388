// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "Reel",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "reel", targets: ["reel"]),
        .library(name: "ReelCore", targets: ["ReelCore"]),
        .library(name: "ReelThreads", targets: ["ReelThreads"]),
        .library(name: "ReelFeedModel", targets: ["ReelFeedModel"]),
        .library(name: "ReelDigest", targets: ["ReelDigest"]),
        .library(name: "ReelStreaming", targets: ["ReelStreaming"]),
        .library(name: "ReelCaptions", targets: ["ReelCaptions"]),
        .library(name: "ReelLoading", targets: ["ReelLoading"]),
        .library(name: "ReelMedia", targets: ["ReelMedia"]),
        .library(name: "ReelMediaTools", targets: ["ReelMediaTools"]),
        .library(name: "ReelTestSupport", targets: ["ReelTestSupport"]),
        .library(name: "ReelOrigin", targets: ["ReelOrigin"]),
        .library(name: "ReelFeed", targets: ["ReelFeed"]),
        .library(name: "ReelTerminal", targets: ["ReelTerminal"]),
        .library(name: "ReelDemo", targets: ["ReelDemo"]),
        .library(name: "ReelSDL", targets: ["ReelSDL"]),
        .library(name: "ReelAccounts", targets: ["ReelAccounts"]),
        .library(name: "ReelAccountClient", targets: ["ReelAccountClient"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        // API documentation only (scripts/docs-api.sh): `swift package generate-documentation`.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
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

        .systemLibrary(
            name: "CLibass",
            path: "Sources/CLibass",
            pkgConfig: "libass",
            providers: [.apt(["libass-dev"])]
        ),
        .systemLibrary(
            name: "CNettle",
            path: "Sources/CNettle",
            pkgConfig: "nettle",
            providers: [.apt(["nettle-dev"])]
        ),
        .systemLibrary(
            name: "CZlib",
            path: "Sources/CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        .systemLibrary(
            name: "CArgon2",
            path: "Sources/CArgon2",
            pkgConfig: "libargon2",
            providers: [.apt(["libargon2-dev"])]
        ),

        // The concurrency toolkit: blocking work on a thread of its own, awaited; the parker.
        .target(name: "ReelThreads", exclude: ["README.md"]),

        // What a feed is, as values: items, categories, pages, the source protocol, the
        // feed API's JSON. The accounts server uses it without linking the player.
        .target(name: "ReelFeedModel", exclude: ["README.md"]),

        // The digests, in one place: MD5 (cache names, frame digests) and SHA-256 (tokens).
        .target(name: "ReelDigest", dependencies: ["CNettle"], exclude: ["README.md"]),

        // Pure core: time, ranges, clocks, the loader protocol, state machines.
        .target(name: "ReelCore", dependencies: ["ReelThreads"], exclude: ["README.md"]),

        // Streaming documents: HLS playlists and DASH manifests read, what a resource is by its
        // first bytes, the variant policy and its loader, DASH as HLS, the nested-open policy.
        .target(name: "ReelStreaming", dependencies: ["ReelCore", "ReelCaptions"], exclude: ["README.md"]),

        // Captions as values: tracks, cues in ASS form or as pictures, the timeline the
        // presentation step looks cues up in, the sink. No C, no threads.
        .target(name: "ReelCaptions", dependencies: ["ReelCore"], exclude: ["README.md"]),

        // Loaders: files, HTTP ranges, the range cache, the caching loader, the preloader.
        .target(
            name: "ReelLoading",
            dependencies: [
                "ReelCore", "ReelDigest", "ReelStreaming",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
            ],
            exclude: ["README.md"]
        ),

        // A loopback HTTP/1.1 range server with latency, bandwidth and fault injection.
        .target(
            name: "ReelOrigin",
            dependencies: [
                "ReelCore", "ReelThreads",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            exclude: ["README.md"]
        ),

        // FFmpeg behind one bridge: AVIO, demux, decode, conversion, the player.
        .target(
            name: "ReelMedia",
            dependencies: [
                "ReelCore", "ReelThreads", "ReelDigest", "ReelStreaming", "ReelCaptions", "CFFmpeg",
                .product(name: "Logging", package: "swift-log"),
            ],
            exclude: ["README.md"]
        ),

        // Media tools playback never uses: the clip encoder (fixtures, the demo feed), the
        // HLS/DASH packager and the plain-FFmpeg baseline the benchmarks measure against.
        .target(
            name: "ReelMediaTools",
            dependencies: ["ReelCore", "ReelStreaming", "ReelMedia", "CFFmpeg"],
            exclude: ["README.md"]
        ),

        // The feed's pure models: swipe paging, pagination, tabs, carousel, hold to speed up.
        .target(
            name: "ReelFeed",
            dependencies: ["ReelCore", "ReelFeedModel", "ReelMedia", "ReelLoading", .product(name: "Logging", package: "swift-log")],
            exclude: ["README.md"]
        ),

        // The terminal renderer's pure parts: frame→ANSI encoder with cell diffing, text
        // sanitising and widths, the input parser, the key-hold heuristic.
        .target(
            name: "ReelTerminal",
            dependencies: ["ReelCore", "ReelThreads", "ReelMedia", "ReelFeed", "CZlib"],
            exclude: ["README.md"]
        ),

        // The built-in demo feed: clips Reel encodes itself, and their manifest.
        .target(
            name: "ReelDemo",
            dependencies: ["ReelCore", "ReelMedia", "ReelMediaTools", "ReelFeed", "ReelLoading"],
            exclude: ["README.md"],
            // The recipe lives in the top-level demo/ (symlinked here), embedded in the binary.
            resources: [.embedInCode("feed.json")]
        ),

        // The desktop window: SDL2 + OpenGL with the GLSL in shaders/ (embedded through the
        // symlink Sources/ReelSDL/shaders), an SDL_Renderer fallback, SDL2_ttf text, captions
        // drawn by libass.
        .target(
            name: "ReelSDL",
            dependencies: ["ReelCore", "ReelMedia", "ReelCaptions", "ReelFeed", "ReelAccountClient", "CSDL2", "CLibass"],
            exclude: ["README.md"],
            resources: [.embedInCode("shaders")]
        ),

        // Accounts and uploads for `reel serve`: SQLite (GRDB), Argon2id, tokens, the API routes.
        .target(
            name: "ReelAccounts",
            dependencies: [
                // No player, no loader, no FFmpeg: the feed model, SQLite, Argon2, the digests.
                "ReelCore", "ReelFeedModel", "ReelDigest", "ReelOrigin", "ReelAccountClient", "CArgon2",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            exclude: ["README.md"]
        ),

        // The accounts API's wire format and a client for it (login, upload, me), and the token store.
        .target(
            name: "ReelAccountClient",
            dependencies: [
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
            ],
            exclude: ["README.md"]
        ),

        // Fakes, contract suites and fixtures for tests (and for anyone embedding Reel).
        .target(
            name: "ReelTestSupport",
            dependencies: ["ReelCore", "ReelThreads", "ReelCaptions", "ReelMedia", "ReelMediaTools"],
            exclude: ["README.md"]
        ),

        // The command line: wiring only.
        .executableTarget(
            name: "reel",
            dependencies: [
                "ReelCore",
                "ReelThreads",
                "ReelLoading",
                "ReelStreaming",
                "ReelMedia",
                "ReelMediaTools",
                "ReelOrigin",
                "ReelFeed",
                "ReelTerminal",
                "ReelSDL",
                "ReelDemo",
                "ReelAccounts",
                "ReelAccountClient",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            exclude: ["README.md"]
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
            dependencies: ["ReelCore", "ReelLoading", "ReelThreads", "ReelTestSupport"]
        ),
        .testTarget(
            name: "ReelMediaTests",
            dependencies: ["ReelStreaming", "ReelCore", "ReelCaptions", "ReelMedia", "ReelLoading", "ReelOrigin", "ReelTestSupport"]
        ),
        .testTarget(
            name: "ReelOriginTests",
            dependencies: ["ReelOrigin", "ReelTestSupport"]
        ),
        .testTarget(
            name: "ReelLoadingTests",
            dependencies: ["ReelStreaming", "ReelCore", "ReelLoading", "ReelDigest", "ReelOrigin", "ReelTestSupport"]
        ),
        .testTarget(name: "ReelDigestTests", dependencies: ["ReelDigest"]),
        .testTarget(
            name: "ReelCaptionsTests",
            dependencies: ["ReelCore", "ReelCaptions", .product(name: "PropertyBased", package: "swift-property-based")]
        ),
        .testTarget(name: "ReelStreamingTests", dependencies: ["ReelCore", "ReelStreaming", "ReelLoading", "ReelOrigin", "ReelTestSupport"]),
        .testTarget(
            name: "ReelCLITests",
            dependencies: ["ReelStreaming", "ReelCore", "ReelMedia", "ReelLoading", "ReelOrigin", "ReelFeed", "ReelTestSupport", "ReelAccountClient"]
        ),
        .testTarget(
            name: "ReelAccountsTests",
            dependencies: ["ReelAccounts", "ReelAccountClient", "ReelOrigin", "ReelFeed", "ReelMedia", "ReelLoading",
                           "ReelTestSupport",
                           .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                           .product(name: "AsyncHTTPClient", package: "async-http-client"),
                           .product(name: "GRDB", package: "GRDB.swift")]
        ),
        .testTarget(
            name: "ReelBenchTests",
            dependencies: ["ReelStreaming", "ReelCore", "ReelMedia", "ReelMediaTools", "ReelLoading", "ReelFeed", "ReelDemo", "ReelTestSupport"]
        ),
        .testTarget(
            name: "ReelFeedTests",
            dependencies: ["ReelCore", "ReelFeed", "ReelMedia", "ReelLoading", "ReelTestSupport"]
        ),
        .testTarget(
            name: "ReelTerminalTests",
            dependencies: ["ReelCore", "ReelMedia", "ReelLoading", "ReelTerminal", "ReelTestSupport"]
        ),
        .testTarget(
            name: "ReelSDLTests",
            dependencies: ["ReelCore", "ReelMedia", "ReelCaptions", "ReelLoading", "ReelFeed", "ReelSDL", "ReelAccountClient", "ReelOrigin", "ReelTestSupport"]
        ),
        // A player under stress in a process of its own (its threads and memory are counted),
        // run by ReelStressTests.
        .executableTarget(
            name: "ReelStressRunner",
            dependencies: ["ReelCore", "ReelMedia", "ReelLoading", "ReelTestSupport"],
            path: "Tests/ReelStressRunner"
        ),
        .testTarget(
            name: "ReelStressTests",
            dependencies: ["ReelStressRunner", "ReelTestSupport"]
        ),
        .testTarget(
            name: "SystemLibraryTests",
            dependencies: ["CFFmpeg", "CSDL2", "CLibass"]
        ),
    ]
)
