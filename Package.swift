// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "StepBench",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Stepping", targets: ["Stepping"]),
    ],
    dependencies: [
        .package(url: "https://github.com/OpenCombine/OpenCombine", exact: "0.14.0"),
        .package(url: "https://github.com/apple/swift-atomics", exact: "1.3.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", exact: "0.2.0"),
    ],
    targets: [
        .target(
            name: "Stepping",
            dependencies: [
                .product(name: "OpenCombine", package: "OpenCombine"),
            ]
        ),
        .testTarget(
            name: "SteppingTests",
            dependencies: [
                "Stepping",
                .product(name: "OpenCombine", package: "OpenCombine"),
                .product(name: "OpenCombineDispatch", package: "OpenCombine"),
            ]
        ),
    ]
)
