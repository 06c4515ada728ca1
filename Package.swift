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
    // StepBench's counting build (Bench/'s `Counting` trait enables it): the designs count what
    // contention makes them do. Off by default; such a build is never timed.
    traits: [
        .trait(
            name: "StepBenchCounting",
            description: "Contention counters compiled into the designs (StepBench's counting build; never timed)")
    ],
    dependencies: [
        .package(url: "https://github.com/OpenCombine/OpenCombine", from: "0.14.0")
    ],
    targets: [
        .target(
            name: "Stepping",
            dependencies: [.product(name: "OpenCombine", package: "OpenCombine")],
            swiftSettings: [.define("STEPBENCH_COUNTING", .when(traits: ["StepBenchCounting"]))]
        )
    ]
)
