// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "StepBenchThreadSanitizer",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(url: "https://github.com/OpenCombine/OpenCombine", exact: "0.14.0")
    ],
    targets: [
        .target(name: "Stepping", dependencies: [.product(name: "OpenCombine", package: "OpenCombine")]),
        .target(
            name: "SteppingConformance",
            dependencies: ["Stepping", .product(name: "OpenCombine", package: "OpenCombine")]),
        .target(name: "SteppingConformanceTesting", dependencies: ["SteppingConformance", "Stepping"]),
        .target(
            name: "TestSupport", dependencies: ["Stepping", "SteppingConformance"],
            path: "Tests/TestSupport"),
        .testTarget(
            name: "SteppingTests",
            dependencies: [
                "Stepping", "TestSupport", "SteppingConformanceTesting",
                .product(name: "OpenCombine", package: "OpenCombine"),
                .product(name: "OpenCombineDispatch", package: "OpenCombine"),
            ]),
        .executableTarget(
            name: "SteppingTorture",
            dependencies: ["Stepping", "SteppingConformance", "TestSupport"], path: "Tests/SteppingTorture"),
    ]
)
