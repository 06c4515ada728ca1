// swift-tools-version: 6.1
import PackageDescription

// The library a user adds: `Stepping` on OpenCombine, and nothing else. The bench (the
// conformance kit, scenarios, runner, the `stepbench` tool, the package-benchmark suite and its
// thresholds) is a package of its own, Bench/, which depends on this one by path.

let package = Package(
    name: "Stepping",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Stepping", targets: ["Stepping"])
    ],
    dependencies: [
        .package(url: "https://github.com/OpenCombine/OpenCombine", from: "0.14.0")
    ],
    targets: [
        .target(
            name: "Stepping",
            dependencies: [.product(name: "OpenCombine", package: "OpenCombine")]
        )
    ]
)
