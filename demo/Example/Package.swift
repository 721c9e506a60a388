// swift-tools-version: 6.1
// What a library user writes: a package that depends on Reel's library products. Here Reel is
// two directories up; from elsewhere use `.package(url: "<Reel's git URL>", branch: "main")`.
import PackageDescription

let package = Package(
    name: "ExamplePlayer",
    dependencies: [
        .package(name: "Reel", path: "../.."),
    ],
    targets: [
        .target(
            name: "ExamplePlayer",
            dependencies: [
                .product(name: "ReelCore", package: "Reel"),
                .product(name: "ReelMedia", package: "Reel"),
            ]
        ),
        .testTarget(
            name: "ExamplePlayerTests",
            dependencies: [
                "ExamplePlayer",
                .product(name: "ReelTestSupport", package: "Reel"),
            ]
        ),
    ]
)
