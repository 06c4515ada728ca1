// swift-tools-version: 6.1
import PackageDescription

// An outside package, as a library author would write one: a stepping design of its own (a
// `DispatchSemaphore` around the library's `StepStateMachine`), its conformance tests (every rule
// of the kit, by rule id) and an executable that is the whole `stepbench` tool with the design
// beside the built-ins. It uses only the public products: `Stepping` from the repository's root
// package, the conformance kit and the tool (`StepBenchCLI`) from its `Bench/` package.
//
// From a checkout of StepBench these are path dependencies; in a package of your own, depend on
// `Stepping` by URL and on the bench by the path of a StepBench checkout (a git submodule, say):
// SwiftPM takes no package from a repository's subfolder by URL.
let package = Package(
    name: "SemaphoreStepping",
    platforms: [.macOS(.v15)],
    products: [.library(name: "SemaphoreStepping", targets: ["SemaphoreStepping"])],
    dependencies: [
        .package(name: "Stepping", path: "../.."),
        .package(name: "StepBench", path: "../../Bench"),
        .package(url: "https://github.com/OpenCombine/OpenCombine", from: "0.14.0"),
    ],
    targets: [
        .target(
            name: "SemaphoreStepping",
            dependencies: [
                .product(name: "Stepping", package: "Stepping"),
                .product(name: "OpenCombine", package: "OpenCombine"),
            ]),
        // `semaphore-bench run|profile|compare|conform|…`: stepbench with the semaphore design.
        .executableTarget(
            name: "semaphore-bench",
            dependencies: ["SemaphoreStepping", .product(name: "StepBenchCLI", package: "StepBench")]),
        .testTarget(
            name: "SemaphoreSteppingTests",
            dependencies: [
                "SemaphoreStepping",
                .product(name: "Stepping", package: "Stepping"),
                .product(name: "SteppingConformanceTesting", package: "StepBench"),
                .product(name: "OpenCombine", package: "OpenCombine"),
            ]),
    ]
)
