// swift-tools-version: 6.1
import PackageDescription

// An outside package, as a library author writes one (the README's manifest): a stepping design
// of its own (a `DispatchSemaphore` around the library's `StepStateMachine`), its conformance tests
// (every rule of the kit, by rule id) and an executable that is the whole `stepbench` tool with
// the design beside the built-ins. Public products only.
//
// It sits beside a clone of StepBench in a folder named StepBench: the library and the kit come
// from the clone's root package, the tool from its Benchmarks/ package (why a clone: the README's
// "Bring your own design"). scripts/test builds it so (scripts/lib/outside-package).
let package = Package(
    name: "SemaphoreStepping",
    platforms: [.macOS(.v15)],
    products: [.library(name: "SemaphoreStepping", targets: ["SemaphoreStepping"])],
    dependencies: [
        .package(path: "../StepBench"),  // the library and the conformance kit
        .package(path: "../StepBench/Benchmarks"),  // the stepbench tool, as a library
        .package(url: "https://github.com/OpenCombine/OpenCombine", from: "0.14.0"),
    ],
    targets: [
        .target(
            name: "SemaphoreStepping",
            dependencies: [
                .product(name: "Stepping", package: "StepBench"),
                .product(name: "OpenCombine", package: "OpenCombine"),
            ]),
        // `semaphore-bench run|profile|compare|conform|…`: stepbench with the semaphore design.
        .executableTarget(
            name: "semaphore-bench",
            dependencies: ["SemaphoreStepping", .product(name: "StepBenchCLI", package: "Benchmarks")]),
        .testTarget(
            name: "SemaphoreSteppingTests",
            dependencies: [
                "SemaphoreStepping",
                .product(name: "Stepping", package: "StepBench"),
                .product(name: "SteppingConformanceTesting", package: "StepBench"),
                .product(name: "OpenCombine", package: "OpenCombine"),
            ]),
    ]
)
