// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "StepBenchThreadSanitizer",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(url: "https://github.com/OpenCombine/OpenCombine", exact: "0.14.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", exact: "0.2.0"),
    ],
    targets: [
        .target(name: "Stepping", dependencies: [.product(name: "OpenCombine", package: "OpenCombine")]),
        .target(name: "CCallgrind"),
        .target(name: "CProcessGuard"),
        .target(
            name: "StepBenchScenarios",
            dependencies: [
                "Stepping", "CCallgrind", "CProcessGuard",
                .product(name: "OpenCombine", package: "OpenCombine"),
                .product(name: "OpenCombineDispatch", package: "OpenCombine"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ]),
        .target(
            name: "SteppingConformance",
            dependencies: ["Stepping", "StepBenchScenarios", .product(name: "OpenCombine", package: "OpenCombine")]),
        .target(name: "SteppingConformanceTesting", dependencies: ["SteppingConformance", "Stepping"]),
        .target(
            name: "TestSupport", dependencies: ["Stepping", "StepBenchScenarios", "SteppingConformance"],
            path: "Tests/TestSupport"),
        .testTarget(
            name: "SteppingTests",
            dependencies: [
                "Stepping", "StepBenchScenarios", "TestSupport", "SteppingConformanceTesting",
                .product(name: "OpenCombine", package: "OpenCombine"),
                .product(name: "OpenCombineDispatch", package: "OpenCombine"),
            ]),
        .executableTarget(
            name: "SteppingTorture",
            dependencies: ["Stepping", "SteppingConformance", "TestSupport"], path: "Tests/SteppingTorture"),
    ]
)
