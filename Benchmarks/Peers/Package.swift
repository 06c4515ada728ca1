// swift-tools-version: 6.1
import PackageDescription

// What users would pick instead of a stepping subscriber, written as each tool's users write it
// and brought to StepBench as outside designs (SteppingDesign(name:traits:strategy:)), through the
// library's public API (and its Measurement SPI for the gate's instruction tolerance alone). A
// package of its own, so that the library gains no dependency; the bench (Benchmarks/) depends on
// it by path and measures and checks the peers beside the designs.
// Pinned exactly, as the bench is: the peers' numbers depend on these versions.

let package = Package(
    name: "StepPeers",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "StepPeers", targets: ["StepPeers"])
    ],
    dependencies: [
        .package(name: "StepBench", path: "../.."),
        .package(url: "https://github.com/OpenCombine/OpenCombine", exact: "0.14.0"),
        .package(url: "https://github.com/apple/swift-async-algorithms", exact: "1.1.4"),
    ],
    targets: [
        .target(
            name: "StepPeers",
            dependencies: [
                .product(name: "Stepping", package: "StepBench"),
                .product(name: "OpenCombine", package: "OpenCombine"),
                .product(name: "AsyncAlgorithms", package: "swift-async-algorithms"),
            ]
        )
    ]
)
